"""The multidimensional seed's framework experiments (Sec. 6.1.2-6.1.3, Figs 6-9): MHM and FLAME as the
frequency component of CALM (k-way marginals on BR, MX) and of HDG (range queries on Adult, Loan).

The stage's jobs, steps and config check are in :mod:`shuffledp.stages.multidim_frameworks`. Steps:

* ``loan``, ``adult``: the Loan table and Adult's ordinal table (HDG's inputs);
* ``run``: one (framework, component, dataset) with every eps_s and every repetition inside
  (grid points and repetitions of one protocol go inside its job);
* ``report``: Figs 6-9 and the claims table.

Seeds: the record sample of a dataset comes from ``(seed, "multidim_frameworks", "records", dataset)``,
the workload (CALM's random marginals, HDG's random queries) from ``(seed, "multidim_frameworks",
framework, dataset, "workload")`` (shared by both components and every eps_s, so they answer the same
questions), and each repetition's randomness from ``(seed, "multidim_frameworks", framework, component,
dataset, eps, rep)``. ``delta_s = 1/n``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from shuffledp.io import write_table
from shuffledp.seeding import rng as seeded_rng

FRAMEWORKS = ("calm", "hdg")
COMPONENTS = ("mhm", "flame")
HDG_DATASETS = ("adult", "loan")


# ------------------------------------------------------------------ data


def load_table(path: str | Path, records: int | None, seed: int, dataset: str):
    """``(data int64 (n, d), domains, attribute names, provenance)``; a seeded sample of ``records`` rows."""
    from shuffledp.datasets.provenance import read_provenance

    table = pq.read_table(path)
    prov = read_provenance(path)
    attrs = list(table.column_names)
    data = np.stack([table.column(a).to_numpy().astype(np.int64) for a in attrs], axis=1)
    doms_meta = prov.get("domains") or {}
    domains = [int(doms_meta.get(a, int(data[:, j].max()) + 1)) for j, a in enumerate(attrs)]
    if data.min() < 0 or np.any(data.max(axis=0) >= np.array(domains)):
        raise ValueError(f"{path}: codes outside 0..|C|-1")
    if records is not None and records > data.shape[0]:  # all rows: said in the job's log, not silently
        import sys

        part = "hdg" if dataset in ("adult", "loan") else "calm"
        print(f"WARNING: config key multidim_frameworks.{part}.records: {records} exceeds the {data.shape[0]} rows "
              f"of {path}; all {data.shape[0]} rows are used", file=sys.stderr)
    if records is not None and records < data.shape[0]:
        idx = seeded_rng(seed, "multidim_frameworks", "records", dataset).choice(data.shape[0], records, replace=False)
        data = data[np.sort(idx)]
    return data, domains, attrs, prov


# ------------------------------------------------------------------ run


def _log_time(*parts) -> None:
    """Wall-clock seconds go to the job's log only (tables stay byte-identical between runs)."""
    import sys

    *ident, seconds = parts
    print(f"{' '.join(map(str, ident))}: {seconds:.2f} s (wall clock, not reproducible)", file=sys.stderr, flush=True)


def run_calm(data, domains, spec: Mapping) -> pd.DataFrame:
    from shuffledp.tasks import marginals as M
    from shuffledp.tasks.frequency import make_component
    from shuffledp.tasks.multidim import frequency_mse, true_frequencies

    n, d = data.shape
    eps, delta = float(spec["eps"]), 1.0 / n
    seed, ds, comp_name = int(spec["seed"]), spec["dataset"], spec["component"]
    comp = make_component(comp_name, **spec)
    views = M.select_views(domains, int(spec["view_size"]), spec.get("max_view_cells"))
    codes, vdoms = M.encode_views(data, domains, views)
    true_views = [M.true_marginal(data, domains, v) for v in views]
    wl = seeded_rng(seed, "multidim_frameworks", "calm", ds, "workload")
    targets = M.random_marginals(d, int(spec["marginal_size"]), int(spec["marginals"]), wl)
    true_targets = [M.true_marginal(data, domains, q) for q in targets]
    attr_truth = true_frequencies(data, domains)
    rows = []
    for rep in range(int(spec["reps"])):
        rng = seeded_rng(seed, "multidim_frameworks", "calm", comp_name, ds, eps, rep)
        t0 = time.perf_counter()
        fe = comp.estimate(codes, vdoms, eps, delta, rng)
        raw = [e.reshape(t.shape) for e, t in zip(fe.estimates, true_views, strict=True)]
        tables = M.postprocess(fe.estimates, views, domains, fe.cell_variance, rounds=int(spec["rounds"]))
        answers = [M.answer_marginal(tables, views, domains, q) for q in targets]
        seconds = time.perf_counter() - t0
        fa = comp.estimate(data, domains, eps, delta, rng)  # Fig. 3's quantity at the same (n, eps)
        rows.append({
            "framework": "calm", "dataset": ds, "component": comp_name, "eps": eps, "delta": delta, "rep": rep,
            "n": n, "d": d, "units": len(views), "max_unit_cells": int(max(vdoms)),
            "eps_l_min": float(min(fe.eps_l)), "eps_l_max": float(max(fe.eps_l)),
            "unit_mse": float(np.mean([M.marginal_mse(t, u) for t, u in zip(tables, true_views, strict=True)])),
            "unit_mse_raw": float(np.mean([M.marginal_mse(t, u) for t, u in zip(raw, true_views, strict=True)])),
            "query_mse": float(np.mean([M.marginal_mse(a, u) for a, u in zip(answers, true_targets, strict=True)])),
            "attribute_mse": frequency_mse(fa.estimates, attr_truth),
            "g1": 0, "g2": 0,
        })
        _log_time("calm", ds, comp_name, eps, rep, seconds)
    return pd.DataFrame(rows)


def run_hdg(data, domains, spec: Mapping) -> pd.DataFrame:
    from shuffledp.tasks import range_queries as R
    from shuffledp.tasks.frequency import make_component
    from shuffledp.tasks.multidim import frequency_mse, true_frequencies

    n, d = data.shape
    c = int(spec["domain"])
    if any(k != c for k in domains):
        raise ValueError(f"HDG: every attribute needs the common domain {c}, got {domains}")
    eps, delta = float(spec["eps"]), 1.0 / n
    seed, ds, comp_name = int(spec["seed"]), spec["dataset"], spec["component"]
    comp = make_component(comp_name, **spec)
    if spec.get("granularity", "hdg") == "hdg":  # HDG's guideline as published: same grids for both components
        g1, g2 = R.granularities(n, d, eps, c)
    else:  # the guideline with the component's own cell variance
        g1, g2 = R.choose_granularities(comp, n, d, c, eps, delta)
    grids = R.Grids(d, c, g1, g2)
    codes = R.encode_grids(data, grids)
    truth = R.true_grids(data, grids)
    wl = seeded_rng(seed, "multidim_frameworks", "hdg", ds, "workload")
    queries = R.random_queries(d, c, int(spec["query_dim"]), int(spec["queries"]), float(spec["volume"]), wl)
    true_ans = [R.true_answer(data, q) for q in queries]
    attr_truth = true_frequencies(data, domains)
    rows = []
    for rep in range(int(spec["reps"])):
        rng = seeded_rng(seed, "multidim_frameworks", "hdg", comp_name, ds, eps, rep)
        t0 = time.perf_counter()
        fe = comp.estimate(codes, grids.domains, eps, delta, rng)
        tables = R.postprocess(fe.estimates, grids, fe.cell_variance, rounds=int(spec["rounds"]))
        mats = R.response_matrices(tables, grids)
        ans = [R.answer_query(mats, q) for q in queries]
        seconds = time.perf_counter() - t0
        fa = comp.estimate(data, domains, eps, delta, rng)
        rows.append({
            "framework": "hdg", "dataset": ds, "component": comp_name, "eps": eps, "delta": delta, "rep": rep,
            "n": n, "d": d, "units": grids.count, "max_unit_cells": int(max(grids.domains)),
            "eps_l_min": float(min(fe.eps_l)), "eps_l_max": float(max(fe.eps_l)),
            "unit_mse": R.grid_mse(tables, truth), "unit_mse_raw": R.grid_mse(fe.estimates, truth),
            "query_mse": float(np.mean([(a - t) ** 2 for a, t in zip(ans, true_ans, strict=True)])),
            "attribute_mse": frequency_mse(fa.estimates, attr_truth),
            "g1": g1, "g2": g2,
        })
        _log_time("hdg", ds, comp_name, eps, rep, seconds)
    return pd.DataFrame(rows)


def run_job(spec: Mapping, data_path: str) -> pd.DataFrame:
    """Every eps_s of the spec (a list, or one number) with every repetition; the rows of one eps_s do
    not depend on the other eps_s values (seeds derive from eps_s and the repetition only)."""
    data, domains, _, prov = load_table(data_path, spec.get("records"), int(spec["seed"]), spec["dataset"])
    fn = {"calm": run_calm, "hdg": run_hdg}[spec["framework"]]
    eps = spec["eps"] if isinstance(spec["eps"], list) else [spec["eps"]]
    df = pd.concat([fn(data, domains, {**spec, "eps": float(e)}) for e in eps], ignore_index=True)
    df["standin"] = bool(prov.get("standin", False))
    return df



# ------------------------------------------------------------------ report


DATASET_LABELS = {"br": "BR", "mx": "MX", "adult": "Adult", "loan": "Loan"}


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["framework", "dataset", "component", "eps"]
    cols = ["unit_mse", "unit_mse_raw", "query_mse", "attribute_mse", "eps_l_min", "eps_l_max", "n",
            "units", "max_unit_cells", "g1", "g2"]
    out = df.groupby(keys, as_index=False)[cols].mean()
    out["reps"] = df.groupby(keys).size().to_numpy()
    return out.sort_values(keys).reset_index(drop=True)


_Q6 = ("From Fig. 6, we observe that the MSEs are also inversely proportional to budgets and MHM has a superior to "
       "FLAME, which agrees with the phenomenon shown in Section 6.1.1.")
_Q7 = ("Undoubtedly, Fig. 7 shows the same phenomenon as that in Fig. 6, except that the noise scale is bigger than "
       "that for views.")
_Q89_INV = "The MSE results are both inversely proportional to ϵ s and the reason has been discussed in Section 6.1.1."
_Q89_MHM = "MHM consistently outperforms FLAME."
_SIG = "FLAME's mean MSE significantly above MHM's (z test over repetitions, two-sided 5%) at every (dataset, eps_s)"
_SECTION = {"Fig6": "Sec. 6.1.2, Fig. 6", "Fig7": "Sec. 6.1.2, Fig. 7", "Fig8": "Sec. 6.1.3, Fig. 8",
            "Fig9": "Sec. 6.1.3, Fig. 9"}
# id -> (the paper's sentence, verbatim; the rule with its test or tolerance; what a row not held says)
FW_CLAIMS = {
    "Fig6_inverse_eps": (_Q6, None, "a curve's MSE-eps slope is outside [-1.5, -0.5] (measured); figures/"
                         "multidim_fig6.png"),
    "Fig7_inverse_eps": (_Q7, None, "a curve's MSE-eps slope is outside [-1.5, -0.5] (measured); figures/"
                         "multidim_fig7.png"),
    "Fig8_inverse_eps": (_Q89_INV, None, "a curve's MSE-eps slope is outside [-1.5, -0.5] (measured): with "
                         "hdg.granularity: hdg the grids change with eps_s and the curves step, with component the "
                         "floor of MHM's cell variance remains (docs/multidim_frameworks.md); "
                         "figures/multidim_fig8.png"),
    "Fig9_inverse_eps": (_Q89_INV, None, "a curve's MSE-eps slope is outside [-1.5, -0.5] (measured): with "
                         "hdg.granularity: hdg the grids change with eps_s and the curves step, with component the "
                         "floor of MHM's cell variance remains (docs/multidim_frameworks.md); "
                         "figures/multidim_fig9.png"),
    "Fig6_mhm_beats_flame": (_Q6, _SIG, "FLAME is not significantly worse than MHM at some point; "
                             "figures/multidim_fig6.png"),
    "Fig7_mhm_beats_flame": (_Q7, _SIG, "FLAME is not significantly worse than MHM at some point; "
                             "figures/multidim_fig7.png"),
    "Fig8_mhm_beats_flame": (_Q89_MHM, _SIG, "FLAME is not significantly worse than MHM at some point; "
                             "figures/multidim_fig8.png"),
    "Fig9_mhm_beats_flame": (_Q89_MHM, _SIG, "FLAME is not significantly worse than MHM at some point; "
                             "figures/multidim_fig9.png"),
    "Fig6_gap_views_vs_attributes": (
        "Besides, Fig. 6 reveals the gap between MHM and FLAME for views is much larger than that for multiple "
        "dimensions in Fig. 3.", "FLAME/MHM on views at least 2x FLAME/MHM on single attributes (much larger: a "
        "factor 2) at every (dataset, eps_s), same n", "the views' gap is not 2x the attributes' at some point "
        "(measured); figures/multidim_fig6.png"),
    "Fig6_flame_100x": (
        "In some settings, the MSE of FLAME ... is about 100 times larger than that of MHM.",
        "largest FLAME/MHM view MSE ratio in [50, 200] (about 100: a factor 2, either side)",
        "the largest FLAME/MHM ratio on views is outside 50..200 (measured); figures/multidim_fig6.png"),
    "Fig7_marginal_above_view": (
        _Q7, "3-way marginal MSE above view MSE at every (dataset, component, eps_s)",
        "a marginal's MSE is not above its views' at some point (measured); figures/multidim_fig6.png, "
        "figures/multidim_fig7.png"),
    "Fig9_query_sometimes_below_grid": (
        "Another interesting observation is that the MSEs of multidimensional range queries are sometimes smaller "
        "than those on grids, which is different from the phenomenon shown in Section 6.1.2.",
        "range-query MSE below grid MSE at >= 1 (dataset, component, eps_s)",
        "no point has range-query MSE below grid MSE (measured); figures/multidim_fig8.png, figures/multidim_fig9.png"),
}


def _claim_adder(rows: list, notes: Mapping[str, str], scale: str, subsets):
    """``add(cid, measured, held, datasets, target=None, reason="")``: decide claim ``cid`` of
    :data:`FW_CLAIMS` into ``rows`` (``held`` None: not testable, with ``reason``)."""
    from shuffledp.claims import core as C

    def data_label(datasets) -> str:
        parts = [f"{DATASET_LABELS.get(d, d)}: {notes[d]}" if notes.get(d)
                 else f"{DATASET_LABELS.get(d, d)}: real" + (" (subset)" if d in subsets else "")
                 for d in datasets]
        return "; ".join(parts)

    def add(cid, measured, held, datasets, reason=""):
        # the shared claims model (shuffledp.claims.core): a verdict on stand-in data is labelled and
        # is not evidence; the per-dataset provenance goes into `measured`
        quote, target, explain = FW_CLAIMS[cid]
        c = C.Claim(cid, quote, _SECTION[cid.split("_", 1)[0]], target or C.INVERSE_EPS_TARGET + " for every curve",
                    explain=explain)
        kind = C.data_kind(C.STANDIN if notes.get(d) else C.REAL for d in datasets)
        rows.append(C.decide(c, testable=held is not None, ok=bool(held), reason=reason,
                             measured=f"{measured} [data: {data_label(datasets)}]", data=kind, scale=scale))

    return add


def _inverse_eps_claim(add, sub: pd.DataFrame, metric: str, fig: str, dss) -> None:
    """Inverse proportionality: the same rule as Fig. 3's for the same sentence
    (:func:`shuffledp.claims.core.inversely_proportional`) on every curve."""
    from shuffledp.claims import core as C

    slopes, oks, short = [], [], []
    for (ds, comp), g in sub.groupby(["dataset", "component"]):
        g = g.sort_values("eps")
        if len(g) < 3 or g.eps.max() / g.eps.min() < 4:
            short.append(f"{ds}/{comp}")
            continue
        sl, se = C.loglog_slope(g.eps, g[metric])
        oks.append(C.inversely_proportional(g.eps, g[metric]))
        slopes.append(f"{DATASET_LABELS.get(ds, ds)}/{comp} {sl:.2f} (SE {se:.2f})")
    add(f"{fig.replace('. ', '')}_inverse_eps", "log-log slope " + ", ".join(slopes),
        all(oks) if oks and not short else None, dss,
        reason=f"needs >= 3 eps_s values spanning a factor >= 4 on every curve ({short})")


def _se_frame(runs: pd.DataFrame | None, metric: str) -> pd.DataFrame | None:
    """Mean and standard error of ``metric`` per (framework, dataset, component, eps) over repetitions."""
    if runs is None or not len(runs):
        return None
    g = runs.groupby(["framework", "dataset", "component", "eps"])[metric]
    out = g.agg(["mean", "std", "count"])
    out["se"] = out["std"] / np.sqrt(out["count"])
    return out


def _mhm_vs_flame(add, sub: pd.DataFrame, runs, fw: str, metric: str, fig: str, dss) -> None:
    from shuffledp.claims import core as C

    st = _se_frame(runs, metric)
    piv = sub.pivot_table(index=["dataset", "eps"], columns="component", values=metric)
    if not {"mhm", "flame"} <= set(piv.columns):
        return
    ratio = piv["flame"] / piv["mhm"]
    cid = f"{fig.replace('. ', '')}_mhm_beats_flame"
    meas = f"FLAME/MHM MSE ratio min {ratio.min():.3g}, max {ratio.max():.3g} over {len(ratio)} points"
    if st is None or (st["count"].loc[fw] < 2).any():
        reps = int(st["count"].min()) if st is not None else 0
        add(cid, meas, None, dss, reason=f"{reps} repetition(s): no standard error (needs >= 2 repetitions)")
        return
    sig = [C.significantly_greater(st.loc[(fw, d, "flame", e), "mean"], st.loc[(fw, d, "flame", e), "se"],
                                   st.loc[(fw, d, "mhm", e), "mean"], st.loc[(fw, d, "mhm", e), "se"])
           for d, e in ratio.index]
    add(cid, meas + f"; significant at {sum(sig)}/{len(sig)}", all(sig), dss)


def _per_figure_claims(add, summ: pd.DataFrame, runs=None) -> None:
    """Figs 6-9, each: MSE inversely proportional to eps_s; MHM better than FLAME everywhere."""
    figs = {("calm", "unit_mse"): "Fig. 6", ("calm", "query_mse"): "Fig. 7",
            ("hdg", "unit_mse"): "Fig. 8", ("hdg", "query_mse"): "Fig. 9"}
    for fw in FRAMEWORKS:
        sub = summ[summ.framework == fw]
        if sub.empty:
            continue
        dss = sorted(sub.dataset.unique())
        for metric in ("unit_mse", "query_mse"):
            fig = figs[(fw, metric)]
            _inverse_eps_claim(add, sub, metric, fig, dss)
            _mhm_vs_flame(add, sub, runs, fw, metric, fig, dss)


def _calm_claims(add, summ: pd.DataFrame) -> None:
    """CALM: views vs attributes, FLAME about 100x, marginals above views."""
    calm = summ[summ.framework == "calm"]
    if calm.empty or not {"mhm", "flame"} <= set(calm.component):
        return
    pv = calm.pivot_table(index=["dataset", "eps"], columns="component", values=["unit_mse", "attribute_mse"])
    r_view = pv["unit_mse"]["flame"] / pv["unit_mse"]["mhm"]
    r_attr = pv["attribute_mse"]["flame"] / pv["attribute_mse"]["mhm"]
    dss = sorted(calm.dataset.unique())
    add("Fig6_gap_views_vs_attributes",
        f"FLAME/MHM on views {r_view.min():.3g}-{r_view.max():.3g}, on attributes {r_attr.min():.3g}-"
        f"{r_attr.max():.3g} (same n, eps_s); views >= 2x attributes at {int((r_view >= 2 * r_attr).sum())}/"
        f"{len(r_view)} points", bool((r_view >= 2 * r_attr).all()), dss)
    add("Fig6_flame_100x", f"largest FLAME/MHM view MSE ratio {r_view.max():.3g}",
        bool(50 <= r_view.max() <= 200), dss)
    pm = calm.pivot_table(index=["dataset", "component", "eps"], values=["unit_mse", "query_mse"])
    bigger = pm["query_mse"] > pm["unit_mse"]
    add("Fig7_marginal_above_view",
        f"marginal > view MSE at {int(bigger.sum())}/{len(bigger)} (dataset, component, eps) points; "
        f"marginal/view ratio {float((pm.query_mse / pm.unit_mse).min()):.3g}-"
        f"{float((pm.query_mse / pm.unit_mse).max()):.3g}", bool(bigger.all()), dss)


def _hdg_claims(add, summ: pd.DataFrame) -> None:
    """HDG: range queries sometimes below grids."""
    hdg = summ[summ.framework == "hdg"]
    if hdg.empty:
        return
    ph = hdg.pivot_table(index=["dataset", "component", "eps"], values=["unit_mse", "query_mse"])
    below = ph["query_mse"] < ph["unit_mse"]
    add("Fig9_query_sometimes_below_grid",
        f"query < grid MSE at {int(below.sum())}/{len(below)} (dataset, component, eps) points",
        bool(below.any()), sorted(hdg.dataset.unique()))


def claims(summ: pd.DataFrame, notes: Mapping[str, str], scale: str, subsets=(), runs=None) -> pd.DataFrame:
    """Each claim of Sec. 6.1.2-6.1.3 with the measured numbers and a verdict (``notes``: the stand-in
    note of each dataset, empty for real data; ``subsets``: real datasets that are subsets; ``runs``:
    the per-repetition rows, for the standard errors of the significance tests)."""
    from shuffledp.claims import core as C

    rows = []
    add = _claim_adder(rows, notes, scale, subsets)
    _per_figure_claims(add, summ, runs)
    _calm_claims(add, summ)
    _hdg_claims(add, summ)
    return C.frame(rows)


def claims_markdown(df: pd.DataFrame, notes: Mapping[str, str], scale: str) -> str:
    from shuffledp.claims import core as C

    standin = sorted({v for v in notes.values() if v})
    note = f"built partly from stand-in data ({'; '.join(standin)}); verdicts on it are not evidence" if standin else ""
    return C.markdown(df, "Multidimensional frameworks (CALM marginals, HDG range queries): claims of "
                          "Sec. 6.1.2-6.1.3", note)


def report(run_files: list[str], data_files: Mapping[str, str], spec: Mapping, out: Mapping[str, str]) -> pd.DataFrame:
    """Figs 6-9 (``out["fig6_pdf"]``, ``out["fig6_png"]``, ... ``fig9_png``), the summary (``out["summary"]``)
    and the claims table (``out["claims"]``, ``out["claims_md"]``)."""
    from shuffledp.datasets.provenance import read_provenance, standin_note
    from shuffledp.plotting.multidim_frameworks import figure

    df = pd.concat([pd.read_parquet(p) for p in run_files], ignore_index=True)
    summ = summarise(df)
    notes = {ds: standin_note(read_provenance(p)) for ds, p in data_files.items()}
    subset = {ds for ds, p in data_files.items() if read_provenance(p).get("subset")}
    write_table(summ, out["summary"])
    mq = f"{spec.get('marginals')} random {spec.get('marginal_size')}-way marginals"
    rq = f"{spec.get('queries')} random {spec.get('query_dim')}-dimensional range queries"
    specs = [("calm", "unit_mse", 6, f"Fig. 6: MSE of the CALM views (answering {mq})"),
             ("calm", "query_mse", 7, f"Fig. 7: MSE of {mq} (CALM)"),
             ("hdg", "unit_mse", 8, f"Fig. 8: MSE of the HDG grids (answering {rq})"),
             ("hdg", "query_mse", 9, f"Fig. 9: MSE of {rq} (HDG)")]
    for fw, metric, fig_no, title in specs:
        datasets = spec["calm_datasets"] if fw == "calm" else spec["hdg_datasets"]
        sub = summ[summ.framework == fw]
        ns = {d: int(sub[sub.dataset == d].n.max()) if (sub.dataset == d).any() else 0 for d in datasets}
        labels = {d: DATASET_LABELS.get(d, d) + f" (n = {ns[d]:,}"
                  + ("; real Lending Club subset)" if d in subset else ")") for d in datasets}
        figure(sub, metric, datasets, labels, title, {d: notes.get(d, "") for d in datasets},
               out[f"fig{fig_no}_pdf"], out[f"fig{fig_no}_png"])
    from shuffledp.io import write_text

    cl = claims(summ, notes, spec["scale"], subsets=subset, runs=df)
    write_table(cl, out["claims"])
    write_text(out["claims_md"], claims_markdown(cl, notes, spec["scale"]))
    return cl
