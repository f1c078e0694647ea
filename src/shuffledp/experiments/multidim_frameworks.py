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

from shuffledp.claims.multidim_frameworks import FW_CLAIMS  # noqa: F401  (the claims' quotes, for their readers)
from shuffledp.io import write_table
from shuffledp.seeding import rng as seeded_rng

FRAMEWORKS = ("calm", "hdg")
COMPONENTS = ("mhm", "flame")
HDG_DATASETS = ("adult", "loan")


# ------------------------------------------------------------------ data


def load_table(path: str | Path, records: int | None, seed: int, dataset: str, framework: str = "hdg"):
    """``(data int64 (n, d), domains, attribute names, provenance)``; a seeded sample of ``records`` rows
    (``framework``: whose ``records`` key a warning names)."""
    from shuffledp.datasets.provenance import public_domains, read_provenance

    table = pq.read_table(path)
    prov = read_provenance(path)
    attrs = list(table.column_names)
    data = np.stack([table.column(a).to_numpy().astype(np.int64) for a in attrs], axis=1)
    domains = public_domains(prov, attrs, path)
    if data.min() < 0 or np.any(data.max(axis=0) >= np.array(domains)):
        raise ValueError(f"{path}: codes outside 0..|C|-1")
    if records is not None and records > data.shape[0]:  # all rows: said in the job's log, not silently
        import sys

        print(f"WARNING: config key multidim_frameworks.{framework}.records: {records} exceeds the "
              f"{data.shape[0]} rows of {path}; all {data.shape[0]} rows are used", file=sys.stderr)
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


def _flame_capped(comp, n: int, domains, eps: float, delta: float) -> bool:
    """Whether FLAME's eps_l was capped so the general bound certifies the whole-record claim."""
    if getattr(comp, "name", "") != "flame":
        return False
    from shuffledp.protocols.flame import flame_eps_local

    return bool(flame_eps_local(eps, delta, n, list(domains), np_fraction=comp.np_fraction,
                                variant=comp.variant).capped)


def _eps_free_share(comp, n: int, domains, eps: float, delta: float) -> float:
    """The part of the component's predicted cell variance that no budget removes (FLAME: its
    dummies and sampling); NaN for a component without that decomposition (MHM)."""
    fn = getattr(comp, "eps_free_share", None)
    return float(fn(n, list(domains), eps, delta)) if fn else float("nan")


def _calm_setup(data, domains, spec: Mapping) -> dict:
    """What every eps_s of a CALM job shares: the views, every user's view cells, the workload and
    the true tables (computed once per job, not once per eps_s)."""
    from shuffledp.tasks import marginals as M
    from shuffledp.tasks.multidim import true_frequencies

    d = data.shape[1]
    views = M.select_views(domains, int(spec["view_size"]), spec.get("max_view_cells"))
    codes, vdoms = M.encode_views(data, domains, views)
    wl = seeded_rng(int(spec["seed"]), "multidim_frameworks", "calm", spec["dataset"], "workload")
    targets = M.random_marginals(d, int(spec["marginal_size"]), int(spec["marginals"]), wl)
    return {"views": views, "codes": codes, "vdoms": vdoms, "targets": targets,
            "true_views": [M.true_marginal(data, domains, v) for v in views],
            "true_targets": [M.true_marginal(data, domains, q) for q in targets],
            # answered by maximum entropy
            "maxent": sum(not any(set(q) <= set(v) for v in views) for q in targets),
            "attr_truth": true_frequencies(data, domains)}


def _calm_reps(data, domains, spec: Mapping, su: Mapping) -> list[tuple]:
    """The repetitions of one eps_s: each one's ``(estimate, post-processed views, Fig. 3's estimate,
    seconds)``, its draws in its own seeded order (estimate, then Fig. 3's estimate)."""
    from shuffledp.tasks import marginals as M
    from shuffledp.tasks.frequency import make_component

    n = data.shape[0]
    eps, delta = float(spec["eps"]), 1.0 / n
    seed, ds, comp_name = int(spec["seed"]), spec["dataset"], spec["component"]
    comp = make_component(comp_name, **spec)
    runs = []
    for rep in range(int(spec["reps"])):
        rng = seeded_rng(seed, "multidim_frameworks", "calm", comp_name, ds, eps, rep)
        t0 = time.perf_counter()
        fe = comp.estimate(su["codes"], su["vdoms"], eps, delta, rng)
        tables = M.postprocess(fe.estimates, su["views"], domains, fe.cell_variance, rounds=int(spec["rounds"]))
        seconds = time.perf_counter() - t0
        fa = comp.estimate(data, domains, eps, delta, rng)  # Fig. 3's quantity at the same (n, eps)
        runs.append((fe, tables, fa, seconds))
    return runs


def _calm_answers(runs_of: list[list[tuple]], domains, su: Mapping) -> list[list[list[np.ndarray]]]:
    """Every run's answers to the workload (``[eps][rep][target]``): one marginal of every eps_s and
    repetition at once (the maximum-entropy fits batched; each answer the one its run gives alone)."""
    from shuffledp.tasks import marginals as M

    flat = [r[1] for runs in runs_of for r in runs]
    by_target = [M.answer_marginal_many(flat, su["views"], domains, q) for q in su["targets"]]
    out, k = [], 0
    for runs in runs_of:
        out.append([[a[k + rep] for a in by_target] for rep in range(len(runs))])
        k += len(runs)
    return out


def _calm_rows(data, domains, spec: Mapping, su: Mapping, runs: list[tuple], answers) -> pd.DataFrame:
    """The table rows of one eps_s's repetitions (``answers``: their workload answers)."""
    from shuffledp.tasks import marginals as M
    from shuffledp.tasks.frequency import make_component
    from shuffledp.tasks.multidim import frequency_mse

    n, d = data.shape
    eps, delta = float(spec["eps"]), 1.0 / n
    ds, comp_name = spec["dataset"], spec["component"]
    comp = make_component(comp_name, **spec)
    views, vdoms, true_views = su["views"], su["vdoms"], su["true_views"]
    rows = []
    for rep, (fe, tables, fa, seconds) in enumerate(runs):
        raw = [e.reshape(t.shape) for e, t in zip(fe.estimates, true_views, strict=True)]
        rows.append({
            "framework": "calm", "dataset": ds, "component": comp_name, "eps": eps, "delta": delta, "rep": rep,
            "n": n, "d": d, "units": len(views), "max_unit_cells": int(max(vdoms)),
            "eps_l_min": float(min(fe.eps_l)), "eps_l_max": float(max(fe.eps_l)),
            "unit_mse": float(np.mean([M.marginal_mse(t, u) for t, u in zip(tables, true_views, strict=True)])),
            "unit_mse_raw": float(np.mean([M.marginal_mse(t, u) for t, u in zip(raw, true_views, strict=True)])),
            "query_mse": float(np.mean([M.marginal_mse(a, u)
                                        for a, u in zip(answers[rep], su["true_targets"], strict=True)])),
            "attribute_mse": frequency_mse(fa.estimates, su["attr_truth"]),
            "eps_free_share": _eps_free_share(comp, n, vdoms, eps, delta),
            "maxent_share": su["maxent"] / len(su["targets"]),
            "flame_capped": _flame_capped(comp, n, vdoms, eps, delta),
            "g1": 0, "g2": 0,
        })
        _log_time("calm", ds, comp_name, eps, rep, seconds)
    return pd.DataFrame(rows)


def run_calm_many(data, domains, spec: Mapping, eps: list[float], setup: Mapping | None = None) -> list[pd.DataFrame]:
    """The repetitions of every eps_s in ``eps`` (one table each; ``setup``: :func:`_calm_setup` of the
    job, computed here without). The workload's maximum-entropy fits of all of them run batched."""
    su = _calm_setup(data, domains, spec) if setup is None else setup
    specs = [{**spec, "eps": float(e)} for e in eps]
    runs_of = [_calm_reps(data, domains, sp, su) for sp in specs]
    answers = _calm_answers(runs_of, domains, su)
    return [_calm_rows(data, domains, sp, su, runs, ans) for sp, runs, ans in zip(specs, runs_of, answers, strict=True)]


def run_calm(data, domains, spec: Mapping, setup: Mapping | None = None) -> pd.DataFrame:
    """The repetitions of one eps_s (``setup``: :func:`_calm_setup` of the job, computed here without)."""
    return run_calm_many(data, domains, spec, [float(spec["eps"])], setup)[0]


def _hdg_reps(data, domains, spec: Mapping, cache: dict) -> tuple[dict, list[tuple]]:
    """One eps_s's set-up (``cache``: the job's grids by granularity and its workload, shared by its
    eps_s values) and repetitions: each one's ``(estimate, post-processed grids, response matrices,
    Fig. 3's estimate, seconds)``, its draws in its own seeded order (estimate, then Fig. 3's)."""
    from shuffledp.tasks import range_queries as R
    from shuffledp.tasks.frequency import make_component
    from shuffledp.tasks.multidim import true_frequencies

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
    if grids not in cache:
        codes = R.encode_grids(data, grids)
        cache[grids] = (codes, R.true_grids(data, grids, codes))
    codes, truth = cache[grids]
    if "workload" not in cache:
        wl = seeded_rng(seed, "multidim_frameworks", "hdg", ds, "workload")
        queries = R.random_queries(d, c, int(spec["query_dim"]), int(spec["queries"]), float(spec["volume"]), wl)
        cache["workload"] = (queries, [R.true_answer(data, q) for q in queries], true_frequencies(data, domains))
    runs = []
    for rep in range(int(spec["reps"])):
        rng = seeded_rng(seed, "multidim_frameworks", "hdg", comp_name, ds, eps, rep)
        t0 = time.perf_counter()
        fe = comp.estimate(codes, grids.domains, eps, delta, rng)
        tables = R.postprocess(fe.estimates, grids, fe.cell_variance, rounds=int(spec["rounds"]))
        mats = R.response_matrices(tables, grids)
        seconds = time.perf_counter() - t0
        fa = comp.estimate(data, domains, eps, delta, rng)
        runs.append((fe, tables, mats, fa, seconds))
    return {"comp": comp, "grids": grids, "truth": truth, "g": (g1, g2)}, runs


def _hdg_rows(data, spec: Mapping, st: Mapping, runs: list[tuple], answers, cache: dict) -> pd.DataFrame:
    """The table rows of one eps_s's repetitions (``st``, ``runs``: :func:`_hdg_reps`; ``answers``:
    each repetition's answers to the workload)."""
    from shuffledp.tasks import range_queries as R
    from shuffledp.tasks.multidim import frequency_mse

    n, d = data.shape
    eps, delta = float(spec["eps"]), 1.0 / n
    ds, comp_name = spec["dataset"], spec["component"]
    comp, grids, truth, (g1, g2) = st["comp"], st["grids"], st["truth"], st["g"]
    _, true_ans, attr_truth = cache["workload"]
    rows = []
    for rep, ((fe, tables, _, fa, seconds), ans) in enumerate(zip(runs, answers, strict=True)):
        rows.append({
            "framework": "hdg", "dataset": ds, "component": comp_name, "eps": eps, "delta": delta, "rep": rep,
            "n": n, "d": d, "units": grids.count, "max_unit_cells": int(max(grids.domains)),
            "eps_l_min": float(min(fe.eps_l)), "eps_l_max": float(max(fe.eps_l)),
            "unit_mse": R.grid_mse(tables, truth), "unit_mse_raw": R.grid_mse(fe.estimates, truth),
            "query_mse": float(np.mean([(a - t) ** 2 for a, t in zip(ans, true_ans, strict=True)])),
            "attribute_mse": frequency_mse(fa.estimates, attr_truth),
            "eps_free_share": _eps_free_share(comp, n, grids.domains, eps, delta), "maxent_share": float("nan"),
            "flame_capped": _flame_capped(comp, n, grids.domains, eps, delta),
            "g1": g1, "g2": g2,
        })
        _log_time("hdg", ds, comp_name, eps, rep, seconds)
    return pd.DataFrame(rows)


def run_hdg_many(data, domains, spec: Mapping, eps: list[float], cache: dict | None = None) -> list[pd.DataFrame]:
    """The repetitions of every eps_s in ``eps`` (one table each; ``cache``: the job's grids by granularity
    and its workload). The workload's maximum-entropy fits of all of them run batched."""
    from shuffledp.tasks import range_queries as R

    cache = {} if cache is None else cache
    specs = [{**spec, "eps": float(e)} for e in eps]
    parts = [_hdg_reps(data, domains, sp, cache) for sp in specs]
    flat = R.answer_queries_many([r[2] for _, runs in parts for r in runs], cache["workload"][0])
    out, k = [], 0
    for sp, (st, runs) in zip(specs, parts, strict=True):
        out.append(_hdg_rows(data, sp, st, runs, flat[k:k + len(runs)], cache))
        k += len(runs)
    return out


def run_hdg(data, domains, spec: Mapping, cache: dict | None = None) -> pd.DataFrame:
    """The repetitions of one eps_s (``cache``: the job's grids by granularity and its workload, shared
    by its eps_s values)."""
    return run_hdg_many(data, domains, spec, [float(spec["eps"])], cache)[0]


def run_job(spec: Mapping, data_path: str) -> pd.DataFrame:
    """Every eps_s of the spec (a list, or one number) with every repetition; the rows of one eps_s do
    not depend on the other eps_s values (seeds derive from eps_s and the repetition only)."""
    data, domains, _, prov = load_table(data_path, spec.get("records"), int(spec["seed"]), spec["dataset"],
                                        spec["framework"])
    eps = spec["eps"] if isinstance(spec["eps"], list) else [spec["eps"]]
    if spec["framework"] == "calm":
        parts = run_calm_many(data, domains, spec, [float(e) for e in eps])
    else:
        # grids of one granularity are encoded once (several eps_s share them)
        parts = run_hdg_many(data, domains, spec, [float(e) for e in eps])
    df = pd.concat(parts, ignore_index=True)
    df["standin"] = bool(prov.get("standin", False))
    return df



# ------------------------------------------------------------------ report


def summarise(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["framework", "dataset", "component", "eps"]
    cols = ["unit_mse", "unit_mse_raw", "query_mse", "attribute_mse", "eps_l_min", "eps_l_max", "eps_free_share",
            "maxent_share", "n", "units", "max_unit_cells", "g1", "g2"]
    df = df if "flame_capped" in df else df.assign(flame_capped=False)  # runs written before the whole-record cap
    out = df.groupby(keys, as_index=False)[cols + ["flame_capped"]].agg({**{c: "mean" for c in cols},
                                                                          "flame_capped": "any"})
    out["reps"] = df.groupby(keys).size().to_numpy()
    return out.sort_values(keys).reset_index(drop=True)


def claims(summ: pd.DataFrame, notes: Mapping[str, str], scale: str, subsets=(), runs=None) -> pd.DataFrame:
    """The claims table (:func:`shuffledp.claims.multidim_frameworks.claims`)."""
    from shuffledp.claims import multidim_frameworks as CF

    return CF.claims(summ, notes, scale, subsets=subsets, runs=runs)


def claims_markdown(df: pd.DataFrame, notes: Mapping[str, str], scale: str) -> str:
    from shuffledp.claims import multidim_frameworks as CF

    return CF.claims_markdown(df, notes, scale)


def report(run_files: list[str], data_files: Mapping[str, str], spec: Mapping, out: Mapping[str, str],
           audits: list[str] | None = None) -> pd.DataFrame:
    """Figs 6-9 (``out["fig6_pdf"]``, ``out["fig6_png"]``, ... ``fig9_png``), the summary (``out["summary"]``)
    and the claims table (``out["claims"]``, ``out["claims_md"]``), gated by the audits table at
    ``audits`` (:mod:`shuffledp.claims.audit_gate`; empty or None: the audits did not run)."""
    from shuffledp.claims.multidim_frameworks import DATASET_LABELS
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
        figure(sub, metric, datasets, labels, title + "; bands: 95% t intervals over repetitions (a lower edge at or "
               "below 0 drawn at mean/1000)",
               {d: notes.get(d, "") for d in datasets}, out[f"fig{fig_no}_pdf"], out[f"fig{fig_no}_png"],
               runs=df[df.framework == fw] if "framework" in df.columns else df)
    from shuffledp.claims import multidim_frameworks as CF
    from shuffledp.io import write_text

    cl = CF.gate(claims(summ, notes, spec["scale"], subsets=subset, runs=df), audits or [])
    write_table(cl, out["claims"])
    write_text(out["claims_md"], claims_markdown(cl, notes, spec["scale"]))
    return cl
