"""Parquet tables with provenance, and the stand-in note every downstream product must carry.

Every processed table stores a JSON object under the Parquet key-value metadata key
``shuffledp``: dataset name, source (``real``, ``standin`` or ``synthetic``), URL or generator,
checksum of the raw file, row count, ``standin`` flag and dataset-specific fields.
Writing and reading them is :mod:`shuffledp.io`'s job (atomic writes); the names are re-exported
here for the data stage's callers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from shuffledp.io import META_KEY, atomic_write, read_provenance, write_table

__all__ = ["META_KEY", "atomic_write", "is_standin", "merge_provenance", "public_domains", "read_provenance",
           "standin_note", "write_table"]


def public_domains(prov: Mapping, attributes: Iterable[str], path: object = "table") -> list[int]:
    """Each attribute's domain size |C| from the provenance's ``domains`` (the public coding's sizes).

    Never the data's largest code plus one: that would make a public parameter (the size every
    randomizer and accountant uses) depend on the records. A table without them is refused."""
    doms = prov.get("domains") or {}
    attributes = list(attributes)
    missing = [a for a in attributes if a not in doms]
    if missing:
        raise ValueError(f"{path}: the provenance gives no domain size (public coding) of {missing}; "
                         "rebuild the table with the data stage")
    return [int(doms[a]) for a in attributes]


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
