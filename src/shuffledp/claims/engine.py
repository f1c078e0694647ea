"""The one decision engine of every claims table (docs/claims.md).

A claim states a *region* for a *quantity* ("up to 5x tighter": the largest ratio in [2.5, 10];
"significantly above": the difference in (0, inf)). A measurement gives an *estimate* with its
*interval* over the repetitions, from the claim's stated test (:func:`t_interval`,
:func:`welch_interval`, :func:`ratio_interval`, :func:`kendall_interval`, :func:`bootstrap_interval`;
width 0 for a deterministic quantity: :func:`exact`). The verdict is

* ``held`` when the interval lies inside the region,
* ``not held`` when it lies entirely outside,
* ``not testable at this scale`` otherwise (the interval straddles an edge of the region: more
  repetitions, or a finer grid, would decide it),

and :func:`judge` says where the estimate stands against the region, with its direction ("12.9
[11.2, 14.8], above the window [2.5, 10]: tighter than claimed"). A claim decided at several
points (every eps, every panel) is :func:`all_of` its points: held when every point is held, not
held when one is not held, else not testable. A location claim ("the optimal m is around 2") is
decided only where the grid can resolve its region (:func:`resolvable`).

Nothing here knows a paper; the papers' modules build the intervals and regions and hand the
judgement to :func:`shuffledp.claims.core.decide`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

HELD = "held"
NOT_HELD = "not held"
NOT_TESTABLE = "not testable at this scale"

ALPHA = 0.05   # every interval is two-sided 95%


def _g(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    return f"{x:.3g}"


@dataclass(frozen=True)
class Interval:
    """An estimate and its two-sided 95% interval ``[lo, hi]`` from ``method`` (``exact`` for a
    deterministic quantity: ``lo == hi == estimate``); ``reps``: the repetitions behind it (0 when
    deterministic); ``mde``: the smallest effect the test could have detected (half-width of the
    interval times (z_{alpha/2} + z_{0.2}) / z_{alpha/2}: 80% power at two-sided 5%), NaN if unknown."""

    estimate: float
    lo: float
    hi: float
    method: str = "exact"
    reps: int = 0

    def __post_init__(self):
        if not (math.isnan(self.lo) or math.isnan(self.hi)) and self.lo > self.hi:
            raise ValueError(f"interval [{self.lo}, {self.hi}] is reversed")

    @property
    def finite(self) -> bool:
        return all(math.isfinite(v) for v in (self.estimate, self.lo, self.hi))

    @property
    def exact(self) -> bool:
        return self.lo == self.hi

    @property
    def mde(self) -> float:
        """The smallest difference from the estimate's null the test detects with 80% power: 2.8 / 1.96
        half-widths (0 for an exact quantity)."""
        if self.exact:
            return 0.0
        return (self.hi - self.lo) / 2 * (1.959963984540054 + 0.8416212335729143) / 1.959963984540054

    def text(self) -> str:
        if math.isnan(self.estimate):
            return "no estimate"
        if self.exact:
            return _g(self.estimate)
        return f"{_g(self.estimate)} [{_g(self.lo)}, {_g(self.hi)}] ({self.method}, {self.reps} reps)"


@dataclass(frozen=True)
class Region:
    """The values the sentence allows: ``[lo, hi]`` (an edge may be open; infinite for a one-sided
    claim). ``below`` / ``above``: what an estimate under / over the region means, in words of the
    claim (e.g. ``"looser than claimed"`` / ``"tighter than claimed"``); ``name``: how the region is
    called in the row ("the window", "the paper's range")."""

    lo: float = -math.inf
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    below: str = "below the claimed region"
    above: str = "above the claimed region"
    name: str = "the region"

    def __post_init__(self):
        if self.lo > self.hi:
            raise ValueError(f"region [{self.lo}, {self.hi}] is empty")

    def contains(self, x: float) -> bool:
        if not math.isfinite(x) and math.isnan(x):
            return False
        lo_ok = x > self.lo if self.lo_open else x >= self.lo
        hi_ok = x < self.hi if self.hi_open else x <= self.hi
        return bool(lo_ok and hi_ok)

    def text(self) -> str:
        if math.isinf(self.lo) and math.isinf(self.hi):
            return "(-inf, inf)"
        if math.isinf(self.lo):
            return f"{'<' if self.hi_open else '<='} {_g(self.hi)}"
        if math.isinf(self.hi):
            return f"{'>' if self.lo_open else '>='} {_g(self.lo)}"
        return f"{'(' if self.lo_open else '['}{_g(self.lo)}, {_g(self.hi)}{')' if self.hi_open else ']'}"


def above(threshold: float = 0.0, **kw) -> Region:
    """One-sided: the quantity exceeds ``threshold`` (open edge)."""
    kw.setdefault("name", "the region")
    return Region(lo=threshold, lo_open=True, **kw)


def below(threshold: float = 0.0, **kw) -> Region:
    kw.setdefault("name", "the region")
    return Region(hi=threshold, hi_open=True, **kw)


def window(lo: float, hi: float, **kw) -> Region:
    kw.setdefault("name", "the window")
    return Region(lo=lo, hi=hi, **kw)


@dataclass(frozen=True)
class Judgement:
    """One point's verdict: ``verdict``, the interval, the region and ``position`` (where the estimate
    stands, with its direction); ``reason`` for a verdict other than held."""

    verdict: str
    interval: Interval
    region: Region
    position: str
    reason: str = ""
    label: str = ""

    def text(self) -> str:
        head = f"{self.label}: " if self.label else ""
        return f"{head}{self.interval.text()}, {self.position}"


def judge(iv: Interval, region: Region, label: str = "") -> Judgement:
    """The verdict of one estimate against one region (module docstring)."""
    r = region.text()
    if not (math.isfinite(iv.estimate) or math.isinf(iv.estimate)) or math.isnan(iv.lo) or math.isnan(iv.hi):
        return Judgement(NOT_TESTABLE, iv, region, f"no estimate (target {r})",
                         "no finite estimate or interval could be computed", label)
    lo_in, hi_in = region.contains(iv.lo), region.contains(iv.hi)
    if lo_in and hi_in:
        return Judgement(HELD, iv, region, f"inside {region.name} {r}", "", label)
    if iv.hi < region.lo or (iv.hi == region.lo and region.lo_open):
        return Judgement(NOT_HELD, iv, region, f"below {region.name} {r}: {region.below}",
                         f"{_g(iv.estimate)} lies entirely below {region.name} {r} ({region.below})", label)
    if iv.lo > region.hi or (iv.lo == region.hi and region.hi_open):
        return Judgement(NOT_HELD, iv, region, f"above {region.name} {r}: {region.above}",
                         f"{_g(iv.estimate)} lies entirely above {region.name} {r} ({region.above})", label)
    side = region.lo if not lo_in else region.hi
    return Judgement(NOT_TESTABLE, iv, region, f"straddles the edge {_g(side)} of {region.name} {r}",
                     f"the interval of {_g(iv.estimate)} ({iv.method}) straddles the edge {_g(side)} of "
                     f"{region.name} {r}: the smallest effect it resolves is {_g(iv.mde)}; more repetitions "
                     "would decide it", label)


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict from one or more judgements, with the text of ``measured`` and the reason."""

    verdict: str
    measured: str
    reason: str
    mde: float = math.nan

    @property
    def testable(self) -> bool:
        return self.verdict != NOT_TESTABLE

    @property
    def ok(self) -> bool:
        return self.verdict == HELD


def all_of(judgements: Sequence[Judgement], what: str = "points", quantifier: str = "every") -> Verdict:
    """"At every point": held when every judgement is held, not held when one is not held (the
    sentence is then false at that point whatever the others say), else not testable. No judgement:
    not testable. ``measured`` lists every point; the reason names the points that decide it."""
    js = list(judgements)
    if not js:
        return Verdict(NOT_TESTABLE, "", f"no {what} could be measured")
    n = {v: sum(j.verdict == v for j in js) for v in (HELD, NOT_HELD, NOT_TESTABLE)}
    head = (f"{n[HELD]}/{len(js)} {what} held, {n[NOT_HELD]} not held, {n[NOT_TESTABLE]} undecided"
            if len(js) > 1 else "")
    body = "; ".join(j.text() for j in js)
    measured = f"{head}: {body}" if head else body
    mdes = [j.interval.mde for j in js if math.isfinite(j.interval.mde)]
    mde = max(mdes) if mdes else math.nan
    if n[NOT_HELD]:
        bad = [j for j in js if j.verdict == NOT_HELD]
        return Verdict(NOT_HELD, measured, "; ".join(f"{j.label + ': ' if j.label else ''}{j.reason}"
                                                     for j in bad[:4]) + (" ..." if len(bad) > 4 else ""), mde)
    if n[NOT_TESTABLE]:
        und = [j for j in js if j.verdict == NOT_TESTABLE]
        return Verdict(NOT_TESTABLE, measured, f"undecided at {n[NOT_TESTABLE]} of {len(js)} {what}, none against: "
                       + "; ".join(f"{j.label + ': ' if j.label else ''}{j.reason}" for j in und[:3])
                       + (" ..." if len(und) > 3 else ""), mde)
    return Verdict(HELD, measured, "", mde)


def any_of(judgements: Sequence[Judgement], what: str = "points") -> Verdict:
    """"At some point" ("sometimes"): held when one judgement is held, not held when every one is not
    held, else not testable."""
    js = list(judgements)
    if not js:
        return Verdict(NOT_TESTABLE, "", f"no {what} could be measured")
    n = {v: sum(j.verdict == v for j in js) for v in (HELD, NOT_HELD, NOT_TESTABLE)}
    measured = (f"{n[HELD]}/{len(js)} {what} held, {n[NOT_HELD]} not held, {n[NOT_TESTABLE]} undecided: "
                + "; ".join(j.text() for j in js))
    mdes = [j.interval.mde for j in js if math.isfinite(j.interval.mde)]
    mde = max(mdes) if mdes else math.nan
    if n[HELD]:
        return Verdict(HELD, measured, "", mde)
    if n[NOT_HELD] == len(js):
        return Verdict(NOT_HELD, measured, f"not held at every one of the {len(js)} {what}: " + "; ".join(
            f"{j.label + ': ' if j.label else ''}{j.reason}" for j in js[:3]) + (" ..." if len(js) > 3 else ""), mde)
    und = [j for j in js if j.verdict == NOT_TESTABLE]
    return Verdict(NOT_TESTABLE, measured, f"held at none of the {len(js)} {what}, undecided at {len(und)}: "
                   + "; ".join(f"{j.label + ': ' if j.label else ''}{j.reason}" for j in und[:3])
                   + (" ..." if len(und) > 3 else ""), mde)


def undecided(label: str, reason: str, region: Region | None = None) -> Judgement:
    """A point with no estimate at all (nothing to measure there: a missing input, no amplified user):
    not testable, with ``reason`` (which must name what is missing, with its count)."""
    nan = math.nan
    return Judgement(NOT_TESTABLE, Interval(nan, nan, nan, "none", 0), region or Region(), "nothing to measure",
                     reason, label)


def one(j: Judgement) -> Verdict:
    """The verdict of a claim decided by one judgement."""
    return Verdict(j.verdict, j.text(), j.reason, j.interval.mde)


def untestable(reason: str, measured: str = "") -> Verdict:
    """Not testable for a reason outside the interval (the data or the grid cannot show the claim
    false): the grid cannot resolve a location, a run is missing."""
    return Verdict(NOT_TESTABLE, measured, reason)


# --- intervals from the stated tests -----------------------------------------------------------

def exact(x: float) -> Interval:
    """A deterministic quantity (a bound, a computed message size): width 0."""
    x = float(x)
    return Interval(x, x, x, "exact", 0)


def t_ppf(q, df):
    """Student-t quantile, elementwise: the doubles of ``scipy.stats.t.ppf(q, df)`` (NaN where
    ``df <= 0`` or ``q`` is outside [0, 1]; -inf and inf at q = 0 and 1) from ``scipy.special.stdtrit``,
    which that method calls, without importing scipy.stats (about half a CPU second of a report job;
    tests/test_claims_tdist.py compares the two)."""
    from scipy.special import stdtrit

    q, df = np.asarray(q, float), np.asarray(df, float)
    with np.errstate(invalid="ignore"):
        ok = (df > 0) & (q >= 0) & (q <= 1)
        out = np.where(ok, stdtrit(np.where(ok, df, 1.0), np.where(ok, q, 0.5)), np.nan)
        out = np.where(ok & (q == 0), -np.inf, np.where(ok & (q == 1), np.inf, out))
    return out[()] if out.ndim == 0 else out


def t_sf(x, df):
    """Student-t survival function, elementwise: the doubles of ``scipy.stats.t.sf(x, df)`` (NaN
    where ``df <= 0`` or ``x`` is NaN) from ``scipy.special.stdtr(df, -x)``, which that method calls,
    without importing scipy.stats (tests/test_claims_tdist.py)."""
    from scipy.special import stdtr

    x, df = np.asarray(x, float), np.asarray(df, float)
    with np.errstate(invalid="ignore"):
        ok = (df > 0) & ~np.isnan(x)
        out = np.where(ok, stdtr(np.where(ok, df, 1.0), -np.where(ok, x, 0.0)), np.nan)
    return out[()] if out.ndim == 0 else out


def _tq(df: float) -> float:
    return float(t_ppf(1 - ALPHA / 2, df)) if df >= 1 and math.isfinite(df) else math.inf


def t_interval(values=None, *, mean: float | None = None, sd: float | None = None, n: int | None = None) -> Interval:
    """Student-t 95% interval of a mean over repetitions (from the values, or their mean, SD and
    count). Fewer than 2 repetitions: an infinite interval (never decides)."""
    if values is not None:
        v = np.asarray(values, float).ravel()
        v = v[np.isfinite(v)]
        n = int(v.size)
        mean = float(v.mean()) if n else math.nan
        sd = float(v.std(ddof=1)) if n >= 2 else math.nan
    n = int(n or 0)
    if n < 2 or sd is None or not math.isfinite(sd):
        return Interval(float(mean) if mean is not None else math.nan, -math.inf, math.inf, "t", n)
    h = _tq(n - 1) * sd / math.sqrt(n)
    return Interval(float(mean), float(mean) - h, float(mean) + h, "t", n)


def welch_interval(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int) -> Interval:
    """Welch's 95% interval of ``mean_a - mean_b`` (Welch-Satterthwaite df); infinite with fewer than
    2 repetitions on a side."""
    diff = float(mean_a - mean_b)
    n_a, n_b = int(n_a or 0), int(n_b or 0)
    if min(n_a, n_b) < 2 or not (math.isfinite(sd_a) and math.isfinite(sd_b)):
        return Interval(diff, -math.inf, math.inf, "Welch", min(n_a, n_b))
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(diff, diff, diff, "Welch", min(n_a, n_b))
    df = (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))
    h = _tq(df) * se
    return Interval(diff, diff - h, diff + h, "Welch", min(n_a, n_b))


def ratio_interval(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int,
                   offset: float = 0.0) -> Interval:
    """95% interval of ``mean_a / mean_b + offset`` (both means positive, independent repetitions):
    a Welch interval of log(mean_a) - log(mean_b) by the delta method (SE of a log mean = SE / mean),
    mapped back. Infinite with fewer than 2 repetitions on a side."""
    r = float(mean_a / mean_b) if mean_b else math.nan
    n_a, n_b = int(n_a or 0), int(n_b or 0)
    if min(n_a, n_b) < 2 or not (mean_a > 0 and mean_b > 0 and math.isfinite(sd_a) and math.isfinite(sd_b)):
        return Interval(r + offset, -math.inf, math.inf, "Welch on log ratio", min(n_a, n_b))
    va, vb = (sd_a / mean_a) ** 2 / n_a, (sd_b / mean_b) ** 2 / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(r + offset, r + offset, r + offset, "Welch on log ratio", min(n_a, n_b))
    df = (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))
    h = _tq(df) * se
    return Interval(r + offset, r * math.exp(-h) + offset, r * math.exp(h) + offset, "Welch on log ratio",
                    min(n_a, n_b))


PAIRS_MAX = 2000  # kendall_tau_b counts pairs directly up to this many points


def kendall_tau_b(x, y) -> float:
    """Kendall's tau-b of finite ``x`` and ``y`` (NaN when either is constant): the double of
    ``scipy.stats.kendalltau(x, y).statistic``, from the same integer counts (concordant minus
    discordant pairs, pairs tied in x, in y) and the same division, counted over the n (n - 1) / 2
    pairs without importing scipy.stats (about half a CPU second of a report job;
    tests/test_claims_tdist.py compares the two). Above :data:`PAIRS_MAX` points it is scipy's."""
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    n = int(x.size)
    if n > PAIRS_MAX:
        from scipy import stats

        return float(stats.kendalltau(x, y).statistic)
    i, j = np.triu_indices(n, 1)
    sx = (x[j] > x[i]).astype(np.int64) - (x[j] < x[i])
    sy = (y[j] > y[i]).astype(np.int64) - (y[j] < y[i])
    tot = n * (n - 1) // 2
    xtie, ytie = int((sx == 0).sum()), int((sy == 0).sum())
    if xtie == tot or ytie == tot:
        return math.nan
    con_minus_dis = int((sx * sy).sum())
    tau = con_minus_dis / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return float(np.minimum(1.0, max(-1.0, tau)))


def kendall_interval(x, y) -> Interval:
    """Kendall's tau-b of ``y`` on ``x`` with a 95% interval from its asymptotic standard error
    under the null, sqrt(2 (2n + 5) / (9 n (n - 1))), clipped to [-1, 1] (the interval excludes 0
    exactly when the usual Kendall test rejects at 5%, up to ties); a constant ``y`` has tau 0. NaN
    with fewer than 3 points or a constant ``x``."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = int(x.size)
    if n < 3 or np.unique(x).size < 2:
        return Interval(math.nan, math.nan, math.nan, "Kendall", n)
    tau = kendall_tau_b(x, y) if np.unique(y).size > 1 else 0.0   # a constant y: no trend
    se = math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))
    h = 1.959963984540054 * se
    return Interval(tau, max(-1.0, tau - h), min(1.0, tau + h), "Kendall", n)


def bootstrap_interval(values: Sequence, stat: Callable[[np.ndarray], float], *, reps: int = 2000,
                       seed: int = 0) -> Interval:
    """Percentile bootstrap 95% interval of ``stat`` over the rows of ``values`` (resampled with
    replacement, a fixed seed so the table is reproducible). Fewer than 2 rows: infinite."""
    v = np.asarray(values, float)
    est = float(stat(v)) if len(v) else math.nan
    if len(v) < 2:
        return Interval(est, -math.inf, math.inf, "bootstrap", len(v))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(v), size=(reps, len(v)))
    bs = np.array([stat(v[i]) for i in idx], float)
    bs = bs[np.isfinite(bs)]
    if not bs.size:
        return Interval(est, -math.inf, math.inf, "bootstrap", len(v))
    lo, hi = np.quantile(bs, [ALPHA / 2, 1 - ALPHA / 2])
    return Interval(est, float(min(lo, est)), float(max(hi, est)), "bootstrap", len(v))


# --- location claims ---------------------------------------------------------------------------

def resolvable(grid: Iterable[float], region: Region, inside: int = 2) -> tuple[bool, str]:
    """Can a grid resolve a location claim's region? At least ``inside`` grid points in the region,
    and at least one grid point on each side of it (where the region has that side): else an
    optimum found in the region could not have been found outside it. Returns (ok, reason)."""
    g = np.sort(np.asarray([x for x in grid if math.isfinite(x)], float))
    k_in = int(sum(region.contains(x) for x in g))
    lo_side = math.isinf(region.lo) or bool((g < region.lo).any())
    hi_side = math.isinf(region.hi) or bool((g > region.hi).any())
    if k_in >= inside and lo_side and hi_side:
        return True, ""
    miss = []
    if k_in < inside:
        miss.append(f"{k_in} grid point(s) inside {region.text()} (needs {inside})")
    if not lo_side:
        miss.append(f"no grid point below {_g(region.lo)}")
    if not hi_side:
        miss.append(f"no grid point above {_g(region.hi)}")
    return False, (f"the grid ({', '.join(_g(x) for x in g)}) cannot resolve {region.text()}: " + "; ".join(miss))


# --- power: the repetitions a row needs ---------------------------------------------------------

Z_POWER = 0.8416212335729143     # one-sided 80% power
Z_ALPHA = 1.959963984540054      # two-sided 5%


def repetitions_for(cv: float, delta: float, samples: int = 2) -> int:
    """Repetitions per side for a 95% interval of a log ratio of ``samples`` independent means (2: a
    ratio of two; 1: one mean's log) to detect a difference ``delta`` on the log scale with 80% power,
    each mean having coefficient of variation ``cv`` over repetitions (SE of a log mean = cv /
    sqrt(R)): R = samples (z_0.975 + z_0.8)^2 cv^2 / delta^2, rounded up, plus one for the t quantile
    (never below 2). docs/claims.md, "Power"."""
    if not (cv >= 0 and delta > 0):
        raise ValueError("cv must be >= 0 and delta > 0")
    r = samples * (Z_ALPHA + Z_POWER) ** 2 * cv ** 2 / delta ** 2
    return max(2, math.ceil(r) + 1)


def detectable(cv: float, reps: int, samples: int = 2) -> float:
    """The smallest log-scale difference a log-ratio interval over ``reps`` repetitions per side
    detects with 80% power at two-sided 5% (the inverse of :func:`repetitions_for`, normal quantiles)."""
    return (Z_ALPHA + Z_POWER) * cv * math.sqrt(samples / reps)
