"""One claims model for the four papers: a claim, its verdict, the table and its markdown.

A claim carries the sentence it decides, quoted verbatim from the seed text (``claim``), the
section where it stands (``section``), who makes it (``by``: ``paper``, or ``ours`` for the
project's own checks, which are never the paper's failure), the decision rule with its stated test
or tolerance (``target``: two-sided wherever the paper says "about", a significance or trend test
wherever it says "significantly", "consistently" or "increases"), and what grid or scale the data
needs before the claim can be decided. Its verdict is one of :data:`HELD`, :data:`NOT_HELD` or
:data:`NOT_TESTABLE`: a claim is never ``held`` when the measurement could not have shown
otherwise; it is then ``not testable at this scale`` with the reason. Every row that is not held
or not testable says why in ``explanation`` (what differs, and where the evidence is: a variant
row, a figure, a docs section); :func:`frame` refuses such a row without one.

Every verdict also says on which data it was measured (``real``, ``synthetic`` or ``stand-in``);
a verdict on stand-in data is reported but does not count as evidence (column ``evidence``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

import shuffledp.claims.engine as engine

HELD, NOT_HELD, NOT_TESTABLE = engine.HELD, engine.NOT_HELD, engine.NOT_TESTABLE
VERDICTS = (HELD, NOT_HELD, NOT_TESTABLE)

REAL, SYNTHETIC, STANDIN = "real", "synthetic", "stand-in"
DATA_KINDS = (REAL, SYNTHETIC, STANDIN)

PAPER, OURS = "paper", "ours"
BY = (PAPER, OURS)

COLUMNS = ["id", "by", "claim", "section", "target", "reference", "measured", "held", "explanation", "scale", "data",
           "evidence", "datasets", "detectable"]


@dataclass(frozen=True)
class Claim:
    """What a paper states and how a measurement decides it.

    ``quote``: the paper's sentence, verbatim from the seed text (for ``by == "ours"``: our own
    statement of the check); ``section``: where (section, figure) and the paper's number;
    ``target``: the rule deciding ``held`` with its test or tolerance; ``needs``: the grid or scale
    under which the data could show the claim false; ``by``: ``paper`` or ``ours``; ``explain``: what
    the row says when it is not held (what differs and where the evidence is)."""

    id: str
    quote: str
    section: str
    target: str
    needs: str = ""
    by: str = PAPER
    explain: str = ""
    scope: tuple[str, ...] = ()

    def __post_init__(self):
        if self.by not in BY:
            raise ValueError(f"claim {self.id}: by must be one of {BY}, not {self.by!r}")

    def ours(self, suffix: str, where: str) -> Claim:
        """The same test on data outside the paper's scope: an ``ours`` row (id + ``suffix``), its
        section saying where it runs; never counted with the paper's verdicts."""
        return replace(self, id=self.id + suffix, by=OURS, scope=(),
                       section=f"our check: {self.section}, the same test on {where} (not the paper's data)")

    def in_scope(self, datasets: Iterable[str]) -> bool:
        """A paper row decides the sentence only on the data the paper made it about (``scope``;
        empty: the sentence names no dataset)."""
        return not self.scope or set(datasets) <= set(self.scope)


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


def decide(claim: Claim, *, testable: bool | None = None, ok: bool | None = None, measured: str = "",
           data: str, scale: str, reason: str = "", explanation: str = "", reference: str = "",
           verdict: engine.Verdict | None = None, datasets: Iterable[str] = ()) -> dict:
    """One row of a claims table, its verdict from the decision engine (:mod:`.engine`).

    ``verdict``: the engine's verdict (its ``measured`` text with estimate, interval and position,
    its reason, the smallest detectable effect); ``measured`` then adds context after it. Every held
    or not-held row comes from the engine (one decision rule): without a verdict the row can only be
    not testable (``testable`` false or None: :func:`engine.untestable` with ``reason`` or the claim's
    ``needs``); ``testable=True`` without a verdict is refused (a boolean is not an estimate with its
    interval, and carries no number).
    A row not held or not testable is explained by the engine's reason, then ``explanation`` (else
    the claim's ``explain``: the cause). ``datasets``: the data the row was decided on; a ``paper``
    row outside the claim's ``scope`` is refused (use :meth:`Claim.ours`). A paper row on stand-in
    data says that it is no evidence about the paper at this installation.
    ``reference``: the paper's own numbers, quoted from its text or tables (never our measurement)."""
    datasets = tuple(sorted({str(d) for d in datasets}))
    if claim.by == PAPER and not claim.in_scope(datasets):
        raise ValueError(f"claim {claim.id}: a paper row decided on {list(datasets)}, outside its scope "
                         f"{list(claim.scope)}; make it an ours row (Claim.ours)")
    if verdict is None:
        if testable:
            raise ValueError(f"claim {claim.id}: a decided row needs the engine's verdict (an estimate with its "
                             "interval against the region), not a boolean")
        verdict = engine.untestable(reason or (f"needs {claim.needs}" if claim.needs else ""))
    elif not verdict.testable and reason:
        verdict = engine.Verdict(verdict.verdict, verdict.measured, f"{verdict.reason}; {reason}"
                                 if verdict.reason else reason, verdict.mde)
    text = "; ".join(x for x in (verdict.measured, measured) if x)
    if verdict.verdict == HELD:
        why = ""
    elif verdict.verdict == NOT_HELD:
        why = "; ".join(x for x in (verdict.reason, explanation or claim.explain) if x)
    else:
        why = "; ".join(x for x in (verdict.reason, explanation) if x)
    kinds = [k for k in data.split("+") if k]
    if claim.by == PAPER and STANDIN in kinds:
        why = "; ".join(x for x in (why, "measured on a stand-in for the paper's data: no evidence about the paper "
                                         "exists at this installation") if x)
    mde = verdict.mde
    return {"id": claim.id, "by": claim.by, "claim": claim.quote, "section": claim.section, "target": claim.target,
            "reference": reference, "measured": text, "held": verdict.verdict, "explanation": why, "scale": scale,
            "data": data, "evidence": bool(verdict.verdict != NOT_TESTABLE and kinds and STANDIN not in kinds),
            "datasets": ",".join(datasets),
            "detectable": "" if not math.isfinite(mde) else ("exact (deterministic)" if mde == 0 else f"{mde:.3g}")}


def not_testable(claim: Claim, reason: str, *, data: str, scale: str, measured: str = "") -> dict:
    return decide(claim, testable=False, ok=False, measured=measured, data=data, scale=scale, reason=reason)


def frame(rows: list[dict]) -> pd.DataFrame:
    """The claims table; refuses unknown verdicts or authors, and a row that is not held or not
    testable without an explanation."""
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["evidence"] = df["evidence"].astype(bool)
    bad = set(df["held"]) - set(VERDICTS)
    if bad:
        raise ValueError(f"unknown verdicts {sorted(bad)}")
    bad = set(df["by"]) - set(BY)
    if bad:
        raise ValueError(f"unknown claim authors {sorted(bad)}; expected one of {BY}")
    df["explanation"] = df["explanation"].fillna("").astype(str)
    df["reference"] = df["reference"].fillna("").astype(str)
    for col in ("datasets", "detectable", "measured"):
        df[col] = df[col].fillna("").astype(str)
    silent = df[(df["held"] != HELD) & (df["explanation"].str.strip() == "")]
    if len(silent):
        raise ValueError(f"claims {list(silent['id'])} are {sorted(set(silent['held']))} without an explanation")
    # the number in every row that is not held: its estimate; a row not testable names its estimate (and the
    # edge it straddles) or says what input is missing
    digit = df["measured"].str.contains(r"\d", regex=True)
    bare = df[(df["held"] == NOT_HELD) & ~digit]
    if len(bare):
        raise ValueError(f"claims {list(bare['id'])} are not held without their number (measured: the estimate)")
    said = digit | df["explanation"].str.contains(r"\d|\bno\b|\bneeds\b|\bnone\b", regex=True)
    bare = df[(df["held"] == NOT_TESTABLE) & ~said]
    if len(bare):
        raise ValueError(f"claims {list(bare['id'])} are not testable without their number or the missing input")
    return df


def within(x: float, target: float, factor: float) -> bool:
    """Two-sided: ``target / factor <= x <= target * factor`` (False for NaN)."""
    return bool(math.isfinite(x) and target / factor <= x <= target * factor)


def between(x: float, lo: float, hi: float) -> bool:
    return bool(math.isfinite(x) and lo <= x <= hi)


def counts(df: pd.DataFrame, by: str | None = PAPER) -> dict[str, int]:
    """Verdict counts of the rows made ``by`` the paper (``None``: every row); ``evidence`` counts
    the decided verdicts that are not on stand-in data nor gated by an audit violation."""
    if by is not None and "by" in df:
        df = df[df["by"] == by]
    out = {v: int((df["held"] == v).sum()) for v in VERDICTS}
    out["evidence"] = int(df["evidence"].sum())
    return out


def _cell(x) -> str:
    return str(x).replace("|", "/").replace("\n", " ")


def _table_lines(df: pd.DataFrame) -> list[str]:
    lines = ["| id | claim | section | target | paper's numbers (quoted) "
             "| measured (estimate [95% interval], position) "
             "| smallest detectable effect | verdict | explanation | data | evidence (audit) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in df.itertuples(index=False):
        verdict = {NOT_HELD: "**not held**", NOT_TESTABLE: "*not testable at this scale*"}.get(r.held, r.held)
        audit = getattr(r, "audit", "")
        ev = ("yes" if r.evidence else "no") + (f" (audit: {audit})" if isinstance(audit, str) and audit else "")
        lines.append("| " + " | ".join(_cell(x) for x in (r.id, r.claim, r.section, r.target, r.reference,
                                                           r.measured, getattr(r, "detectable", ""),
                                                           verdict, r.explanation, r.data, ev)) + " |")
    return lines


def markdown(df: pd.DataFrame, title: str, note: str = "") -> str:
    """The one renderer of a claims table (every paper's ``*_claims.md``): the paper's statements,
    then, in their own section, our checks (the same tests outside the paper's scope, and our own
    statements), never counted with the paper's verdicts."""
    c, o = counts(df), counts(df, OURS)
    scale = ", ".join(sorted({str(s) for s in df["scale"]})) if len(df) else ""
    lines = [f"# {title}", ""]
    if note:
        lines += [f"*Data: {note}.*", ""]
    lines += [f"Scale `{scale}`. The paper's statements, on the paper's data and settings: {c[HELD]} held, "
              f"{c[NOT_HELD]} not held, {c[NOT_TESTABLE]} not testable at this scale; {c['evidence']} decided "
              "verdicts on real or synthetic data count as evidence (verdicts on stand-in data do not, nor those "
              "resting on an implementation a privacy audit caught spending more than its accountant: "
              "tables/audits.md).", "",
              "One decision engine decides every row (docs/claims.md): the estimate with its 95% interval over the "
              "repetitions (width 0 for a deterministic quantity) against the region the sentence states; held "
              "when the interval lies inside, not held when it lies entirely outside, not testable otherwise. "
              "Column *claim* quotes the paper verbatim (our checks state the same test elsewhere, or our own "
              "statement); *paper's numbers (quoted)* are the paper's own values, never our measurement; "
              "*smallest detectable effect* is what the interval could have resolved (80% power, two-sided 5%).",
              "", "## The paper's statements", ""]
    lines += _table_lines(df[df["by"] == PAPER])
    ours = df[df["by"] == OURS]
    if len(ours):
        lines += ["", "## Our checks (not the paper's statements; not counted with its verdicts)", "",
                  f"{o[HELD]} held, {o[NOT_HELD]} not held, {o[NOT_TESTABLE]} not testable at this scale.", ""]
        lines += _table_lines(ours)
    return "\n".join(lines) + "\n"


def standin_kind(name: str, standin: Iterable[str] = (), synthetic: Iterable[str] = ()) -> str:
    """``stand-in`` when ``name`` is listed as a stand-in, ``synthetic`` when listed (or named
    ``synth*``) as synthetic, else ``real``."""
    if name in set(standin):
        return STANDIN
    if name in set(synthetic) or str(name).startswith("synth"):
        return SYNTHETIC
    return REAL




# --- decision rules shared by the papers (each unit-tested on a case where it must hold and one where
# it must not, tests/test_claims_core.py) ---

Z_95 = 1.959963984540054          # two-sided 5% normal quantile
SLOPE_TARGET, SLOPE_TOL = -1.0, 0.5   # "inversely proportional to eps": log-log slope -1 +- 0.5


def standard_error(sd, reps):
    """Standard error of a mean from the sample SD over ``reps`` repetitions (NaN for < 2)."""
    sd, reps = np.asarray(sd, float), np.asarray(reps, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(reps >= 2, sd / np.sqrt(reps), np.nan)


def t_critical(reps, alpha: float = 0.05) -> np.ndarray:
    """Two-sided Student-t quantile with ``reps - 1`` degrees of freedom, elementwise (inf below 2
    repetitions)."""
    reps = np.asarray(reps, float)
    with np.errstate(invalid="ignore"):
        return np.where(reps >= 2, engine.t_ppf(1 - alpha / 2, np.maximum(reps - 1, 1)), np.inf)


def t_quantile(reps) -> float:
    """The ``z`` of :func:`significantly_greater` and :func:`indistinguishable_from_min` for means
    over ``reps`` repetitions each: :func:`t_critical` (``reps - 1`` df is at most Welch's df for
    equal repetitions, so this is the conservative choice); :data:`Z_95` when ``reps`` is unknown
    (None or NaN)."""
    if reps is None or not math.isfinite(float(reps)):
        return Z_95
    return float(t_critical(float(reps)))


def significantly_greater(a: float, se_a: float, b: float, se_b: float, z: float = Z_95) -> bool:
    """``a > b`` by more than ``z`` standard errors of the difference (a z test on two means with
    their standard errors; False when an SE is missing, so the test cannot pass on no evidence). The
    normal quantile is lenient at few repetitions (a t quantile with 2-4 of them is 2.8-12.7): with
    the per-repetition values at hand, :func:`t_greater` is the valid test."""
    se = math.hypot(se_a, se_b)
    return bool(all(math.isfinite(v) for v in (a, b, se)) and se > 0 and a - b > z * se)


@dataclass(frozen=True)
class TTest:
    """A two-sample t test of ``mean(a) - mean(b)``: ``kind`` (``paired`` or ``Welch``), the
    repetitions of each side, the difference of the means, its standard error, t, the degrees of
    freedom and the two-sided p-value (NaN where the test cannot be made)."""

    kind: str
    n_a: int
    n_b: int
    diff: float
    se: float
    t: float
    df: float
    p: float

    def text(self) -> str:
        return f"{self.kind} t {self.t:.3g}, df {self.df:.3g}, p {self.p:.2g}"


def _finite(x) -> np.ndarray:
    x = np.asarray(x, float).ravel()
    return x[np.isfinite(x)]


def t_test(a, b, *, paired: bool) -> TTest:
    """Student's t test of ``mean(a) - mean(b)`` over repetitions, valid at few repetitions (the t
    quantile grows as they shrink, where a z test keeps 1.96). ``paired``: ``a[r]`` and ``b[r]`` come
    from the same repetition's randomness (same seed), so the test is on the differences, df = n - 1
    (pairs with a NaN dropped); else Welch's test on two independent samples, with Welch-Satterthwaite
    df (:func:`welch_from_stats`). NaN statistics with fewer than 2 repetitions on a side or a zero
    standard error."""
    if not paired:
        a, b = _finite(a), _finite(b)
        sd = [float(x.std(ddof=1)) if x.size >= 2 else math.nan for x in (a, b)]
        return welch_from_stats(float(a.mean()) if a.size else math.nan, sd[0], a.size,
                                float(b.mean()) if b.size else math.nan, sd[1], b.size)
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if a.size != b.size:
        raise ValueError(f"a paired t test needs as many repetitions on each side ({a.size} vs {b.size})")
    d = (a - b)[np.isfinite(a) & np.isfinite(b)]
    diff = float(d.mean()) if d.size else math.nan
    se = float(d.std(ddof=1) / math.sqrt(d.size)) if d.size >= 2 else math.nan
    if not (math.isfinite(se) and se > 0):
        return TTest("paired", d.size, d.size, diff, se, math.nan, math.nan, math.nan)
    t, df = diff / se, float(d.size - 1)
    return TTest("paired", d.size, d.size, diff, se, t, df, float(2 * engine.t_sf(abs(t), df)))


def welch_from_stats(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int) -> TTest:
    """Welch's t test of ``mean_a - mean_b`` from each side's mean, sample SD (ddof 1) and number of
    repetitions (what a summary table keeps), with Welch-Satterthwaite df; as :func:`t_test`."""
    n_a, n_b = (int(n) if math.isfinite(float(n)) else 0 for n in (n_a, n_b))
    diff = float(mean_a - mean_b)
    se = df = math.nan
    if min(n_a, n_b) >= 2 and math.isfinite(sd_a) and math.isfinite(sd_b):
        va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
        se = math.sqrt(va + vb)
        den = va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1)
        df = (va + vb) ** 2 / den if den > 0 else math.nan
    if not (math.isfinite(se) and se > 0 and math.isfinite(df) and math.isfinite(diff)):
        return TTest("Welch", n_a, n_b, diff, se, math.nan, math.nan, math.nan)
    t = diff / se
    return TTest("Welch", n_a, n_b, diff, se, t, df, float(2 * engine.t_sf(abs(t), df)))


def t_sign(r: TTest, alpha: float = 0.05) -> int:
    """+1 where the test says the first mean is significantly above the second (two-sided
    ``alpha``), -1 where below, 0 where undecided (or no test could be made)."""
    if not (math.isfinite(r.t) and r.p < alpha):
        return 0
    return 1 if r.t > 0 else -1


def at_every_point(signs) -> bool | None:
    """The verdict of "significantly above at every point" from each point's :func:`t_sign`: True
    when every point is +1, False when one is -1 (significantly the other way), else None (undecided
    points and none against: not testable, more repetitions needed)."""
    signs = list(signs)
    if signs and all(v > 0 for v in signs):
        return True
    return False if any(v < 0 for v in signs) else None


def every_point(tests: Mapping, alpha: float = 0.05) -> tuple[bool | None, dict, dict]:
    """"Significantly above at every point" from one :class:`TTest` per point (key -> test of the
    worse side minus the better): ``(verdict, sign per key, count per sign)`` with the verdict of
    :func:`at_every_point` and the signs of :func:`t_sign`."""
    sign = {k: t_sign(r, alpha) for k, r in tests.items()}
    counts = {v: sum(x == v for x in sign.values()) for v in (1, -1, 0)}
    return at_every_point(sign.values()), sign, counts


def t_greater(a, b, *, paired: bool, alpha: float = 0.05) -> bool:
    """``mean(a) > mean(b)`` by a t test over the repetitions (:func:`t_test`; two-sided ``alpha``):
    False with fewer than 2 repetitions on a side or no spread, so it cannot pass on no evidence."""
    return t_sign(t_test(a, b, paired=paired), alpha) > 0


def indistinguishable_from_min(x, mean, se, z: float = Z_95) -> np.ndarray:
    """The points of ``x`` whose mean is not significantly above the least mean: ``mean_i - mean_min
    <= z * sqrt(se_i^2 + se_min^2)`` (the least point is always in the set)."""
    x, mean, se = (np.asarray(v, float) for v in (x, mean, se))
    ok = np.isfinite(x) & np.isfinite(mean) & np.isfinite(se)
    x, mean, se = x[ok], mean[ok], se[ok]
    if not x.size:
        return x
    i = int(mean.argmin())
    return np.sort(x[mean - mean[i] <= z * np.sqrt(se ** 2 + se[i] ** 2)])


def trend_test(x, y) -> tuple[float, float]:
    """(Kendall tau-b of ``y`` on ``x``, two-sided p-value); NaN when either is constant."""
    from scipy import stats

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.unique(x).size < 2 or np.unique(y).size < 2:
        return math.nan, math.nan
    r = stats.kendalltau(x, y)
    return float(r.statistic), float(r.pvalue)


def decreasing_trend(x, y, alpha: float = 0.05) -> bool:
    """``y`` decreases in ``x``: Kendall tau < 0 with two-sided p < ``alpha``."""
    tau, p = trend_test(x, y)
    return bool(math.isfinite(tau) and tau < 0 and p < alpha)


def loglog_slope(x, y) -> tuple[float, float]:
    """(least-squares slope of log y on log x, its standard error; NaN with < 3 points)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    lx, ly = np.log(x[ok]), np.log(y[ok])
    if lx.size < 3 or np.ptp(lx) == 0:
        return math.nan, math.nan
    (b, a), cov = np.polyfit(lx, ly, 1, cov="unscaled")
    resid = ly - (a + b * lx)
    s2 = float(resid @ resid) / (lx.size - 2) if lx.size > 2 else math.nan
    return float(b), float(math.sqrt(max(cov[0, 0] * s2, 0.0)))


def inversely_proportional(x, y) -> bool:
    """"Inversely proportional": the log-log slope of ``y`` on ``x`` in [-1.5, -0.5] (one rule for
    every figure where a paper says it)."""
    return between(loglog_slope(x, y)[0], SLOPE_TARGET - SLOPE_TOL, SLOPE_TARGET + SLOPE_TOL)


INVERSE_EPS_TARGET = (f"least-squares slope of log MSE on log eps in [{SLOPE_TARGET - SLOPE_TOL:g}, "
                      f"{SLOPE_TARGET + SLOPE_TOL:g}] (inverse proportionality: -1 +- 0.5)")
