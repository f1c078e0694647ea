"""Claims of Section 6 of the segmented multi-message shuffle paper (Wang et al.), decided on the
aggregated summary (``experiments.segmented.aggregate``) and the workflow's segmented spec.

Rules fixed in advance (never tuned to the outcome):

* m* of a panel is the minimiser of the measured mean error over the m grid, refined by a parabola
  through log(error) at the grid minimiser and its two neighbours (log m axis), so it rests on three
  grid points, not one; at an end of the grid it is that end.
* an optimal-m claim "around v" is decided only when at least two grid points lie in its window
  [v / f, v f] and at least one lies outside it (else the data could not have shown it false).
* error reductions use ONE m per panel chosen before looking at the errors: the optimiser's m, the
  grid point minimising our protocol's theoretical MSE bound (Sec. 5.2; column ``mse_bound``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from shuffledp.claims import engine as E
from shuffledp.claims.core import (
    HELD,
    REAL,
    SYNTHETIC,
    Z_95,
    Claim,
    data_kind,
    decide,
    frame,
    indistinguishable_from_min,
    markdown,
    standard_error,
    standin_kind,
    t_quantile,
)
from shuffledp.experiments import segmented as ex

PAPER_M_STAR = {("msnbc", 5000): 2.0, ("msnbc", 50000): 0.3, ("synth_T128_s4", 5000): 4.0,
                ("synth_T128_s4", 50000): 1.0}
ABOUT_50 = (0.35, 0.65)   # "about 50%": +-15 percentage points
ABOUT_70 = (0.55, 0.85)   # "about 70%": +-15 percentage points
VARIANT = "Theorem 3 as printed"
VARIANT_NOTE = "our protocol calibrated with Theorem 3 as printed (the paper's accountant, which is optimistic)"
BASELINE_VARIANT = "baselines as the paper calibrated them"
BASELINE_NOTE = ("the shuffle baselines calibrated as the paper did (balls-into-bins by Luo et al.'s analysis, "
                 "Subexp-shuffle by the published variation-ratio parameters; segmented.baseline_accounting: paper)")
BOTH_VARIANT = "Theorem 3 as printed; baselines as the paper calibrated them"
BOTH_NOTE = "the paper's accounting throughout: " + VARIANT_NOTE + ", and " + BASELINE_NOTE

_OPT_NEEDS = "standard errors of the mean error at every grid m, and >= 1 grid m significantly worse than the least"
_SET_RULE = ("the set S of grid m whose mean error is not significantly above the least (t test on the two means, "
             "two-sided 5%, SE = SD / sqrt(reps), Student's t quantile with reps - 1 df), widened to the "
             "geometric midpoints with its grid neighbours, "
             "contains {v}")
_ORDER_RULE = ("the sets S (grid m indistinguishable from the least error, t test, 5%) are disjoint and ordered: "
               "min S({b}) > max S({a}) at every n (S1)")

CLAIMS = {
    "optimal_m_msnbc_5k": Claim(
        "optimal_m_msnbc_5k", "On the MSNBC dataset, when the user population size is relatively small (e.g., "
        "$n = 5,000$ ), the optimal choice of $m$ is around 2.0", "Sec. 6.1, Fig. 2: 2.0",
        _SET_RULE.format(v="2.0"), _OPT_NEEDS,
        explain="the paper's m lies outside the set of m statistically indistinguishable from our least error; "
                "see figures/segmented_fig2.png and the measured set"),
    "optimal_m_msnbc_50k": Claim(
        "optimal_m_msnbc_50k", "when the user population size is relatively large (e.g., $n = 50,000$ ), the "
        "optimal choice of $m$ is around 0.3", "Sec. 6.1, Fig. 2 (MSNBC): 0.3", _SET_RULE.format(v="0.3"),
        _OPT_NEEDS, explain="the paper's m lies outside the set of m statistically indistinguishable from our "
        "least error; see figures/segmented_fig2.png and the measured set"),
    "optimal_m_synth_s4_5k": Claim(
        "optimal_m_synth_s4_5k", "On the synthetic dataset with $T = 128$ , $s = 4$ , and $n = 5,000$ , the "
        "optimal choice of $m$ is around 4.0", "Sec. 6.1, Fig. 3: 4.0", _SET_RULE.format(v="4.0"), _OPT_NEEDS,
        explain="the paper's m lies outside the set of m statistically indistinguishable from our least error; "
                "see figures/segmented_fig3.png and the measured set"),
    "optimal_m_synth_s4_50k": Claim(
        "optimal_m_synth_s4_50k", "when the user population size is relatively large (e.g., $n = 50,000$ ), the "
        "optimal choice of $m$ is around 1.0", "Sec. 6.1, Fig. 3 (synthetic T = 128, s = 4): 1.0",
        _SET_RULE.format(v="1.0"), _OPT_NEEDS,
        explain="the paper's m lies outside the set of m statistically indistinguishable from our least error; "
                "see figures/segmented_fig3.png and the measured set"),
    "optimal_m_grows_with_s": Claim(
        "optimal_m_grows_with_s", "Comparing the cases of $s = 8$ and $s = 4$ in the synthetic datasets, the "
        "optimal choices of $m$ for $s = 8$ significantly increase", "Sec. 6.1, Fig. 3",
        _ORDER_RULE.format(a="s = 4", b="s = 8"), "both synthetic datasets at every n, with standard errors",
        explain="the sets of near-optimal m overlap (the increase is within noise) or are reversed; see the "
                "measured sets and figures/segmented_fig3.png"),
    "m_star_larger_on_T128_than_msnbc": Claim(
        "m_star_larger_on_T128_than_msnbc", "Comparing the cases of the MSNBC dataset (with $T = 17$ and $s = 4$ ) "
        "and the synthetic datasets with $T = 128$ and $s = 4$ , the optimal choices of $m$ in the synthetic "
        "dataset significantly grow", "Sec. 6.1, Figs 2-3", _ORDER_RULE.format(a="MSNBC", b="T = 128, s = 4"),
        "both datasets at every n, with standard errors",
        explain="the sets of near-optimal m overlap (the growth is within noise) or are reversed; see the "
                "measured sets and figures/segmented_fig2.png, figures/segmented_fig3.png"),
    "m_star_decreases_with_n": Claim(
        "m_star_decreases_with_n", "the optimal choice of $m$ decreases as the user population increases",
        "Sec. 6.2 (MSNBC); Sec. 6.4 for every dataset", "refined m* (parabola through the least grid point and its "
        "neighbours) at the largest n < at the smallest n, in every panel (dataset, setting)",
        ">= 2 values of n; >= 3 grid points of m",
        explain="in some panel m* does not decrease from the smallest to the largest n; see the measured panels"),
    "m_star_below_4": Claim(
        "m_star_below_4", "the optimal number $m^*$ of blanket messages in our approach is often below 4",
        "Sec. 6.4", "refined m* < 4 in more than half of the panels (dataset, setting, n)",
        ">= 2 grid points of m at or above 4 and >= 2 below (so m* >= 4 is resolvable)",
        explain="m* is 4 or more in at least half of the panels"),
    "error_ratio_50k_vs_5k": Claim(
        "error_ratio_50k_vs_5k", "Notably, the minimum achievable error for $n = 50,000$ is approximately $1/30$ "
        "of that for $n = 5,000$ , indicating a gap ranging", "Sec. 6.2, MSNBC: 1/30",
        "least mean error over m, ratio n = 50,000 / n = 5,000 in [1/100, 1/10] (the paper's own range; MSNBC, S1)",
        "n = 5,000 and n = 50,000", explain="the ratio of least errors is outside the paper's stated range"),
    "error_reduction_vs_best_baseline": Claim(
        "error_reduction_vs_best_baseline", "In both real-world and synthetic datasets, our approach reduces error "
        "by about 50% compared to existing approaches", "Sec. 6.4 (and Abstract): about 50%",
        f"per data kind (real: MSNBC; synthetic), the median over its panels of 1 - error(ours at the optimiser's "
        f"m) / error(best of the five baselines) in [{ABOUT_50[0]:.0%}, {ABOUT_50[1]:.0%}] (about: +-15 points); "
        "held when both kinds are", "the MSE bound of our protocol at every grid m (to fix m in advance) and the "
        "five baselines in every panel of both data kinds",
        explain="the median reduction of at least one data kind is outside 35%..65%; see the per-panel "
                "reductions in measured"),
    "error_reduction_s1_about_70": Claim(
        "error_reduction_s1_about_70", "It is observed that with an appropriate $m$ , our protocol achieves much "
        "lower MSE than existing approaches, reducing error by about 70%.", "Sec. 6.1, Figs 2-3 (S1): about 70%",
        f"median over S1 panels of the same reduction (optimiser's m) in [{ABOUT_70[0]:.0%}, {ABOUT_70[1]:.0%}] "
        "(about: +-15 points)", "S1 panels with the MSE bound at every grid m and the five baselines",
        explain="the median S1 reduction is outside 55%..85%; see the per-panel reductions in measured"),
    "ours_below_each_baseline": Claim(
        "ours_below_each_baseline", "It is observed that with an appropriate $m$ , our protocol achieves much "
        "lower MSE than existing approaches, reducing error by about 70%.", "Sec. 6.1, Figs 2-6 (each baseline, "
        "each panel)", "log(our mean error at the optimiser's m / the baseline's), t interval (delta method, "
        "reps - 1 df) below 0, for every baseline in every panel (dataset, setting, n) (the direction against "
        "each existing approach; the sentence's magnitude, 'much lower ... about 70%', is decided against the "
        "best baseline by error_reduction_s1_about_70)",
        "our protocol and the baselines in every panel",
        explain="in some panel a baseline's error is below ours at the optimiser's m (named in the reason)"),
    "over_50_vs_uniform": Claim(
        "over_50_vs_uniform", "Through extensive experiments, we demonstrate the effectiveness and efficiency of "
        "our protocols, achieving over a 50% reduction in error compared to uniform privacy cases and personalized "
        "privacy protection in decentralized local/single-message shuffle models.", "Sec. 1 (contributions)",
        "log(our mean error at the optimiser's m / the baseline's), t interval (delta method) below log(1/2) "
        "(over 50%), against each uniform-privacy approach (Subexp local, Subexp shuffle, MM shuffle) in every panel",
        "our protocol and the three uniform-privacy baselines in every panel",
        explain="in some panel the reduction against a uniform-privacy approach is below 50% (named in the reason)"),
    "outperforms_more_in_s3_synth": Claim(
        "outperforms_more_in_s3_synth", "Notably, with more users adopting liberal privacy levels in $S_3$ than "
        "$S_2$ , our approach outperforms existing methods more significantly in $S_3$ .", "Sec. 6.3, Figs 5-6 "
        "(synthetic)", "log(ours / best baseline) in S3 minus the same in S2, t interval (delta method) below 0, "
        "for every synthetic dataset and n", "S2 and S3 panels of the synthetic datasets with the five baselines",
        explain="on some synthetic dataset the reduction against the best baseline is not larger in S3"),
    "m1_mK_decrease_with_n": Claim(
        "m1_mK_decrease_with_n", "we have $m_1 = O\\left(\\frac{ds^2 \\log(1/\\delta)}{n \\cdot E_1^2}\\right)$  "
        "and  $m_K = O\\left(\\frac{ds^2 \\log(1/\\delta)}{n \\cdot E_K^2}\\right)$  that decrease with  $n$",
        "Sec. 5.2", "log(m_k at the largest n / m_k at the smallest n) for the least and the largest m_k, its "
        "interval from the grid cells (the true m_k lies between the grid point below and the grid m_k) below 0, "
        "in every panel", "lambda_k at every grid m at both n",
        explain="in some panel m_1 or m_K does not decrease from the smallest to the largest n"),
    "gap_wider_s3_than_s2": Claim(
        "gap_wider_s3_than_s2", "Additionally, the error gap between our approach and *Weighted SepMM*, *shuffle* "
        "becomes larger in $S_3$ .", "Sec. 6.3, Figs 4-6", "reduction vs Weighted SepMM (optimiser's m) larger in "
        "S3 than S2 for every (dataset, n)", "S2 and S3 panels with the MSE bound and Weighted SepMM",
        explain="in some (dataset, n) the reduction vs Weighted SepMM is not larger in S3; see measured"),
    "sepmm_worse_in_s3": Claim(
        "sepmm_worse_in_s3", "With more users adopting liberal privacy levels in $S_3$ than $S_2$ , the *SepMM*, "
        "*shuffle* approach incurs even more noise", "Sec. 6.3, Figs 4-6", "SepMM's mean error in S3 significantly "
        "above S2 (t test, 5%, reps - 1 df) for every (dataset, n)", "S2 and S3 panels with SepMM",
        explain="in some (dataset, n) SepMM's error in S3 is not significantly above S2; see measured"),
    "ours_and_wsepmm_less_error_s3": Claim(
        "ours_and_wsepmm_less_error_s3", "while our approach and *Weighted SepMM*, *shuffle* will have less error",
        "Sec. 6.3, Figs 4-6 (S3 vs S2)", "mean error in S3 significantly below S2 (t test, 5%, reps - 1 "
        "df) for ours (at the "
        "optimiser's m) and for Weighted SepMM, for every (dataset, n)", "S2 and S3 panels with both",
        explain="in some (dataset, n) ours or Weighted SepMM is not significantly better in S3; see measured"),
    "m_in_m1_mK": Claim(
        "m_in_m1_mK", "Essentially, the hyperparameter $m$ should lie between $(m_1, m_K]$ , otherwise the protocol "
        "degrades to a uniform-privacy setting (when $m \\leq m_1$ ) or it will unnecessarily introduce sampling "
        "error to all users (when $m > m_K$ ).", "Sec. 5.2",
        "in every panel where m_1 lies on the grid, the near-optimal window (grid m indistinguishable from the least "
        "error, t test, 5%) inside (grid point below m_1, m_K] (the true m_1 may lie below the grid m_1; the "
        "printed (m_1, m_K] is empty, repaired to (least m_k, largest m_k]), "
        "where m_k is the least grid m at which level k's Poisson rate "
        "lambda_k reaches 1 (m_1 the first level to reach it, m_K the last; beyond the grid: infinite); panels "
        "with m_1 beyond the grid are listed, not decided",
        "lambda_k at every grid m, with >= 1 level reaching 1 on the grid",
        explain="in some panel no m statistically as good as the best lies in (m_1, m_K] (panel in measured); "
                "see the lambda columns of segmented/summary.parquet"),
    "about_four_messages": Claim(
        "about_four_messages", "each user contributes only a few messages (about four messages, see Section 6)",
        "Sec. 7", "median over panels of the messages per user at the optimiser's m in [2, 8] (about: a factor 2, "
        "either side)", "messages_per_user at every grid m",
        explain="the median messages per user at the optimiser's m is outside 2..8; see measured"),
}


def _curve(summ, ds, n, st, ours) -> pd.DataFrame:
    p = ex.panel_frame(summ, ds, n, st)
    return p[p["protocol"] == ours].sort_values("m")


def refined_m_star(m, err) -> tuple[float, float]:
    """(m*, least mean error): the grid minimiser refined by a parabola in (log m, log error) through
    it and its two neighbours, kept between those neighbours; an end of the grid stays as it is."""
    m, err = np.asarray(m, float), np.asarray(err, float)
    ok = np.isfinite(m) & np.isfinite(err) & (m > 0) & (err > 0)
    m, err = m[ok], err[ok]
    if m.size == 0:
        return math.nan, math.nan
    i = int(err.argmin())
    if i == 0 or i == m.size - 1:
        return float(m[i]), float(err[i])
    x, y = np.log(m[i - 1:i + 2]), np.log(err[i - 1:i + 2])
    a, b, _ = np.polyfit(x, y, 2)
    xs = -b / (2 * a) if a > 0 else x[1]
    return float(np.exp(np.clip(xs, x[0], x[2]))), float(err[i])


def m_star(summ, ds, n, st, ours=ex.OURS) -> tuple[float, float]:
    o = _curve(summ, ds, n, st, ours)
    return refined_m_star(o["m"], o["error_mean"]) if len(o) else (math.nan, math.nan)


def _se(frame: pd.DataFrame) -> np.ndarray:
    if not {"error_sd", "reps"} <= set(frame.columns):
        return np.full(len(frame), np.nan)
    return standard_error(frame["error_sd"], frame["reps"])


def near_optimal_set(m, err, se, z: float = Z_95) -> tuple[np.ndarray, float, float]:
    """(S, lo, hi): the grid m whose mean error is statistically indistinguishable from the least
    (:func:`core.indistinguishable_from_min`), and the window [lo, hi] it covers: from the geometric
    midpoint with the grid point below min S to the one with the grid point above max S (an end of
    the grid stays as it is). Empty S and NaN window without standard errors."""
    m, err, se = (np.asarray(v, float) for v in (m, err, se))
    order = np.argsort(m)
    m, err, se = m[order], err[order], se[order]
    S = indistinguishable_from_min(m, err, se, z)
    if not S.size:
        return S, math.nan, math.nan
    i, j = int(np.searchsorted(m, S.min())), int(np.searchsorted(m, S.max()))
    lo = math.sqrt(m[i - 1] * m[i]) if i > 0 else float(m[i])
    hi = math.sqrt(m[j] * m[j + 1]) if j + 1 < m.size else float(m[j])
    return S, lo, hi


def optimal_set(summ, ds, n, st, ours=ex.OURS, z: float = Z_95) -> tuple[np.ndarray, float, float, int]:
    """:func:`near_optimal_set` of our protocol in one panel, and the number of grid points."""
    o = _curve(summ, ds, n, st, ours)
    if not len(o):
        return np.array([]), math.nan, math.nan, 0
    return (*near_optimal_set(o["m"], o["error_mean"], _se(o), z), len(o))


def optimiser_m(summ, ds, n, st, ours=ex.OURS) -> tuple[float, float]:
    """(m, measured mean error at m) for the grid m minimising the theoretical MSE bound; NaN when
    the bound is missing at some grid point (the rule could not be applied)."""
    o = _curve(summ, ds, n, st, ours)
    if o.empty or "mse_bound" not in o or not np.isfinite(o["mse_bound"].to_numpy(float)).all():
        return math.nan, math.nan
    i = int(o["mse_bound"].to_numpy(float).argmin())
    return float(o["m"].iloc[i]), float(o["error_mean"].iloc[i])


def best_baseline(summ, ds, n, st, protocols=None) -> tuple[str, float, int]:
    """(name, mean error, number of baselines present) of the best of ``protocols`` in a panel
    (default: the five baselines as we calibrate them, ``ex.BASELINES``)."""
    p = ex.panel_frame(summ, ds, n, st)
    p = p[p["protocol"].isin(ex.BASELINES if protocols is None else protocols)]
    if p.empty:
        return "", math.nan, 0
    i = int(p["error_mean"].to_numpy().argmin())
    return str(p["protocol"].iloc[i]), float(p["error_mean"].iloc[i]), int(p["protocol"].nunique())


def protocol_error(summ, ds, n, st, protocol) -> tuple[float, float]:
    """(mean error, its standard error) of a baseline in one panel (NaN when absent)."""
    p = ex.panel_frame(summ, ds, n, st)
    p = p[p["protocol"] == protocol]
    if p.empty:
        return math.nan, math.nan
    return float(p["error_mean"].iloc[0]), float(_se(p)[0])


def optimiser_error(summ, ds, n, st, ours=ex.OURS) -> tuple[float, float, float]:
    """(m, mean error, standard error) of our protocol at the optimiser's m (NaN when missing)."""
    o = _curve(summ, ds, n, st, ours)
    if o.empty or "mse_bound" not in o or not np.isfinite(o["mse_bound"].to_numpy(float)).all():
        return math.nan, math.nan, math.nan
    i = int(o["mse_bound"].to_numpy(float).argmin())
    return float(o["m"].iloc[i]), float(o["error_mean"].iloc[i]), float(_se(o)[i])


@dataclass(frozen=True)
class _Ctx:
    """What every claim of one ``_rows`` call reads: the summary, the grids and the runs present."""
    summ: pd.DataFrame
    ns: list
    grid: np.ndarray
    pans: list
    have: set
    scale: str
    m_factor: float
    ours: str
    standin: set
    paper_baselines: bool = False   # compare with the baselines as the paper calibrated them

    @property
    def baselines(self) -> tuple:
        """The five baselines of this comparison."""
        return ex.BASELINES_PAPER if self.paper_baselines else ex.BASELINES

    def base(self, name: str) -> str:
        """The protocol that plays baseline ``name`` in this comparison."""
        return name + ex.PAPER_SUFFIX if self.paper_baselines and name in ex.RECALIBRATED else name

    def kind(self, *dss):
        return data_kind(standin_kind(d, self.standin) for d in dss)

    def m_star(self, ds, n, st):
        return m_star(self.summ, ds, n, st, self.ours)

    @property
    def q(self) -> float:
        """The quantile of every significance test here: Student's t with the fewest repetitions
        of the summary less one df (core.t_quantile; at 20 repetitions 2.09 where a z test has 1.96)."""
        reps = self.summ["reps"].min() if "reps" in self.summ.columns and len(self.summ) else None
        return t_quantile(reps)

    def optimal_set(self, ds, n, st):
        return optimal_set(self.summ, ds, n, st, self.ours, self.q)


def _fmt(x):
    return f"{x:.3g}"


def _set_text(S, lo, hi) -> str:
    if not S.size:
        return "no standard errors"
    return (f"near-optimal set S = {{{', '.join(_fmt(x) for x in S)}}} ({S.size} grid m), window "
            f"[{_fmt(lo)}, {_fmt(hi)}]")


def _window_iv(S, lo, hi, ms) -> E.Interval:
    """The near-optimal window of a panel as the interval of its optimal m (estimate: refined m*)."""
    if not S.size or not (math.isfinite(lo) and math.isfinite(hi)):
        return E.Interval(ms, math.nan, math.nan, "near-optimal set", 0)
    return E.Interval(min(max(ms, lo), hi) if math.isfinite(ms) else math.sqrt(lo * hi), lo, hi,
                      "near-optimal set (t test, 5%)", 0)


def _optimal_m_rows(c: _Ctx) -> list[dict]:
    """Optimal m "around v": the near-optimal window (grid m indistinguishable from the least error,
    widened to the geometric midpoints) inside [v / f, v f]; decided only where the grid resolves
    that region (engine.resolvable: >= 2 grid m inside it and one on each side)."""
    rows = []
    for (ds, n), v in PAPER_M_STAR.items():
        claim = CLAIMS[f"optimal_m_{'msnbc' if ds == 'msnbc' else 'synth_s4'}_{n // 1000}k"]
        region = E.window(v / c.m_factor, v * c.m_factor, name=f"the window around {v:g} (a factor {c.m_factor:g})",
                          below="the optimum lies at smaller m than claimed",
                          above="the optimum lies at larger m than claimed")
        if (ds, n, "S1") not in c.have:
            rows.append(decide(claim, verdict=E.untestable(f"no S1 run of {ds} at n = {n}"), data=c.kind(ds),
                               scale=c.scale, datasets=[ds]))
            continue
        S, lo, hi, k = c.optimal_set(ds, n, "S1")
        ms, err = c.m_star(ds, n, "S1")
        meas = f"{_set_text(S, lo, hi)}; refined m* = {_fmt(ms)} (least mean error {err:.3g}); grid of {k} m"
        ok, why = E.resolvable(c.grid, region)
        if not ok:
            v_ = E.untestable(why, f"optimal m: {_fmt(ms)} (window [{_fmt(lo)}, {_fmt(hi)}])")
        else:
            v_ = E.one(E.judge(_window_iv(S, lo, hi, ms), region, "optimal m"))
        rows.append(decide(claim, verdict=v_, measured=meas, data=c.kind(ds), scale=c.scale, datasets=[ds],
                           reference=f"paper: {v:g}"))
    return rows


def _log_window(wa: tuple, wb: tuple) -> E.Interval:
    """log(m*_b / m*_a) as an interval from two near-optimal windows (``optimal_set``'s (S, lo, hi),
    the set widened to the geometric midpoints with its grid neighbours, since the optimum may lie
    anywhere between grid points): [log lo_b - log hi_a, log hi_b - log lo_a] (estimate: the
    difference of the windows' geometric centres)."""
    (sa, la, ha), (sb, lb, hb) = wa[:3], wb[:3]
    if not (sa.size and sb.size and all(math.isfinite(x) and x > 0 for x in (la, ha, lb, hb))):
        return E.Interval(math.nan, math.nan, math.nan, "near-optimal windows", 0)
    lo, hi = math.log(lb) - math.log(ha), math.log(hb) - math.log(la)
    est = 0.5 * (math.log(lb * hb) - math.log(la * ha))
    return E.Interval(est, lo, hi, "near-optimal windows (t test, 5%)", 0)


def _m_star_order_rows(c: _Ctx) -> list[dict]:
    """m* grows significantly with s; significantly larger on T = 128 than on MSNBC: log(m*_b / m*_a)
    from the near-optimal sets, above 0 at every n (held: disjoint and ordered; not held: disjoint
    and reversed; overlapping: not testable)."""
    rows = []
    for cid, a, b in (("optimal_m_grows_with_s", "synth_T128_s4", "synth_T128_s8"),
                      ("m_star_larger_on_T128_than_msnbc", "msnbc", "synth_T128_s4")):
        js, missing = [], []
        for n in c.ns:
            if (a, n, "S1") not in c.have or (b, n, "S1") not in c.have:
                missing.append(n)
                continue
            wa, wb = c.optimal_set(a, n, "S1"), c.optimal_set(b, n, "S1")
            sa, sb = wa[0], wb[0]
            js.append(E.judge(_log_window(wa, wb), E.above(0.0, below=f"m* smaller on {b}", name="the region"),
                              f"n = {n}: log(m*({b}) / m*({a})), S({b}) = {_set_span(sb)}, S({a}) = {_set_span(sa)}"))
        v = E.all_of(js, "n") if js and not missing and c.grid.size >= 3 else E.untestable(
            f"no S1 runs of both {a} and {b} at n = {missing}" if missing else "the m grid needs >= 3 points")
        rows.append(decide(CLAIMS[cid], verdict=v, data=c.kind(a, b), scale=c.scale, datasets=[a, b]))
    return rows


def _set_span(S) -> str:
    return f"{_fmt(S.min())}..{_fmt(S.max())}" if S.size else "none"


def _m_star_decreases_rows(c: _Ctx) -> list[dict]:
    """m* decreases with n in every panel: log(m*(largest n) / m*(smallest n)) from the near-optimal
    sets, below 0 in every panel."""
    ns, js = c.ns, []
    for ds, st in c.pans:
        if len(ns) >= 2 and (ds, ns[0], st) in c.have and (ds, ns[-1], st) in c.have:
            w0, w1 = c.optimal_set(ds, ns[0], st), c.optimal_set(ds, ns[-1], st)
            s0, s1 = w0[0], w1[0]
            js.append(E.judge(_log_window(w0, w1), E.below(0.0, above="m* grows with n", name="the region"),
                              f"{ds}/{st}: log(m*(n = {ns[-1]}) / m*(n = {ns[0]})), S = {_set_span(s1)} vs "
                              f"{_set_span(s0)}"))
    v = E.all_of(js, "panels") if js and c.grid.size >= 3 else E.untestable(
        "needs >= 2 values of n, runs at both, and >= 3 grid points of m")
    return [decide(CLAIMS["m_star_decreases_with_n"], verdict=v, data=c.kind(*{d for d, _ in c.pans}),
                   scale=c.scale, datasets={d for d, _ in c.pans})]


def _m_star_below_4_rows(c: _Ctx) -> list[dict]:
    """m* often below 4: the share of panels with m* < 4 (deterministic given the panels) above 1/2,
    where the grid has >= 2 points at or above 4 (else m* < 4 is nearly forced)."""
    stars = [c.m_star(ds, n, st)[0] for ds, st in c.pans for n in c.ns if (ds, n, st) in c.have]
    stars = [m for m in stars if math.isfinite(m)]
    k = sum(m < 4 for m in stars)
    above, below = int((c.grid >= 4).sum()), int((c.grid < 4).sum())
    meas = (f"m*: {', '.join(_fmt(m) for m in stars)}; grid points >= 4: {above}, < 4: {below}")
    if not (stars and above >= 2 and below >= 2):
        v = E.untestable("the m grid needs >= 2 points at or above 4 and >= 2 below (else m* < 4 is nearly forced)",
                         f"{k}/{len(stars)} panels have m* < 4")
    else:
        v = E.one(E.judge(E.exact(k / len(stars)), E.above(0.5, below="m* is 4 or more in most panels",
                                                            name="the region (often: more than half)"),
                          f"share of panels with m* < 4 ({k}/{len(stars)})"))
    return [decide(CLAIMS["m_star_below_4"], verdict=v, measured=meas, data=c.kind(*{d for d, _ in c.pans}),
                   scale=c.scale, datasets={d for d, _ in c.pans})]


def _error_ratio_rows(c: _Ctx) -> list[dict]:
    """Error ratio n = 50,000 vs n = 5,000 on MSNBC (least mean errors; the paper's own range)."""
    claim = CLAIMS["error_ratio_50k_vs_5k"]
    if not (("msnbc", 5000, "S1") in c.have and ("msnbc", 50000, "S1") in c.have):
        return [decide(claim, verdict=E.untestable("needs MSNBC S1 runs at n = 5,000 and n = 50,000"),
                       data=c.kind("msnbc"), scale=c.scale, datasets=["msnbc"])]
    e_lo, e_hi = c.m_star("msnbc", 5000, "S1")[1], c.m_star("msnbc", 50000, "S1")[1]
    r = e_hi / e_lo if e_lo else math.nan
    v = E.one(E.judge(E.exact(r), E.window(0.01, 0.1, name="the paper's range [1/100, 1/10]",
                                           below="a larger gain from n than claimed",
                                           above="a smaller gain from n than claimed"),
                      "least error n = 50,000 / n = 5,000"))
    return [decide(claim, verdict=v, data=c.kind("msnbc"), scale=c.scale, datasets=["msnbc"],
                   measured=f"least mean error n = 50000: {e_hi:.3g}; n = 5000: {e_lo:.3g}; ratio 1/{1 / r:.3g}",
                   reference="paper: about 1/30")]


def _reductions(c: _Ctx, selected):
    reds, parts, missing = [], [], []
    for ds, st in selected:
        for n in c.ns:
            mo, eo = optimiser_m(c.summ, ds, n, st, c.ours)
            bname, eb, nb = best_baseline(c.summ, ds, n, st, protocols=c.baselines)
            if not (math.isfinite(eo) and math.isfinite(eb)) or nb < 5:
                missing.append(f"{ds}/{st}/n={n}")
                continue
            reds.append(1 - eo / eb)
            parts.append(f"{ds}/{st}/n={n}: {100 * (1 - eo / eb):.0f}% at m = {mo:.3g} vs {bname}")
    return reds, parts, missing


def _median_text(reds, parts) -> str:
    return (f"median {100 * float(np.median(reds)):.0f}% over {len(reds)} panels (range {100 * min(reds):.0f}%.."
            f"{100 * max(reds):.0f}%): " + "; ".join(parts)) if reds else ""


def _median_iv(reds) -> E.Interval:
    """The median reduction over panels with a percentile bootstrap interval over the panels (seed 0)."""
    return E.bootstrap_interval(np.asarray(reds, float), np.median, seed=0)


def _error_reduction_rows(c: _Ctx) -> list[dict]:
    """Error reductions at the optimiser's m: "about 50%" per data kind, "about 70%" over S1 (the
    median over panels with its bootstrap interval over the panels)."""
    rows, js, texts, missing = [], [], [], []
    r50 = E.window(*ABOUT_50, name="the window (about 50%: +-15 points)", below="a smaller reduction than claimed",
                   above="a larger reduction than claimed")
    for kind in (REAL, SYNTHETIC):
        sel = [p for p in c.pans if c.kind(p[0]) == kind]
        reds, parts, miss = _reductions(c, sel)
        missing += miss
        if not sel or not reds:
            missing.append(f"no {kind} panel")
            continue
        js.append(E.judge(_median_iv(reds), r50, f"{kind}: median reduction over {len(reds)} panels"))
        texts.append(f"{kind}: " + _median_text(reds, parts))
    v = E.all_of(js, "data kinds") if len(js) == 2 and not missing else E.untestable(
        f"needs panels of both data kinds with the MSE bound and five baselines ({missing})")
    rows.append(decide(CLAIMS["error_reduction_vs_best_baseline"], verdict=v, measured=" || ".join(texts),
                       data=c.kind(*{d for d, _ in c.pans}), scale=c.scale, datasets={d for d, _ in c.pans}))
    sel = [p for p in c.pans if p[1] == "S1"]
    reds, parts, missing = _reductions(c, sel)
    r70 = E.window(*ABOUT_70, name="the window (about 70%: +-15 points)", below="a smaller reduction than claimed",
                   above="a larger reduction than claimed")
    v = E.one(E.judge(_median_iv(reds), r70, f"median S1 reduction over {len(reds)} panels")) \
        if reds and not missing else E.untestable(f"no MSE bound at every grid m or fewer than five baselines in "
                                                  f"{missing}")
    rows.append(decide(CLAIMS["error_reduction_s1_about_70"], verdict=v, measured=_median_text(reds, parts),
                       data=c.kind(*{d for d, _ in sel}), scale=c.scale, datasets={d for d, _ in sel}))
    return rows


def _below_each_baseline_rows(c: _Ctx) -> list[dict]:
    """"much lower MSE than existing approaches", baseline by baseline and panel by panel: log(ours at
    the optimiser's m / baseline) below 0 (t interval, delta method) at every (panel, baseline)."""
    js = []
    for ds, st in c.pans:
        for n in c.ns:
            o = optimiser_error(c.summ, ds, n, st, c.ours)[1:]
            if not math.isfinite(o[0]):
                continue
            for b in c.baselines:
                e = protocol_error(c.summ, ds, n, st, b)
                if not math.isfinite(e[0]):
                    e = protocol_error(c.summ, ds, n, "none", b)
                if not math.isfinite(e[0]):
                    continue
                js.append(E.judge(_log_ratio_iv([o, e], [1, -1], c.q, _reps(c)),
                                  E.below(0.0, above=f"ours above {b}", name="the region log(ours / baseline)"),
                                  f"{ds}/{st}/n={n} vs {b} ({100 * (1 - o[0] / e[0]):.0f}% reduction)"))
    v = E.all_of(js, "(panel, baseline)") if js else E.untestable("no panel with our protocol and a baseline")
    return [decide(CLAIMS["ours_below_each_baseline"], verdict=v, data=c.kind(*{d for d, _ in c.pans}),
                   scale=c.scale, datasets={d for d, _ in c.pans})]


def _s2_s3_datasets(c: _Ctx) -> list:
    return sorted({d for d, st in c.pans if st in ("S2", "S3")})


def _diff_iv(a: tuple, b: tuple, q: float, reps: int) -> E.Interval:
    """mean a - mean b with the interval +- q * hypot(SE_a, SE_b) (q: the t quantile of the summary's
    repetitions, core.t_quantile), from (mean, SE) pairs; infinite without SEs."""
    d, se = a[0] - b[0], math.hypot(a[1], b[1])
    if not (math.isfinite(se) and math.isfinite(d)):
        return E.Interval(d, -math.inf, math.inf, "t", reps)
    return E.Interval(d, d - q * se, d + q * se, "t", reps)


def _log_ratio_iv(pairs: list[tuple], signs: list[int], q: float, reps: int) -> E.Interval:
    """sum_i sign_i log(mean_i) with the interval +- q * sqrt(sum (SE_i / mean_i)^2) (delta method)."""
    if not all(p[0] > 0 for p in pairs):
        return E.Interval(math.nan, math.nan, math.nan, "t on log ratios", reps)
    est = sum(s * math.log(p[0]) for p, s in zip(pairs, signs, strict=True))
    se = math.sqrt(sum((p[1] / p[0]) ** 2 for p in pairs))
    if not math.isfinite(se):
        return E.Interval(est, -math.inf, math.inf, "t on log ratios", reps)
    return E.Interval(est, est - q * se, est + q * se, "t on log ratios", reps)


def _reps(c: _Ctx) -> int:
    return int(c.summ["reps"].min()) if "reps" in c.summ.columns and len(c.summ) else 0


def _gap_wider_s3_rows(c: _Ctx) -> list[dict]:
    """S2 vs S3: the gap to Weighted SepMM wider in S3: log(ours / WSepMM in S3) - log(ours / WSepMM
    in S2) below 0 (delta-method interval over the four means) for every (dataset, n)."""
    dss = _s2_s3_datasets(c)
    js, missing = [], []
    for ds in dss:
        for n in c.ns:
            o = {st: optimiser_error(c.summ, ds, n, st, c.ours)[1:] for st in ("S2", "S3")}
            w = {st: protocol_error(c.summ, ds, n, st, c.base("wsepmm")) for st in ("S2", "S3")}
            if not all(math.isfinite(v[0]) for v in (*o.values(), *w.values())):
                missing.append(f"{ds}/n={n}")
                continue
            iv = _log_ratio_iv([o["S3"], w["S3"], o["S2"], w["S2"]], [1, -1, -1, 1], c.q, _reps(c))
            js.append(E.judge(iv, E.below(0.0, above="the gap is narrower in S3", name="the region"),
                              f"{ds}/n={n}: reduction vs Weighted SepMM S2 {100 * (1 - o['S2'][0] / w['S2'][0]):.0f}%"
                              f", S3 {100 * (1 - o['S3'][0] / w['S3'][0]):.0f}%; log ratio change"))
    v = E.all_of(js, "(dataset, n)") if js and not missing else E.untestable(
        "needs S2 and S3 panels with the MSE bound and Weighted SepMM" + (f" (missing {missing})" if missing else ""))
    return [decide(CLAIMS["gap_wider_s3_than_s2"], verdict=v, data=c.kind(*dss), scale=c.scale, datasets=dss)]


def _sepmm_worse_s3_rows(c: _Ctx) -> list[dict]:
    """S2 vs S3: SepMM's mean error S3 - S2, its interval above 0 for every (dataset, n)."""
    dss = _s2_s3_datasets(c)
    js, missing = [], []
    for ds in dss:
        for n in c.ns:
            e = {st: protocol_error(c.summ, ds, n, st, c.base("sepmm")) for st in ("S2", "S3")}
            if not all(math.isfinite(v[0]) for v in e.values()):
                missing.append(f"{ds}/n={n}")
                continue
            js.append(E.judge(_diff_iv(e["S3"], e["S2"], c.q, _reps(c)),
                              E.above(0.0, below="SepMM better in S3", name="the region S3 - S2"),
                              f"{ds}/n={n}: SepMM S3 - S2 ({e['S2'][0]:.3g} -> {e['S3'][0]:.3g})"))
    v = E.all_of(js, "(dataset, n)") if js and not missing else E.untestable(
        "needs S2 and S3 panels with SepMM" + (f" (missing {missing})" if missing else ""))
    return [decide(CLAIMS["sepmm_worse_in_s3"], verdict=v, data=c.kind(*dss), scale=c.scale, datasets=dss)]


def _less_error_s3_rows(c: _Ctx) -> list[dict]:
    """S2 vs S3: ours (optimiser's m) and Weighted SepMM, mean error S2 - S3 above 0, for every
    (dataset, n) and both protocols."""
    dss = _s2_s3_datasets(c)
    js, missing = [], []
    for ds in dss:
        for n in c.ns:
            ours = {st: optimiser_error(c.summ, ds, n, st, c.ours)[1:] for st in ("S2", "S3")}
            ws = {st: protocol_error(c.summ, ds, n, st, c.base("wsepmm")) for st in ("S2", "S3")}
            if not all(math.isfinite(v[0]) for v in (*ours.values(), *ws.values())):
                missing.append(f"{ds}/n={n}")
                continue
            for name, x in (("ours", ours), ("Weighted SepMM", ws)):
                js.append(E.judge(_diff_iv(x["S2"], x["S3"], c.q, _reps(c)),
                                  E.above(0.0, below=f"{name} worse in S3", name="the region S2 - S3"),
                                  f"{ds}/n={n} {name}: S2 - S3 ({x['S2'][0]:.3g} -> {x['S3'][0]:.3g})"))
    v = E.all_of(js, "(dataset, n, protocol)") if js and not missing else E.untestable(
        "needs S2 and S3 panels with the MSE bound and Weighted SepMM" + (f" (missing {missing})" if missing else ""))
    return [decide(CLAIMS["ours_and_wsepmm_less_error_s3"], verdict=v, data=c.kind(*dss), scale=c.scale,
                   datasets=dss)]


def level_range(o: pd.DataFrame) -> tuple[float, float]:
    """(m_1, m_K): the least grid m at which the first and the last level's lambda_k reach 1 (inf
    when a level never does on the grid; NaN without lambda columns)."""
    cols = sorted(c for c in o.columns if c.startswith("lambda_") and o[c].notna().any())
    if not cols:
        return math.nan, math.nan
    o = o.sort_values("m")
    mk = []
    for col in cols:
        full = o.loc[o[col] >= 1 - 1e-9, "m"]
        mk.append(float(full.min()) if len(full) else math.inf)
    return min(mk), max(mk)


def _m_range_rows(c: _Ctx) -> list[dict]:
    """m in (m_1, m_K] (repaired: as printed, with m_1 the strictest level's, the range is empty; we
    take (least m_k, largest m_k]). A grid m_k is the least grid m where lambda_k reaches 1, so the
    true m_k lies in (the grid point below, m_k]: the region is (grid point below the least m_k,
    largest grid m_k], which keeps the grid m_1 itself. The near-optimal window against it, in every
    panel with a lambda_k reaching 1 on the grid."""
    js, missing = [], []
    for ds, st in c.pans:
        for n in c.ns:
            o = _curve(c.summ, ds, n, st, c.ours)
            lo, hi = level_range(o) if len(o) else (math.nan, math.nan)
            S, wlo, whi, _ = c.optimal_set(ds, n, st)
            if not (math.isfinite(lo) and S.size):
                missing.append(f"{ds}/{st}/n={n}")
                continue
            below = c.grid[c.grid < lo]
            r_lo = float(below.max()) if below.size else 0.0
            region = E.Region(lo=r_lo, hi=hi, lo_open=True, name="the range (m_1, m_K] (grid-widened)",
                              below="the optimum degrades to uniform privacy (m <= m_1)",
                              above="the optimum adds sampling error to all (m > m_K)")
            js.append(E.judge(_window_iv(S, wlo, whi, c.m_star(ds, n, st)[0]), region,
                              f"{ds}/{st}/n={n}: optimal m (grid m_1 = {_fmt(lo)}, m_K = {_fmt(hi)})"))
    v = E.all_of(js, "panels") if js else E.untestable("no panel with a lambda_k reaching 1 on the grid and "
                                                       "standard errors")
    skipped = f"not decided (m_1 beyond the grid or no SEs): {missing}" if missing else ""
    return [decide(CLAIMS["m_in_m1_mK"], verdict=v, measured=skipped, data=c.kind(*{d for d, _ in c.pans}),
                   scale=c.scale, datasets={d for d, _ in c.pans},
                   explanation="the printed range (m_1, m_K] is empty when m_1 is the strictest level's (it needs "
                               "the most m); the row uses (least m_k, largest m_k]")]


def _messages_rows(c: _Ctx) -> list[dict]:
    """About four messages per user at the optimiser's m (median over panels; deterministic given m)."""
    vals, parts = [], []
    for ds, st in c.pans:
        for n in c.ns:
            o = _curve(c.summ, ds, n, st, c.ours)
            if o.empty or "messages_per_user" not in o or not np.isfinite(o["mse_bound"].to_numpy(float)).all():
                continue
            i = int(o["mse_bound"].to_numpy(float).argmin())
            vals.append(float(o["messages_per_user"].iloc[i]))
            parts.append(f"{ds}/{st}/n={n}: {vals[-1]:.2f} at m = {_fmt(float(o['m'].iloc[i]))}")
    v = E.one(E.judge(E.exact(float(np.median(vals))), E.window(2.0, 8.0, name="the window (about four: a factor "
                                                                          "2)", below="fewer messages than claimed",
                                                                     above="more messages than claimed"),
                      f"median messages per user over {len(vals)} panels")) if vals else E.untestable(
        "no messages_per_user column or no MSE bound at every grid m")
    return [decide(CLAIMS["about_four_messages"], verdict=v, measured="; ".join(parts),
                   data=c.kind(*{d for d, _ in c.pans}), scale=c.scale, datasets={d for d, _ in c.pans})]



def _over_50_rows(c: _Ctx) -> list[dict]:
    """Over 50% reduction against each uniform-privacy approach, panel by panel."""
    js = []
    uniform = [c.base(b) for b in ex.UNIFORM_BASELINES]
    for ds, st in c.pans:
        for n in c.ns:
            o = optimiser_error(c.summ, ds, n, st, c.ours)[1:]
            if not math.isfinite(o[0]):
                continue
            for b in uniform:
                e = protocol_error(c.summ, ds, n, "none", b)
                if not math.isfinite(e[0]):
                    e = protocol_error(c.summ, ds, n, st, b)
                if not math.isfinite(e[0]):
                    continue
                js.append(E.judge(_log_ratio_iv([o, e], [1, -1], c.q, _reps(c)),
                                  E.below(math.log(0.5), above="a reduction of 50% or less",
                                          name="the region (over 50%: log ratio)"),
                                  f"{ds}/{st}/n={n} vs {b} ({100 * (1 - o[0] / e[0]):.0f}% reduction)"))
    v = E.all_of(js, "(panel, baseline)") if js else E.untestable("no panel with our protocol and a uniform "
                                                                  "baseline")
    return [decide(CLAIMS["over_50_vs_uniform"], verdict=v, data=c.kind(*{d for d, _ in c.pans}), scale=c.scale,
                   datasets={d for d, _ in c.pans})]


def _more_in_s3_synth_rows(c: _Ctx) -> list[dict]:
    """Synthetic S2 vs S3: ours against the best baseline, the log ratio smaller in S3."""
    dss = sorted({d for d, st in c.pans if st in ("S2", "S3") and c.kind(d) == SYNTHETIC})
    js, missing = [], []
    for ds in dss:
        for n in c.ns:
            o = {st: optimiser_error(c.summ, ds, n, st, c.ours)[1:] for st in ("S2", "S3")}
            b = {}
            for st in ("S2", "S3"):
                name = best_baseline(c.summ, ds, n, st, protocols=c.baselines)[0]
                b[st] = protocol_error(c.summ, ds, n, st, name) if name else (math.nan, math.nan)
                if not math.isfinite(b[st][0]) and name:
                    b[st] = protocol_error(c.summ, ds, n, "none", name)
            if not all(math.isfinite(v[0]) for v in (*o.values(), *b.values())):
                missing.append(f"{ds}/n={n}")
                continue
            iv = _log_ratio_iv([o["S3"], b["S3"], o["S2"], b["S2"]], [1, -1, -1, 1], c.q, _reps(c))
            js.append(E.judge(iv, E.below(0.0, above="our lead is smaller in S3", name="the region"),
                              f"{ds}/n={n}: vs best baseline S2 {100 * (1 - o['S2'][0] / b['S2'][0]):.0f}%, S3 "
                              f"{100 * (1 - o['S3'][0] / b['S3'][0]):.0f}%; log ratio change"))
    v = E.all_of(js, "(dataset, n)") if js and not missing else E.untestable(
        "needs S2 and S3 panels of a synthetic dataset with the baselines" + (f" (missing {missing})" if missing
                                                                               else ""))
    return [decide(CLAIMS["outperforms_more_in_s3_synth"], verdict=v, data=c.kind(*dss) if dss else SYNTHETIC,
                   scale=c.scale, datasets=dss)]


def _m_range_decreases_rows(c: _Ctx) -> list[dict]:
    """m_1 and m_K decrease with n: from the grid cells where lambda_k first reaches 1."""
    ns, js, missing = c.ns, [], []
    g = np.sort(c.grid)

    def cell(m):
        below = g[g < m]
        return (float(below.max()) if below.size else m / 10, m)

    for ds, st in c.pans:
        if len(ns) < 2 or (ds, ns[0], st) not in c.have or (ds, ns[-1], st) not in c.have:
            continue
        r0 = level_range(_curve(c.summ, ds, ns[0], st, c.ours))
        r1 = level_range(_curve(c.summ, ds, ns[-1], st, c.ours))
        for which, a, b in (("m_1", r0[0], r1[0]), ("m_K", r0[1], r1[1])):
            if not all(math.isfinite(x) for x in (a, b)):
                missing.append(f"{ds}/{st} {which}")
                continue
            (alo, ahi), (blo, bhi) = cell(a), cell(b)
            iv = E.Interval(math.log(b / a), math.log(blo / ahi), math.log(bhi / alo), "grid cells", 0)
            js.append(E.judge(iv, E.below(0.0, above="grows with n", name="the region"),
                              f"{ds}/{st} {which}: {_fmt(a)} (n = {ns[0]}) -> {_fmt(b)} (n = {ns[-1]}), log ratio"))
    v = E.all_of(js, "(panel, m_k)") if js else E.untestable(
        "needs >= 2 values of n and a lambda_k reaching 1 on the grid at both" + (f" ({missing})" if missing else ""))
    return [decide(CLAIMS["m1_mK_decrease_with_n"], verdict=v, measured=f"beyond the grid: {missing}" if missing
                   else "", data=c.kind(*{d for d, _ in c.pans}), scale=c.scale, datasets={d for d, _ in c.pans})]


ALL_PARTS = (_optimal_m_rows, _m_star_order_rows, _m_star_decreases_rows, _m_star_below_4_rows, _error_ratio_rows,
             _error_reduction_rows, _below_each_baseline_rows, _gap_wider_s3_rows, _sepmm_worse_s3_rows,
             _less_error_s3_rows, _m_range_rows, _messages_rows, _over_50_rows, _more_in_s3_synth_rows,
             _m_range_decreases_rows)
# the claims decided against the baselines: their verdicts depend on how the baselines are calibrated
BASELINE_PARTS = (_error_reduction_rows, _below_each_baseline_rows, _gap_wider_s3_rows, _sepmm_worse_s3_rows,
                  _less_error_s3_rows, _over_50_rows, _more_in_s3_synth_rows)
# ... of which these also depend on our protocol (SepMM's S2/S3 comparison does not)
BOTH_PARTS = (_error_reduction_rows, _below_each_baseline_rows, _gap_wider_s3_rows, _less_error_s3_rows,
              _over_50_rows, _more_in_s3_synth_rows)


def _rows(summ: pd.DataFrame, cfg: Mapping, scale: str, m_factor: float, ours: str,
          standin: Iterable[str], paper_baselines: bool = False, parts=ALL_PARTS) -> list[dict]:
    ns = sorted(int(n) for n in cfg["n"])
    # the claims job's spec carries the m grid itself (a list, derived once by experiments.segmented.jobs)
    grid = np.asarray(cfg["m_grid"] if isinstance(cfg["m_grid"], list) else ex.m_grid(cfg), float)
    have = {(d, int(n), s) for d, n, s in summ.loc[summ["protocol"] == ours, ["dataset", "n", "setting"]]
            .drop_duplicates().itertuples(index=False)}
    c = _Ctx(summ, ns, grid, ex.panels(cfg), have, scale, m_factor, ours, set(standin), paper_baselines)
    rows = []
    for part in parts:
        rows += part(c)
    return rows


def _variant(row: dict, label: str, note: str) -> dict:
    """A decided row relabelled as the variant ``label`` (id ``<id>[label]``, the note in its section
    and in the explanation of a verdict other than held)."""
    x = dict(row, id=f"{row['id']}[{label}]", section=f"{row['section']}; variant: {note}")
    if x["held"] != HELD:
        x["explanation"] = f"under {note}: {x['explanation']}"
    return x


def claims(summ: pd.DataFrame, cfg: Mapping, scale: str, m_factor: float = 2.0,
           standin: Iterable[str] = ()) -> pd.DataFrame:
    """The Section 6 claims for our protocol under the configured accountant against the baselines as
    we calibrate them. ``standin``: names of datasets that are offline stand-ins in this run.

    Labelled variant rows follow each row they vary (the paper's way beside ours):
    ``<id>[Theorem 3 as printed]`` when the summary holds our protocol under the paper's accountant
    (every claim); ``<id>[baselines as the paper calibrated them]`` when it holds the baselines as the
    paper calibrated them (the claims decided against the baselines, ``BASELINE_PARTS``); and, with
    both, ``<id>[Theorem 3 as printed; baselines as the paper calibrated them]`` (the paper's
    accounting throughout, ``BOTH_PARTS``). Every variant is decided by the same rule as its row."""
    rows = _rows(summ, cfg, scale, m_factor, ex.OURS, standin)
    variants: dict[str, list[dict]] = {}
    has_ours_paper = bool((summ["protocol"] == ex.OURS_PAPER).any())
    has_base_paper = bool(summ["protocol"].isin(ex.PAPER_BASELINES).any())
    runs = []
    if has_ours_paper:
        runs.append((ex.OURS_PAPER, False, ALL_PARTS, VARIANT, VARIANT_NOTE))
    if has_base_paper:
        runs.append((ex.OURS, True, BASELINE_PARTS, BASELINE_VARIANT, BASELINE_NOTE))
    if has_ours_paper and has_base_paper:
        runs.append((ex.OURS_PAPER, True, BOTH_PARTS, BOTH_VARIANT, BOTH_NOTE))
    for ours, paper_base, parts, label, note in runs:
        for x in _rows(summ, cfg, scale, m_factor, ours, standin, paper_base, parts):
            variants.setdefault(x["id"], []).append(_variant(x, label, note))
    out = []
    for r in rows:
        out += [r, *variants.get(r["id"], [])]
    return frame(out)


def claims_markdown(df: pd.DataFrame, note: str = "") -> str:
    return markdown(df, "Segmented multi-message shuffle: claims of Section 6", note)


# the protocols each claim rests on (the audits gate, :mod:`shuffledp.claims.audit_gate`): a row
# comparing with baselines rests on their implementations too; the rest on our protocol alone
_AGAINST = {
    "error_reduction_vs_best_baseline": ex.BASELINES, "error_reduction_s1_about_70": ex.BASELINES,
    "ours_below_each_baseline": ex.BASELINES, "outperforms_more_in_s3_synth": ex.BASELINES,
    "over_50_vs_uniform": ex.UNIFORM_BASELINES, "gap_wider_s3_than_s2": ("wsepmm",),
    "ours_and_wsepmm_less_error_s3": ("wsepmm",),
}


def protocols_of(claim_id: str) -> tuple[str, ...]:
    """The experiments' protocol names a claim row rests on (an ``ours`` row's id extends its claim's)."""
    base = max((k for k in CLAIMS if claim_id.startswith(k)), key=len, default=claim_id)
    if base == "sepmm_worse_in_s3":
        return ("sepmm",)
    return (ex.OURS, *_AGAINST.get(base, ()))


def gate(df: pd.DataFrame, audit_paths) -> pd.DataFrame:
    """The claims table with the audits' gate (``audit_paths``: the step's audits input, empty when
    the audits stage is disabled)."""
    from shuffledp.claims import audit_gate

    return audit_gate.gate_paths(df, audit_paths, lambda r: protocols_of(str(r["id"])))
