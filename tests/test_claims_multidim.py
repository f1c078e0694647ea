"""Each multidimensional claim decided on fabricated tables: hold, fail, not testable; data labels."""

import numpy as np
import pandas as pd
import pytest

from shuffledp.claims import HELD, NOT_HELD, NOT_TESTABLE, REAL, STANDIN
from shuffledp.claims import multidim as C
from shuffledp.experiments import multidim_report as R

GAIN = {"br": 0.5, "mx": 1.0, "adult": 0.7}
RATIOS = ["6:2:2", "4:3:3", "2:4:4", "2:2:6"]


def mse_default(ds, mech, eps):
    base = 1.0 / eps
    return {"mhm": base, "flame": base * (1 + GAIN[ds] * eps), "tcm": 3 * base}[mech]


def summary(mse=mse_default, datasets=("br", "mx"), eps=(0.1, 0.2, 0.4, 0.8, 1.0), tp=None, bits=None, rel_sd=0.05,
            reps=10):
    """Every mean MSE with SD ``rel_sd`` times itself over ``reps`` repetitions."""
    rows = []
    for ds in datasets:
        for mech in ("mhm", "flame", "tcm"):
            for e in eps:
                m = mse(ds, mech, e)
                rows.append({"dataset": ds, "mechanism": mech, "eps": e, "mse": m, "mse_sd": rel_sd * m, "reps": reps,
                             "bits_total": (bits or {"flame": 10.0, "mhm": 40.0, "tcm": 900.0})[mech],
                             "TP": (tp or {"mhm": 40, "flame": 39, "tcm": 35})[mech]})
    return pd.DataFrame(rows)


# per method: (eps_l per invocation, users per invocation) of a population of 1,000 users; OGM's three
# overlapping invocations give a user mean budget (2 * 1000 + 3 * 600 + 1.5 * 300) / 1000 = 4.25, NOGM's
# three disjoint groups (1 * 400 + 2 * 300 + 3 * 300) / 1000 = 1.9
BUDGETS = {"ogm": ([2.0, 3.0, 1.5], [1000, 600, 300]), "nogm": ([1.0, 2.0, 3.0], [400, 300, 300])}
DOMAINS = {"br": [10] * 4, "mx": [10] * 4, "adult": [10] * 4}   # formula: 40 (8 + log2 40) = 533 bits


def personal(datasets=("br", "mx"), ratios=RATIOS, nogm_over_ogm=2.0, liberal_better=True, spread=0.02,
             budgets=None):
    """Five repetitions per (ratio, method), spread +-``spread`` (relative) around the mean; each run's
    invocations (eps_l, group sizes) from ``budgets`` (method -> (eps_l list, sizes list), or a function
    of the ratio's index returning that map)."""
    import json

    rows = []
    for ds in datasets:
        for i, r in enumerate(ratios):
            ogm = 1.0 / (i + 1) if liberal_better else 1.0 + i
            b = (budgets(i) if callable(budgets) else budgets) or BUDGETS
            for rep in range(5):
                j = 1 + spread * (rep - 2)
                for m, mse in (("ogm", ogm * j), ("nogm", ogm * nogm_over_ogm * j)):
                    rows.append({"dataset": ds, "ratio": r, "method": m, "rep": rep, "mse": mse, "n": 1000,
                                 "eps_l": json.dumps(b[m][0]), "group_sizes": json.dumps(b[m][1])})
    return pd.DataFrame(rows)


def timings(datasets=("br", "mx"), order=("flame", "mhm", "tcm")):
    return pd.DataFrame([{"dataset": ds, "mechanism": m, "eps": e, "rep": 0, "user_seconds_per_user": 1e-6 * (k + 1)}
                         for ds in datasets for k, m in enumerate(order) for e in (0.1, 1.0)])


def v(s=None, p=None, t=None, standin=None, domains=DOMAINS):
    df = C.claims(summary() if s is None else s, personal() if p is None else p, "test",
                  timings() if t is None else t, standin, domains)
    assert df["id"].is_unique
    return df.set_index("id")["held"].to_dict()


def test_all_hold_on_consistent_tables():
    got = v(summary(), standin=[])
    for cid in C.CLAIMS:
        assert got[cid] == HELD, cid


def test_failures():
    assert v(summary(mse=lambda ds, m, e: mse_default(ds, m, e) if m != "flame" else 0.5 / e))[
        "mhm_beats_flame_all_eps"] == NOT_HELD
    flat = v(summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": 1.7 / e, "tcm": 3 / e}[m]))
    assert flat["mhm_flame_gap_grows_with_eps"] == NOT_TESTABLE     # tau 0: its interval straddles 0
    shrink = v(summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": (1 + 1 / e) / e, "tcm": 3 / e}[m]))
    assert shrink["mhm_flame_gap_grows_with_eps"] == NOT_HELD       # tau -1: entirely below 0
    big = v(summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": (1 + 5 * e) / e, "tcm": 3 / e}[m]))
    assert big["mhm_improvement_eps1_br"] == NOT_HELD and big["mhm_improvement_eps1_mx"] == NOT_HELD   # two-sided
    small = v(summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": (1 + 0.1 * e) / e, "tcm": 3 / e}[m]))
    assert small["mhm_improvement_eps1_br"] == NOT_HELD and small["mhm_improvement_eps1_mx"] == NOT_HELD
    assert v(summary(mse=lambda ds, m, e: mse_default(ds, m, e) / (6 if m == "tcm" else 1)))["mhm_beats_tcm"] \
        == NOT_HELD
    assert v(summary(mse=lambda ds, m, e: 1 + (m == "tcm")))["mse_inversely_proportional_to_eps"] == NOT_HELD
    assert v(summary(mse=lambda ds, m, e: e ** -2.5 * (1 + (m == "tcm"))))["mse_inversely_proportional_to_eps"] \
        == NOT_HELD
    assert v(summary(bits={"flame": 50, "mhm": 40, "tcm": 900}))["comm_flame_lt_mhm_lt_tcm"] == NOT_HELD
    assert v(summary(bits={"flame": 10, "mhm": 40, "tcm": 60}))["comm_flame_lt_mhm_lt_tcm"] == NOT_HELD   # not "much"
    assert v(t=timings(order=("mhm", "flame", "tcm")))["fig4_user_time_flame_lt_mhm_lt_tcm"] == NOT_HELD
    assert v(summary(tp={"mhm": 30, "flame": 30, "tcm": 35}))["table3_mhm_tp_ge_tcm"] == NOT_HELD
    assert v(summary(tp={"mhm": 40, "flame": 30, "tcm": 35}))["table3_mhm_similar_flame"] == NOT_HELD
    got = v(p=personal(nogm_over_ogm=0.9))
    assert got["ogm_beats_nogm"] == NOT_HELD and got["ogm_vs_nogm_244_mx"] == NOT_HELD
    assert v(p=personal(nogm_over_ogm=5.0))["ogm_vs_nogm_244_mx"] == NOT_HELD
    assert v(p=personal(liberal_better=False))["fig10_better_as_users_more_liberal"] == NOT_HELD


def test_not_testable():
    got = v(summary(eps=(0.5, 1.0)))
    assert got["mhm_flame_gap_grows_with_eps"] == NOT_TESTABLE
    assert got["mse_inversely_proportional_to_eps"] == NOT_TESTABLE
    got = v(summary(eps=(0.1, 0.4, 0.8)))
    assert got["mhm_improvement_eps1_br"] == NOT_TESTABLE and got["mhm_improvement_eps1_mx"] == NOT_TESTABLE
    assert v(summary().drop(columns="bits_total"))["comm_flame_lt_mhm_lt_tcm"] == NOT_TESTABLE
    got = v(summary(eps=(0.1, 0.4, 0.8, 1.0)))      # 4 eps: a Kendall test cannot reach p < 0.05
    assert got["mhm_flame_gap_grows_with_eps"] == NOT_TESTABLE
    got = v(t=pd.DataFrame(columns=["dataset", "mechanism", "eps", "rep", "user_seconds_per_user"]),
            p=personal(ratios=["2:4:4"]))
    assert got["fig4_user_time_flame_lt_mhm_lt_tcm"] == NOT_TESTABLE
    assert got["fig10_better_as_users_more_liberal"] == NOT_TESTABLE
    got = v(p=pd.DataFrame(columns=["dataset", "ratio", "method", "rep", "mse"]))
    assert got["ogm_beats_nogm"] == NOT_TESTABLE and got["ogm_vs_nogm_244_mx"] == NOT_TESTABLE


def test_significance_rules_reject_differences_within_noise():
    """Welch's t test at every point, three outcomes: significant everywhere held; significantly the
    other way at one point not held; a difference within noise (none against) not testable."""
    # FLAME 2% above MHM with SDs of 5% over 10 repetitions: the raw ratio is > 1, the test undecided
    close = summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": 1.02 / e, "tcm": 3 / e}[m])
    assert v(close)["mhm_beats_flame_all_eps"] == NOT_TESTABLE
    assert v(summary(rel_sd=0.001, mse=lambda ds, m, e: {"mhm": 1 / e, "flame": 1.02 / e, "tcm": 3 / e}[m]))[
        "mhm_beats_flame_all_eps"] == HELD                                    # the same ratio, precise: held
    below = summary(mse=lambda ds, m, e: {"mhm": 1 / e, "flame": (0.5 if e == 0.4 else 2.0) / e, "tcm": 3 / e}[m])
    assert v(below)["mhm_beats_flame_all_eps"] == NOT_HELD               # significantly below at one eps
    assert v(summary().drop(columns=["mse_sd", "reps"]))["mhm_beats_flame_all_eps"] == NOT_TESTABLE
    # 2 repetitions, TCM 1.5x MHM with SDs of 10%: a z test on the means passes (z about 3.9), Welch's t
    # (df about 1.7, quantile about 5) does not decide it: not testable, never held on that evidence
    few = summary(reps=2, rel_sd=0.1)
    z = (3 - 2) / (0.1 * np.hypot(3, 2) / np.sqrt(2))
    cols = ["mse", "mse_sd"]
    few.loc[few.mechanism == "tcm", cols] = few.loc[few.mechanism == "mhm", cols].to_numpy() * 1.5
    assert v(few)["mhm_beats_tcm"] == NOT_TESTABLE and z > 1.96
    # OGM vs NOGM: NOGM 1% worse with a spread of 20%: undecided; NOGM better: not held
    assert v(p=personal(nogm_over_ogm=1.01, spread=0.2))["ogm_beats_nogm"] == NOT_TESTABLE
    assert v(p=personal(nogm_over_ogm=0.5))["ogm_beats_nogm"] == NOT_HELD


def test_liberal_trend_is_a_trend_test_not_every_pair():
    # one reversed neighbouring pair inside noise: every-pair dominance would fail, the trend holds
    p = personal()
    p.loc[p.ratio == "4:3:3", "mse"] *= 0.6           # 4:3:3 (0.3) now below 2:4:4 (0.33)
    assert v(p=p)["fig10_better_as_users_more_liberal"] == HELD
    flat = personal(liberal_better=True)
    flat["mse"] = 1.0 + 0.01 * np.random.default_rng(3).standard_normal(len(flat))
    assert v(p=flat)["fig10_better_as_users_more_liberal"] == NOT_TESTABLE   # no trend: tau's interval holds 0
    assert v(p=personal(liberal_better=False))["fig10_better_as_users_more_liberal"] == NOT_HELD


def test_table3_carries_the_papers_numbers_as_a_quoted_reference():
    df = C.claims(summary(), personal(), "test", timings()).set_index("id")
    ref = df.loc["table3_mhm_similar_flame", "reference"]
    assert "paper's Table 3" in ref and "40, 31, 37" in ref
    assert "paper's Table 3" not in df.loc["table3_mhm_similar_flame", "measured"]


@pytest.mark.parametrize("standin,kind,evidence", [(None, STANDIN, False), (["br", "mx"], STANDIN, False),
                                                   ([], REAL, True)])
def test_ipums_labels_and_adult_group(standin, kind, evidence):
    s = pd.concat([summary(), summary(datasets=("adult",))], ignore_index=True)
    p = pd.concat([personal(), personal(datasets=("adult",))], ignore_index=True)
    df = C.claims(s, p, "test", timings(datasets=("br", "mx", "adult")), standin).set_index("id")
    assert df.loc["mhm_beats_flame_all_eps", "data"] == kind
    assert bool(df.loc["mhm_beats_flame_all_eps", "evidence"]) is evidence
    assert df.loc["mhm_beats_flame_all_eps_adult", "data"] == REAL
    assert df.loc["mhm_beats_flame_all_eps_adult", "held"] == HELD and df.loc["mhm_beats_flame_all_eps_adult",
                                                                              "evidence"]
    assert "mhm_improvement_eps1_br_adult" not in df.index        # the paper's numbers are for BR and MX only
    # the paper's statements are about IPUMS BR / MX: the same test on Adult is ours, never the paper's
    assert (df.loc[[i for i in df.index if i.endswith("_adult")], "by"] == "ours").all()
    assert (df.loc[[i for i in df.index if not i.endswith("_adult")], "by"] == "paper").all()
    assert "Adult" in df.loc["mhm_beats_flame_all_eps_adult", "section"]
    md = R.claims_md(df.reset_index(), "offline stand-in data, not the real ipums_br", "test")
    assert "offline stand-in data" in md


def test_forwarder_matches():
    a = R.claims(summary(), personal(), "test")
    b = C.claims(summary(), personal(), "test")
    pd.testing.assert_frame_equal(a, b)
    assert np.all(a["data"] == STANDIN)


def test_mechanism_comparisons_need_both_mechanisms():
    s = summary()
    got = v(s[s.mechanism != "tcm"])
    assert got["mhm_beats_tcm"] == NOT_TESTABLE and got["table3_mhm_tp_ge_tcm"] == NOT_TESTABLE
    assert got["mhm_beats_flame_all_eps"] == HELD
    got = v(s[s.mechanism != "flame"])
    assert got["mhm_beats_flame_all_eps"] == NOT_TESTABLE and got["mhm_improvement_eps1_mx"] == NOT_TESTABLE


def test_fig4_rows_test_their_own_sentences():
    """The Fig. 4 sentence says FLAME beats the others; MHM < TCM is the Discussion's sentence, its own row."""
    got = v(t=timings(order=("flame", "tcm", "mhm")))          # MHM slowest: FLAME still far ahead
    assert got["fig4_user_time_flame_lt_mhm_lt_tcm"] == HELD
    assert got["fig4_user_time_mhm_lt_tcm"] == NOT_HELD


def test_tcm_extra_communication_against_the_printed_formula():
    """Sec. 6.1.1: TCM costs at least sum |C_i| (8 + log2 sum |C_i|) bits more than MHM: (TCM - MHM) /
    formula >= 1, exact; below it not held; without domain sizes not testable."""
    f = C.formula_bits([10] * 4)
    assert f == pytest.approx(40 * (8 + np.log2(40)))
    assert v()["tcm_comm_extra_vs_mhm"] == HELD                            # 860 extra bits against 533
    short = v(summary(bits={"flame": 10.0, "mhm": 40.0, "tcm": 40.0 + f - 1}))
    assert short["tcm_comm_extra_vs_mhm"] == NOT_HELD                      # one bit short of the formula
    assert v(summary(bits={"flame": 10.0, "mhm": 40.0, "tcm": 40.0 + f}))["tcm_comm_extra_vs_mhm"] == HELD
    assert v(domains=None)["tcm_comm_extra_vs_mhm"] == NOT_TESTABLE
    assert v(domains={"br": [10] * 4})["tcm_comm_extra_vs_mhm"] == NOT_TESTABLE    # MX's sizes missing
    df = C.claims(summary(), personal(), "test", timings(), None, DOMAINS).set_index("id")
    assert "533" in df.loc["tcm_comm_extra_vs_mhm", "measured"]          # the formula's value in the row
    # on Adult the same test is ours
    s = pd.concat([summary(), summary(datasets=("adult",))], ignore_index=True)
    df = C.claims(s, personal(), "test", timings(), None, DOMAINS).set_index("id")
    assert df.loc["tcm_comm_extra_vs_mhm_adult", "by"] == "ours" and df.loc["tcm_comm_extra_vs_mhm", "by"] == "paper"


OGMB = "ogm_bigger_amplified_budget_than_nogm"


def test_ogm_bigger_amplified_budget_usually():
    """Sec. 6.2 Discussion: OGM usually has the bigger amplified budget: held when OGM's users' mean
    budget is above NOGM's at most (dataset, ratio) points, not held when at most half, not testable
    when the undecided points straddle one half."""
    assert v()[OGMB] == HELD                       # 4.25 vs 1.9 everywhere
    swap = {"ogm": BUDGETS["nogm"], "nogm": BUDGETS["ogm"]}
    assert v(p=personal(budgets=swap))[OGMB] == NOT_HELD
    # above at 3 of 4 ratios on each dataset: 6/8 > 1/2, held ("usually", not "always")
    assert v(p=personal(budgets=lambda i: swap if i == 0 else BUDGETS))[OGMB] == HELD
    # above at exactly half the points: not more than half, not held
    assert v(p=personal(budgets=lambda i: swap if i < 2 else BUDGETS))[OGMB] == NOT_HELD
    # budgets varying over repetitions so that two ratios of four are undecided: [2/8, 6/8] straddles 1/2
    p = personal(budgets=lambda i: swap if i == 0 else BUDGETS)
    rng = np.random.default_rng(0)
    close = p.ratio.isin(RATIOS[1:3]) & (p.method == "nogm")
    p.loc[close, "n"] = (1000 * 1.9 / 4.25 * (1 + 0.3 * rng.standard_normal(int(close.sum())))).round()
    got = C.claims(summary(), p, "test", timings(), None, DOMAINS).set_index("id")
    assert got.loc[OGMB, "held"] == NOT_TESTABLE, got.loc[OGMB, "measured"]
    assert v(p=personal().drop(columns="eps_l"))[OGMB] == NOT_TESTABLE


def test_considerably_is_a_magnitude_not_only_a_sign():
    """'MHM considerably outperforms TCM': TCM / MHM over the figure (geometric mean over eps) above 1.5,
    not merely TCM > MHM: a precise 1.2x gap is not held, 3x is held, 1.5x within noise undecided."""
    def tcm_times(k, rel_sd=0.05):
        return summary(rel_sd=rel_sd, mse=lambda ds, m, e: mse_default(ds, "mhm", e) * k if m == "tcm"
                       else mse_default(ds, m, e))
    assert v(tcm_times(1.2, rel_sd=0.001))["mhm_beats_tcm"] == NOT_HELD     # significant, but not considerable
    assert v(tcm_times(3.0))["mhm_beats_tcm"] == HELD
    assert v(tcm_times(1.55, rel_sd=0.3))["mhm_beats_tcm"] == NOT_TESTABLE   # straddles 1.5
    iv = C.mean_log_ratio_interval([2.0, 8.0], [0.0, 0.0], [5, 5], [1.0, 1.0], [0.0, 0.0], [5, 5])
    assert iv.estimate == pytest.approx(4.0) and iv.lo == pytest.approx(4.0)    # exact geometric mean
