"""Fetching raw files: an offline mirror first, then the publishers' URLs; checksums always verified.

A *candidate* is a URL (``http(s)://``, ``file://``) or a local path, optionally with a member name
when the file sits inside a zip archive. Candidates are tried in order; each download goes to a
temporary file next to the destination, is verified, and only then renamed onto the destination.
A failed or interrupted download therefore never leaves a partial file.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

MIRROR_ENV = "SHUFFLEDP_DATA_MIRROR"
TIMEOUT_S = 30


class ChecksumError(RuntimeError):
    """A file's checksum differs from the published one."""


class DownloadError(RuntimeError):
    """No candidate gave a file with the right checksum; the message lists every attempt."""


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
        try:
            got = self.actual(path)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise ChecksumError(f"{label or path}: cannot read for checksum ({exc})") from exc
        if got != self.expected:
            what = f"{self.algorithm} of the uncompressed content" if self.gunzip else self.algorithm
            raise ChecksumError(
                f"{label or path}: checksum mismatch ({what}): expected {self.expected}, actual {got}"
            )
        return got


def mirror_location(config_mirror: str | None = None) -> str | None:
    """The offline mirror: the environment variable wins over the config key."""
    env = os.environ.get(MIRROR_ENV)
    return env if env else (config_mirror or None)


def mirror_candidate(mirror: str | None, relpath: str) -> list[Candidate]:
    if not mirror:
        return []
    if "://" in mirror:
        return [Candidate(mirror.rstrip("/") + "/" + relpath)]
    return [Candidate(str(Path(mirror) / relpath))]


def fetch_verified(
    dest: str | os.PathLike,
    candidates: Sequence[Candidate],
    checksum: Checksum,
    log: Callable[[str], None] = print,
) -> str:
    """Place a verified copy of the file at ``dest``; return where it came from.

    An existing ``dest`` whose checksum verifies is kept. Otherwise each candidate is tried in
    turn; a mismatching download is deleted and the next candidate tried.
    """
    dest = Path(dest)
    if dest.exists():
        try:
            checksum.verify(dest)
            log(f"{dest}: present, checksum verified")
            return str(dest)
        except ChecksumError as exc:
            log(f"{dest}: present but {exc}; fetching again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    errors = []
    for cand in candidates:
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
        os.close(fd)
        try:
            _copy_candidate(cand, tmp)
            checksum.verify(tmp, label=str(cand))
            os.replace(tmp, dest)
            log(f"{dest}: fetched from {cand}, checksum verified")
            return str(cand)
        except (OSError, urllib.error.URLError, zipfile.BadZipFile, KeyError, ChecksumError, ValueError) as exc:
            errors.append(f"{cand}: {exc}")
            log(f"{dest}: {cand} failed: {exc}")
        finally:
            Path(tmp).unlink(missing_ok=True)
    raise DownloadError(f"could not obtain {dest.name}:\n  " + "\n  ".join(errors or ["no candidate"]))


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


def _copy_location(location: str, tmp: str) -> None:
    if "://" in location:
        req = urllib.request.Request(location, headers={"User-Agent": "shuffledp"})
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp, open(tmp, "wb") as dst:
            shutil.copyfileobj(resp, dst, 1 << 20)
    else:
        shutil.copyfile(location, tmp)
