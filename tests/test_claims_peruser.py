"""Each per-user claim decided on fabricated runs and users: hold, fail, not testable; sanity checks."""

import numpy as np
import pandas as pd

from shuffledp.claims import HELD, NOT_HELD, NOT_TESTABLE, STANDIN, SYNTHETIC
from shuffledp.claims import peruser as C
from shuffledp.claims.core import COLUMNS, OURS
from shuffledp.experiments import peruser as E


def runs(thm4_feasible=True, thm4_err=1.0, best_err=1.0, err_ratio=0.5, share_under=1.0, attack_ari=0.3,
         note="synthetic Dirichlet mixture (separated)", ldp_err=2.0, rel_sd=0.01):
    """Three repetitions of each run, spread +-``rel_sd`` around the mean error."""
    rows = []
    for rep in (0, 1, 2):
        base = dict(dataset="synth_sep", eps=4.0, clustering="kmeans", c=0.1, rep=rep, note=note, eps1_thm4=3.5,
                    attack_identical=0.0)
        j = 1 + rel_sd * (rep - 1)
        for split, eps1, err in (("0.5", 2.0, best_err * 1.3), ("0.8", 3.2, best_err), ("thm4", 3.5, thm4_err)):
            rows.append(dict(base, method="alg1", split=split, eps1=eps1, eps2=4.0 - eps1, feasible=split != "thm4"
                             or thm4_feasible, err_mean=err * j, err_raw_mean=err_ratio, thm3_bound_mean=1.0,
                             thm3_share_under=share_under, epsp_numeric_min=eps1 + 0.1, attack_ari=attack_ari))
        rows.append(dict(base, method="ldp", split="none", eps1=np.nan, eps2=np.nan, feasible=True,
                         err_mean=ldp_err * j, err_raw_mean=ldp_err, thm3_bound_mean=np.nan, thm3_share_under=np.nan,
                         epsp_numeric_min=4.0, attack_ari=np.nan))
    rows.append(dict(base, method="single", split="none", eps1=np.nan, eps2=np.nan, feasible=True, err_mean=2.0,
                     err_raw_mean=2.0, thm3_bound_mean=np.nan, thm3_share_under=np.nan, epsp_numeric_min=4.0,
                     attack_ari=1.0, attack_identical=1.0))
    return pd.DataFrame(rows)


CS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)   # Algorithm 1's c values: six configurations with eps - eps1 <= 1


def users(alg_err=1.0, ldp_err=2.0, sd=0.3, n=300, power=-0.5, cs=CS):
    """Sampled users of Algorithm 1 (two splits; eps = 4, eps - eps1 = 2 and 0.8; at every c of ``cs``)
    and of LDP (c = 0.1): per-user errors around the given means; eps' = eps1 + (eps - eps1) * (group
    size / 10) ** power (capped)."""
    rng = np.random.default_rng(0)
    parts = []
    for method, split, mean in (("alg1", "0.5", alg_err * 1.3), ("alg1", "0.8", alg_err), ("ldp", "none", ldp_err)):
        for c in (cs if method == "alg1" else (0.1,)):
            size = rng.integers(10, 1000, n).astype(float)
            eps1 = 4.0 * float(split) if method == "alg1" else np.nan
            eps2 = 4.0 - eps1
            parts.append(pd.DataFrame({"method": method, "dataset": "synth_sep", "eps": 4.0, "split": split,
                                       "clustering": "kmeans" if method == "alg1" else "none", "c": c,
                                       "err": mean + sd * rng.standard_normal(n), "group_size": size, "eps1": eps1,
                                       "eps2": eps2, "eps_prime_numeric": eps1 + eps2 * np.minimum(
                                           1.0, (size / 10) ** power)}))
    return pd.concat(parts, ignore_index=True)


def v(r=None, u=None):
    df = E.claims(runs() if r is None else r, users() if u is None else u, "test")
    assert list(df.columns) == COLUMNS
    return df.set_index("id")["held"].to_dict()


def test_all_hold():
    got = v()
    for cid in C.CLAIMS:
        assert got[cid] == HELD, cid


def test_failures():
    assert v(u=users(ldp_err=0.5))["utility_improved_over_ldp"] == NOT_HELD              # LDP better
    assert v(u=users(power=0.0))["amplification_roughly_sqrt_n"] == NOT_TESTABLE         # no user amplified
    assert v(u=users(power=-1.5))["amplification_roughly_sqrt_n"] == NOT_HELD            # 1/n^1.5, not 1/sqrt
    assert v(u=users(power=-1.0))["amplification_roughly_sqrt_n"] == NOT_HELD            # 1/n is not 1/sqrt(n)
    assert v(u=users(ldp_err=1.01, sd=0.5))["utility_improved_over_ldp"] == NOT_TESTABLE  # within noise
    assert v(runs(err_ratio=1.2))["error_under_theorem3_bound"] == NOT_HELD
    assert v(runs(share_under=0.9))["error_under_theorem3_bound"] == NOT_HELD
    assert v(runs(thm4_err=1.5))["theorem4_split_near_best"] == NOT_HELD
    assert v(runs(attack_ari=1.0))["two_copies_hide_grouping"] == NOT_HELD


def test_not_testable():
    assert v(u=users()[lambda d: d.method != "ldp"])["utility_improved_over_ldp"] == NOT_TESTABLE
    same = users()
    same["group_size"] = 50.0                                                  # one group size: no slope
    assert v(u=same)["amplification_roughly_sqrt_n"] == NOT_TESTABLE
    got = v(runs(thm4_feasible=False))
    assert got["theorem4_split_near_best"] == NOT_TESTABLE      # infeasible is not "not held"
    r = runs()
    r["attack_ari"] = np.where(r.method == "alg1", np.nan, r["attack_ari"])
    assert v(r)["two_copies_hide_grouping"] == NOT_TESTABLE
    assert v(runs()[lambda d: d.method == "single"])["error_under_theorem3_bound"] == NOT_TESTABLE


def test_by_construction_properties_are_sanity_checks_not_claims():
    got = v()
    assert "single_copy_groups_recovered" not in got and "amplification_only_second_copy" not in got
    assert C.sanity_checks(runs()) == {"eps_prime_at_least_eps1": True, "single_copy_groups_recovered": True}


def test_data_labels():
    df = E.claims(runs(), users(), "test").set_index("id")
    assert (df["data"] == SYNTHETIC).all() and df["evidence"].all()
    df = E.claims(runs(note="offline stand-in data, not the real msnbc"), users(), "test").set_index("id")
    assert (df["data"] == STANDIN).all() and not df["evidence"].any()
    assert "Per-user histograms" in E.claims_markdown(df.reset_index(), "synthetic")


def test_two_copies_is_our_check_and_never_reads_as_the_papers_failure():
    df = E.claims(runs(attack_ari=1.0), users(), "test").set_index("id")
    row = df.loc["two_copies_hide_grouping"]
    assert row["by"] == OURS and row["held"] == NOT_HELD and "server knows the groups" in row["explanation"]
    # the sentences about the standard shuffle are not Algorithm 1's: those checks are ours
    mine = ["two_copies_hide_grouping", "utility_improved_over_ldp", "amplification_roughly_sqrt_n"]
    assert (df.loc[mine, "by"] == OURS).all() and (df.drop(index=mine)["by"] == "paper").all()
    md = E.claims_markdown(df.reset_index())
    assert md.index("## Our checks") < md.index("| two_copies_hide_grouping |")
    assert "larger_groups_amplify_more" not in df.index       # our formula's monotonicity is not a claim


def test_sqrt_n_needs_six_configurations_and_names_each_datasets_count():
    """The default scale: MSNBC has no amplified user and synth_sep one configuration. A median over
    configurations cannot be decided on one (the old fallback, one configuration's regression over its
    users, flipped against the paper scale's median): not testable, with every dataset's count."""
    flat = users(power=0.0).assign(dataset="msnbc")
    one = users(power=-1.5, cs=(0.1,))                  # one configuration, slope -1.5: outside the window
    df = E.claims(runs(), pd.concat([one, flat], ignore_index=True), "test").set_index("id")
    row = df.loc["amplification_roughly_sqrt_n"]
    assert row["held"] == NOT_TESTABLE
    assert "1 configurations with amplified users" in row["explanation"] and "needs >= 6" in row["explanation"]
    assert "msnbc: 0 of 6 configurations" in row["explanation"] and "6 with no user amplified" in row["explanation"]
    assert "synth_sep: 1 of 1 configurations" in row["explanation"]
    # six configurations pooled over the datasets decide it; the degenerate dataset is named in measured
    df = E.claims(runs(), pd.concat([users(), flat], ignore_index=True), "test").set_index("id")
    assert df.loc["amplification_roughly_sqrt_n", "held"] == HELD
    assert "msnbc: 0 of 6" in df.loc["amplification_roughly_sqrt_n", "measured"]
    assert v(u=users(cs=CS[:5]))["amplification_roughly_sqrt_n"] == NOT_TESTABLE       # five: too few
