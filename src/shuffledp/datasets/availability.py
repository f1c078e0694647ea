"""Which real data a machine has, and whether a processed table built from a stand-in is stale.

``source: auto`` falls back to a labelled stand-in when no source of the real file can be reached.
Such a stand-in must not outlive the real data's arrival: when a verified-looking real source is
found *locally* (the file in the raw folder, or a folder mirror that holds it) while the processed
table on disk is a stand-in, the table is stale. The workflow then touches the dataset's *source
marker* (:func:`refresh_marker`), an input of the preprocess job, so Snakemake's modification-time
rule reruns that job and everything downstream; nothing is deleted, and once the table is real the
marker stays untouched (no second rerun). The check is cheap: file existence and a Parquet footer.

A URL mirror or the publisher cannot be checked without a network request; they are not "local",
so a stand-in built while they were unreachable is replaced when their file reaches the raw folder
or a folder mirror (``SHUFFLEDP_DATA_MIRROR``), not by a bare rerun.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from shuffledp.datasets.download import mirror_candidate


@dataclass(frozen=True)
class RealData:
    """A dataset with a real file: its files relative to the raw folder and to the mirror (the same
    layout), and the processed table whose provenance says real or stand-in."""

    name: str
    relpaths: tuple[str, ...]
    processed: str


def local_source(data: RealData, raw_dir: str | os.PathLike, mirror: str | None) -> str | None:
    """Where the real files are on this machine: the raw folder, the folder mirror, or None.

    A folder mirror that lacks a file raises :class:`~shuffledp.datasets.download.MirrorError`
    (naming the setting and the file); a URL mirror counts as not local."""
    if all((Path(raw_dir) / rel).is_file() for rel in data.relpaths):
        return str(raw_dir)
    if mirror and "://" not in mirror:
        for rel in data.relpaths:
            mirror_candidate(mirror, rel)  # raises, naming the setting, when the folder lacks the file
        return mirror
    return None


def built_kind(processed: str | os.PathLike) -> str | None:
    """``"real"``, ``"standin"`` (from the table's provenance) or None (not built, or unreadable)."""
    from shuffledp.io import read_provenance

    try:
        prov = read_provenance(processed)
    except (FileNotFoundError, ValueError):
        return None
    return "standin" if prov.get("standin") else str(prov.get("source", "real"))


def refresh_marker(data: RealData, marker: str | os.PathLike, raw_dir: str, mirror: str | None) -> bool:
    """Create ``marker`` when missing; rewrite it (a newer mtime) when the processed table is a
    stand-in and the real files are now local. Returns True when the table is stale."""
    marker = Path(marker)
    where = local_source(data, raw_dir, mirror)
    stale = where is not None and built_kind(data.processed) == "standin"
    if stale or not marker.is_file():
        from shuffledp.io import write_text

        text = f"{data.name}: real files found in {where}; the stand-in table is rebuilt\n" if stale else \
            f"{data.name}: source marker (rewritten when the real files arrive after a stand-in was built)\n"
        write_text(marker, text)
        if not stale:  # a new marker is older than any table: it triggers nothing by itself
            os.utime(marker, (0, 0))
    return stale


def summary(tables: Mapping[str, str]) -> list[str]:
    """One line per processed table (name -> path): real or stand-in, its raw file's checksum when
    real, and the sha256 of the processed file (for comparing two runs). A table that cannot be read
    (damaged, truncated, a folder, no permission) is one line saying so and how to rebuild it: the
    summary ends every run, and never fails one."""
    lines = []
    width = max((len(n) for n in tables), default=0)
    for name, path in tables.items():
        if not Path(path).is_file() and not Path(path).exists():
            lines.append(f"{name:<{width}}  not built     {path}")
            continue
        try:
            lines.append(_summary_line(name, path, width))
        except Exception as exc:  # noqa: BLE001 - the end of a run reports every file, whatever it holds
            why = " ".join(str(exc).split())[:200] or type(exc).__name__
            lines.append(f"{name:<{width}}  UNREADABLE    {path}: {why}; delete it and rerun (rm {path})")
    return lines


def _summary_line(name: str, path: str, width: int) -> str:
    from shuffledp.io import read_provenance

    if not Path(path).is_file():
        raise ValueError("not a regular file")
    prov = read_provenance(path)
    if not isinstance(prov, Mapping):
        raise ValueError("its provenance is not a mapping")
    kind = "STAND-IN" if prov.get("standin") else str(prov.get("source", "?"))
    raw = _raw_checksum(prov)
    return f"{name:<{width}}  {kind:<12}  {path}  sha256 {_sha256(path)[:16]}  raw: {raw}"


def _raw_checksum(prov: Mapping) -> str:
    """The real raw file's checksum as the provenance records it ("-" for generated data)."""
    if "sha256_uncompressed" in prov:
        return "sha256(uncompressed) " + prov["sha256_uncompressed"]
    if isinstance(prov.get("md5"), Mapping):
        return "; ".join(f"md5 {k} {v}" for k, v in prov["md5"].items())
    if prov.get("sha256") and not prov.get("standin"):
        return f"sha256 {prov['sha256']}"
    return "-"


def _sha256(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def summary_text(tables: Mapping[str, str], stale: Sequence[str] = ()) -> str:
    """The terminal summary: the lines of :func:`summary` under a heading, and a stand-in warning."""
    lines = summary(tables)
    text = "shuffledp datasets of this run (real or stand-in, checksums):\n  " + "\n  ".join(lines or ["none"])
    if any("STAND-IN" in line for line in lines):
        text += ("\n  Tables marked STAND-IN are generated, not the real data: results built from them are not "
                 "evidence about the papers. MSNBC, Adult and Loan (source: auto): put the real files in data/raw "
                 "or set SHUFFLEDP_DATA_MIRROR and run snakemake again; what was built from their stand-ins is "
                 "rebuilt by itself. IPUMS: data/README.md.")
    if stale:
        text += f"\n  Real data found for {', '.join(stale)}: their stand-in tables are rebuilt in this run."
    return text
