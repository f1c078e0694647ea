"""The one decision engine (shuffledp.claims.engine): every outcome on a holding, a failing and an
undecided case, each interval from its stated test, location claims on a grid that can and cannot
resolve them, and no paper row decided outside its declared scope."""

import math

import numpy as np
import pytest

from shuffledp.claims import core
from shuffledp.claims import engine as E


@pytest.mark.parametrize("iv, verdict, word", [
    (E.Interval(5.0, 4.0, 6.0, "t", 10), E.HELD, "inside"),
    (E.Interval(12.9, 11.0, 14.0, "t", 10), E.NOT_HELD, "above the window [2.5, 10]: tighter than claimed"),
    (E.Interval(1.5, 1.0, 2.0, "t", 10), E.NOT_HELD, "below the window [2.5, 10]: looser than claimed"),
    (E.Interval(9.0, 7.0, 11.0, "t", 10), E.NOT_TESTABLE, "straddles the edge 10"),
    (E.exact(10.0), E.HELD, "inside"),
    (E.exact(10.01), E.NOT_HELD, "above"),
])
def test_judge_window(iv, verdict, word):
    r = E.window(2.5, 10, below="looser than claimed", above="tighter than claimed")
    j = E.judge(iv, r)
    assert j.verdict == verdict
    assert word in j.position
    if verdict != E.HELD:
        assert j.reason and f"{iv.estimate:.3g}" in j.reason   # the number is named


def test_judge_one_sided_open_edge():
    r = E.above(0.0)
    assert E.judge(E.Interval(0.3, 0.01, 0.6, "Welch", 5), r).verdict == E.HELD
    assert E.judge(E.Interval(0.3, 0.0, 0.6, "Welch", 5), r).verdict == E.NOT_TESTABLE   # 0 is not > 0
    assert E.judge(E.Interval(-0.3, -0.6, -0.01, "Welch", 5), r).verdict == E.NOT_HELD
    assert E.judge(E.exact(0.0), r).verdict == E.NOT_HELD
    assert E.judge(E.Interval(math.nan, math.nan, math.nan), r).verdict == E.NOT_TESTABLE


def test_all_of():
    r = E.above(0.0)
    held = E.judge(E.Interval(1, 0.5, 1.5, "t", 5), r, "a")
    bad = E.judge(E.Interval(-1, -1.5, -0.5, "t", 5), r, "b")
    und = E.judge(E.Interval(0.1, -0.5, 0.7, "t", 5), r, "c")
    assert E.all_of([held, held]).verdict == E.HELD
    assert E.all_of([held, und]).verdict == E.NOT_TESTABLE
    v = E.all_of([held, und, bad])
    assert v.verdict == E.NOT_HELD and "b:" in v.reason and "-1" in v.reason
    assert E.all_of([]).verdict == E.NOT_TESTABLE


def test_t_interval_matches_scipy():
    from scipy import stats

    x = np.array([1.0, 2.0, 3.5, 4.0, 2.2])
    iv = E.t_interval(x)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    assert iv.lo == pytest.approx(lo) and iv.hi == pytest.approx(hi)
    assert E.t_interval([1.0]).hi == math.inf   # one repetition never decides


def test_welch_interval_agrees_with_the_welch_test():
    from scipy import stats

    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.normal(1.0, 1.0, 6), rng.normal(0.0, 2.0, 9)
        iv = E.welch_interval(a.mean(), a.std(ddof=1), a.size, b.mean(), b.std(ddof=1), b.size)
        p = stats.ttest_ind(a, b, equal_var=False).pvalue
        assert (p < 0.05) == (iv.lo > 0 or iv.hi < 0)


def test_ratio_interval_contains_ratio_and_shrinks_with_reps():
    w5 = E.ratio_interval(2.0, 0.4, 5, 1.0, 0.2, 5)
    w50 = E.ratio_interval(2.0, 0.4, 50, 1.0, 0.2, 50)
    assert w5.lo < 2.0 < w5.hi and w50.hi - w50.lo < w5.hi - w5.lo
    assert E.ratio_interval(2.0, 0.4, 5, 1.0, 0.2, 5, offset=-1).estimate == pytest.approx(1.0)


def test_kendall_interval_excludes_zero_iff_trend():
    x = np.arange(10.0)
    assert E.kendall_interval(x, x).lo > 0
    assert E.kendall_interval(x, -x).hi < 0
    flat = E.kendall_interval(x, np.array([1, 3, 2, 4, 3, 1, 2, 4, 3, 2.0]))
    assert flat.lo < 0 < flat.hi


def test_bootstrap_interval_reproducible():
    v = np.arange(20.0)
    a, b = E.bootstrap_interval(v, np.median, seed=1), E.bootstrap_interval(v, np.median, seed=1)
    assert a == b and a.lo <= 9.5 <= a.hi


def test_resolvable_grid():
    # the default 4-point m grid: [1, 4.64] cannot tell "around 4" from "around 1"
    grid = [0.1, 0.464, 2.15, 10.0]
    ok, why = E.resolvable(grid, E.window(2.0, 8.0))
    assert not ok and "1 grid point" in why
    ok, _ = E.resolvable(np.geomspace(0.1, 10, 13), E.window(2.0, 8.0))
    assert ok
    ok, why = E.resolvable(np.geomspace(2.5, 10, 5), E.window(2.0, 8.0))
    assert not ok and "below 2" in why


def test_mde():
    assert E.exact(3.0).mde == 0
    iv = E.Interval(0, -1.0, 1.0, "t", 10)
    assert iv.mde == pytest.approx((1.96 + 0.8416) / 1.96, rel=1e-3)


def test_decide_routes_engine_verdict_with_number_and_direction():
    c = core.Claim("x", "quote", "Sec. 1", "ratio in [2.5, 10]", explain="cause named")
    j = E.judge(E.exact(12.9), E.window(2.5, 10, above="tighter than claimed"))
    row = core.decide(c, verdict=E.one(j), data="real", scale="default")
    assert row["held"] == E.NOT_HELD and "12.9" in row["measured"] and "tighter than claimed" in row["measured"]
    assert "12.9" in row["explanation"] and "cause named" in row["explanation"]
    assert row["detectable"].startswith("exact")


def test_no_paper_row_outside_its_scope():
    c = core.Claim("y", "quote", "Sec. 6", "t", scope=("br", "mx"))
    v = E.one(E.judge(E.exact(1.0), E.above(0)))
    core.decide(c, verdict=v, data="real", scale="s", datasets=["br"])
    with pytest.raises(ValueError, match="outside its scope"):
        core.decide(c, verdict=v, data="real", scale="s", datasets=["adult"])
    row = core.decide(c.ours("_adult", "Adult"), verdict=v, data="real", scale="s", datasets=["adult"])
    assert row["by"] == core.OURS and row["id"] == "y_adult"


def test_standin_paper_row_says_no_evidence():
    c = core.Claim("z", "quote", "Sec. 6", "t")
    row = core.decide(c, verdict=E.one(E.judge(E.exact(1.0), E.above(0))), data="stand-in", scale="s")
    assert row["held"] == E.HELD and not row["evidence"] and "no evidence about the paper" in row["explanation"]


def test_power_sizing_inverts_and_detects():
    r = E.repetitions_for(0.3, math.log(1.5))
    assert r == 10                              # 2 * 7.85 * 0.09 / 0.164 = 8.6 -> 9, + 1 for t
    assert E.detectable(0.3, r - 1) <= math.log(1.5) < E.detectable(0.3, r - 2)
    # simulated: at that R a true 1.5x ratio gives an interval above 1 in about 80% of runs or more
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(400):
        a, b = rng.lognormal(math.log(1.5), 0.3, r), rng.lognormal(0.0, 0.3, r)
        iv = E.ratio_interval(a.mean(), a.std(ddof=1), r, b.mean(), b.std(ddof=1), r)
        hits += iv.lo > 1.0
    assert hits / 400 >= 0.75


def test_any_of():
    r = E.below(0.0)
    yes = E.judge(E.Interval(-1, -1.5, -0.5, "t", 5), r, "a")
    no = E.judge(E.Interval(1, 0.5, 1.5, "t", 5), r, "b")
    und = E.judge(E.Interval(0.1, -0.5, 0.7, "t", 5), r, "c")
    assert E.any_of([no, yes]).verdict == E.HELD
    assert E.any_of([no, no]).verdict == E.NOT_HELD
    assert E.any_of([no, und]).verdict == E.NOT_TESTABLE
