"""Claims about per-user histograms in the shuffle model, decided on the experiment's runs and
user sample (``experiments.peruser``). The paper has no experiments; the claims are its theorems'
statements that a measurement can contradict.

Statements that hold by construction of our code are not claims: eps' >= eps1 (the accountant adds
eps1 to the amplified part) and the single-copy server recovering the groups exactly (it reruns the
shuffler's public, seeded clustering on the same data). They are :func:`sanity_checks`.

"Users in larger groups and nearer their group's centre get a smaller eps'" (after Theorem 2) is not
a row: the only eps' we have is our own evaluation of Theorem 2's formula, so checking its
monotonicity would decide our formula, not a measured quantity. Whether the server can re-cluster
Algorithm 1's output is our check (``by = ours``): the paper assumes the server knows the groups.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from shuffledp.claims import engine as E
from shuffledp.claims.core import (
    OURS,
    REAL,
    STANDIN,
    SYNTHETIC,
    Claim,
    data_kind,
    decide,
    frame,
    markdown,
)

CLAIMS = {
    "error_under_theorem3_bound": Claim(
        "error_under_theorem3_bound", "The expected utility of user $\\mathcal{U}_i \\in G$ is given as follows:",
        "Sec. 3.2, Theorem 3, Eq. (4)", "every run's mean error under its mean bound, and >= 99% of users under "
        "their own bound in every run", "feasible Algorithm-1 runs",
        explain="some run's error exceeds Theorem 3's bound (Eq. (4)); see measured and docs/peruser.md"),
    "theorem4_split_near_best": Claim(
        "theorem4_split_near_best", "we derive the following optimal privacy budget allocation for $\\epsilon_1$ "
        "for a user assuming some prior on the data distribution", "Sec. 3.2, Theorem 4",
        "error at Theorem 4's split <= 1.1 x the best grid split's (eps - eps1 <= 1)",
        "an eps grid where Theorem 4's eps1 = 4 d log(n/delta)/R is below eps, and grid splits beside it",
        explain="a grid split beats Theorem 4's eps1 by more than 10%; see measured and figures/peruser_fig1.png"),
    "utility_improved_over_ldp": Claim(
        "utility_improved_over_ldp", "Does Algorithm 1 improve utility over a pure LDP mechanism at equal eps? (The "
        "paper's sentence, \"Consequently, the utility is improved over a pure LDP mechanism.\", motivates the "
        "standard uniform shuffle, not Algorithm 1: this check of Algorithm 1 is ours)",
        "Sec. 3.1 (motivation, about the standard shuffle); this check is ours",
        "LDP - Algorithm 1 mean per-user L1 error (Algorithm 1 at its best split and clustering), Welch 95% "
        "interval over the sampled users above 0, at every (dataset, eps, c)",
        "sampled users of Algorithm 1 and LDP at the same (dataset, eps, c)",
        by=OURS,
        explain="at equal eps, Laplace LDP (no shuffling, no grouping) has a lower per-user error than Algorithm 1 "
                "in the configurations named in measured: Algorithm 1 adds the grouping error (first term of "
                "Eq. (4)) and spends eps1 on the clustering copy, and its released copy's noise (variance "
                "8c^2/(eps1^2 + eps2^2)) is never below LDP's 8c^2/eps^2; at equal final eps' LDP still wins "
                "(runs columns ldp_err_raw_at_epsp_*), since only eps2 is amplified; see "
                "figures/peruser_fig1.png and docs/peruser.md (line-by-line check of Algorithm 1)"),
    "amplification_roughly_sqrt_n": Claim(
        "amplification_roughly_sqrt_n", "Is Algorithm 1's per-user amplification roughly 1/sqrt(group size)? (The "
        "paper's sentence, \"resulting in privacy amplification by roughly a factor of sqrt(n)\", is about the "
        "standard uniform shuffle: this check of Algorithm 1 is ours)",
        "Sec. 3.1 (motivation, about the standard shuffle); this check is ours",
        "bootstrap 95% interval (over configurations where some user is amplified) of the median (eps - eps1 <= 1, "
        "group sizes spanning >= 2x) of the least-squares slope of "
        "log((eps' - eps1) / (eps - eps1)) on log(group size) inside [-0.75, -0.25] (roughly 1/sqrt(n): "
        "-0.5 +- 0.25), decided with >= 6 such configurations (a median's 95% interval needs 6; each dataset's "
        "count of configurations without an amplified user is shown); eps' is our numeric per-user accountant "
        "(Theorem 2 via Theorem 6)",
        "Algorithm-1 users with eps - eps1 <= 1 in groups of different sizes", by=OURS,
        explain="our per-user accountant gives eps' that does not shrink like 1/sqrt(group size) (measured: the "
                "slopes and the share of users amplified): the amplification applies to eps2 only, after the "
                "(1 + r/c) inflation, and over a group's members rather than n; see figures/peruser_fig2.png and "
                "docs/peruser.md"),
    "two_copies_hide_grouping": Claim(
        "two_copies_hide_grouping", "With two independent noisy copies (Algorithm 1) a server that re-clusters the "
        "released output does not recover the shuffler's groups (the paper assumes it knows them)",
        "Sec. 3.2 assumes the groups are known to the server and notes that it could re-cluster; this check is "
        "ours", "the server's re-clustering of Algorithm 1's output never reproduces the shuffler's groups (ARI < "
        "0.999 in every k-means run)", "Algorithm-1 k-means runs with the re-clustering attack", by=OURS,
        explain="the re-clustering reproduces the groups in some run: consistent with the paper's own assumption "
                "that the server knows the groups (Sec. 3.2), so not a failure of the paper; docs/peruser.md"),
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


def _mean_se(err: pd.Series) -> tuple[float, float]:
    return float(err.mean()), float(err.std() / math.sqrt(len(err))) if len(err) >= 2 else math.nan


def _ldp_rows(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> list[dict]:
    """Algorithm 1 (its best split and clustering) vs Laplace LDP at equal (dataset, eps, c): Welch's
    interval of LDP - Algorithm 1 mean per-user L1 error over the sampled users, above 0 at every point."""
    u = users[users.method.isin(("alg1", "ldp"))] if len(users) and "err" in users else pd.DataFrame()
    js = []
    for (ds, eps, c), g in (u.groupby(["dataset", "eps", "c"]) if len(u) else []):
        ldp, alg = g[g.method == "ldp"], g[g.method == "alg1"]
        if len(ldp) < 2 or len(alg) < 2:
            continue
        per = {k: a.err for k, a in alg.groupby(["split", "clustering"])}
        best = min(per, key=lambda k: per[k].mean())
        a = per[best]
        iv = E.welch_interval(ldp.err.mean(), ldp.err.std(), len(ldp), a.mean(), a.std(), len(a))
        js.append(E.judge(iv, E.above(0.0, below="LDP has the lower error", name="the region LDP - Algorithm 1"),
                          f"{ds} eps={eps:g} c={c:g} (Algorithm 1 {a.mean():.3g} at split {best[0]}, {best[1]}; "
                          f"LDP {ldp.err.mean():.3g})"))
    ldp_runs = runs[runs.method == "ldp"] if len(runs) else runs
    v = E.all_of(js, "configurations") if js else E.untestable(
        "no sampled users of Algorithm 1 and LDP at the same (dataset, eps, c)")
    return [decide(CLAIMS["utility_improved_over_ldp"], verdict=v,
                   data=_data(ldp_runs if len(ldp_runs) else runs), scale=scale)]


MIN_CONFIGS = 6   # a 95% interval of a median needs >= 6 points: with n, the widest order-statistic interval
                  # [min, max] covers the median with probability 1 - 2 / 2^n, below 95% for n <= 5


def _sqrt_n_rows(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> list[dict]:
    """Amplification roughly 1/sqrt(group size): per configuration (dataset, eps, split, clustering, c)
    where some user is amplified, the slope of the amplification ratio on the group size; their median
    with a bootstrap interval over the configurations, decided only with >= MIN_CONFIGS of them (a
    median's interval needs them; one configuration's regression over its users is not the median over
    configurations). Elsewhere there is nothing to measure: each dataset's count of configurations
    without an amplified user is named (MSNBC at the default scale), so a scale with too few reads as
    not testable with its numbers, never as decided on one configuration."""
    need = {"eps_prime_numeric", "group_size", "eps1", "eps2"}
    u = users[(users.method == "alg1") & users.eps_prime_numeric.notna()] if len(users) and need <= set(users) \
        else pd.DataFrame()
    if len(u):
        u = u[(u.eps2 > 0) & (u.eps2 <= 1 + 1e-9) & (u.group_size > 1)]
    slopes, amplified, counts = [], [], []
    for ds, gd in (u.groupby("dataset") if len(u) else []):
        k_amp = flat = narrow = 0
        for _, g in gd.groupby(["eps", "split", "clustering", "c"]):
            if g.group_size.max() < 2 * g.group_size.min():
                narrow += 1
                continue
            ratio = ((g.eps_prime_numeric - g.eps1) / g.eps2).clip(lower=1e-12).to_numpy(float)
            share = float((ratio < 1 - 1e-9).mean())
            if share == 0:
                flat += 1
                continue
            slopes.append(float(np.polyfit(np.log(g.group_size.to_numpy(float)), np.log(ratio), 1)[0]))
            amplified.append(share)
            k_amp += 1
        cs = ", ".join(f"{c:g}" for c in sorted(gd.c.unique()))
        counts.append(f"{ds}: {k_amp} of {k_amp + flat + narrow} configurations (eps - eps1 <= 1, c = {cs}) with "
                      f"amplified users ({flat} with no user amplified, {narrow} with group sizes spanning < 2x)")
    per = "; ".join(counts)
    if len(slopes) >= MIN_CONFIGS:
        iv = E.bootstrap_interval(np.asarray(slopes), np.median, seed=0)
        v = E.one(E.judge(iv, E.window(-0.75, -0.25, name="the window (-0.5 +- 0.25)",
                                       below="amplification faster than 1/sqrt", above="slower than 1/sqrt"),
                          f"median slope over {len(slopes)} configurations with amplified users"))
        extra = f"users amplified (eps' < eps): median share {np.median(amplified):.3g}; {per}"
    else:
        shown = (f" (slopes {', '.join(f'{x:.3g}' for x in slopes)})" if slopes else "")
        v = E.untestable(f"{len(slopes)} configurations with amplified users{shown}; a 95% interval of their median "
                         f"needs >= {MIN_CONFIGS}: nothing to decide at this scale; {per or 'no Algorithm-1 users'}")
        extra = ""
    return [decide(CLAIMS["amplification_roughly_sqrt_n"], verdict=v, measured=extra, data=_data(runs),
                   scale=scale)]


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
    if len(a3):
        v = E.all_of([E.judge(E.exact(ratio), E.Region(hi=1.0, name="the region (under the bound)",
                                                         above="a run's mean error exceeds its bound"),
                              "largest run mean error / mean bound"),
                      E.judge(E.exact(pu), E.Region(lo=0.99, hi=1.0, name="the region (>= 99% of users)",
                                                    below="fewer users under their own bound"),
                              "smallest per-run share of users under their bound")], "checks")
    else:
        v = E.untestable("no feasible Algorithm-1 run")
    return [decide(CLAIMS["error_under_theorem3_bound"], verdict=v, measured=meas,
                   data=_data(a3 if len(a3) else runs), scale=scale)]


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
    meas += ("; R, hence eps1, comes from the true (private) clusters: an oracle choice of a parameter the "
             "guarantee treats as public")
    v = E.one(E.judge(E.exact(max(cmp)), E.Region(hi=1.1, name="the region (within 10% of the best split)",
                                                  above="a grid split is better by more than 10%"),
                      "worst error ratio of Theorem 4's split to the best grid split")) if cmp else E.untestable(reason)
    return [decide(CLAIMS["theorem4_split_near_best"], verdict=v, measured=meas,
                   data=_data(t4_all if len(t4_all) else runs), scale=scale)]


def _two_copies_rows(runs: pd.DataFrame, alg: pd.DataFrame, scale: str) -> list[dict]:
    att = alg[alg["attack_ari"].notna()] if len(alg) and "attack_ari" in alg else alg.iloc[0:0]
    mx = float(att["attack_ari"].max()) if len(att) else math.nan
    v = E.one(E.judge(E.exact(mx), E.below(0.999, above="a run's groups are recovered", name="the region ARI"),
                      "largest ARI of the re-clustering")) if len(att) else E.untestable(
        "no Algorithm-1 k-means run with the re-clustering attack")
    return [decide(CLAIMS["two_copies_hide_grouping"], verdict=v,
                   measured=(f"server's re-clustering of Algorithm 1's output: ARI with the shuffler's groups "
                             f"max {mx:.3g}, mean {att['attack_ari'].mean():.3g} over {len(att)} runs")
                   if len(att) else "", data=_data(att if len(att) else runs), scale=scale)]


def claims(runs: pd.DataFrame, users: pd.DataFrame, scale: str) -> pd.DataFrame:
    alg = runs[(runs.method == "alg1") & (runs.feasible)] if len(runs) else runs
    rows = _theorem3_rows(runs, scale)
    rows += _theorem4_rows(runs, alg, scale)
    rows += _ldp_rows(runs, users, scale)
    rows += _sqrt_n_rows(runs, users, scale)
    rows += _two_copies_rows(runs, alg, scale)
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "") -> str:
    return markdown(df, "Per-user histograms: claims checked", note)


def protocols_of(claim_id: str) -> tuple[str, ...]:
    """The experiments' protocol names a claim row rests on (the audits gate,
    :mod:`shuffledp.claims.audit_gate`): Algorithm 1 for every row (the Theorem 3 row also its
    ``alg1T`` variant)."""
    return ("alg1", "alg1T") if claim_id.startswith("error_under_theorem3_bound") else ("alg1",)


def gate(df: pd.DataFrame, audit_paths) -> pd.DataFrame:
    """The claims table with the audits' gate (``audit_paths``: the step's audits input, empty when
    the audits stage is disabled)."""
    from shuffledp.claims import audit_gate

    return audit_gate.gate_paths(df, audit_paths, lambda r: protocols_of(str(r["id"])))
