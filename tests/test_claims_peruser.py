"""Each per-user claim decided on fabricated runs and users: hold, fail, not testable; sanity checks."""

import numpy as np
import pandas as pd

from shuffledp.claims import HELD, NOT_HELD, NOT_TESTABLE, STANDIN, SYNTHETIC
from shuffledp.claims import peruser as C
from shuffledp.experiments import peruser as E


def runs(thm4_feasible=True, thm4_err=1.0, best_err=1.0, err_ratio=0.5, share_under=1.0, attack_ari=0.3,
         note="synthetic Dirichlet mixture (separated)"):
    rows = []
    base = dict(dataset="synth_sep", eps=4.0, clustering="kmeans", c=0.1, rep=0, note=note, eps1_thm4=3.5,
                attack_identical=0.0)
    for split, eps1, err in (("0.5", 2.0, best_err * 1.3), ("0.8", 3.2, best_err), ("thm4", 3.5, thm4_err)):
        rows.append(dict(base, method="alg1", split=split, eps1=eps1, eps2=4.0 - eps1, feasible=split != "thm4"
                         or thm4_feasible, err_mean=err, err_raw_mean=err_ratio, thm3_bound_mean=1.0,
                         thm3_share_under=share_under, epsp_numeric_min=eps1 + 0.1, attack_ari=attack_ari))
    rows.append(dict(base, method="single", split="none", eps1=np.nan, eps2=np.nan, feasible=True, err_mean=2.0,
                     err_raw_mean=2.0, thm3_bound_mean=np.nan, thm3_share_under=np.nan, epsp_numeric_min=4.0,
                     attack_ari=1.0, attack_identical=1.0))
    return pd.DataFrame(rows)


def users(rho_sign=-1, varying=True):
    rng = np.random.default_rng(0)
    size = rng.integers(1, 200, 300)
    dist = rng.random(300)
    epsp = 2.0 + (rho_sign * size / 200 - rho_sign * dist) if varying else np.full(300, 4.0)
    return pd.DataFrame({"method": "alg1", "dataset": "synth_sep", "eps": 4.0, "split": "0.5", "clustering": "kmeans",
                         "c": 0.1, "eps_prime_numeric": epsp, "group_size": size, "dist_centre": dist})


def v(r=None, u=None):
    df = E.claims(runs() if r is None else r, users() if u is None else u, "test")
    assert list(df.columns) == ["id", "claim", "paper", "target", "measured", "held", "scale", "data", "evidence"]
    return df.set_index("id")["held"].to_dict()


def test_all_hold():
    got = v()
    for cid in C.CLAIMS:
        assert got[cid] == HELD, cid


def test_failures():
    assert v(u=users(rho_sign=+1))["larger_groups_amplify_more"] == NOT_HELD
    assert v(runs(err_ratio=1.2))["error_under_theorem3_bound"] == NOT_HELD
    assert v(runs(share_under=0.9))["error_under_theorem3_bound"] == NOT_HELD
    assert v(runs(thm4_err=1.5))["theorem4_split_near_best"] == NOT_HELD
    assert v(runs(attack_ari=1.0))["two_copies_hide_grouping"] == NOT_HELD


def test_not_testable():
    assert v(u=users(varying=False))["larger_groups_amplify_more"] == NOT_TESTABLE
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
