"""Parquet tables with provenance, and the stand-in note every downstream product must carry.

Every processed table stores a JSON object under the Parquet key-value metadata key
``shuffledp``: dataset name, source (``real``, ``standin`` or ``synthetic``), URL or generator,
checksum of the raw file, row count, ``standin`` flag and dataset-specific fields.
Writes are atomic (temporary file in the same folder, then ``os.replace``), so an interrupted
job never leaves a partial table behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

META_KEY = b"shuffledp"


def write_table(table: pa.Table | pd.DataFrame, path: str | os.PathLike, provenance: Mapping) -> None:
    """Write ``table`` to ``path`` atomically with ``provenance`` in its metadata."""
    if isinstance(table, pd.DataFrame):
        table = pa.Table.from_pandas(table, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)  # pandas metadata is not needed and would differ across pandas versions
    meta[META_KEY] = json.dumps(dict(provenance), sort_keys=True, default=_default).encode()
    table = table.replace_schema_metadata(meta)
    atomic_write(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))


def read_provenance(path: str | os.PathLike) -> dict:
    """The provenance dict of a table written by :func:`write_table` (``{}`` if absent)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(META_KEY)
    return json.loads(raw) if raw else {}


def is_standin(prov: Mapping) -> bool:
    return bool(prov.get("standin", False))


def standin_note(*provs: Mapping) -> str:
    """A phrase for titles and captions when any input is a stand-in; ``""`` for real data only."""
    names = sorted({str(p.get("dataset", "?")) for p in provs if is_standin(p)})
    if not names:
        return ""
    return "offline stand-in data, not the real " + ", ".join(names)


def merge_provenance(provs: Iterable[Mapping]) -> dict:
    """Provenance of a product built from several tables: the inputs, and a stand-in flag."""
    provs = list(provs)
    return {
        "inputs": [dict(p) for p in provs],
        "standin": any(is_standin(p) for p in provs),
        "standin_note": standin_note(*provs),
    }


def atomic_write(path: str | os.PathLike, writer) -> None:
    """Call ``writer(tmp_path)`` then move the temporary file onto ``path``; clean up on failure."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    try:
        writer(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _default(o: object) -> object:
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
