"""Claims of the multidimensional categorical shuffle paper (Wang et al., Computers & Security),
decided on the Fig. 3 summary (``experiments.multidim_report.summarise_uniform``), the Fig. 10
personalized runs and, for Fig. 4, the user-side timings.

The paper's datasets are IPUMS BR and MX. Each claim is decided once on them (ids as below; on the
offline stand-in they are labelled ``stand-in`` and are not evidence) and once on every other
dataset present (e.g. Adult, real but not IPUMS), with the dataset appended to the id.
Datasets whose provenance is not given are treated as the paper's: BR and MX as stand-ins.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp.claims.core import (
    INVERSE_EPS_TARGET,
    REAL,
    STANDIN,
    Claim,
    between,
    data_kind,
    decide,
    decreasing_trend,
    every_point,
    frame,
    inversely_proportional,
    loglog_slope,
    markdown,
    not_testable,
    t_test,
    trend_test,
    welch_from_stats,
)

PAPER_DATASETS = ("br", "mx")
PAPER_GAIN_EPS1 = {"br": 0.5, "mx": 1.0}   # "improve the MSE by about 0.5 times (BR) or 1 times (MX)"
GAIN_FACTOR = 2.0                          # "about": within a factor 2, either side
MUCH_LOWER = 2.0                           # "much lower" / "significantly outperforms" (deterministic): a factor 2
SIMILAR_TP = 0.05                          # "performs similarly" (top-k TP): within 5% of k, mean over eps
# The paper's Table 3 (top-50 true positives per eps; FLAME, TCM, MHM), copied from its text as a quoted
# reference: shown beside our numbers, never used as our measurement.
PAPER_TABLE3_TP = {0.1: (40, 31, 37), 0.2: (39, 37, 42), 0.4: (41, 39, 38), 0.8: (41, 38, 41), 1.0: (39, 41, 41)}
# Fig. 10's budget classes (Sec. 6.2): conservative, moderate, liberal
CLASS_EPS = (0.1, 0.5, 1.0)

_Q311 = ("Overall, MHM consistently and significantly outperforms the state-of-the-art technique FLAME.")
CLAIMS = {
    "mhm_beats_flame_all_eps": Claim(
        "mhm_beats_flame_all_eps", _Q311, "Sec. 6.1.1, Fig. 3",
        "FLAME's mean MSE significantly above MHM's (Welch's t test over repetitions, two-sided 5%) at every eps "
        "of every dataset; not held where significantly below; else not testable", ">= 1 eps with both "
        "mechanisms and >= 2 repetitions",
        explain="at some eps FLAME's MSE is significantly below MHM's (see measured); figures/multidim_fig3.png "
                "and docs/multidim.md (MHM's floor at large budgets)"),
    "mhm_flame_gap_grows_with_eps": Claim(
        "mhm_flame_gap_grows_with_eps", "Besides, we also observe that the gap between MHM and FLAME is "
        "proportional to ϵ .", "Sec. 6.1.1, Fig. 3", "FLAME / MHM increases in eps: Kendall tau > 0 with "
        "two-sided p < 0.05, on every dataset", ">= 5 eps values (a Kendall test on fewer cannot reach p < 0.05)",
        explain="FLAME / MHM shows no significant increasing trend in eps on some dataset (see measured); "
                "figures/multidim_fig3.png"),
    "mhm_improvement_eps1_br": Claim(
        "mhm_improvement_eps1_br", "When $\\epsilon = 1$ on MX, our methods improve the MSE by about 0.5 times (on "
        "BR) or 1 times (on MX) compared with FLAME.", "Sec. 6.1.1, Fig. 3: 0.5 on BR",
        f"FLAME / MHM - 1 at eps = 1 on BR within a factor {GAIN_FACTOR:g} of 0.5, either side", "eps = 1 on BR",
        explain="the improvement at eps = 1 on BR is outside 0.25..1; figures/multidim_fig3.png"),
    "mhm_improvement_eps1_mx": Claim(
        "mhm_improvement_eps1_mx", "When $\\epsilon = 1$ on MX, our methods improve the MSE by about 0.5 times (on "
        "BR) or 1 times (on MX) compared with FLAME.", "Sec. 6.1.1, Fig. 3: 1 on MX",
        f"FLAME / MHM - 1 at eps = 1 on MX within a factor {GAIN_FACTOR:g} of 1, either side", "eps = 1 on MX",
        explain="the improvement at eps = 1 on MX is outside 0.5..2; figures/multidim_fig3.png"),
    "mhm_beats_tcm": Claim(
        "mhm_beats_tcm", "Also, MHM considerably outperforms TCM.", "Sec. 6.1.1, Fig. 3",
        "TCM's mean MSE significantly above MHM's (Welch's t test over repetitions, two-sided 5%) at every eps of "
        "every dataset; not held where significantly below; else not testable", ">= 1 eps with both "
        "mechanisms and >= 2 repetitions",
        explain="at some eps TCM's MSE is significantly below MHM's (see measured); figures/multidim_fig3.png"),
    "mse_inversely_proportional_to_eps": Claim(
        "mse_inversely_proportional_to_eps", "On the other hand, the errors from the first two are independent of "
        "ϵ , while the latter is inversely proportional to ϵ .", "Sec. 6.1.1 (Discussion), Fig. 3",
        f"{INVERSE_EPS_TARGET}, for MHM and FLAME on every dataset", ">= 3 eps values spanning a factor >= 4",
        explain="the MSE-eps slope is outside [-1.5, -0.5] for some (dataset, mechanism) (see measured): MHM's "
                "MSE sits on a floor set by its sampling design (one report names one hashed value, so p <= 1/d "
                "and p d -> 1/2 however large eps_l; mhm.mse_floor), not by the eps_s -> eps_l inversion nor the "
                "estimator (tests/test_multidim_mhm_floor.py); MHM with the paper's printed p and accountant "
                "(mechanism mhm_paper, not eps_l-LDP) is flat too; docs/multidim.md, figures/multidim_fig3.png"),
    "comm_flame_lt_mhm_lt_tcm": Claim(
        "comm_flame_lt_mhm_lt_tcm", "Observe that FLAME and MHM yield much lower communication costs than TCM. And "
        "FLAME outperforms MHM.", "Sec. 6.1.1, Fig. 5",
        f"bits per user computed from each protocol's message sizes (column bits_total, as the paper's Fig. 5): "
        f"FLAME < MHM, and MHM at most 1/{MUCH_LOWER:g} of TCM (much lower: a factor {MUCH_LOWER:g}), on every "
        "dataset", "bits per user of all three mechanisms",
        explain="the computed message sizes do not order FLAME < MHM << TCM on some dataset; "
                "figures/multidim_fig5.png"),
    "fig4_user_time_flame_lt_mhm_lt_tcm": Claim(
        "fig4_user_time_flame_lt_mhm_lt_tcm", "Note that the sampling-based FLAME significantly outperforms all "
        "the other methods, with a clear performance gap.", "Sec. 6.1.1, Fig. 4 (and its Discussion: MHM runs "
        "faster than TCM)", f"median user-side seconds per user over eps and repetitions: FLAME at most "
        f"1/{MUCH_LOWER:g} of MHM's and TCM's (a clear gap: a factor {MUCH_LOWER:g}), and MHM < TCM, on every "
        "dataset", "user-side timings of all three mechanisms",
        explain="the measured user-side times do not order FLAME << MHM < TCM on some dataset (wall clock, "
                "machine-dependent: MHM derives d hash functions per user, TCM one, and the per-user gap is a "
                "few microseconds of numpy, so only the order of magnitude compares); docs/multidim.md, "
                "figures/multidim_fig4.png"),
    "table3_mhm_tp_ge_tcm": Claim(
        "table3_mhm_tp_ge_tcm", "It is observed that MHM performs similarly with FLAME, but is superior to TCM.",
        "Sec. 6.1.1, Table 3 (MHM vs TCM)", "mean top-50 TP over eps of MHM > of TCM on every dataset",
        "Table 3 for MHM and TCM", explain="MHM's mean TP is not above TCM's on some dataset; "
        "tables/multidim_table3.md"),
    "table3_mhm_similar_flame": Claim(
        "table3_mhm_similar_flame", "It is observed that MHM performs similarly with FLAME, but is superior to TCM.",
        "Sec. 6.1.1, Table 3 (MHM vs FLAME)", f"|mean TP of MHM - mean TP of FLAME| over eps <= {SIMILAR_TP:.0%} "
        "of k (top-50: 2.5) on every dataset", "Table 3 for MHM and FLAME",
        explain="MHM's and FLAME's mean TP differ by more than 5% of k on some dataset (FLAME's low-eps runs "
                "lose true positives); tables/multidim_table3.md"),
    "ogm_beats_nogm": Claim(
        "ogm_beats_nogm", "Overall, our proposal OGM consistently and significantly outperforms the best-effort "
        "approach NOGM.", "Sec. 6.2, Fig. 10", "NOGM's mean MSE significantly above OGM's (Welch's t "
        "test over repetitions, two-sided 5%) at every ratio of every dataset; not held where significantly below; "
        "else not testable", ">= 1 ratio with both methods, >= 2 "
        "repetitions", explain="at some ratio NOGM's MSE is significantly below OGM's (see measured); "
        "figures/multidim_fig10.png"),
    "ogm_vs_nogm_244_mx": Claim(
        "ogm_vs_nogm_244_mx", "Notably, when the ratio is 2:4:4 on the MX dataset, the MSE of NOGM is one times "
        "larger than the one of OGM.", "Sec. 6.2, Fig. 10: about 2", "NOGM / OGM at 2:4:4 on MX in [1.5, 3]",
        "ratio 2:4:4 on MX", explain="NOGM / OGM at 2:4:4 on MX is outside 1.5..3; figures/multidim_fig10.png"),
    "fig10_better_as_users_more_liberal": Claim(
        "fig10_better_as_users_more_liberal", "Moreover, it is observed that with the increasing of the number of "
        "moderate or liberal users, both two methods perform better.", "Sec. 6.2, Fig. 10",
        "per-repetition MSE decreases in the population's mean budget (classes 0.1, 0.5, 1): Kendall tau < 0 with "
        "two-sided p < 0.05, for OGM and NOGM on every dataset", ">= 3 ratios with different mean budgets",
        explain="no significant decreasing trend of MSE in the mean budget for some (dataset, method); "
                "figures/multidim_fig10.png"),
}


def _kind_fn(standin):
    def kind(ds):
        if standin is None:
            return STANDIN if ds in PAPER_DATASETS else REAL
        return STANDIN if ds in set(standin) else REAL
    return kind


def _groups(datasets) -> list[tuple[str, list[str]]]:
    """(id suffix, datasets): the paper's datasets together, every other dataset on its own."""
    ds = sorted(set(datasets))
    out = [("", [d for d in ds if d in PAPER_DATASETS])]
    out += [(f"_{d}", [d]) for d in ds if d not in PAPER_DATASETS]
    return [g for g in out if g[1]] or [("", [])]


@dataclass
class _Group:
    """One group of datasets (``_groups``): its pivots and the rows decided on it."""
    sfx: str
    dss: list
    data: str
    scale: str
    kind: Callable
    sub: pd.DataFrame
    rows: list
    sd: pd.DataFrame | None = None     # per (dataset, eps) x mechanism: the MSE's SD over repetitions
    reps: pd.DataFrame | None = None   # ... and the number of repetitions

    def add(self, cid, testable, ok, measured, reason, reference=""):
        c = CLAIMS[cid]
        c = Claim(c.id + self.sfx, c.quote, c.section, c.target, c.needs, c.by, c.explain)
        self.rows.append(decide(c, testable=testable, ok=ok, measured=measured, data=self.data, scale=self.scale,
                                reason=reason, reference=reference))


def _every_point(g: _Group, cid: str, tests: dict, ratio: dict, what: str) -> None:
    """Decide "<worse> significantly above <better> at every point" from one t test per point (key
    -> :class:`~shuffledp.claims.core.TTest` of worse - better): held when significant at every
    point, not held when significantly below at one, else not testable (undecided points, none
    against: more repetitions would decide), like the frameworks' rows."""
    held, sign, counts = every_point(tests)

    def pts(v: int) -> str:
        return "; ".join(f"{' '.join(str(x) for x in k)}: {what}={ratio[k]:.3g} ({tests[k].text()})"
                         for k in sign if sign[k] == v)

    head = f"significantly above at {counts[1]}/{len(sign)}, below at {counts[-1]}, undecided at {counts[0]}"
    measured = head + (f"; below: {pts(-1)}" if counts[-1] else "") + (f"; undecided: {pts(0)}" if counts[0] else "")
    if held is None:
        g.add(cid, False, False, measured, f"undecided at {pts(0)}; none significantly against: more repetitions "
              "needed")
    else:
        g.add(cid, True, held, measured, "")


def _mhm_vs_others(g: _Group) -> pd.Series:
    """MHM vs FLAME / TCM (Welch's t test over repetitions at every point, three outcomes), and the
    FLAME / MHM gap growing with eps (trend test); returns the FLAME / MHM ratios."""
    sub, sd, reps = g.sub, g.sd, g.reps
    for cid, other in (("mhm_beats_flame_all_eps", "flame"), ("mhm_beats_tcm", "tcm")):
        have = {"mhm", other} <= set(sub.columns) and sub[["mhm", other]].notna().all(axis=1).any()
        if have and sd is not None and {"mhm", other} <= set(sd.columns):
            both = sub[["mhm", other]].dropna()
            tests = {k: welch_from_stats(both.loc[k, other], sd.loc[k, other], reps.loc[k, other],
                                         both.loc[k, "mhm"], sd.loc[k, "mhm"], reps.loc[k, "mhm"])
                     for k in both.index}
            _every_point(g, cid, tests, {k: both.loc[k, other] / both.loc[k, "mhm"] for k in both.index},
                         f"{other.upper()}/MHM")
        else:
            g.add(cid, False, False, "", f"no eps with both MHM and {other.upper()} and their standard deviations")
    if {"mhm", "flame"} <= set(sub.columns):
        ratio = (sub["flame"] / sub["mhm"]).dropna()
    else:
        ratio = pd.Series(dtype=float)
    parts, oks, short = [], [], []
    for d in g.dss:
        v = ratio[ratio.index.get_level_values(0) == d].droplevel(0).sort_index() if len(ratio) else ratio
        if len(v) < 5:
            short.append(d)
            continue
        tau, p = trend_test(v.index.to_numpy(float), v.to_numpy(float))
        oks.append(bool(math.isfinite(tau) and tau > 0 and p < 0.05))
        parts.append(f"{d}: {v.iloc[0]:.3g} at eps={v.index[0]:g} -> {v.iloc[-1]:.3g} at eps={v.index[-1]:g}, "
                     f"Kendall tau {tau:.2f} (p = {p:.2g})")
    g.add("mhm_flame_gap_grows_with_eps", bool(oks) and not short, all(oks), "; ".join(parts),
          f"fewer than 5 eps values with MHM and FLAME on {short} (a Kendall test on fewer cannot reach "
          "p < 0.05)")
    return ratio


def _eps1_improvements(g: _Group, ratio: pd.Series) -> None:
    """eps = 1 improvements (the paper's numbers are for BR and MX only)."""
    for d, paper_gain in PAPER_GAIN_EPS1.items():
        cid = f"mhm_improvement_eps1_{d}"
        if (d, 1.0) in ratio.index:
            gain = float(ratio[(d, 1.0)] - 1)
            g.rows.append(decide(CLAIMS[cid], testable=True, ok=between(gain, paper_gain / GAIN_FACTOR,
                                                                        paper_gain * GAIN_FACTOR),
                                 measured=f"FLAME/MHM - 1 = {gain:.3g}", data=g.kind(d), scale=g.scale))
        else:
            g.rows.append(not_testable(CLAIMS[cid], f"no eps = 1 run of MHM and FLAME on {d.upper()}",
                                       data=g.kind(d), scale=g.scale))


def _mse_over_eps(g: _Group) -> None:
    """MSE ~ 1 / eps: the same rule as every figure where a paper says it (core.inversely_proportional)."""
    sub = g.sub
    parts, oks, short = [], [], []
    for d in g.dss:
        for mech in ("mhm", "flame"):
            if mech not in sub.columns:
                short.append(f"{d}/{mech}")
                continue
            s = sub[mech][sub.index.get_level_values(0) == d].droplevel(0).dropna()
            s = s[(s > 0) & (s.index > 0)]
            if len(s) < 3 or s.index.max() / s.index.min() < 4:
                short.append(f"{d}/{mech}")
                continue
            slope, sse = loglog_slope(s.index.to_numpy(float), s.to_numpy(float))
            oks.append(inversely_proportional(s.index.to_numpy(float), s.to_numpy(float)))
            parts.append(f"{d}/{mech.upper()}: slope {slope:.2f} (SE {sse:.2f}) over eps "
                         f"{s.index.min():g}..{s.index.max():g}")
    g.add("mse_inversely_proportional_to_eps", bool(oks) and not short, all(oks), "; ".join(parts),
          f"needs >= 3 eps values spanning a factor >= 4 for {short}")


def _communication(g: _Group, summary: pd.DataFrame) -> None:
    """Communication (Fig. 5): from the bits each protocol's messages take (bits_total), as the paper's."""
    col = "bits_total"
    b = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism", values=col) \
        if len(summary) and col in summary.columns else pd.DataFrame()
    if {"flame", "mhm", "tcm"} <= set(b.columns) and len(b.dropna(subset=["flame", "mhm", "tcm"])):
        b = b.dropna(subset=["flame", "mhm", "tcm"])
        ok = bool(((b["flame"] < b["mhm"]) & (b["mhm"] * MUCH_LOWER <= b["tcm"])).all())
        g.add("comm_flame_lt_mhm_lt_tcm", True, ok, "; ".join(
            f"{d}: " + ", ".join(f"{m.upper()} {r[m]:.0f}" for m in ("flame", "mhm", "tcm")) + " bits per user"
            for d, r in b.iterrows()), "")
    else:
        g.add("comm_flame_lt_mhm_lt_tcm", False, False, "", "needs bits per user of FLAME, MHM and TCM")


def _fig4_user_time(g: _Group, timings: pd.DataFrame | None) -> None:
    """Fig. 4: user-side time."""
    tim = timings[timings["dataset"].isin(g.dss)] if timings is not None and len(timings) else None
    if tim is not None and {"flame", "mhm", "tcm"} <= set(tim["mechanism"]):
        med = tim.groupby(["dataset", "mechanism"])["user_seconds_per_user"].median().unstack()
        med = med.dropna(subset=["flame", "mhm", "tcm"])
        ok = bool(len(med)) and bool(((med["flame"] * MUCH_LOWER <= med[["mhm", "tcm"]].min(axis=1))
                                      & (med["mhm"] < med["tcm"])).all())
        g.add("fig4_user_time_flame_lt_mhm_lt_tcm", bool(len(med)), ok,
              "; ".join(f"{d}: FLAME {r['flame'] * 1e6:.3g}, MHM {r['mhm'] * 1e6:.3g}, TCM {r['tcm'] * 1e6:.3g} "
                        "us/user" for d, r in med.iterrows()) + " (wall clock, machine-dependent)",
              "no dataset with timings of all three mechanisms")
    else:
        g.add("fig4_user_time_flame_lt_mhm_lt_tcm", False, False, "",
              "needs the user-side timings (multidim_timings, column user_seconds_per_user) of FLAME, MHM and TCM")


def _paper_table3() -> str:
    tp = np.array(list(PAPER_TABLE3_TP.values()), float)
    return ("paper's Table 3 TP (FLAME, TCM, MHM) per eps: " + "; ".join(
        f"{e:g}: {f}, {t}, {m}" for e, (f, t, m) in PAPER_TABLE3_TP.items())
        + f"; means FLAME {tp[:, 0].mean():.1f}, TCM {tp[:, 1].mean():.1f}, MHM {tp[:, 2].mean():.1f}")


def _table3(g: _Group, summary: pd.DataFrame) -> None:
    """Table 3: MHM superior to TCM, similar to FLAME (the paper's numbers beside ours)."""
    tp = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism", values="TP") \
        if len(summary) else pd.DataFrame()
    ref = _paper_table3()
    if {"mhm", "tcm"} <= set(tp.columns) and len(tp.dropna(subset=["mhm", "tcm"])):
        t = tp.dropna(subset=["mhm", "tcm"])
        g.add("table3_mhm_tp_ge_tcm", True, bool((t["mhm"] > t["tcm"]).all()),
              "mean TP over eps: " + "; ".join(f"{d}: MHM {r['mhm']:.1f}, TCM {r['tcm']:.1f}"
                                               for d, r in t.iterrows()), "", reference=ref)
    else:
        g.add("table3_mhm_tp_ge_tcm", False, False, "", "no Table 3 rows for MHM and TCM", reference=ref)
    if {"mhm", "flame"} <= set(tp.columns) and len(tp.dropna(subset=["mhm", "flame"])):
        t = tp.dropna(subset=["mhm", "flame"])
        k = float(summary["k"].iloc[0]) if "k" in summary.columns else 50.0
        g.add("table3_mhm_similar_flame", True, bool(((t["mhm"] - t["flame"]).abs() <= SIMILAR_TP * k).all()),
              f"mean TP over eps (k = {k:g}): " + "; ".join(f"{d}: MHM {r['mhm']:.1f}, FLAME {r['flame']:.1f}"
                                                            for d, r in t.iterrows()), "", reference=ref)
    else:
        g.add("table3_mhm_similar_flame", False, False, "", "no Table 3 rows for MHM and FLAME", reference=ref)


def _budget(ratio: str) -> float:
    """Mean budget of a Fig. 10 population conservative:moderate:liberal."""
    w = np.array([float(x) for x in ratio.split(":")])
    return float(w @ np.array(CLASS_EPS) / w.sum())


def _fig10_ogm(g: _Group, pp: pd.DataFrame, per_rep: pd.DataFrame) -> None:
    """Fig. 10: OGM vs NOGM (significance over repetitions), and at 2:4:4 on MX (paper's datasets only)."""
    if {"ogm", "nogm"} <= set(pp.columns) and len(pp.dropna(subset=["ogm", "nogm"])):
        r3 = (pp["nogm"] / pp["ogm"]).dropna()
        tests = {}
        for d, r in r3.index:
            sel = per_rep[(per_rep["dataset"] == d) & (per_rep["ratio"] == r)]
            tests[(d, r)] = t_test(sel.loc[sel["method"] == "nogm", "mse"], sel.loc[sel["method"] == "ogm", "mse"],
                                   paired=False)
        _every_point(g, "ogm_beats_nogm", tests, r3.to_dict(), "NOGM/OGM")
    else:
        r3 = pd.Series(dtype=float)
        g.add("ogm_beats_nogm", False, False, "", "no ratio with both OGM and NOGM")
    if g.sfx == "":
        c = CLAIMS["ogm_vs_nogm_244_mx"]
        if ("mx", "2:4:4") in r3.index:
            v = float(r3[("mx", "2:4:4")])
            g.rows.append(decide(c, testable=True, ok=between(v, 1.5, 3.0), measured=f"NOGM/OGM = {v:.3g}",
                                 data=g.kind("mx"), scale=g.scale))
        else:
            g.rows.append(not_testable(c, "no 2:4:4 run of OGM and NOGM on MX", data=g.kind("mx"), scale=g.scale))


def _fig10_liberal(g: _Group, per_rep: pd.DataFrame) -> None:
    """Fig. 10: more liberal populations get lower errors (trend test over repetitions)."""
    parts, oks = [], []
    for (d, m), grp in (per_rep.groupby(["dataset", "method"]) if len(per_rep) else []):
        budgets = grp["ratio"].map(_budget).to_numpy(float)
        if np.unique(budgets).size < 3:
            continue
        tau, p = trend_test(budgets, grp["mse"].to_numpy(float))
        oks.append(decreasing_trend(budgets, grp["mse"].to_numpy(float)))
        parts.append(f"{d}/{str(m).upper()}: Kendall tau {tau:.2f} (p = {p:.2g}) over {len(grp)} runs, "
                     f"{np.unique(budgets).size} mean budgets")
    g.add("fig10_better_as_users_more_liberal", bool(oks), bool(oks) and all(oks), "; ".join(parts),
          "needs >= 3 ratios with different mean budgets")


def claims(summary: pd.DataFrame, personal: pd.DataFrame, scale: str, timings: pd.DataFrame | None = None,
           standin: Iterable[str] | None = None) -> pd.DataFrame:
    """``standin``: names of datasets that are offline stand-ins; None = unknown (BR and MX are then
    taken as stand-ins, any other dataset as real)."""
    kind = _kind_fn(None if standin is None else list(standin))
    rows: list[dict] = []
    piv = summary.pivot_table(index=["dataset", "eps"], columns="mechanism", values="mse") if len(summary) \
        else pd.DataFrame()
    sdpiv = repiv = None
    if len(summary) and {"mse_sd", "reps"} <= set(summary.columns):
        sdpiv, repiv = (summary.pivot_table(index=["dataset", "eps"], columns="mechanism", values=v)
                        for v in ("mse_sd", "reps"))
    datasets = set(summary["dataset"]) if len(summary) else set()
    if personal is not None and len(personal):
        datasets |= set(personal["dataset"])

    for sfx, dss in _groups(datasets):
        sub = piv[piv.index.get_level_values(0).isin(dss)] if len(piv) else piv
        sd, reps = ((p[p.index.get_level_values(0).isin(dss)] if p is not None and len(p) else None)
                    for p in (sdpiv, repiv))
        g = _Group(sfx, dss, data_kind(kind(d) for d in dss) or STANDIN, scale, kind, sub, rows, sd, reps)
        ratio = _mhm_vs_others(g)
        if sfx == "":
            _eps1_improvements(g, ratio)
        _mse_over_eps(g)
        _communication(g, summary)
        _fig4_user_time(g, timings)
        _table3(g, summary)
        per_rep = personal[personal["dataset"].isin(dss)] if personal is not None and len(personal) \
            else pd.DataFrame(columns=["dataset", "ratio", "method", "mse"])
        pp = per_rep.groupby(["dataset", "ratio", "method"])["mse"].mean().unstack("method") if len(per_rep) \
            else pd.DataFrame()
        _fig10_ogm(g, pp, per_rep)
        _fig10_liberal(g, per_rep)
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "", scale: str = "") -> str:
    return markdown(df, "Claims of the multidimensional seed (Wang et al., Computers & Security)", note)
