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

from shuffledp.claims.core import REAL, STANDIN, Claim, between, data_kind, decide, frame, markdown, not_testable

PAPER_DATASETS = ("br", "mx")
PAPER_GAIN_EPS1 = {"br": 0.5, "mx": 1.0}   # "improve the MSE by about 0.5 times (BR) or 1 times (MX)"
GAIN_FACTOR = 2.0                          # "about": within a factor 2, either side
SLOPE_TARGET, SLOPE_TOL = -1.0, 0.5        # "inversely proportional to eps": log-log slope -1 +- 0.5
MEASURED_BITS = "bits_total_measured"      # the column that would make the communication claim testable

CLAIMS = {
    "mhm_beats_flame_all_eps": Claim(
        "mhm_beats_flame_all_eps", "MHM consistently and significantly outperforms the state-of-the-art "
        "technique FLAME", "Fig. 3, Sec. 6.1.1", "FLAME / MHM mean MSE > 1 at every eps of every dataset",
        ">= 1 eps with both mechanisms"),
    "mhm_flame_gap_grows_with_eps": Claim(
        "mhm_flame_gap_grows_with_eps", "the gap between MHM and FLAME is proportional to eps", "Sec. 6.1.1",
        "FLAME / MHM increases in eps (last > first and Spearman rho > 0) on every dataset", ">= 3 eps values"),
    "mhm_improvement_eps1_br": Claim(
        "mhm_improvement_eps1_br", "When eps = 1, our methods improve the MSE by about 0.5 times (on BR) "
        "compared with FLAME", "Sec. 6.1.1: 0.5",
        f"FLAME / MHM - 1 at eps = 1 on BR within a factor {GAIN_FACTOR:g} of 0.5, either side", "eps = 1 on BR"),
    "mhm_improvement_eps1_mx": Claim(
        "mhm_improvement_eps1_mx", "When eps = 1 on MX, our methods improve the MSE by about 1 times compared "
        "with FLAME", "Sec. 6.1.1: 1", f"FLAME / MHM - 1 at eps = 1 on MX within a factor {GAIN_FACTOR:g} of 1, "
        "either side", "eps = 1 on MX"),
    "mhm_beats_tcm": Claim(
        "mhm_beats_tcm", "MHM considerably outperforms TCM", "Fig. 3, Sec. 6.1.1",
        "TCM / MHM mean MSE > 1 at every eps of every dataset", ">= 1 eps with both mechanisms"),
    "mse_inversely_proportional_to_eps": Claim(
        "mse_inversely_proportional_to_eps", "the error from local randomizing is inversely proportional to eps; "
        "the MSEs are inversely proportional to budgets", "Sec. 6.1.1-6.1.3",
        f"least-squares slope of log MSE on log eps in [{SLOPE_TARGET - SLOPE_TOL:g}, {SLOPE_TARGET + SLOPE_TOL:g}] "
        "for MHM and FLAME on every dataset", ">= 3 eps values spanning a factor >= 4"),
    "comm_flame_lt_mhm_lt_tcm": Claim(
        "comm_flame_lt_mhm_lt_tcm", "FLAME and MHM yield much lower communication costs than TCM. And FLAME "
        "outperforms MHM", "Fig. 5, Sec. 6.1.1", "measured bits per user: FLAME < MHM < TCM on every dataset",
        f"a measured communication column ({MEASURED_BITS}); the bit-count formulas cannot contradict themselves"),
    "fig4_user_time_flame_lt_mhm_lt_tcm": Claim(
        "fig4_user_time_flame_lt_mhm_lt_tcm", "the sampling-based FLAME significantly outperforms all the other "
        "methods (user-side running time); MHM runs faster than TCM because of the elimination of encoding",
        "Fig. 4, Sec. 6.1.1", "median user-side seconds per user over eps and repetitions: FLAME < MHM < TCM on "
        "every dataset", "user-side timings of all three mechanisms"),
    "table3_mhm_tp_ge_tcm": Claim(
        "table3_mhm_tp_ge_tcm", "top-50 values: MHM finds at least as many true positives as TCM (on average "
        "over eps)", "Table 3, Sec. 6.1.1", "mean TP of MHM >= of TCM on every dataset", "Table 3 for MHM and TCM"),
    "ogm_beats_nogm": Claim(
        "ogm_beats_nogm", "our proposal OGM consistently and significantly outperforms the best-effort approach "
        "NOGM", "Fig. 10, Sec. 6.2", "NOGM / OGM mean MSE > 1 at every ratio of every dataset",
        ">= 1 ratio with both methods"),
    "ogm_vs_nogm_244_mx": Claim(
        "ogm_vs_nogm_244_mx", "when the ratio is 2:4:4 on the MX dataset, the MSE of NOGM is one times larger "
        "than the one of OGM", "Sec. 6.2: about 2", "NOGM / OGM at 2:4:4 on MX in [1.5, 3]", "ratio 2:4:4 on MX"),
    "fig10_better_as_users_more_liberal": Claim(
        "fig10_better_as_users_more_liberal", "with the increasing of the number of moderate or liberal users, "
        "both two methods perform better", "Fig. 10, Sec. 6.2", "for every pair of ratios where one population is "
        "more liberal (first-order dominance of the budgets), its mean MSE is lower, for OGM and NOGM on every "
        "dataset", ">= 2 ratios ordered by dominance"),
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


def _spearman(y) -> float:
    """Spearman rho of ``y`` against its order; NaN (not > 0) for a constant ``y``."""
    y = pd.Series(np.asarray(y, float))
    if len(y) < 2 or y.nunique() < 2:
        return math.nan
    return float(y.corr(pd.Series(np.arange(len(y), dtype=float)), method="spearman"))


def _ratio_key(r: str) -> np.ndarray:
    s = np.array([float(x) for x in r.split(":")])
    return np.cumsum(s / s.sum())[:-1]


def more_liberal(a: str, b: str) -> bool:
    """Ratio ``a`` (conservative:moderate:liberal) is more liberal than ``b``: its budgets dominate
    (no larger a share at or below each budget class), and the two differ."""
    ka, kb = _ratio_key(a), _ratio_key(b)
    return bool(np.all(ka <= kb + 1e-12) and np.any(ka < kb - 1e-12))


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

    def add(self, cid, testable, ok, measured, reason):
        c = CLAIMS[cid]
        c = Claim(c.id + self.sfx, c.statement, c.paper, c.target, c.needs)
        self.rows.append(decide(c, testable=testable, ok=ok, measured=measured, data=self.data, scale=self.scale,
                                reason=reason))


def _mhm_vs_others(g: _Group) -> pd.Series:
    """MHM vs FLAME / TCM, and the FLAME / MHM gap growing with eps; returns the FLAME / MHM ratios."""
    sub = g.sub
    for cid, other in (("mhm_beats_flame_all_eps", "flame"), ("mhm_beats_tcm", "tcm")):
        if {"mhm", other} <= set(sub.columns) and sub[["mhm", other]].notna().all(axis=1).any():
            r = (sub[other] / sub["mhm"]).dropna()
            g.add(cid, True, bool((r > 1).all()), "; ".join(f"{d} eps={e:g}: {other.upper()}/MHM={v:.3g}"
                                                            for (d, e), v in r.items()), "")
        else:
            g.add(cid, False, False, "", f"no eps with both MHM and {other.upper()}")
    if {"mhm", "flame"} <= set(sub.columns):
        ratio = (sub["flame"] / sub["mhm"]).dropna()
    else:
        ratio = pd.Series(dtype=float)
    parts, oks, short = [], [], []
    for d in g.dss:
        v = ratio[ratio.index.get_level_values(0) == d].droplevel(0).sort_index() if len(ratio) else ratio
        if len(v) < 3:
            short.append(d)
            continue
        rho = _spearman(v.values)
        oks.append(bool(v.iloc[-1] > v.iloc[0] and rho > 0))
        parts.append(f"{d}: {v.iloc[0]:.3g} at eps={v.index[0]:g} -> {v.iloc[-1]:.3g} at eps={v.index[-1]:g}, "
                     f"Spearman {rho:.2f}")
    g.add("mhm_flame_gap_grows_with_eps", bool(oks) and not short, all(oks), "; ".join(parts),
          f"fewer than 3 eps values with MHM and FLAME on {short}")
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
    """MSE ~ 1 / eps."""
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
            slope = float(np.polyfit(np.log(s.index.to_numpy(float)), np.log(s.to_numpy(float)), 1)[0])
            oks.append(between(slope, SLOPE_TARGET - SLOPE_TOL, SLOPE_TARGET + SLOPE_TOL))
            parts.append(f"{d}/{mech.upper()}: slope {slope:.2f} over eps {s.index.min():g}..{s.index.max():g}")
    g.add("mse_inversely_proportional_to_eps", bool(oks) and not short, all(oks), "; ".join(parts),
          f"needs >= 3 eps values spanning a factor >= 4 for {short}")


def _communication(g: _Group, summary: pd.DataFrame) -> None:
    """Communication: only from measured sizes."""
    if len(summary) and MEASURED_BITS in summary.columns:
        b = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism",
                                                                values=MEASURED_BITS)
        ok = {"flame", "mhm", "tcm"} <= set(b.columns) and len(b)
        g.add("comm_flame_lt_mhm_lt_tcm", bool(ok), bool(ok and ((b["flame"] < b["mhm"]) & (b["mhm"] < b["tcm"]))
                                                           .all()),
              "; ".join(f"{d}: " + ", ".join(f"{m.upper()} {v:.0f}" for m, v in r.items()) for d, r in b.iterrows()),
              "needs all three mechanisms")
    else:
        g.add("comm_flame_lt_mhm_lt_tcm", False, False, "bits_total in the tables comes from the protocols' "
              "bit-count formulas (mhm_bits, flame_bits, tcm_bits), not from messages",
              f"needs a measured column {MEASURED_BITS} (serialised size of each user's messages)")


def _fig4_user_time(g: _Group, timings: pd.DataFrame | None) -> None:
    """Fig. 4: user-side time."""
    tim = timings[timings["dataset"].isin(g.dss)] if timings is not None and len(timings) else None
    if tim is not None and {"flame", "mhm", "tcm"} <= set(tim["mechanism"]):
        med = tim.groupby(["dataset", "mechanism"])["user_seconds_per_user"].median().unstack()
        med = med.dropna(subset=["flame", "mhm", "tcm"])
        ok = bool(len(med)) and bool(((med["flame"] < med["mhm"]) & (med["mhm"] < med["tcm"])).all())
        g.add("fig4_user_time_flame_lt_mhm_lt_tcm", bool(len(med)), ok,
              "; ".join(f"{d}: FLAME {r['flame'] * 1e6:.3g}, MHM {r['mhm'] * 1e6:.3g}, TCM {r['tcm'] * 1e6:.3g} "
                        "us/user" for d, r in med.iterrows()) + " (wall clock, machine-dependent)",
              "no dataset with timings of all three mechanisms")
    else:
        g.add("fig4_user_time_flame_lt_mhm_lt_tcm", False, False, "",
              "needs the user-side timings (multidim_timings, column user_seconds_per_user) of FLAME, MHM and TCM")


def _table3(g: _Group, summary: pd.DataFrame) -> None:
    """Table 3."""
    tp = summary[summary["dataset"].isin(g.dss)].pivot_table(index="dataset", columns="mechanism", values="TP") \
        if len(summary) else pd.DataFrame()
    if {"mhm", "tcm"} <= set(tp.columns) and len(tp.dropna(subset=["mhm", "tcm"])):
        tp = tp.dropna(subset=["mhm", "tcm"])
        g.add("table3_mhm_tp_ge_tcm", True, bool((tp["mhm"] >= tp["tcm"]).all()),
              "; ".join(f"{d}: MHM {r['mhm']:.1f}, TCM {r['tcm']:.1f}" for d, r in tp.iterrows()), "")
    else:
        g.add("table3_mhm_tp_ge_tcm", False, False, "", "no Table 3 rows for MHM and TCM")


def _fig10_ogm(g: _Group, pp: pd.DataFrame) -> None:
    """Fig. 10: OGM vs NOGM, and at 2:4:4 on MX (paper's datasets only)."""
    if {"ogm", "nogm"} <= set(pp.columns) and len(pp.dropna(subset=["ogm", "nogm"])):
        r3 = (pp["nogm"] / pp["ogm"]).dropna()
        g.add("ogm_beats_nogm", True, bool((r3 > 1).all()),
              "; ".join(f"{d} {r}: NOGM/OGM={v:.3g}" for (d, r), v in r3.items()), "")
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


def _fig10_liberal(g: _Group, pp: pd.DataFrame) -> None:
    """Fig. 10: more liberal populations get lower errors."""
    parts, n_pairs, n_ok = [], 0, 0
    for col in ("ogm", "nogm"):
        if col not in pp.columns:
            continue
        for d, grp in pp[col].dropna().groupby(level=0):
            vals = grp.droplevel(0)
            pairs = [(a, b) for a in vals.index for b in vals.index if more_liberal(a, b)]
            k = sum(vals[a] < vals[b] for a, b in pairs)
            n_pairs, n_ok = n_pairs + len(pairs), n_ok + k
            if pairs:
                parts.append(f"{d}/{col.upper()}: lower MSE for the more liberal population in {k}/{len(pairs)} "
                             "pairs")
    g.add("fig10_better_as_users_more_liberal", n_pairs > 0, n_ok == n_pairs, "; ".join(parts),
          "needs >= 2 ratios where one population's budgets dominate the other's")


def claims(summary: pd.DataFrame, personal: pd.DataFrame, scale: str, timings: pd.DataFrame | None = None,
           standin: Iterable[str] | None = None) -> pd.DataFrame:
    """``standin``: names of datasets that are offline stand-ins; None = unknown (BR and MX are then
    taken as stand-ins, any other dataset as real)."""
    kind = _kind_fn(None if standin is None else list(standin))
    rows: list[dict] = []
    piv = summary.pivot_table(index=["dataset", "eps"], columns="mechanism", values="mse") if len(summary) \
        else pd.DataFrame()
    datasets = set(summary["dataset"]) if len(summary) else set()
    if personal is not None and len(personal):
        datasets |= set(personal["dataset"])

    for sfx, dss in _groups(datasets):
        sub = piv[piv.index.get_level_values(0).isin(dss)] if len(piv) else piv
        g = _Group(sfx, dss, data_kind(kind(d) for d in dss) or STANDIN, scale, kind, sub, rows)
        ratio = _mhm_vs_others(g)
        if sfx == "":
            _eps1_improvements(g, ratio)
        _mse_over_eps(g)
        _communication(g, summary)
        _fig4_user_time(g, timings)
        _table3(g, summary)
        pp = personal[personal["dataset"].isin(dss)].groupby(["dataset", "ratio", "method"])["mse"].mean() \
            .unstack("method") if personal is not None and len(personal) else pd.DataFrame()
        _fig10_ogm(g, pp)
        _fig10_liberal(g, pp)
    return frame(rows)


def claims_markdown(df: pd.DataFrame, note: str = "", scale: str = "") -> str:
    return markdown(df, "Claims of the multidimensional seed (Wang et al., Computers & Security)", note)
