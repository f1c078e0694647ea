"""The audits' verdicts as a gate on the claims: a protocol whose implementation an audit caught
spending more privacy than its accountant says (``verdict == "violation"`` in
``results/tables/audits.parquet``) has no claim that counts as evidence.

A claims module calls :func:`gate` (or :func:`gate_paths`, from the audits table's paths) on its
table with the audits table (an input of its report step) and the protocols each claim row rests on
(:data:`shuffledp.claims.segmented.PROTOCOLS_OF` and its siblings). The row gets an ``audit`` column
naming the audits concerning it with their verdicts (``mhm_local: consistent; krr_shuffle:
violation``; ``not run`` when the audits stage is disabled; ``not audited (<protocols>)`` when no
audit concerns its protocols; empty for a row resting on no implementation), and ``evidence``
becomes False where one of them is a violation (it is never turned True: a verdict on stand-in data
stays no evidence). The verdict itself (``held``, the engine's estimate against its region) is kept:
the measurement is what it is, but it is not evidence; the row's ``explanation`` says so and names
the audit. A table with a ``verdict`` column instead has that verdict rewritten to
``not evidence (audit violation: <audits>)``. The protocol names are those of the experiments
(``segmented``, ``mm_shuffle``, ``mhm``, ``flame``, ``calm:mhm``, ``alg1``...), listed per audit in the
audits table's ``protocols`` column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import pandas as pd

VIOLATION = "violation"
NOT_EVIDENCE = "not evidence"
NOT_RUN = "not run"


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


def read(paths: Sequence[str]) -> pd.DataFrame | None:
    """The audits table from its input paths (none: the audits stage is disabled -> ``None``)."""
    if not paths:
        return None
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def gate(claims: pd.DataFrame, audits: pd.DataFrame | None,
         protocols: str | Callable[[Mapping], Iterable[str]]) -> pd.DataFrame:
    """``claims`` with ``audit`` and ``evidence`` columns (see the module docstring). ``audits``:
    the audits table, ``None`` when the audits stage did not run (rows then say ``not run`` and keep
    their evidence). ``protocols``: the name of a column holding the row's protocol names (a string,
    comma-separated) or a function of the row returning them."""
    by = audits_by_protocol(audits) if audits is not None else {}
    out = claims.copy()
    refs, ok = [], []
    for _, row in out.iterrows():
        names = row[protocols] if isinstance(protocols, str) else protocols(row)
        names = [p for p in (names.split(",") if isinstance(names, str) else names) if p]
        concerned = list(dict.fromkeys((a, v) for p in names for a, v in by.get(p, [])))
        if not names:
            refs.append("")
        elif audits is None:
            refs.append(NOT_RUN)
        elif not concerned:
            refs.append(f"not audited ({', '.join(names)})")
        else:
            refs.append("; ".join(f"{a}: {v}" for a, v in concerned))
        ok.append(not any(v == VIOLATION for _, v in concerned))
    out["audit"] = refs
    bad = pd.Series([not k for k in ok], index=out.index, dtype=bool)
    out["evidence"] = (out["evidence"].astype(bool) & ~bad) if "evidence" in out.columns else ~bad
    if "verdict" in out.columns:
        out.loc[bad, "verdict"] = [f"{NOT_EVIDENCE} (audit violation: " + r + ")" for r in out.loc[bad, "audit"]]
    elif "explanation" in out.columns:
        out.loc[bad, "explanation"] = [
            "; ".join(x for x in (str(e), f"{NOT_EVIDENCE}: an audit found the implementation spending more "
                                          f"privacy than its accountant says ({r}; tables/audits.md)") if x.strip())
            for e, r in zip(out.loc[bad, "explanation"], out.loc[bad, "audit"], strict=True)]
    return out


def gate_paths(claims: pd.DataFrame, paths: Sequence[str],
               protocols: str | Callable[[Mapping], Iterable[str]]) -> pd.DataFrame:
    """:func:`gate` with the audits table read from a step's ``audits`` input (empty: not run)."""
    return gate(claims, read(paths), protocols)
