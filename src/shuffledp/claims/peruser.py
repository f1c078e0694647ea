"""Claims about per-user histograms in the shuffle model, decided on the experiment's runs and
user sample (``experiments.peruser``). The paper has no experiments; the claims are its theorems'
statements that a measurement can contradict.

Statements that hold by construction of our code are not claims: eps' >= eps1 (the accountant adds
eps1 to the amplified part) and the single-copy server recovering the groups exactly (it reruns the
shuffler's public, seeded clustering on the same data). They are :func:`sanity_checks`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from shuffledp.claims.core import REAL, STANDIN, SYNTHETIC, Claim, data_kind, decide, frame, markdown

CLAIMS = {
    "larger_groups_amplify_more": Claim(
        "larger_groups_amplify_more", "users in larger groups and nearer their group's centre get a smaller eps'",
        "Theorem 2 (discussion after it)", "median Spearman rho over configurations: (group size, eps') < 0 and "
        "(distance to centre, eps') > 0", "a configuration where eps' varies across users"),
    "error_under_theorem3_bound": Claim(
        "error_under_theorem3_bound", "the per-user L1 error stays under Theorem 3's bound (with high probability)",
        "Theorem 3, Eq. (4)", "every run's mean error under its mean bound, and >= 99% of users under their own "
        "bound in every run", "feasible Algorithm-1 runs"),
    "theorem4_split_near_best": Claim(
        "theorem4_split_near_best", "Theorem 4's eps1 is near the best split when eps - eps1 <= 1", "Theorem 4",
        "error at Theorem 4's split <= 1.1 x the best grid split's (eps - eps1 <= 1)",
        "an eps grid where Theorem 4's eps1 = 4 d log(n/delta)/R is below eps, and grid splits beside it"),
    "two_copies_hide_grouping": Claim(
        "two_copies_hide_grouping", "with two independent noisy copies (Algorithm 1) the released output does not "
        "reveal the grouping, unlike the single-copy protocol (Theorem 1)", "Sec. 4, Theorem 1 vs Algorithm 1",
        "the server's re-clustering of Algorithm 1's output never reproduces the shuffler's groups (ARI < 0.999 in "
        "every k-means run)", "Algorithm-1 k-means runs with the re-clustering attack"),
}


def _kind(note) -> str:
    note = "" if note is None or (isinstance(note, float) and math.isnan(note)) else str(note)
    if "stand-in" in note:
        return STANDIN
    if "synthetic" in note:
        return SYNTHETIC
    return REAL


def _data(runs: pd.DataFrame) -> str:
    if not len(runs):
        return ""
    if "note" not in runs:
        return data_kind([STANDIN])          # unknown provenance: not evidence
    return data_kind(_kind(n) for n in runs["note"].unique())


def sanity_checks(runs: pd.DataFrame) -> dict[str, bool]:
    """Properties that hold by construction (a failure is a bug, not a finding)."""
    alg = runs[(runs.method == "alg1") & runs.feasible] if len(runs) else runs
    single = runs[runs.method == "single"] if len(runs) else runs
    out = {}
    if len(alg):
        out["eps_prime_at_least_eps1"] = bool(((alg["epsp_numeric_min"] - alg["eps1"]) >= -1e-9).all())
    if len(single) and "attack_identical" in single:
        out["single_copy_groups_recovered"] = bool((single["attack_identical"] == 1.0).all())
    return out


def _groups_rows(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> list[dict]:
    """Larger and denser groups amplify more."""
    u = users[(users.method == "alg1") & users.eps_prime_numeric.notna()] if len(users) else users
    sub = []
    if len(u):
        for _, g in u.groupby(["dataset", "eps", "split", "clustering", "c"]):
            if g.eps_prime_numeric.nunique() > 1 and g.group_size.nunique() > 1:
                sub.append((g.group_size.corr(g.eps_prime_numeric, method="spearman"),
                            g.dist_centre.corr(g.eps_prime_numeric, method="spearman")))
    rs = float(np.nanmedian([s[0] for s in sub])) if sub else math.nan
    rd = float(np.nanmedian([s[1] for s in sub])) if sub else math.nan
    ds_u = runs[runs.dataset.isin(set(u.dataset))] if len(u) else runs.iloc[0:0]
    return [decide(CLAIMS["larger_groups_amplify_more"], testable=bool(sub), ok=bool(rs < 0 and rd > 0),
                   measured=f"median Spearman rho over {len(sub)} configurations with varying eps': "
                            f"(group size, eps') {rs:.3g}, (distance to centre, eps') {rd:.3g}",
                   data=_data(ds_u if len(ds_u) else runs), scale=scale,
                   reason="eps' is the same for every user (no amplification) in every configuration")]


def _theorem3_rows(runs: pd.DataFrame, scale: str) -> list[dict]:
    a3 = runs[runs.method.isin(("alg1", "alg1T")) & runs.feasible] if len(runs) else runs
    if len(a3):
        share = float((a3.err_raw_mean <= a3.thm3_bound_mean).mean())
        pu = float(a3.thm3_share_under.min())
        ratio = float((a3.err_raw_mean / a3.thm3_bound_mean).max())
        meas = (f"runs with mean error under the mean bound: {share:.3g}; smallest per-run share of users under "
                f"their own bound {pu:.4g}; largest error/bound ratio {ratio:.3g}")
    else:
        share = pu = math.nan
        meas = ""
    return [decide(CLAIMS["error_under_theorem3_bound"], testable=bool(len(a3)),
                   ok=bool(share == 1.0 and pu >= 0.99),
                   measured=meas, data=_data(a3 if len(a3) else runs), scale=scale,
                   reason="no feasible Algorithm-1 run")]


def _theorem4_rows(runs: pd.DataFrame, alg: pd.DataFrame, scale: str) -> list[dict]:
    t4 = alg[alg.split == "thm4"] if len(alg) else alg
    t4_all = runs[(runs.method == "alg1") & (runs.split == "thm4")] if len(runs) else runs
    frac = alg[(alg.split != "thm4") & (alg.eps2 <= 1 + 1e-9)] if len(alg) else alg
    cmp = []
    for key, g in (t4.groupby(["dataset", "eps", "clustering", "c"]) if len(t4) else []):
        f = frac[(frac.dataset == key[0]) & (frac.eps == key[1]) & (frac.clustering == key[2]) & (frac.c == key[3])]
        if len(f):
            cmp.append(g.err_mean.mean() / f.groupby("split").err_mean.mean().min())
    if len(t4):
        meas = (f"feasible in {len(t4)}/{len(t4_all)} runs; worst error ratio to the best grid split "
                f"{np.max(cmp) if cmp else math.nan:.3g} over {len(cmp)} configurations")
        reason = "no grid split with eps - eps1 <= 1 beside a feasible Theorem-4 split"
    else:
        e1 = t4_all.eps1_thm4 if len(t4_all) else pd.Series(dtype=float)
        meas = (f"Theorem 4's eps1 ranges {e1.min():.3g}..{e1.max():.3g} over {len(t4_all)} runs; eps grid max "
                f"{runs.eps.max() if len(runs) else math.nan:g}")
        reason = "Theorem 4's eps1 exceeds every eps of the grid (the split is infeasible)"
    return [decide(CLAIMS["theorem4_split_near_best"], testable=bool(cmp), ok=bool(cmp and max(cmp) <= 1.1),
                   measured=meas, data=_data(t4_all if len(t4_all) else runs), scale=scale, reason=reason)]


def _two_copies_rows(runs: pd.DataFrame, alg: pd.DataFrame, scale: str) -> list[dict]:
    att = alg[alg["attack_ari"].notna()] if len(alg) and "attack_ari" in alg else alg.iloc[0:0]
    mx = float(att["attack_ari"].max()) if len(att) else math.nan
    return [decide(CLAIMS["two_copies_hide_grouping"], testable=bool(len(att)), ok=bool(mx < 0.999),
                   measured=(f"server's re-clustering of Algorithm 1's output: ARI with the shuffler's groups "
                             f"max {mx:.3g}, mean {att['attack_ari'].mean():.3g} over {len(att)} runs")
                   if len(att) else "", data=_data(att if len(att) else runs), scale=scale,
                   reason="no Algorithm-1 k-means run with the re-clustering attack")]


def claims(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> pd.DataFrame:
    alg = runs[(runs.method == "alg1") & (runs.feasible)] if len(runs) else runs
    rows = _groups_rows(runs, users, scale)
    rows += _theorem3_rows(runs, scale)
    rows += _theorem4_rows(runs, alg, scale)
    rows += _two_copies_rows(runs, alg, scale)
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "") -> str:
    return markdown(df, "Per-user histograms: claims checked", note)
