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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp.claims import engine as E
from shuffledp.claims.core import (
    REAL,
    STANDIN,
    Claim,
    data_kind,
    decide,
    frame,
    loglog_slope,
    markdown,
)

PAPER_DATASETS = ("br", "mx")
SLOPE_LO, SLOPE_HI = -1.5, -0.5             # "inversely proportional": log-log slope -1 +- 0.5
PAPER_GAIN_EPS1 = {"br": 0.5, "mx": 1.0}   # "improve the MSE by about 0.5 times (BR) or 1 times (MX)"
GAIN_FACTOR = 2.0                          # "about": within a factor 2, either side
MUCH_LOWER = 2.0                           # "much lower" / "significantly outperforms" (deterministic): a factor 2
CONSIDERABLY = 1.5                         # "considerably outperforms": by half again or more (docs/claims.md, Power)
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
        "FLAME - MHM mean MSE, its Welch 95% interval over repetitions above 0 at every eps of every dataset "
        "(not held where entirely below 0 at one; else not testable)", ">= 1 eps with both "
        "mechanisms and >= 2 repetitions",
        explain="at some eps FLAME's MSE is significantly below MHM's (see measured); figures/multidim_fig3.png "
                "and docs/multidim.md (MHM's floor at large budgets)"),
    "mhm_flame_gap_grows_with_eps": Claim(
        "mhm_flame_gap_grows_with_eps", "Besides, we also observe that the gap between MHM and FLAME is "
        "proportional to ϵ .", "Sec. 6.1.1, Fig. 3",
        "Kendall's tau of FLAME / MHM on eps, its 95% interval above 0, on every dataset ('proportional' read as "
        "the paper's own Discussion explains it: 'the gap between FLAME and MHM increased' as eps increases; no "
        "constant of proportionality is stated)",
        ">= 5 eps values (a Kendall test on fewer cannot reach p < 0.05)",
        explain="FLAME / MHM shows no significant increasing trend in eps on some dataset (see measured); "
                "figures/multidim_fig3.png"),
    "mhm_improvement_eps1_br": Claim(
        "mhm_improvement_eps1_br", "When $\\epsilon = 1$ on MX, our methods improve the MSE by about 0.5 times (on "
        "BR) or 1 times (on MX) compared with FLAME.", "Sec. 6.1.1, Fig. 3: 0.5 on BR",
        f"FLAME / MHM - 1 at eps = 1 on BR, its 95% interval (Welch on the log ratio) inside [0.25, 1] (about: a "
        f"factor {GAIN_FACTOR:g} of 0.5, either side)", "eps = 1 on BR",
        explain="the improvement at eps = 1 on BR is outside 0.25..1; figures/multidim_fig3.png"),
    "mhm_improvement_eps1_mx": Claim(
        "mhm_improvement_eps1_mx", "When $\\epsilon = 1$ on MX, our methods improve the MSE by about 0.5 times (on "
        "BR) or 1 times (on MX) compared with FLAME.", "Sec. 6.1.1, Fig. 3: 1 on MX",
        f"FLAME / MHM - 1 at eps = 1 on MX, its 95% interval (Welch on the log ratio) inside [0.5, 2] (about: a "
        f"factor {GAIN_FACTOR:g} of 1, either side)", "eps = 1 on MX",
        explain="the improvement at eps = 1 on MX is outside 0.5..2; figures/multidim_fig3.png"),
    "mhm_beats_tcm": Claim(
        "mhm_beats_tcm", "Also, MHM considerably outperforms TCM.", "Sec. 6.1.1, Fig. 3",
        f"TCM / MHM mean MSE over the figure (the geometric mean over eps of the ratio of means), its 95% interval "
        f"(delta method on the mean log ratio, t quantile at the fewest repetitions - 1 df) above "
        f"{CONSIDERABLY:g} (considerably: by half again or more; the sentence names no eps, so the figure as a "
        "whole), on every dataset", ">= 1 eps with both mechanisms and >= 2 repetitions",
        explain="TCM's MSE is not considerably above MHM's over the figure on some dataset (see measured); "
                "figures/multidim_fig3.png"),
    "mse_inversely_proportional_to_eps": Claim(
        "mse_inversely_proportional_to_eps", "On the other hand, the errors from the first two are independent of "
        "ϵ , while the latter is inversely proportional to ϵ .", "Sec. 6.1.1 (Discussion), Fig. 3",
        "MHM's least-squares slope of log MSE on log eps, its t interval (n - 2 df) inside [-1.5, -0.5], on every "
        "dataset (the sentence makes MHM's error, local randomizing alone, inversely proportional to eps, and "
        "FLAME's partly independent of it: FLAME's slope is shown, not decided)",
        ">= 3 eps values spanning a factor >= 4",
        explain="the MSE-eps slope is outside [-1.5, -0.5] for some (dataset, mechanism) (see measured): MHM's "
                "MSE sits on a floor set by its sampling design (one report names one hashed value, so p <= 1/d "
                "and p d -> 1/2 however large eps_l; mhm.mse_floor), not by the eps_s -> eps_l inversion nor the "
                "estimator (tests/test_multidim_mhm_floor.py); MHM with the paper's printed p and accountant "
                "(mechanism mhm_paper, not eps_l-LDP) is flat too; docs/multidim.md, figures/multidim_fig3.png"),
    "comm_flame_lt_mhm_lt_tcm": Claim(
        "comm_flame_lt_mhm_lt_tcm", "Observe that FLAME and MHM yield much lower communication costs than TCM. And "
        "FLAME outperforms MHM.", "Sec. 6.1.1, Fig. 5",
        f"bits per user computed from each protocol's message sizes (column bits_total, as the paper's Fig. 5; exact): "
        f"FLAME / MHM < 1, and MHM / TCM <= 1/{MUCH_LOWER:g} (much lower: a factor {MUCH_LOWER:g}), on every "
        "dataset", "bits per user of all three mechanisms",
        explain="the computed message sizes do not order FLAME < MHM << TCM on some dataset; "
                "figures/multidim_fig5.png"),
    "fig4_user_time_flame_lt_mhm_lt_tcm": Claim(
        "fig4_user_time_flame_lt_mhm_lt_tcm", "Note that the sampling-based FLAME significantly outperforms all "
        "the other methods, with a clear performance gap.", "Sec. 6.1.1, Fig. 4 (and its Discussion: MHM runs "
        "faster than TCM)",
        "FLAME / MHM and FLAME / TCM mean user-side seconds per user over eps and repetitions, each 95% "
        f"interval (Welch on the log ratio) at most 1/{MUCH_LOWER:g} (a clear gap: a factor {MUCH_LOWER:g}), on "
        "every dataset", "user-side timings of all three mechanisms",
        explain="the measured user-side times do not order FLAME << MHM < TCM on some dataset (wall clock, "
                "machine-dependent: MHM derives d hash functions per user, TCM one, and the per-user gap is a "
                "few microseconds of numpy, so only the order of magnitude compares); docs/multidim.md, "
                "figures/multidim_fig4.png"),
    "fig4_user_time_mhm_lt_tcm": Claim(
        "fig4_user_time_mhm_lt_tcm", "Overall, in our opinion, the traditional SDP-based method TCM and MHM are "
        "still preferred solutions where the latter runs faster because of the elimination of encoding operations.",
        "Sec. 6.1.1, Fig. 4 Discussion", "MHM / TCM mean user-side seconds per user over eps and repetitions, its "
        "95% interval (Welch on the log ratio) below 1, on every dataset", "user-side timings of MHM and TCM",
        explain="MHM's user-side time is not below TCM's on some dataset (wall clock, machine-dependent: MHM "
                "derives d hash functions per user, TCM one); docs/multidim.md, figures/multidim_fig4.png"),
    "table3_mhm_tp_ge_tcm": Claim(
        "table3_mhm_tp_ge_tcm", "It is observed that MHM performs similarly with FLAME, but is superior to TCM.",
        "Sec. 6.1.1, Table 3 (MHM vs TCM)", "mean over eps of TP(MHM) - TP(TCM), its t interval over the eps of "
        "Table 3 above 0, on every dataset",
        "Table 3 for MHM and TCM", explain="MHM's mean TP is not above TCM's on some dataset; "
        "tables/multidim_table3.md"),
    "table3_mhm_similar_flame": Claim(
        "table3_mhm_similar_flame", "It is observed that MHM performs similarly with FLAME, but is superior to TCM.",
        "Sec. 6.1.1, Table 3 (MHM vs FLAME)", f"mean over eps of TP(MHM) - TP(FLAME), its t interval over the eps of "
        f"Table 3 inside +-{SIMILAR_TP:.0%} of k (top-50: 2.5), on every dataset", "Table 3 for MHM and FLAME",
        explain="MHM's and FLAME's mean TP differ by more than 5% of k on some dataset (FLAME's low-eps runs "
                "lose true positives); tables/multidim_table3.md"),
    "ogm_beats_nogm": Claim(
        "ogm_beats_nogm", "Overall, our proposal OGM consistently and significantly outperforms the best-effort "
        "approach NOGM.", "Sec. 6.2, Fig. 10",
        "NOGM - OGM mean MSE, its Welch 95% interval over repetitions above 0 at every ratio of every dataset "
        "(not held where entirely below 0 at one; else not testable)", ">= 1 ratio with both methods, >= 2 "
        "repetitions", explain="at some ratio NOGM's MSE is significantly below OGM's (see measured); "
        "figures/multidim_fig10.png"),
    "ogm_vs_nogm_244_mx": Claim(
        "ogm_vs_nogm_244_mx", "Notably, when the ratio is 2:4:4 on the MX dataset, the MSE of NOGM is one times "
        "larger than the one of OGM.", "Sec. 6.2, Fig. 10: about 2",
        "NOGM / OGM at 2:4:4 on MX, its 95% interval (Welch on the log ratio) inside [1.5, 3]",
        "ratio 2:4:4 on MX", explain="NOGM / OGM at 2:4:4 on MX is outside 1.5..3; figures/multidim_fig10.png"),
    "tcm_comm_extra_vs_mhm": Claim(
        "tcm_comm_extra_vs_mhm", "Then TCM at least incurs additional $\\sum_{i=1}^{d} \\left(|C_i| \\cdot (8 + "
        "\\log(\\sum_{i=1}^{d} |C_i|)) \\right)$ communication costs compared with MHM.",
        "Sec. 6.1.1, Fig. 5 Discussion",
        "(TCM - MHM bits per user, column bits_total, exact) / (sum_i |C_i| (8 + log2 sum_i |C_i|) from the "
        "dataset's public domain sizes, exact) >= 1 (at least), on every dataset; TCM's received bits are the "
        "encoding-rule broadcast as the sentence counts it (tcm.broadcast_bits, log2 rounded up), so the row checks "
        "that the messages both protocols send (hash index and report) do not offset it",
        "bits per user of MHM and TCM and the datasets' domain sizes",
        explain="TCM's bits per user exceed MHM's by less than the formula on some dataset (see measured: the "
                "difference of the messages sent, TCM's report against MHM's, offsets part of the broadcast); "
                "figures/multidim_fig5.png"),
    "ogm_bigger_amplified_budget_than_nogm": Claim(
        "ogm_bigger_amplified_budget_than_nogm", "Consequently, OGM usually has a bigger amplified privacy "
        "budget, leading to less noise added by the local randomizer.", "Sec. 6.2 (Discussion), Fig. 10",
        "per (dataset, ratio): OGM / NOGM of the users' mean amplified budget (a user's local budgets eps_l summed "
        "over the MHM invocations she takes part in, averaged over users), its 95% interval over repetitions "
        "(Welch on the log ratio; width 0 when the budgets do not vary); 'usually': the share of points whose "
        "interval lies above 1, with the interval [share decided above 1, share not decided below 1], inside "
        "(1/2, 1]", "ratios with both OGM and NOGM and their per-invocation eps_l and group sizes",
        explain="OGM's mean amplified budget is not above NOGM's at most (dataset, ratio) points (see measured); "
                "docs/multidim.md (OGM and NOGM)"),
    "fig10_better_as_users_more_liberal": Claim(
        "fig10_better_as_users_more_liberal", "Moreover, it is observed that with the increasing of the number of "
        "moderate or liberal users, both two methods perform better.", "Sec. 6.2, Fig. 10",
        "Kendall's tau of the per-repetition MSE on the population's mean budget (classes 0.1, 0.5, 1), its 95% "
        "interval below 0, for OGM and NOGM on every dataset", ">= 3 ratios with different mean budgets",
        explain="no significant decreasing trend of MSE in the mean budget for some (dataset, method); "
                "figures/multidim_fig10.png"),
}


CLAIMS = {k: Claim(c.id, c.quote, c.section, c.target, c.needs, c.by, c.explain, scope=PAPER_DATASETS)
          for k, c in CLAIMS.items()}
_LABEL = {"br": "IPUMS BR", "mx": "IPUMS MX", "adult": "Adult", "loan": "Loan"}


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

    def claim(self, cid) -> Claim:
        """The paper's claim on the paper's datasets; the same test elsewhere is ours (Claim.ours)."""
        c = CLAIMS[cid]
        return c if not self.sfx else c.ours(self.sfx, ", ".join(_LABEL.get(d, d) for d in self.dss))

    def add(self, cid, testable=None, ok=None, measured="", reason="", reference="", verdict=None):
        self.rows.append(decide(self.claim(cid), testable=testable, ok=ok, measured=measured, data=self.data,
                                scale=self.scale, reason=reason, reference=reference, verdict=verdict,
                                datasets=self.dss))


def _pt(k) -> str:
    return " ".join(str(x) for x in k) if isinstance(k, tuple) else str(k)


def _worse_than(g: _Group, cid: str, means: pd.DataFrame, worse: str, better: str, what: str) -> None:
    """"<better> beats <worse> at every point": per point, Welch's 95% interval of mean(worse) -
    mean(better) over the repetitions against (0, inf) (engine.all_of: held when above 0 at every
    point, not held where entirely below at one, else not testable); the ratio is shown beside."""
    js = []
    for k in means.index:
        m, sd, n = (means.loc[k, c] for c in ("mean", "sd", "n"))
        iv = E.welch_interval(m[worse], sd[worse], n[worse], m[better], sd[better], n[better])
        js.append(E.judge(iv, E.above(0.0, below=f"{worse.upper()} below {better.upper()}",
                                      name=f"the region {worse.upper()} - {better.upper()}"),
                          f"{_pt(k)} ({what} = {m[worse] / m[better]:.3g})"))
    g.add(cid, verdict=E.all_of(js, "points"))


def mean_log_ratio_interval(means, sds, ns, base_means, base_sds, base_ns) -> E.Interval:
    """exp of the mean over points of log(mean / base_mean), with a 95% interval by the delta method
    (SE of a log mean = SD / (mean sqrt(n)); the points independent) and a t quantile at the fewest
    repetitions - 1 df (conservative); infinite with fewer than 2 repetitions somewhere."""
    a, sa, na, b, sb, nb = (np.asarray(x, float) for x in (means, sds, ns, base_means, base_sds, base_ns))
    k = a.size
    est = float(np.exp(np.mean(np.log(a / b)))) if k and np.all(a > 0) and np.all(b > 0) else math.nan
    nmin = int(min(na.min(), nb.min())) if k else 0
    if not math.isfinite(est) or nmin < 2 or not (np.all(np.isfinite(sa)) and np.all(np.isfinite(sb))):
        return E.Interval(est, -math.inf, math.inf, "delta method on the mean log ratio", nmin)
    se = math.sqrt(float(np.sum((sa / a) ** 2 / na + (sb / b) ** 2 / nb))) / k
    h = float(E.t_ppf(0.975, nmin - 1)) * se
    return E.Interval(est, est * math.exp(-h), est * math.exp(h), "delta method on the mean log ratio", nmin)


def _considerably(g: _Group, cid: str, means: pd.DataFrame, worse: str, better: str) -> None:
    """"<better> considerably outperforms <worse>": per dataset, the geometric mean over eps of the
    ratio of mean MSEs with its delta-method interval, above CONSIDERABLY (engine.all_of over datasets)."""
    js = []
    for d in sorted(set(means.index.get_level_values(0))):
        m = means[means.index.get_level_values(0) == d]
        iv = mean_log_ratio_interval(m[("mean", worse)], m[("sd", worse)], m[("n", worse)],
                                     m[("mean", better)], m[("sd", better)], m[("n", better)])
        pts = ", ".join(f"{k[1]:g}: {r:.3g}" for k, r in (m[("mean", worse)] / m[("mean", better)]).items())
        js.append(E.judge(iv, E.above(CONSIDERABLY, below=f"{worse.upper()} not considerably above {better.upper()}",
                                      name=f"the region (considerably: above {CONSIDERABLY:g}x)"),
                          f"{d}: {worse.upper()}/{better.upper()} geometric mean over {len(m)} eps (per eps {pts})"))
    g.add(cid, verdict=E.all_of(js, "datasets"))


def _means(g: _Group, mechs) -> pd.DataFrame | None:
    """(dataset, eps) x (mean | sd | n, mechanism) for the points where every one of ``mechs`` ran."""
    sub, sd, reps = g.sub, g.sd, g.reps
    if sd is None or reps is None or not set(mechs) <= set(sub.columns) or not set(mechs) <= set(sd.columns):
        return None
    both = sub[list(mechs)].dropna()
    if not len(both):
        return None
    return pd.concat({"mean": both, "sd": sd.loc[both.index, list(mechs)], "n": reps.loc[both.index, list(mechs)]},
                     axis=1)


def _mhm_vs_others(g: _Group) -> pd.Series:
    """MHM vs FLAME / TCM at every point (Welch intervals), and the FLAME / MHM gap growing with eps
    (Kendall interval); returns the FLAME / MHM ratios."""
    for cid, other in (("mhm_beats_flame_all_eps", "flame"), ("mhm_beats_tcm", "tcm")):
        m = _means(g, ("mhm", other))
        if m is None:
            g.add(cid, verdict=E.untestable(f"no eps with both MHM and {other.upper()} and their standard deviations"))
        elif cid == "mhm_beats_tcm":
            _considerably(g, cid, m, "tcm", "mhm")
        else:
            _worse_than(g, cid, m, other, "mhm", f"{other.upper()}/MHM")
    sub = g.sub
    ratio = (sub["flame"] / sub["mhm"]).dropna() if {"mhm", "flame"} <= set(sub.columns) else pd.Series(dtype=float)
    js = []
    for d in g.dss:
        v = ratio[ratio.index.get_level_values(0) == d].droplevel(0).sort_index() if len(ratio) else ratio
        if len(v) < 5:
            g.add("mhm_flame_gap_grows_with_eps", verdict=E.untestable(
                f"{len(v)} eps values with MHM and FLAME on {_LABEL.get(d, d)} (a Kendall interval on fewer than 5 "
                "cannot exclude 0)"))
            return ratio
        iv = E.kendall_interval(v.index.to_numpy(float), v.to_numpy(float))
        js.append(E.judge(iv, E.above(0.0, below="the gap shrinks as eps grows", above="",
                                      name="the region tau"),
                          f"{d}: FLAME/MHM {v.iloc[0]:.3g} at eps={v.index[0]:g} -> {v.iloc[-1]:.3g} at "
                          f"eps={v.index[-1]:g}, Kendall tau"))
    g.add("mhm_flame_gap_grows_with_eps", verdict=E.all_of(js, "datasets"))
    return ratio


def _eps1_improvements(g: _Group) -> None:
    """eps = 1 improvements (the paper's numbers are for BR and MX only): FLAME / MHM - 1 with its
    Welch interval on the log ratio, against the paper's number within a factor GAIN_FACTOR."""
    m = _means(g, ("mhm", "flame"))
    for d, paper_gain in PAPER_GAIN_EPS1.items():
        cid = f"mhm_improvement_eps1_{d}"
        claim = CLAIMS[cid]
        if m is None or (d, 1.0) not in m.index:
            g.rows.append(decide(claim, verdict=E.untestable(f"no eps = 1 run of MHM and FLAME on {d.upper()} "
                                                             "with standard deviations"),
                                 data=g.kind(d), scale=g.scale, datasets=[d]))
            continue
        mm, sd, n = (m.loc[(d, 1.0), c] for c in ("mean", "sd", "n"))
        iv = E.ratio_interval(mm["flame"], sd["flame"], n["flame"], mm["mhm"], sd["mhm"], n["mhm"], offset=-1.0)
        region = E.window(paper_gain / GAIN_FACTOR, paper_gain * GAIN_FACTOR, name="the window (about: a factor 2)",
                          below="smaller improvement than claimed", above="larger improvement than claimed")
        g.rows.append(decide(claim, verdict=E.one(E.judge(iv, region, "FLAME/MHM - 1 at eps = 1")), data=g.kind(d),
                             scale=g.scale, datasets=[d], reference=f"paper: {paper_gain:g}"))


def _mse_over_eps(g: _Group) -> None:
    """MHM's MSE ~ 1 / eps (the sentence says so of the local randomizing alone, MHM's only error; of
    FLAME's error it says the dummy values and sampling are independent of eps): the log-log slope
    with its t interval (n - 2 df) in [-1.5, -0.5]. FLAME's slope is shown, not decided."""
    sub = g.sub
    js, info = [], []
    for d in g.dss:
        for mech in ("mhm", "flame"):
            s = sub[mech][sub.index.get_level_values(0) == d].droplevel(0).dropna() if mech in sub.columns \
                else pd.Series(dtype=float)
            s = s[(s > 0) & (s.index > 0)]
            if len(s) < 3 or s.index.max() / s.index.min() < 4:
                if mech == "mhm":
                    g.add("mse_inversely_proportional_to_eps", verdict=E.untestable(
                        f"needs >= 3 eps values spanning a factor >= 4 for MHM on {_LABEL.get(d, d)}"))
                    return
                continue
            slope, sse = loglog_slope(s.index.to_numpy(float), s.to_numpy(float))
            if mech == "flame":
                info.append(f"{d}/FLAME slope {slope:.2f} (not decided: the sentence gives FLAME eps-free errors)")
                continue
            h = float(E.t_ppf(0.975, len(s) - 2)) * sse if math.isfinite(sse) else math.inf
            iv = E.Interval(slope, slope - h, slope + h, "t on the log-log slope", len(s))
            js.append(E.judge(iv, E.window(SLOPE_LO, SLOPE_HI, name="the window (-1 +- 0.5)",
                                           below="falls faster than 1/eps", above="flatter than 1/eps"),
                              f"{d}/MHM slope over eps {s.index.min():g}..{s.index.max():g}"))
    g.add("mse_inversely_proportional_to_eps", verdict=E.all_of(js, "datasets"), measured="; ".join(info))


def _communication(g: _Group, summary: pd.DataFrame) -> None:
    """Communication (Fig. 5): from the bits each protocol's messages take (bits_total, deterministic):
    MHM / TCM <= 1 / MUCH_LOWER and FLAME / MHM < 1, exact."""
    col = "bits_total"
    b = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism", values=col) \
        if len(summary) and col in summary.columns else pd.DataFrame()
    if not ({"flame", "mhm", "tcm"} <= set(b.columns) and len(b.dropna(subset=["flame", "mhm", "tcm"]))):
        g.add("comm_flame_lt_mhm_lt_tcm", verdict=E.untestable("needs bits per user of FLAME, MHM and TCM"))
        return
    js = []
    for d, r in b.dropna(subset=["flame", "mhm", "tcm"]).iterrows():
        js.append(E.judge(E.exact(r["mhm"] / r["tcm"]), E.Region(hi=1 / MUCH_LOWER, name="the region (much lower)",
                                                                  above="MHM not much below TCM"),
                          f"{d}: MHM/TCM bits ({r['mhm']:.0f}/{r['tcm']:.0f})"))
        js.append(E.judge(E.exact(r["flame"] / r["mhm"]), E.below(1.0, above="FLAME not below MHM"),
                          f"{d}: FLAME/MHM bits ({r['flame']:.0f}/{r['mhm']:.0f})"))
    g.add("comm_flame_lt_mhm_lt_tcm", verdict=E.all_of(js, "comparisons"))


def formula_bits(domains) -> float:
    """The extra communication Sec. 6.1.1 gives TCM over MHM: sum_i |C_i| (8 + log2 sum_i |C_i|) bits
    (the sentence's log, in bits; not rounded: an independent evaluation of the printed formula)."""
    total = float(sum(int(c) for c in domains))
    return total * (8.0 + math.log2(total)) if total > 0 else math.nan


def _tcm_extra(g: _Group, summary: pd.DataFrame, domains) -> None:
    """Fig. 5 Discussion: TCM - MHM bits per user over the printed formula's value, >= 1 (exact)."""
    cid = "tcm_comm_extra_vs_mhm"
    col = "bits_total"
    b = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism", values=col) \
        if len(summary) and col in summary.columns else pd.DataFrame()
    if not ({"mhm", "tcm"} <= set(b.columns) and len(b.dropna(subset=["mhm", "tcm"]))):
        g.add(cid, verdict=E.untestable("needs bits per user of MHM and TCM (column bits_total)"))
        return
    doms = domains or {}
    js, missing = [], []
    for d, r in b.dropna(subset=["mhm", "tcm"]).iterrows():
        if d not in doms:
            missing.append(_LABEL.get(d, d))
            continue
        f = formula_bits(doms[d])
        js.append(E.judge(E.exact((r["tcm"] - r["mhm"]) / f),
                          E.Region(lo=1.0, name="the region (at least the formula)",
                                   below="TCM's extra cost below the formula"),
                          f"{d}: (TCM {r['tcm']:.0f} - MHM {r['mhm']:.0f} bits) / formula {f:.0f} bits "
                          f"(sum |C_i| = {sum(int(c) for c in doms[d])})"))
    js += [E.undecided(d, "no public domain sizes |C_i| given for this dataset") for d in missing]
    g.add(cid, verdict=E.all_of(js, "datasets"))


def _amplified_budget(row) -> float:
    """A run's users' mean amplified budget: each invocation's eps_l times its users, summed, over n
    (a user's local budgets add up over the invocations she takes part in)."""
    import json

    eps_l, sizes = json.loads(row["eps_l"]), json.loads(row["group_sizes"])
    return float(sum(e * s for e, s in zip(eps_l, sizes, strict=True)) / row["n"]) if row["n"] else math.nan


def _ogm_budget(g: _Group, per_rep: pd.DataFrame) -> None:
    """Sec. 6.2 Discussion: OGM usually has the bigger amplified budget. Per (dataset, ratio), OGM / NOGM
    of the users' mean amplified budget with its log-ratio Welch interval over repetitions; the share of
    points above 1 as the interval [decided above, not decided below] against (1/2, 1]."""
    cid = "ogm_bigger_amplified_budget_than_nogm"
    need = {"eps_l", "group_sizes", "n"}
    if not len(per_rep) or not need <= set(per_rep.columns):
        g.add(cid, verdict=E.untestable("needs the personalized runs' per-invocation eps_l, group sizes and n"))
        return
    pr = per_rep.assign(budget=per_rep.apply(_amplified_budget, axis=1))
    st = pr.groupby(["dataset", "ratio", "method"])["budget"].agg(["mean", "std", "count"])
    pts = sorted({(d, r) for d, r, _ in st.index if (d, r, "ogm") in st.index and (d, r, "nogm") in st.index})
    if not pts:
        g.add(cid, verdict=E.untestable("no ratio with both OGM and NOGM"))
        return
    js = []
    for d, r in pts:
        a, b = st.loc[(d, r, "ogm")], st.loc[(d, r, "nogm")]
        iv = E.ratio_interval(a["mean"], a["std"], a["count"], b["mean"], b["std"], b["count"])
        js.append(E.judge(iv, E.above(1.0, below="NOGM's budget bigger", name="the region OGM / NOGM"),
                          f"{d} {r} (OGM {a['mean']:.3g} vs NOGM {b['mean']:.3g})"))
    n = len(js)
    up = sum(j.verdict == E.HELD for j in js)
    down = sum(j.verdict == E.NOT_HELD for j in js)
    est = sum(j.interval.estimate > 1 for j in js) / n
    iv = E.Interval(est, up / n, (n - down) / n, f"share of {n} points", n)
    v = E.one(E.judge(iv, E.above(0.5, below="OGM's budget is bigger at a minority of points",
                                  name="the region (usually: more than half)"),
                      f"share of (dataset, ratio) points with OGM's budget above NOGM's ({up} above, {down} below, "
                      f"{n - up - down} undecided)"))
    g.add(cid, verdict=v, measured="; ".join(j.text() for j in js))


def _fig4_user_time(g: _Group, timings: pd.DataFrame | None) -> None:
    """Fig. 4: FLAME at most 1 / MUCH_LOWER of each other method's user-side time (the sentence says
    nothing of MHM vs TCM): the ratio of mean seconds per user with its Welch interval on the log
    ratio over eps and repetitions."""
    tim = timings[timings["dataset"].isin(g.dss)] if timings is not None and len(timings) else None
    if tim is None or not {"flame", "mhm", "tcm"} <= set(tim["mechanism"]):
        for cid in ("fig4_user_time_flame_lt_mhm_lt_tcm", "fig4_user_time_mhm_lt_tcm"):
            g.add(cid, verdict=E.untestable(
                "needs the user-side timings (multidim_timings, column user_seconds_per_user) of FLAME, MHM and TCM"))
        return
    st = tim.groupby(["dataset", "mechanism"])["user_seconds_per_user"].agg(["mean", "std", "count"])
    js = []
    for d in sorted(set(tim["dataset"])):
        if not all((d, m) in st.index for m in ("flame", "mhm", "tcm")):
            continue
        f = st.loc[(d, "flame")]
        for other in ("mhm", "tcm"):
            o = st.loc[(d, other)]
            iv = E.ratio_interval(f["mean"], f["std"], f["count"], o["mean"], o["std"], o["count"])
            js.append(E.judge(iv, E.Region(hi=1 / MUCH_LOWER, name="the region (a clear gap: a factor 2)",
                                           above="no clear gap"),
                              f"{d}: FLAME/{other.upper()} user time ({f['mean'] * 1e6:.3g} vs "
                              f"{o['mean'] * 1e6:.3g} us/user)"))
    g.add("fig4_user_time_flame_lt_mhm_lt_tcm", verdict=E.all_of(js, "comparisons"),
          measured="wall clock, machine-dependent")
    js = []
    for d in sorted(set(tim["dataset"])):
        if not all((d, m) in st.index for m in ("mhm", "tcm")):
            continue
        a, b = st.loc[(d, "mhm")], st.loc[(d, "tcm")]
        js.append(E.judge(E.ratio_interval(a["mean"], a["std"], a["count"], b["mean"], b["std"], b["count"]),
                          E.below(1.0, above="MHM slower than TCM", name="the region MHM / TCM"),
                          f"{d}: MHM/TCM user time ({a['mean'] * 1e6:.3g} vs {b['mean'] * 1e6:.3g} us/user)"))
    g.add("fig4_user_time_mhm_lt_tcm", verdict=E.all_of(js, "datasets"), measured="wall clock, machine-dependent")


def _paper_table3() -> str:
    tp = np.array(list(PAPER_TABLE3_TP.values()), float)
    return ("paper's Table 3 TP (FLAME, TCM, MHM) per eps: " + "; ".join(
        f"{e:g}: {f}, {t}, {m}" for e, (f, t, m) in PAPER_TABLE3_TP.items())
        + f"; means FLAME {tp[:, 0].mean():.1f}, TCM {tp[:, 1].mean():.1f}, MHM {tp[:, 2].mean():.1f}")


def _table3(g: _Group, summary: pd.DataFrame) -> None:
    """Table 3: MHM superior to TCM (difference of TP over the eps of the table, t interval, > 0),
    similar to FLAME (same interval inside +- SIMILAR_TP k); the paper's numbers beside ours."""
    ref = _paper_table3()
    sub = summary[summary["dataset"].isin(g.dss)] if len(summary) and "TP" in summary.columns else pd.DataFrame()
    tp = sub.pivot_table(index=["dataset", "eps"], columns="mechanism", values="TP") if len(sub) else pd.DataFrame()
    k = float(summary["k"].iloc[0]) if len(summary) and "k" in summary.columns else 50.0
    for cid, other, region in (
            ("table3_mhm_tp_ge_tcm", "tcm", E.above(0.0, below="MHM below TCM", name="the region MHM - TCM")),
            ("table3_mhm_similar_flame", "flame",
             E.window(-SIMILAR_TP * k, SIMILAR_TP * k, name=f"the window (similar: within {SIMILAR_TP:.0%} of k)",
                      below="MHM finds fewer", above="MHM finds more"))):
        if not ({"mhm", other} <= set(tp.columns) and len(tp.dropna(subset=["mhm", other]))):
            g.add(cid, verdict=E.untestable(f"no Table 3 rows for MHM and {other.upper()}"), reference=ref)
            continue
        t = tp.dropna(subset=["mhm", other])
        js = [E.judge(E.t_interval((t.loc[d, "mhm"] - t.loc[d, other]).to_numpy(float)), region,
                      f"{d}: mean TP difference MHM - {other.upper()} over {len(t.loc[d])} eps")
              for d in sorted(set(t.index.get_level_values(0)))]
        g.add(cid, verdict=E.all_of(js, "datasets"), reference=ref)


def _budget(ratio: str) -> float:
    """Mean budget of a Fig. 10 population conservative:moderate:liberal."""
    w = np.array([float(x) for x in ratio.split(":")])
    return float(w @ np.array(CLASS_EPS) / w.sum())


def _fig10_ogm(g: _Group, per_rep: pd.DataFrame) -> None:
    """Fig. 10: OGM vs NOGM at every ratio (Welch intervals over repetitions), and NOGM / OGM at 2:4:4
    on MX (paper's datasets only; log-ratio Welch interval in [1.5, 3])."""
    st = per_rep.groupby(["dataset", "ratio", "method"])["mse"].agg(["mean", "std", "count"]) if len(per_rep) \
        else pd.DataFrame()
    pts = sorted({(d, r) for d, r, m in st.index if (d, r, "ogm") in st.index and (d, r, "nogm") in st.index})
    if not pts:
        g.add("ogm_beats_nogm", verdict=E.untestable("no ratio with both OGM and NOGM"))
    else:
        js = []
        for d, r in pts:
            a, b = st.loc[(d, r, "nogm")], st.loc[(d, r, "ogm")]
            js.append(E.judge(E.welch_interval(a["mean"], a["std"], a["count"], b["mean"], b["std"], b["count"]),
                              E.above(0.0, below="NOGM below OGM", name="the region NOGM - OGM"),
                              f"{d} {r} (NOGM/OGM = {a['mean'] / b['mean']:.3g})"))
        g.add("ogm_beats_nogm", verdict=E.all_of(js, "points"))
    if g.sfx == "":
        c = CLAIMS["ogm_vs_nogm_244_mx"]
        if ("mx", "2:4:4") in pts:
            a, b = st.loc[("mx", "2:4:4", "nogm")], st.loc[("mx", "2:4:4", "ogm")]
            iv = E.ratio_interval(a["mean"], a["std"], a["count"], b["mean"], b["std"], b["count"])
            v = E.one(E.judge(iv, E.window(1.5, 3.0, name="the window (one times larger: about 2)",
                                           below="NOGM closer to OGM than claimed", above="NOGM further behind"),
                              "NOGM/OGM at 2:4:4 on MX"))
        else:
            v = E.untestable("no 2:4:4 run of OGM and NOGM on MX")
        g.rows.append(decide(c, verdict=v, data=g.kind("mx"), scale=g.scale, datasets=["mx"], reference="paper: 2"))


def _fig10_liberal(g: _Group, per_rep: pd.DataFrame) -> None:
    """Fig. 10: more liberal populations get lower errors: per (dataset, method), Kendall's tau of the
    per-repetition MSE on the mean budget, its interval below 0."""
    js, short = [], []
    for (d, m), grp in (per_rep.groupby(["dataset", "method"]) if len(per_rep) else []):
        budgets = grp["ratio"].map(_budget).to_numpy(float)
        if np.unique(budgets).size < 3:
            short.append(f"{d}/{m}")
            continue
        js.append(E.judge(E.kendall_interval(budgets, grp["mse"].to_numpy(float)),
                          E.below(0.0, above="MSE grows with the budget", name="the region tau"),
                          f"{d}/{str(m).upper()} over {np.unique(budgets).size} mean budgets, Kendall tau"))
    v = E.all_of(js, "(dataset, method)") if js else E.untestable(
        f"needs >= 3 ratios with different mean budgets ({short})")
    g.add("fig10_better_as_users_more_liberal", verdict=v)


def claims(summary: pd.DataFrame, personal: pd.DataFrame, scale: str, timings: pd.DataFrame | None = None,
           standin: Iterable[str] | None = None, domains: Mapping[str, Sequence[int]] | None = None) -> pd.DataFrame:
    """``standin``: names of datasets that are offline stand-ins; None = unknown (BR and MX are then
    taken as stand-ins, any other dataset as real). ``domains``: each dataset's public domain sizes
    |C_i| (the TCM communication row; None: that row is not testable)."""
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
        _mhm_vs_others(g)
        if sfx == "":
            _eps1_improvements(g)
        _mse_over_eps(g)
        _communication(g, summary)
        _tcm_extra(g, summary, domains)
        _fig4_user_time(g, timings)
        _table3(g, summary)
        per_rep = personal[personal["dataset"].isin(dss)] if personal is not None and len(personal) \
            else pd.DataFrame(columns=["dataset", "ratio", "method", "mse"])
        _fig10_ogm(g, per_rep)
        _ogm_budget(g, per_rep)
        _fig10_liberal(g, per_rep)
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "", scale: str = "") -> str:
    return markdown(df, "Claims of the multidimensional seed (Wang et al., Computers & Security)", note)


# the protocols each claim rests on (the audits gate, :mod:`shuffledp.claims.audit_gate`): those its
# id names, else (Fig. 10) OGM and NOGM, else the three protocols of Figs 3-5
_NAMED = ("mhm", "flame", "tcm", "ogm", "nogm")


def protocols_of(claim_id: str) -> tuple[str, ...]:
    """The experiments' protocol names a claim row rests on."""
    if claim_id.startswith("fig10"):
        return ("ogm", "nogm")
    named = tuple(p for p in _NAMED if p in claim_id.split("_"))
    return named or ("mhm", "flame", "tcm")


def gate(df: pd.DataFrame, audit_paths) -> pd.DataFrame:
    """The claims table with the audits' gate (``audit_paths``: the step's audits input, empty when
    the audits stage is disabled)."""
    from shuffledp.claims import audit_gate

    return audit_gate.gate_paths(df, audit_paths, lambda r: protocols_of(str(r["id"])))
