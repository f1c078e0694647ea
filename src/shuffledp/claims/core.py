"""One claims model for the four papers: a claim, its verdict, the table and its markdown.

A claim carries the paper's statement (quoted or closely paraphrased from the seed text), where the
paper makes it, the target (the decision rule, with a two-sided tolerance wherever the paper says
"about"), and what grid or scale the data needs before the claim can be decided. Its verdict is one
of :data:`HELD`, :data:`NOT_HELD` or :data:`NOT_TESTABLE`: a claim is never ``held`` when the
measurement could not have shown otherwise; it is then ``not testable at this scale`` with the reason.

Every verdict also says on which data it was measured (``real``, ``synthetic`` or ``stand-in``);
a verdict on stand-in data is reported but does not count as evidence (column ``evidence``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

HELD = "held"
NOT_HELD = "not held"
NOT_TESTABLE = "not testable at this scale"
VERDICTS = (HELD, NOT_HELD, NOT_TESTABLE)

REAL, SYNTHETIC, STANDIN = "real", "synthetic", "stand-in"
DATA_KINDS = (REAL, SYNTHETIC, STANDIN)

COLUMNS = ["id", "claim", "paper", "target", "measured", "held", "scale", "data", "evidence"]


@dataclass(frozen=True)
class Claim:
    """What a paper states and how a measurement decides it.

    ``statement``: the paper's sentence (quoted or paraphrased); ``paper``: where (section, figure)
    and the paper's number; ``target``: the rule deciding ``held`` (two-sided where the paper says
    "about"); ``needs``: the grid or scale under which the data could show the claim false."""

    id: str
    statement: str
    paper: str
    target: str
    needs: str = ""


def data_kind(kinds: Iterable[str]) -> str:
    """The data label of a verdict measured on several datasets: ``stand-in`` if any input is a
    stand-in, else the distinct kinds joined by ``+`` (e.g. ``real+synthetic``)."""
    ks = sorted(set(kinds))
    for k in ks:
        if k not in DATA_KINDS:
            raise ValueError(f"unknown data kind {k!r}; expected one of {DATA_KINDS}")
    if not ks:
        return ""
    if STANDIN in ks:
        return STANDIN
    return "+".join(ks)


def decide(claim: Claim, *, testable: bool, ok: bool, measured: str, data: str, scale: str,
           reason: str = "") -> dict:
    """One row of a claims table. ``testable``: the data could have shown the claim false (and
    true); when not, the verdict is ``not testable at this scale`` whatever ``ok`` says, and
    ``reason`` is appended to ``measured``."""
    if testable:
        verdict = HELD if ok else NOT_HELD
    else:
        verdict = NOT_TESTABLE
        reason = reason or (f"needs {claim.needs}" if claim.needs else "")
        if reason:
            measured = f"{measured}; not testable: {reason}" if measured else f"not testable: {reason}"
    kinds = [k for k in data.split("+") if k]
    return {"id": claim.id, "claim": claim.statement, "paper": claim.paper, "target": claim.target,
            "measured": measured, "held": verdict, "scale": scale, "data": data,
            "evidence": bool(verdict != NOT_TESTABLE and kinds and STANDIN not in kinds)}


def not_testable(claim: Claim, reason: str, *, data: str, scale: str, measured: str = "") -> dict:
    return decide(claim, testable=False, ok=False, measured=measured, data=data, scale=scale, reason=reason)


def frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["evidence"] = df["evidence"].astype(bool)
    bad = set(df["held"]) - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdicts {sorted(bad)}")
    return df


def within(x: float, target: float, factor: float) -> bool:
    """Two-sided: ``target / factor <= x <= target * factor`` (False for NaN)."""
    return bool(math.isfinite(x) and target / factor <= x <= target * factor)


def between(x: float, lo: float, hi: float) -> bool:
    return bool(math.isfinite(x) and lo <= x <= hi)


def counts(df: pd.DataFrame) -> dict[str, int]:
    """Verdict counts; ``evidence`` counts the decided verdicts that are not on stand-in data."""
    out = {v: int((df["held"] == v).sum()) for v in VERDICTS}
    out["evidence"] = int(df["evidence"].sum())
    return out


def _cell(x) -> str:
    return str(x).replace("|", "/").replace("\n", " ")


def markdown(df: pd.DataFrame, title: str, note: str = "") -> str:
    """The one renderer of a claims table (every paper's ``*_claims.md``)."""
    c = counts(df)
    scale = ", ".join(sorted({str(s) for s in df["scale"]})) if len(df) else ""
    lines = [f"# {title}", ""]
    if note:
        lines += [f"*Data: {note}.*", ""]
    lines += [f"Scale `{scale}`: {c[HELD]} held, {c[NOT_HELD]} not held, {c[NOT_TESTABLE]} not testable at "
              f"this scale; {c['evidence']} decided verdicts on real or synthetic data count as evidence "
              "(verdicts on stand-in data do not).", ""]
    lines += ["| id | claim | paper | target | measured | verdict | data | evidence |",
              "|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples(index=False):
        verdict = {NOT_HELD: "**not held**", NOT_TESTABLE: "*not testable at this scale*"}.get(r.held, r.held)
        ev = "yes" if r.evidence else "no"
        lines.append("| " + " | ".join(_cell(x) for x in (r.id, r.claim, r.paper, r.target, r.measured, verdict,
                                                           r.data, ev)) + " |")
    return "\n".join(lines) + "\n"


def standin_kind(name: str, standin: Iterable[str] = (), synthetic: Iterable[str] = ()) -> str:
    """``stand-in`` when ``name`` is listed as a stand-in, ``synthetic`` when listed (or named
    ``synth*``) as synthetic, else ``real``."""
    if name in set(standin):
        return STANDIN
    if name in set(synthetic) or str(name).startswith("synth"):
        return SYNTHETIC
    return REAL


