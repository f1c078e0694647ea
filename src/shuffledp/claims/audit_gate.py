"""The audits' verdicts as a gate on the claims: a protocol whose implementation an audit caught
spending more privacy than its accountant says (``verdict == "violation"`` in
``results/tables/audits.parquet``) has no claim that counts as evidence.

A claims module calls :func:`gate` on its table with the audits table (an input of its report step)
and the protocols each claim row rests on; the row gets an ``audit`` column (the audits concerning
it, with their verdicts) and ``evidence`` (False where one of them is a violation, and where an
audit that concerns it did not run); when the table has a ``verdict`` column, such a row's verdict
becomes ``not evidence (audit violation: <audits>)``. The protocol names are those of the
experiments (``segmented``, ``mm_shuffle``, ``mhm``, ``flame``, ``calm:mhm``, ``alg1``...), listed per
audit in the audits table's ``protocols`` column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pandas as pd

VIOLATION = "violation"
NOT_EVIDENCE = "not evidence"


def audits_by_protocol(audits: pd.DataFrame) -> dict[str, list[tuple[str, str]]]:
    """protocol -> [(audit, verdict)] of the audits that concern it."""
    out: dict[str, list[tuple[str, str]]] = {}
    for a, prots, verdict in zip(audits["audit"], audits["protocols"], audits["verdict"], strict=True):
        for p in str(prots).split(","):
            if p:
                out.setdefault(p, []).append((str(a), str(verdict)))
    return out


def violations(audits: pd.DataFrame) -> dict[str, list[str]]:
    """protocol -> the audits that found it spending more than accounted (only protocols with one)."""
    return {p: [a for a, v in av if v == VIOLATION] for p, av in audits_by_protocol(audits).items()
            if any(v == VIOLATION for _, v in av)}


def gate(claims: pd.DataFrame, audits: pd.DataFrame,
         protocols: str | Callable[[Mapping], Iterable[str]]) -> pd.DataFrame:
    """``claims`` with ``audit`` and ``evidence`` columns (see the module docstring). ``protocols``:
    the name of a column holding the row's protocol names (a string, comma-separated) or a function
    of the row returning them."""
    by = audits_by_protocol(audits)
    out = claims.copy()
    refs, evidence = [], []
    for _, row in out.iterrows():
        names = row[protocols] if isinstance(protocols, str) else protocols(row)
        names = [p for p in (names.split(",") if isinstance(names, str) else names) if p]
        concerned = [(a, v) for p in names for a, v in by.get(p, [])]
        refs.append("; ".join(f"{a}: {v}" for a, v in concerned))
        evidence.append(not any(v == VIOLATION for _, v in concerned))
    out["audit"] = refs
    out["evidence"] = evidence
    if "verdict" in out.columns:
        bad = ~out["evidence"]
        out.loc[bad, "verdict"] = [f"{NOT_EVIDENCE} (audit violation: " + r + ")" for r in out.loc[bad, "audit"]]
    return out
