"""The shared claims model and decision rules: each rule on a case where it must hold and one where
it must not (including differences within noise), the row model's refusals, and every quoted
sentence checked against the seed papers' text."""

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from shuffledp.claims import core as C
from shuffledp.claims import engine as E
from shuffledp.claims import multidim, personalized, peruser, segmented
from shuffledp.experiments import multidim_frameworks as FW

SEEDS = Path(os.environ.get("SHUFFLEDP_SEEDS", "/work/shared/seeds"))


def verdict(ok: bool):
    """An engine verdict on an exact quantity: 1 (held) or 0 (not held) against the region > 0.5."""
    return E.one(E.judge(E.exact(1.0 if ok else 0.0), E.above(0.5), "x"))


def test_decide_and_frame_explanations():
    c = C.Claim("x", "s", "p", "t", needs="a finer grid", explain="what differs")
    r = C.decide(c, testable=False, ok=True, measured="m", data="real", scale="s")
    assert r["held"] == C.NOT_TESTABLE and r["explanation"] == "needs a finer grid" and not r["evidence"]
    assert C.decide(c, verdict=verdict(True), data="stand-in", scale="s")["evidence"] is False
    bad = C.decide(c, verdict=verdict(False), data="real+synthetic", scale="s")
    assert bad["evidence"] is True and bad["explanation"].endswith("what differs")
    assert "0 lies entirely below" in bad["explanation"] and bad["measured"].startswith("x: 0")
    assert C.decide(c, verdict=verdict(True), data="real", scale="s")["explanation"] == ""
    assert C.data_kind(["real", "stand-in", "synthetic"]) == C.STANDIN
    with pytest.raises(ValueError):
        C.data_kind(["made-up"])
    with pytest.raises(ValueError, match="unknown verdicts"):
        C.frame([dict(r, held="maybe")])
    silent = C.decide(C.Claim("y", "s", "p", "t"), verdict=E.Verdict(C.NOT_HELD, "", ""), data="real", scale="s")
    with pytest.raises(ValueError, match="without an explanation"):
        C.frame([silent])
    with pytest.raises(ValueError, match="by must be"):
        C.Claim("z", "s", "p", "t", by="someone")
    df = C.frame([r, bad])
    assert list(df.columns) == C.COLUMNS


def test_markdown_shows_the_new_columns_and_labels_our_checks():
    ours = C.Claim("o", "our check", "Sec. 1", "t", by=C.OURS, explain="not the paper's assumption")
    paper = C.Claim("p", "the paper's sentence", "Sec. 2", "t")
    df = C.frame([C.decide(ours, verdict=verdict(False), measured="m", data="real", scale="s"),
                  C.decide(paper, verdict=verdict(True), measured="m", data="real", scale="s", reference="2.0")])
    md = C.markdown(df, "T")
    assert "| id | claim | section | target | paper's numbers (quoted) | measured" in md
    assert "not the paper's assumption" in md
    assert "the paper's data and settings: 1 held, 0 not held" in md
    # our checks in their own section, after the paper's rows
    assert md.index("## The paper's statements") < md.index("| p |") < md.index("## Our checks") < md.index("| o |")
    assert C.counts(df) == {C.HELD: 1, C.NOT_HELD: 0, C.NOT_TESTABLE: 0, "evidence": 1}


def test_significantly_greater():
    assert C.significantly_greater(1.2, 0.05, 1.0, 0.05)            # 0.2 > 1.96 * 0.07
    assert not C.significantly_greater(1.02, 0.05, 1.0, 0.05)       # a 2% difference within noise
    assert not C.significantly_greater(1.0, 0.05, 1.2, 0.05)        # one-directional
    assert not C.significantly_greater(1.2, math.nan, 1.0, 0.05)    # no SE: no evidence


def test_t_test_matches_scipy_and_needs_two_repetitions():
    from scipy import stats

    a, b = np.array([3.1, 4.4, 5.0, 4.2]), np.array([1.0, 1.6, 0.7])
    w = C.t_test(a, b, paired=False)
    ref = stats.ttest_ind(a, b, equal_var=False)
    assert w.kind == "Welch" and math.isclose(w.t, ref.statistic) and math.isclose(w.p, ref.pvalue)
    va, vb = a.var(ddof=1) / 4, b.var(ddof=1) / 3
    assert math.isclose(w.df, (va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 2))  # Welch-Satterthwaite
    c = np.array([0.8, 1.1, 0.9, 1.3])
    pr = C.t_test(a, c, paired=True)
    ref = stats.ttest_rel(a, c)
    assert pr.kind == "paired" and pr.df == 3 and math.isclose(pr.t, ref.statistic) and math.isclose(pr.p, ref.pvalue)
    with pytest.raises(ValueError, match="as many repetitions"):
        C.t_test(a, b, paired=True)
    for x, y in (([5.0], [1.0, 1.1]), ([5.0, 6.0], [1.0]), ([5.0, 5.0], [1.0, 1.0])):  # 1 repetition; no spread
        assert math.isnan(C.t_test(x, y, paired=False).t) and not C.t_greater(x, y, paired=False)
        assert C.t_sign(C.t_test(x, y, paired=False)) == 0
    # from a summary's mean, SD and repetitions: the same test
    s = C.welch_from_stats(a.mean(), a.std(ddof=1), 4, b.mean(), b.std(ddof=1), 3)
    assert math.isclose(s.t, w.t) and math.isclose(s.df, w.df) and math.isclose(s.p, w.p)
    assert C.t_sign(w) == 1 and C.t_sign(C.t_test(b, a, paired=False)) == -1


def test_t_greater_holds_breaks_and_rejects_the_noise_a_z_test_passes():
    """Must hold: a clear gap at 3 repetitions; must not: equal means, or the wrong direction; the
    noise case: 2 and 3 repetitions whose means differ by 2.2-2.5 standard errors, which a z test
    calls significant and the t test (df about 1.5 and 2.3) does not."""
    assert C.t_greater([10.0, 10.5, 9.8], [1.0, 1.2, 0.9], paired=False)
    assert not C.t_greater([1.0, 1.2, 0.9], [10.0, 10.5, 9.8], paired=False)          # one-directional
    assert not C.t_greater([1.0, 1.3, 0.8], [1.1, 0.9, 1.05], paired=False)           # noise
    for a, b in (([2.5, 4.5], [0.5, 1.5]), ([2.0, 4.0, 6.0], [1.0, 1.5, 0.5])):
        se_a, se_b = (np.std(x, ddof=1) / math.sqrt(len(x)) for x in (a, b))
        assert C.significantly_greater(np.mean(a), se_a, np.mean(b), se_b)             # z: "significant"
        r = C.t_test(a, b, paired=False)
        assert 1.96 < r.t < 2.6 and r.df < 2.5 and r.p > 0.05                          # t: not
        assert not C.t_greater(a, b, paired=False)
    # paired: a shared per-repetition level that Welch's test sees as noise, the differences do not
    base = np.array([1.0, 5.0, 9.0])
    assert C.t_greater(base + [0.10, 0.12, 0.11], base, paired=True)
    assert not C.t_greater(base + [0.10, 0.12, 0.11], base, paired=False)
    assert not C.t_greater(base + [0.3, -0.2, 0.01], base, paired=True)              # paired noise


def test_at_every_point_has_three_outcomes():
    assert C.at_every_point([1, 1, 1]) is True
    assert C.at_every_point([1, -1, 0]) is False       # one point significantly the other way
    assert C.at_every_point([1, 0, 1]) is None         # undecided, none against: more repetitions
    assert C.at_every_point([]) is None


def test_indistinguishable_from_min_includes_noise_ties():
    x = [0.79, 1.0, 2.0, 4.0]
    s = C.indistinguishable_from_min(x, [1.006, 1.5, 1.0, 3.0], [0.02, 0.02, 0.02, 0.02])
    assert list(s) == [0.79, 2.0]                                   # two m within noise: both in the set
    assert list(C.indistinguishable_from_min(x, [1.006, 1.5, 1.0, 3.0], [1e-4] * 4)) == [2.0]


def test_trend_rules():
    x = np.repeat([1.0, 2.0, 3.0, 4.0], 5)
    rng = np.random.default_rng(0)
    y = 10 - x + 0.3 * rng.standard_normal(x.size)
    assert C.decreasing_trend(x, y)
    assert not C.decreasing_trend(x, -y)                            # increasing
    assert not C.decreasing_trend(x, 5 + 0.3 * rng.standard_normal(x.size))   # flat: noise only
    assert math.isnan(C.trend_test([1, 1, 1], [1, 2, 3])[0])


def test_inversely_proportional_is_one_rule():
    eps = np.array([0.1, 0.2, 0.4, 0.8, 1.0])
    assert C.inversely_proportional(eps, 1 / eps)
    assert not C.inversely_proportional(eps, eps ** -0.21)           # any negative slope is not enough
    assert not C.inversely_proportional(eps, eps ** -2.0)
    slope, se = C.loglog_slope(eps, 3 / eps)
    assert slope == pytest.approx(-1.0) and se == pytest.approx(0.0, abs=1e-9)


def _quotes():
    """(paper seed file, claim id, quote) of every row made by the paper."""
    seeds = {segmented: "segmented-multi-message-shuffle.md", personalized: "personalized-shuffle-privacy-bound.md",
             multidim: "multidimensional-categorical-shuffle.md", peruser: "per-user-histograms-shuffle.md"}
    out = [(seeds[m], c.id, c.quote) for m in seeds for c in m.CLAIMS.values() if c.by == C.PAPER]
    out += [("multidimensional-categorical-shuffle.md", cid, q) for cid, (q, _, _) in FW.FW_CLAIMS.items()]
    return out


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _verbatim(text: str, quote: str) -> bool:
    """Every fragment of ``quote`` (" ... " joins fragments the extraction split apart) occurs in
    ``text`` in order, up to whitespace."""
    text, pos = _norm(text), 0
    for part in quote.split(" ... "):
        i = text.find(_norm(part), pos)
        if i < 0:
            return False
        pos = i + len(_norm(part))
    return True


def test_the_quote_check_catches_a_paraphrase_and_a_reordering():
    text = "On the MSNBC dataset, when the user  population size is relatively small. Then more."
    assert _verbatim(text, "the user population size is relatively small")
    assert _verbatim(text, "On the MSNBC dataset, ... Then more.")
    assert not _verbatim(text, "On the MSNBC dataset, when n = 5,000")
    assert not _verbatim(text, "Then more. ... On the MSNBC dataset,")


@pytest.mark.skipif(not SEEDS.is_dir(), reason="seed papers not on this machine (SHUFFLEDP_SEEDS)")
@pytest.mark.parametrize("seed,cid,quote", _quotes(), ids=[q[1] for q in _quotes()])
def test_every_quote_is_verbatim_in_its_seed(seed, cid, quote):
    assert _verbatim((SEEDS / seed).read_text(), quote), f"{cid}: not verbatim in {seed}"


def test_every_point_counts_signs_and_gives_the_three_outcomes():
    """One significant point against decides "not held"; all significant "held"; undecided points
    with none against "not testable" (None); the counts are per sign."""
    big = C.welch_from_stats(10.0, 1.0, 10, 1.0, 1.0, 10)      # far above: +1
    low = C.welch_from_stats(1.0, 1.0, 10, 10.0, 1.0, 10)      # far below: -1
    tie = C.welch_from_stats(1.0, 1.0, 10, 1.05, 1.0, 10)      # undecided: 0
    assert C.every_point({"a": big, "b": big})[0] is True
    held, sign, counts = C.every_point({"a": big, "b": tie, "c": low})
    assert held is False and sign == {"a": 1, "b": 0, "c": -1} and counts == {1: 1, -1: 1, 0: 1}
    assert C.every_point({"a": big, "b": tie})[0] is None
    assert C.t_quantile(None) == C.Z_95 and C.t_quantile(20) == pytest.approx(2.093, abs=1e-3)


def test_one_decision_rule_no_boolean_verdicts():
    """A held or not-held row comes only from the engine: a boolean (testable=True, ok=...) without an
    estimate and its interval is refused; the untestable path stays (a missing run has no estimate)."""
    c = C.Claim("x", "s", "p", "t", needs="a run")
    for ok in (True, False):
        with pytest.raises(ValueError, match="engine's verdict"):
            C.decide(c, testable=True, ok=ok, measured="m", data="real", scale="s")
    assert C.decide(c, data="real", scale="s")["held"] == C.NOT_TESTABLE


def test_rows_not_held_carry_their_number():
    """Class 3: a row not held shows its estimate; a row not testable its number or the input it lacks."""
    c = C.Claim("x", "s", "p", "t", explain="what differs")
    numberless = C.decide(c, verdict=E.Verdict(C.NOT_HELD, "below the region", "below"), data="real", scale="s")
    with pytest.raises(ValueError, match="without their number"):
        C.frame([numberless])
    C.frame([C.decide(c, verdict=verdict(False), data="real", scale="s")])            # "x: 0, below ..."
    vague = C.decide(c, verdict=E.Verdict(C.NOT_TESTABLE, "", "undecided"), data="real", scale="s")
    with pytest.raises(ValueError, match="without their number or the missing input"):
        C.frame([vague])
    C.frame([C.decide(c, verdict=E.untestable("no run at n = 5,000"), data="real", scale="s")])
