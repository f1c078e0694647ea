"""Fetching raw files: an offline mirror first, then the publishers' URLs; checksums always verified.

A *candidate* is a URL (``http(s)://``, ``file://``) or a local path, optionally with a member name
when the file sits inside a zip archive. Candidates are tried in order; each download goes to a
temporary file next to the destination, is verified, and only then renamed onto the destination.
A failed or interrupted download therefore never leaves a partial file. A file that is reached but
wrong (checksum mismatch, or it cannot be read or decompressed) is an error that names it; a
damaged local copy is moved aside, the next source is tried, and :class:`DownloadError` records
that something was damaged so that callers never replace it by a stand-in.
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import http.client
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from shuffledp.environment import DEADLINE_ENV, DEADLINE_S, MIRROR_ENV, download_deadline  # noqa: F401
from shuffledp.errors import DataError

TIMEOUT_S = 30  # one read (or connect) waits at most this long
# one download takes at most DEADLINE_S in total, however the server paces its bytes (a source that
# answers one byte at a time would defeat the per-read timeout); the environment variable overrides it.
# Read in shuffledp.environment, which the CLI checks before any work without importing this module.


class ChecksumError(DataError):
    """A file was reached but its content is wrong: checksum mismatch, or it cannot be read or
    decompressed (flipped bytes, broken gzip CRC, truncated file, unreadable file)."""


class DownloadError(DataError):
    """No candidate gave a file with the right checksum; the message lists every attempt.

    ``corrupt`` is True when at least one file was *reached* and found wrong (a local copy, the
    mirror or a download): then the real data exists somewhere in a damaged form and nothing may
    silently replace it (no stand-in). It is False only when no source could be reached at all.
    """

    def __init__(self, message: str, corrupt: bool = False):
        super().__init__(message)
        self.corrupt = corrupt


@dataclass(frozen=True)
class Candidate:
    location: str  # URL or path
    member: str | None = None  # file inside a zip archive, if any

    def __str__(self) -> str:
        return self.location + (f" [{self.member}]" if self.member else "")


@dataclass(frozen=True)
class Checksum:
    algorithm: str  # "sha256" or "md5"
    expected: str
    gunzip: bool = False  # hash the decompressed content of a .gz file

    def actual(self, path: str | os.PathLike) -> str:
        h = hashlib.new(self.algorithm)
        opener = gzip.open if self.gunzip else open
        with opener(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()

    def verify(self, path: str | os.PathLike, label: str = "") -> str:
        """Return the checksum of ``path`` or raise :class:`ChecksumError` naming the file, what
        failed, the expected hash and (when the file can be hashed) the actual one."""
        name = label or str(path)
        what = f"{self.algorithm} of the uncompressed content" if self.gunzip else self.algorithm
        try:
            got = self.actual(path)
        except (OSError, EOFError, zlib.error, ValueError) as exc:
            raw = _raw_sha256(path)
            seen = f"sha256 of its bytes {raw}" if raw else "its bytes cannot be read"
            action = "decompress" if self.gunzip and raw else "read"
            raise ChecksumError(
                f"{name}: cannot {action} the file ({_reason(exc)}); expected {what} {self.expected}, {seen}"
            ) from exc
        if got != self.expected:
            raise ChecksumError(f"{name}: checksum mismatch ({what}): expected {self.expected}, actual {got}")
        return got


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return f"truncated: {exc}"
    text = str(exc) or type(exc).__name__
    return f"zlib: {text}" if isinstance(exc, zlib.error) else text


def _raw_sha256(path: str | os.PathLike) -> str | None:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    except OSError:
        return None


def mirror_location(config_mirror: str | None = None) -> str | None:
    """The offline mirror: the environment variable wins over the config key."""
    env = os.environ.get(MIRROR_ENV)
    return env if env else (config_mirror or None)


class MirrorError(DataError):
    """The offline mirror is a folder that lacks a file it must hold (set, so never a silent stand-in)."""


def mirror_setting(mirror: str) -> str:
    """Where ``mirror`` was set: the environment variable (which wins) or the config key."""
    return f"{MIRROR_ENV}={mirror}" if os.environ.get(MIRROR_ENV) == mirror else f"config key data_mirror ({mirror})"


def mirror_candidate(mirror: str | None, relpath: str) -> list[Candidate]:
    """The mirror's copy of ``relpath``. A mirror that is a folder must hold the file: a folder
    without it is a :class:`MirrorError` naming the setting and the missing file (a mirror that
    points at the wrong place would otherwise turn into a stand-in without a word). A URL mirror
    is tried like any source (unreachable: the next one)."""
    if not mirror:
        return []
    if "://" in mirror:
        return [Candidate(mirror.rstrip("/") + "/" + relpath)]
    path = Path(mirror) / relpath
    if not path.is_file():
        where = "is not a folder" if not Path(mirror).is_dir() else f"has no file {relpath}"
        raise MirrorError(f"{mirror_setting(mirror)}: the offline mirror {where} (expected {path}); "
                          "put the file there or unset the mirror")
    return [Candidate(str(path))]


def fetch_verified(
    dest: str | os.PathLike,
    candidates: Sequence[Candidate],
    checksum: Checksum,
    log: Callable[[str], None] = print,
) -> str:
    """Place a verified copy of the file at ``dest``; return where it came from.

    An existing ``dest`` whose checksum verifies is kept. An existing ``dest`` that fails (wrong
    hash, cannot be read or decompressed) is reported and moved aside to
    ``<name>.corrupt-<sha8>`` (``sha8``: the first 8 hex digits of its bytes' sha256), never
    deleted. Then each candidate is tried in turn: a download goes to a temporary file in
    ``dest``'s folder, is verified and only then renamed onto ``dest`` (mode 0644), so a failed or
    interrupted attempt leaves no file. A damaged candidate is reported and the next one tried.

    Raises :class:`DownloadError` listing every attempt when no candidate verifies; its
    ``corrupt`` flag tells a damaged file (reached, wrong, or moved aside by an earlier run) from
    sources that could not be reached.
    """
    dest = Path(dest)
    errors: list[str] = []
    verified, corrupt = _check_existing(dest, checksum, errors, log)
    if verified:
        return str(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for cand in candidates:
        outcome = _try_candidate(dest, cand, checksum, errors, log)
        if outcome == "fetched":
            return str(cand)
        corrupt = corrupt or outcome == "damaged"
    _give_up(dest, errors, corrupt)


def _check_existing(dest: Path, checksum: Checksum, errors: list[str],
                    log: Callable[[str], None]) -> tuple[bool, bool]:
    """(verified, corrupt) of an existing ``dest``; a failing one is moved aside and reported."""
    if not (dest.exists() or dest.is_symlink()):
        return False, False
    try:
        checksum.verify(dest)
        log(f"{dest}: present, checksum verified")
        return True, False
    except ChecksumError as exc:
        aside = _move_aside(dest)
        errors.append(f"{exc} (moved aside to {aside})")
        log(f"ERROR: {exc}; moved aside to {aside}; trying the sources")
        return False, True


def _try_candidate(dest: Path, cand: Candidate, checksum: Checksum, errors: list[str],
                   log: Callable[[str], None]) -> str:
    """One candidate: ``"fetched"`` (verified and renamed onto ``dest``), ``"unreachable"`` or
    ``"damaged"`` (reported in ``errors``); the temporary file never outlives the attempt."""
    # imported here: shuffledp.io loads pandas and pyarrow, and every CLI command imports this
    # module to check the environment (shuffledp.environment) before any work
    from shuffledp.io import file_mode, temp_file

    tmp = temp_file(dest)
    try:
        try:
            _copy_candidate(cand, tmp)
        except _UNREACHABLE as exc:
            errors.append(f"{cand}: not reachable ({exc})")
            log(f"{dest}: {cand} not reachable: {exc}")
            return "unreachable"
        except (OSError, zipfile.BadZipFile, KeyError, EOFError, zlib.error, ValueError) as exc:
            errors.append(f"{cand}: cannot read the file ({exc}); expected {checksum.algorithm} "
                          f"{checksum.expected}")
            log(f"ERROR: {dest}: {cand} cannot be read: {exc}")
            return "damaged"
        try:
            checksum.verify(tmp, label=str(cand))
        except ChecksumError as exc:
            errors.append(str(exc))
            log(f"ERROR: {exc}; trying the next source")
            return "damaged"
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, file_mode())
        os.replace(tmp, dest)
        log(f"{dest}: fetched from {cand}, checksum verified")
        return "fetched"
    finally:
        Path(tmp).unlink(missing_ok=True)


def _give_up(dest: Path, errors: list[str], corrupt: bool) -> NoReturn:
    """Raise the :class:`DownloadError` listing every attempt."""
    earlier = sorted(p.name for p in dest.parent.glob(f"{glob.escape(dest.name)}.corrupt-*"))
    if earlier and not corrupt:
        # a damaged copy moved aside by an earlier run: the real data is known to be damaged here,
        # so a second run with no source reachable must not quietly become the stand-in either
        corrupt = True
        errors.append(f"{dest.parent}: damaged earlier copies kept for inspection: {', '.join(earlier)} "
                      "(delete them to allow the stand-in)")
    kind = "a damaged file, no verified copy" if corrupt else "no source reachable"
    raise DownloadError(
        f"could not obtain {dest} (sources {kind}):\n  " + "\n  ".join(errors or ["no candidate"]), corrupt=corrupt
    )


# Failures that mean "this source could not be reached" (as opposed to "reached, and wrong").
# A connection cut mid-download (http.client.IncompleteRead) is "not reachable" too: nothing was verified.
_UNREACHABLE = (FileNotFoundError, NotADirectoryError, urllib.error.URLError, TimeoutError, ConnectionError,
                http.client.HTTPException)


def _move_aside(path: Path) -> Path:
    """Rename a damaged local copy to ``<name>.corrupt-<sha8>`` (kept for inspection)."""
    raw = _raw_sha256(path) if path.is_file() else None
    tag = raw[:8] if raw else "unreadable"
    aside = path.with_name(f"{path.name}.corrupt-{tag}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{tag}.{n}")
        n += 1
    try:
        os.replace(path, aside)
    except OSError as exc:
        raise DownloadError(f"{path}: damaged and cannot be moved aside ({exc})", corrupt=True) from exc
    return aside


def _copy_candidate(cand: Candidate, tmp: str) -> None:
    if cand.member is None:
        _copy_location(cand.location, tmp)
        return
    fd, ztmp = tempfile.mkstemp(suffix=".zip", dir=Path(tmp).parent)
    os.close(fd)
    try:
        _copy_location(cand.location, ztmp)
        with zipfile.ZipFile(ztmp) as zf, zf.open(cand.member) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    finally:
        Path(ztmp).unlink(missing_ok=True)


def _copy_until(src, dst, deadline: float, location: str) -> None:
    """Copy ``src`` to ``dst`` in chunks, stopping with ``TimeoutError`` once ``deadline`` has passed."""
    total = 0
    while True:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{location}: the download exceeded its total deadline of {download_deadline():g} s "
                               f"after {total} bytes (a stalled or very slow source; {DEADLINE_ENV} sets it)")
        chunk = src.read1(1 << 20) if hasattr(src, "read1") else src.read(1 << 20)
        if not chunk:
            return
        dst.write(chunk)
        total += len(chunk)


def _copy_location(location: str, tmp: str) -> None:
    if location.startswith("file://"):
        location = urllib.request.url2pathname(urllib.parse.urlparse(location).path)
    if "://" in location:
        deadline = time.monotonic() + download_deadline()
        req = urllib.request.Request(location, headers={"User-Agent": "shuffledp"})
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp, open(tmp, "wb") as dst:
            _copy_until(resp, dst, deadline, location)
    else:
        shutil.copyfile(location, tmp)
