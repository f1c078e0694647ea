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

from shuffledp.claims.core import (
    Claim,
    between,
    data_kind,
    decide,
    frame,
    markdown,
    not_testable,
    standin_kind,
    within,
)
from shuffledp.experiments import segmented as ex

PAPER_M_STAR = {("msnbc", 5000): 2.0, ("msnbc", 50000): 0.3, ("synth_T128_s4", 5000): 4.0,
                ("synth_T128_s4", 50000): 1.0}
ABOUT_50 = (0.35, 0.65)   # "about 50%": +-15 percentage points
ABOUT_70 = (0.55, 0.85)   # "about 70%": +-15 percentage points

CLAIMS = {
    "optimal_m_msnbc_5k": Claim(
        "optimal_m_msnbc_5k", "On the MSNBC dataset, when n = 5,000, the optimal choice of m is around 2.0",
        "Sec. 6.2, Fig. 2: 2.0", "refined m* in [2.0 / f, 2.0 f] (f = m_factor)",
        ">= 2 grid points of m inside the window and >= 1 outside"),
    "optimal_m_msnbc_50k": Claim(
        "optimal_m_msnbc_50k", "On the MSNBC dataset, when n = 50,000, the optimal choice of m is around 0.3",
        "Sec. 6.2, Fig. 2: 0.3", "refined m* in [0.3 / f, 0.3 f]",
        ">= 2 grid points of m inside the window and >= 1 outside"),
    "optimal_m_synth_s4_5k": Claim(
        "optimal_m_synth_s4_5k", "Synthetic T = 128, s = 4, n = 5,000: the optimal choice of m is around 4.0",
        "Sec. 6.2, Fig. 3: 4.0", "refined m* in [4.0 / f, 4.0 f]",
        ">= 2 grid points of m inside the window and >= 1 outside"),
    "optimal_m_synth_s4_50k": Claim(
        "optimal_m_synth_s4_50k", "Synthetic T = 128, s = 4, n = 50,000: the optimal choice of m is around 1.0",
        "Sec. 6.2, Fig. 3: 1.0", "refined m* in [1.0 / f, 1.0 f]",
        ">= 2 grid points of m inside the window and >= 1 outside"),
    "optimal_m_grows_with_s": Claim(
        "optimal_m_grows_with_s", "the optimal choices of m for s = 8 significantly increase (over s = 4)",
        "Sec. 6.2, Fig. 3", "refined m*(s = 8) > m*(s = 4) at every n (S1)",
        "both synthetic datasets at every n; >= 3 grid points of m"),
    "m_star_larger_on_T128_than_msnbc": Claim(
        "m_star_larger_on_T128_than_msnbc", "Comparing MSNBC (T = 17, s = 4) and the synthetic data with T = 128 "
        "and s = 4, the optimal choices of m in the synthetic dataset significantly grow",
        "Sec. 6.2, Figs 2-3", "refined m*(synthetic T = 128, s = 4) > m*(MSNBC) at every n (S1)",
        "both datasets at every n; >= 3 grid points of m"),
    "m_star_decreases_with_n": Claim(
        "m_star_decreases_with_n", "the optimal choice of m decreases as the user population increases; m* "
        "decreases with n", "Sec. 6.2 and 6.4", "refined m* at the largest n < m* at the smallest n, in every "
        "panel (dataset, setting)", ">= 2 values of n; >= 3 grid points of m"),
    "m_star_below_4": Claim(
        "m_star_below_4", "the optimal number m* of blanket messages in our approach is often below 4",
        "Sec. 6.4: below 4", "refined m* < 4 in more than half of the panels (dataset, setting, n)",
        ">= 2 grid points of m at or above 4 and >= 2 below (so m* >= 4 is resolvable)"),
    "error_ratio_50k_vs_5k": Claim(
        "error_ratio_50k_vs_5k", "the minimum achievable error for n = 50,000 is approximately 1/30 of that "
        "for n = 5,000, a gap between 1/10 and 1/10^2", "Sec. 6.2, MSNBC: 1/30",
        "least mean error over m, ratio n = 50,000 / n = 5,000 in [1/100, 1/10] (MSNBC, S1)",
        "n = 5,000 and n = 50,000"),
    "error_reduction_vs_best_baseline": Claim(
        "error_reduction_vs_best_baseline", "our approach reduces error by about 50% compared to existing "
        "approaches", "Abstract and Sec. 6.4: about 50%",
        f"median over all panels of 1 - error(ours at the optimiser's m) / error(best of the five baselines) "
        f"in [{ABOUT_50[0]:.0%}, {ABOUT_50[1]:.0%}]", "the MSE bound of our protocol at every grid m (to fix m in "
        "advance) and the five baselines in every panel"),
    "error_reduction_s1_about_70": Claim(
        "error_reduction_s1_about_70", "with an appropriate m, our protocol achieves much lower MSE than existing "
        "approaches, reducing error by about 70% (setting S1)", "Sec. 6.2, Figs 2-3: about 70%",
        f"median over S1 panels of the same reduction (optimiser's m) in [{ABOUT_70[0]:.0%}, {ABOUT_70[1]:.0%}]",
        "S1 panels with the MSE bound at every grid m and the five baselines"),
    "gap_wider_s3_than_s2": Claim(
        "gap_wider_s3_than_s2", "the error gap between our approach and Weighted SepMM, shuffle becomes larger "
        "in S3 (than S2)", "Sec. 6.3, Figs 4-6", "reduction vs Weighted SepMM (optimiser's m) larger in S3 than "
        "S2 for every (dataset, n)", "S2 and S3 panels with the MSE bound and Weighted SepMM"),
    "sepmm_worse_in_s3": Claim(
        "sepmm_worse_in_s3", "With more users adopting liberal privacy levels in S3 than S2, the SepMM, shuffle "
        "approach incurs even more noise", "Sec. 6.3, Fig. 4", "SepMM's mean error in S3 > in S2 for every "
        "(dataset, n)", "S2 and S3 panels with SepMM"),
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


def optimiser_m(summ, ds, n, st, ours=ex.OURS) -> tuple[float, float]:
    """(m, measured mean error at m) for the grid m minimising the theoretical MSE bound; NaN when
    the bound is missing at some grid point (the rule could not be applied)."""
    o = _curve(summ, ds, n, st, ours)
    if o.empty or "mse_bound" not in o or not np.isfinite(o["mse_bound"].to_numpy(float)).all():
        return math.nan, math.nan
    i = int(o["mse_bound"].to_numpy(float).argmin())
    return float(o["m"].iloc[i]), float(o["error_mean"].iloc[i])


def best_baseline(summ, ds, n, st, protocols=None) -> tuple[str, float, int]:
    """(name, mean error, number of baselines present) of the best non-ours protocol of a panel."""
    p = ex.panel_frame(summ, ds, n, st)
    p = p[~p["protocol"].isin(ex.OURS_ALL)]
    if protocols is not None:
        p = p[p["protocol"].isin(protocols)]
    if p.empty:
        return "", math.nan, 0
    i = int(p["error_mean"].to_numpy().argmin())
    return str(p["protocol"].iloc[i]), float(p["error_mean"].iloc[i]), int(p["protocol"].nunique())


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

    def kind(self, *dss):
        return data_kind(standin_kind(d, self.standin) for d in dss)

    def m_star(self, ds, n, st):
        return m_star(self.summ, ds, n, st, self.ours)


def _fmt(x):
    return f"{x:.3g}"


def _optimal_m_rows(c: _Ctx) -> list[dict]:
    """Optimal m "around v"."""
    rows, grid = [], c.grid
    for (ds, n), v in PAPER_M_STAR.items():
        claim = CLAIMS[f"optimal_m_{'msnbc' if ds == 'msnbc' else 'synth_s4'}_{n // 1000}k"]
        lo, hi = v / c.m_factor, v * c.m_factor
        inside = int(((grid >= lo) & (grid <= hi)).sum())
        outside = int(grid.size - inside)
        gtxt = f"grid {grid.min():.3g}..{grid.max():.3g} ({grid.size} points, {inside} in [{lo:.3g}, {hi:.3g}])"
        if (ds, n, "S1") not in c.have:
            rows.append(not_testable(claim, f"no S1 run of {ds} at n = {n}", data=c.kind(ds), scale=c.scale,
                                     measured=gtxt))
            continue
        ms, err = c.m_star(ds, n, "S1")
        meas = f"m* = {_fmt(ms)} (least mean error {err:.3g}); {gtxt}"
        rows.append(decide(claim, testable=inside >= 2 and outside >= 1, ok=within(ms, v, c.m_factor),
                           measured=meas, data=c.kind(ds), scale=c.scale,
                           reason=f"the m grid needs >= 2 points in [{lo:.3g}, {hi:.3g}] and >= 1 outside it"))
    return rows


def _m_star_order_rows(c: _Ctx) -> list[dict]:
    """m* grows with s; larger on T = 128 than on MSNBC."""
    rows = []
    for cid, a, b in (("optimal_m_grows_with_s", "synth_T128_s4", "synth_T128_s8"),
                      ("m_star_larger_on_T128_than_msnbc", "msnbc", "synth_T128_s4")):
        parts, oks, missing = [], [], []
        for n in c.ns:
            if (a, n, "S1") not in c.have or (b, n, "S1") not in c.have:
                missing.append(n)
                continue
            ma, mb = c.m_star(a, n, "S1")[0], c.m_star(b, n, "S1")[0]
            oks.append(bool(mb > ma))
            parts.append(f"n = {n}: m*({b}) = {_fmt(mb)} vs m*({a}) = {_fmt(ma)}")
        reason = (f"no S1 runs of both {a} and {b} at n = {missing}" if missing or not c.ns
                  else "the m grid needs >= 3 points")
        rows.append(decide(CLAIMS[cid], testable=bool(oks) and not missing and c.grid.size >= 3, ok=all(oks),
                           data=c.kind(a, b), scale=c.scale, measured="; ".join(parts), reason=reason))
    return rows


def _m_star_decreases_rows(c: _Ctx) -> list[dict]:
    """m* decreases with n (every panel)."""
    ns, parts, oks = c.ns, [], []
    for ds, st in c.pans:
        if (ds, ns[0], st) in c.have and (ds, ns[-1], st) in c.have and len(ns) >= 2:
            m0, m1 = c.m_star(ds, ns[0], st)[0], c.m_star(ds, ns[-1], st)[0]
            oks.append(bool(m1 < m0))
            parts.append(f"{ds}/{st}: {_fmt(m0)} (n = {ns[0]}) -> {_fmt(m1)} (n = {ns[-1]})")
    return [decide(CLAIMS["m_star_decreases_with_n"], testable=bool(oks) and len(ns) >= 2 and c.grid.size >= 3,
                   ok=all(oks), measured=f"decreasing in {sum(oks)}/{len(oks)} panels: " + "; ".join(parts),
                   data=c.kind(*{d for d, _ in c.pans}), scale=c.scale,
                   reason="needs >= 2 values of n, runs at both, and >= 3 grid points of m")]


def _m_star_below_4_rows(c: _Ctx) -> list[dict]:
    """m* often below 4."""
    stars = [c.m_star(ds, n, st)[0] for ds, st in c.pans for n in c.ns if (ds, n, st) in c.have]
    stars = [m for m in stars if math.isfinite(m)]
    k = sum(m < 4 for m in stars)
    above, below = int((c.grid >= 4).sum()), int((c.grid < 4).sum())
    return [decide(CLAIMS["m_star_below_4"], testable=bool(stars) and above >= 2 and below >= 2,
                   ok=k > len(stars) / 2,
                   measured=f"{k}/{len(stars)} panels have m* < 4 (m*: {', '.join(_fmt(m) for m in stars)}); "
                            f"grid points >= 4: {above}, < 4: {below}",
                   data=c.kind(*{d for d, _ in c.pans}), scale=c.scale,
                   reason="the m grid needs >= 2 points at or above 4 (else m* < 4 is nearly forced)")]


def _error_ratio_rows(c: _Ctx) -> list[dict]:
    """Error ratio n = 50,000 vs n = 5,000 on MSNBC."""
    claim = CLAIMS["error_ratio_50k_vs_5k"]
    if not (("msnbc", 5000, "S1") in c.have and ("msnbc", 50000, "S1") in c.have):
        return [not_testable(claim, "needs MSNBC S1 runs at n = 5,000 and n = 50,000", data=c.kind("msnbc"),
                             scale=c.scale)]
    e_lo, e_hi = c.m_star("msnbc", 5000, "S1")[1], c.m_star("msnbc", 50000, "S1")[1]
    r = e_hi / e_lo
    return [decide(claim, testable=math.isfinite(r), ok=between(r, 0.01, 0.1), data=c.kind("msnbc"), scale=c.scale,
                   measured=f"least mean error n = 50000: {e_hi:.3g}; n = 5000: {e_lo:.3g}; "
                            f"ratio 1/{1 / r:.3g}",
                   reason="no finite errors")]


def _reductions(c: _Ctx, selected):
    reds, parts, missing = [], [], []
    for ds, st in selected:
        for n in c.ns:
            mo, eo = optimiser_m(c.summ, ds, n, st, c.ours)
            bname, eb, nb = best_baseline(c.summ, ds, n, st)
            if not (math.isfinite(eo) and math.isfinite(eb)) or nb < 5:
                missing.append(f"{ds}/{st}/n={n}")
                continue
            reds.append(1 - eo / eb)
            parts.append(f"{ds}/{st}/n={n}: {100 * (1 - eo / eb):.0f}% at m = {mo:.3g} vs {bname}")
    return reds, parts, missing


def _error_reduction_rows(c: _Ctx) -> list[dict]:
    """Error reductions at the optimiser's m."""
    rows = []
    for cid, sel, (lo, hi) in (("error_reduction_vs_best_baseline", c.pans, ABOUT_50),
                               ("error_reduction_s1_about_70", [p for p in c.pans if p[1] == "S1"], ABOUT_70)):
        reds, parts, missing = _reductions(c, sel)
        med = float(np.median(reds)) if reds else math.nan
        meas = (f"median {100 * med:.0f}% over {len(reds)} panels (range {100 * min(reds):.0f}%.."
                f"{100 * max(reds):.0f}%): " + "; ".join(parts)) if reds else ""
        rows.append(decide(CLAIMS[cid], testable=bool(reds) and not missing, ok=between(med, lo, hi), measured=meas,
                           data=c.kind(*{d for d, _ in sel}), scale=c.scale,
                           reason=f"no MSE bound at every grid m or fewer than five baselines in {missing}"))
    return rows


def _s2_s3_datasets(c: _Ctx) -> list:
    return sorted({d for d, st in c.pans if st in ("S2", "S3")})


def _gap_wider_s3_rows(c: _Ctx) -> list[dict]:
    """S2 vs S3: the gap to Weighted SepMM."""
    dss = _s2_s3_datasets(c)
    parts, oks, missing = [], [], []
    for ds in dss:
        for n in c.ns:
            gaps = {}
            for st in ("S2", "S3"):
                eo = optimiser_m(c.summ, ds, n, st, c.ours)[1]
                ew = best_baseline(c.summ, ds, n, st, protocols=["wsepmm"])[1]
                gaps[st] = 1 - eo / ew
            if all(math.isfinite(v) for v in gaps.values()):
                oks.append(gaps["S3"] > gaps["S2"])
                parts.append(f"{ds}/n={n}: vs Weighted SepMM S2 {100 * gaps['S2']:.0f}%, S3 {100 * gaps['S3']:.0f}%")
            else:
                missing.append(f"{ds}/n={n}")
    return [decide(CLAIMS["gap_wider_s3_than_s2"], testable=bool(oks) and not missing, ok=all(oks),
                   data=c.kind(*dss), scale=c.scale,
                   measured=f"wider in S3 for {sum(oks)}/{len(oks)}: " + "; ".join(parts),
                   reason="needs S2 and S3 panels with the MSE bound and Weighted SepMM"
                          + (f" (missing {missing})" if missing else ""))]


def _sepmm_worse_s3_rows(c: _Ctx) -> list[dict]:
    """S2 vs S3: SepMM's error."""
    dss = _s2_s3_datasets(c)
    parts, oks, missing = [], [], []
    for ds in dss:
        for n in c.ns:
            e = {st: best_baseline(c.summ, ds, n, st, protocols=["sepmm"])[1] for st in ("S2", "S3")}
            if all(math.isfinite(v) for v in e.values()):
                oks.append(e["S3"] > e["S2"])
                parts.append(f"{ds}/n={n}: SepMM S2 {e['S2']:.3g}, S3 {e['S3']:.3g}")
            else:
                missing.append(f"{ds}/n={n}")
    return [decide(CLAIMS["sepmm_worse_in_s3"], testable=bool(oks) and not missing, ok=all(oks), data=c.kind(*dss),
                   scale=c.scale, measured=f"worse in S3 for {sum(oks)}/{len(oks)}: " + "; ".join(parts),
                   reason="needs S2 and S3 panels with SepMM" + (f" (missing {missing})" if missing else ""))]


def _rows(summ: pd.DataFrame, cfg: Mapping, scale: str, m_factor: float, ours: str,
          standin: Iterable[str]) -> list[dict]:
    ns = sorted(int(n) for n in cfg["n"])
    # the claims job's spec carries the m grid itself (a list, derived once by experiments.segmented.jobs)
    grid = np.asarray(cfg["m_grid"] if isinstance(cfg["m_grid"], list) else ex.m_grid(cfg), float)
    have = {(d, int(n), s) for d, n, s in summ.loc[summ["protocol"] == ours, ["dataset", "n", "setting"]]
            .drop_duplicates().itertuples(index=False)}
    c = _Ctx(summ, ns, grid, ex.panels(cfg), have, scale, m_factor, ours, set(standin))
    rows = []
    for part in (_optimal_m_rows, _m_star_order_rows, _m_star_decreases_rows, _m_star_below_4_rows,
                 _error_ratio_rows, _error_reduction_rows, _gap_wider_s3_rows, _sepmm_worse_s3_rows):
        rows += part(c)
    return rows


def claims(summ: pd.DataFrame, cfg: Mapping, scale: str, m_factor: float = 2.0,
           standin: Iterable[str] = ()) -> pd.DataFrame:
    """The Section 6 claims for our protocol under the configured accountant. ``standin``: names of
    datasets that are offline stand-ins in this run. When the summary also holds the
    Theorem-3-as-printed reference, its measurement is appended to ``measured`` (it never decides)."""
    rows = _rows(summ, cfg, scale, m_factor, ex.OURS, standin)
    if (summ["protocol"] == ex.OURS_PAPER).any():
        ref = {r["id"]: r for r in _rows(summ, cfg, scale, m_factor, ex.OURS_PAPER, standin)}
        for r in rows:
            x = ref[r["id"]]
            r["measured"] += (f" || reference, Theorem 3 as printed (optimistic accountant): {x['measured']} "
                              f"[{x['held']}]")
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "") -> str:
    return markdown(df, "Segmented multi-message shuffle: claims of Section 6", note)
