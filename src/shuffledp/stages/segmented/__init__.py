"""Segmented multi-message shuffle (Wang et al.), Section 6: Figures 2-6, the claims table and the
accountant tables they read.

Jobs: ``prepare`` (per dataset: fixed-width sets and the truth) -> ``accountant`` (per (dataset, n):
the accountant table of every level setting in one process, since the per-level Poisson rates do not
depend on the shares and are cached across settings, 2.1-3x less work than one job per setting) and
``params`` (per (dataset, n): the baselines' privacy parameters) -> ``run`` (one per protocol and
repetition batch; every panel (dataset, n, setting or ``none``), m and repetition inside: one process
per protocol rather than per panel, since a panel's work is a fraction of a process's start-up at the
default scale; the draws depend on the panel and repetition, never on the batching) -> ``aggregate``
-> ``figures`` (one job drawing every figure: a figure is a fraction of a process's start-up) and
``claims``. The accountant tables,
``results/accountant/segmented/<dataset>_n<n>_<setting>.parquet``, hold one row per (accountant, m,
level) plus the optimum m* rows; the experiment jobs read them and never recompute a bound. The
computations are in :mod:`shuffledp.experiments.segmented` (and ``segmented_params``).

With ``baseline_accounting: [ours, paper]`` the four shuffle baselines also run as the paper calibrated
them (a labelled variant): ``params_paper`` per (dataset, n) and ``run`` jobs of their own,
``<baseline>_paper`` (listed after the others; a config without ``paper`` has exactly the jobs it had);
the figures draw them beside ours, labelled (the ``figures`` job's spec then has ``paper_baselines``,
and the job refuses a summary without their rows).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from shuffledp.errors import ConfigError, UsageError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable, Ref, audits_input, batch_ranges

TITLE = "Segmented multi-message shuffle (Wang et al.)"
# the protocol names of shuffledp.experiments.segmented (not imported here: it is heavy)
OURS, OURS_PAPER = "segmented", "segmented_paper"
OURS_ALL = (OURS, OURS_PAPER)
# the baselines as the paper calibrated them (segmented.baseline_accounting: paper): separate run jobs
PAPER_UNIFORM = ("subexp_shuffle_paper", "mm_shuffle_paper")
PAPER_LEVEL = ("sepmm_paper", "wsepmm_paper")
UNIFORM_BASELINES = ("subexp_local", "subexp_shuffle", "mm_shuffle", *PAPER_UNIFORM)
DATASET_LABELS = {"msnbc": "MSNBC", "synth_T128_s4": "synthetic T=128", "synth_T128_s8": "synthetic T=128"}


def _check_segmented_accountants(config: Mapping) -> None:
    """The run jobs read the accountant tables of ``segmented.accountant`` (and of ``paper`` when
    ``compare_paper_accountant`` is set); ``segmented.accountants`` says which tables are built."""
    cfg = config.get("segmented")
    if not cfg:
        return
    built = list(cfg["accountants"])
    used = cfg["accountant"]
    if used not in built:
        raise ConfigError(f"config key segmented.accountant: {used!r} needs {used!r} in segmented.accountants "
                          f"(which builds {built})")
    if cfg["compare_paper_accountant"] and used != "paper" and "paper" not in built:
        raise ConfigError("config key segmented.compare_paper_accountant: true needs 'paper' in "
                          f"segmented.accountants (which builds {built})")
    if len(set(built)) != len(built):
        raise ConfigError(f"config key segmented.accountants: duplicate entries in {built}")


def _check_baseline_accounting(config: Mapping) -> None:
    """The main claims rows compare with our calibration, so ``ours`` is always run."""
    cfg = config.get("segmented")
    if cfg and "ours" not in cfg["baseline_accounting"]:
        raise ConfigError(f"config key segmented.baseline_accounting: {list(cfg['baseline_accounting'])} must "
                          "include 'ours' (the main claims rows; 'paper' adds the labelled variant)")


def _check_segmented_tables(config: Mapping) -> None:
    """Each dataset reads a set-valued table the data stage of this config builds."""
    synth = {s["name"] for s in config["datasets"]["synthetic"]}
    seg = config.get("segmented")
    if seg:
        for name, spec in seg["datasets"].items():
            table = spec["table"]
            if table != "msnbc_sets" and not table.startswith("synthetic_"):
                raise ConfigError(f"config key segmented.datasets.{name}.table: {table!r} is not a set-valued table "
                                  f"the data stage builds (msnbc_sets or synthetic_<name>, with <name> in "
                                  f"datasets.synthetic: {sorted(synth)})")
            if table == "msnbc_sets" and spec["d"] != 17:
                raise ConfigError(f"config key segmented.datasets.{name}.d: msnbc_sets has 17 categories, "
                                  f"not {spec['d']}")


def _check_shares(shares, key: str, tol: float = 1e-9) -> None:
    """Shares must be non-negative and sum to 1."""
    total = math.fsum(shares)
    if any(s < 0 for s in shares) or abs(total - 1.0) > tol:
        raise ConfigError(f"config key {key}: shares {list(shares)} must be >= 0 and sum to 1 (sum {total:g})")


def _check_population(config: Mapping, name: str, table: str, synth: Mapping, n: int) -> None:
    """Users are sampled WITHOUT replacement (one record, one user: the guarantee is per person). A table
    that may hold fewer users than the largest ``segmented.n`` -- a synthetic table, or the MSNBC stand-in
    whenever the stand-in can be used -- is refused (sampling with replacement would make the guarantee
    per user slot, not per person)."""
    if table.startswith("synthetic_") and table[len("synthetic_"):] in synth:
        users, key = synth[table[len("synthetic_"):]]["users"], f"datasets.synthetic[{table[len('synthetic_'):]}].users"
    elif table == "msnbc_sets" and config["datasets"]["msnbc"]["source"] != "real":
        users, key = config["datasets"]["msnbc"]["standin_users"], "datasets.msnbc.standin_users"
    else:
        return
    if users < n:
        raise ConfigError(f"config key {key}: {users} users, fewer than segmented.n {n} (dataset {name}): users "
                          "would be sampled with replacement, a guarantee per slot, not per person; raise it")


def check_config(config: Mapping) -> None:
    """Semantic checks of the ``segmented`` section (the schema checks types)."""
    if "segmented" not in config:
        return
    _check_segmented_accountants(config)
    _check_baseline_accounting(config)
    _check_segmented_tables(config)
    import numpy as np

    from shuffledp.experiments.segmented import level_counts

    cfg = config["segmented"]
    lv = list(cfg["levels"])
    if any(b <= a for a, b in zip(lv, lv[1:], strict=False)):
        raise ConfigError(f"config key segmented.levels: {lv} must be strictly increasing")
    for name, shares in cfg["settings"].items():
        if len(shares) != len(lv):
            raise ConfigError(
                f"config key segmented.settings.{name}: {len(shares)} shares for {len(lv)} levels")
        _check_shares(shares, f"segmented.settings.{name}")
    g = cfg["m_grid"]
    if not 0 < g["min"] < g["max"]:
        raise ConfigError(f"config key segmented.m_grid: need 0 < min < max, got {g['min']}, {g['max']}")
    import sys

    for n in cfg["n"]:
        if cfg["delta_factor"] / n < sys.float_info.min:
            raise ConfigError(f"config key segmented.delta_factor: delta = delta_factor / n = "
                              f"{cfg['delta_factor'] / n!r} at n = {n} is below the smallest normal number "
                              f"{sys.float_info.min:.4g}")
        for name, shares in cfg["settings"].items():
            if np.any(level_counts(n, shares) < 1):
                raise ConfigError(f"config key segmented.settings.{name}: a level has no user at n = {n}")
    synth = {s["name"]: s for s in config["datasets"]["synthetic"]}
    for name, ds in cfg["datasets"].items():
        table = ds["table"]
        if table.startswith("synthetic_"):
            sname = table[len("synthetic_"):]
            if sname not in synth:
                raise ConfigError(f"config key segmented.datasets.{name}.table: {table} needs an entry "
                                  f"named {sname} in datasets.synthetic")
            if synth[sname]["domain"] != ds["d"]:
                raise ConfigError(f"config key segmented.datasets.{name}.d: {ds['d']} differs from "
                                  f"datasets.synthetic[{sname}].domain {synth[sname]['domain']}")
        if ds["s"] >= ds["d"]:
            raise ConfigError(f"config key segmented.datasets.{name}.s: must be < d")
        _check_population(config, name, table, synth, max(cfg["n"]))
    _check_figures(cfg)


def _check_figures(cfg: Mapping) -> None:
    """Each figure names configured datasets and settings."""
    for fig, spec in cfg["figures"].items():
        for ds in spec["datasets"]:
            if ds not in cfg["datasets"]:
                raise ConfigError(f"config key segmented.figures.{fig}.datasets: unknown dataset {ds}")
        for st in spec["settings"]:
            if st not in cfg["settings"]:
                raise ConfigError(f"config key segmented.figures.{fig}.settings: unknown setting {st}")


def padding_items(config: Mapping, dataset: str) -> int:
    """The padding domain's size of a segmented dataset: 0 when its source guarantees every user at
    least ``s`` items (a synthetic table with ``set_size >= s``: then every user holds exactly ``s``
    after selection, the neighbouring relation is the paper's substitution of ``s``-sets and the
    protocol runs over ``d`` items), else ``s`` (e.g. MSNBC, 1 to 17 items: padding items are sent
    and every accountant is over ``d + s`` items). Decided by the declared source, never by the data
    (``prepare`` checks the data against it)."""
    ds = config["segmented"]["datasets"][dataset]
    table, s = ds["table"], int(ds["s"])
    if table.startswith("synthetic_"):
        synth = {x["name"]: x for x in config["datasets"]["synthetic"]}
        spec = synth.get(table[len("synthetic_"):])
        if spec is not None and int(spec["set_size"]) >= s:
            return 0
    return s


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage, each with only the keys it uses (``delta = delta_factor / n`` and
    the ``m`` grid are derived here, once) and the files it reads."""
    if "segmented" not in config:
        return []
    from shuffledp.experiments.segmented import m_grid, panels

    cfg = config["segmented"]
    seed = int(config["seed"])
    levels = [float(e) for e in cfg["levels"]]
    grid = [float(m) for m in m_grid(cfg)]
    pan = panels(cfg)
    pan_ds = sorted({d for d, _ in pan})
    ns = [int(n) for n in cfg["n"]]
    pads = {ds: padding_items(config, ds) for ds in pan_ds}
    out = _table_jobs(cfg, seed, levels, grid, pan, pan_ds, ns, pads)
    out += _run_jobs(cfg, seed, levels, pan, pan_ds, ns)
    return out + _report_jobs(config, cfg, JobTable(out), grid, pan_ds, ns)


def _table_jobs(cfg: Mapping, seed: int, levels: list, grid: list, pan: list, pan_ds: list, ns: list,
                pads: Mapping) -> list[Job]:
    """Per dataset its ``prepare`` job, and per n its ``accountant`` and ``params`` jobs (each with
    the dataset's padding domain size, :func:`padding_items`)."""
    out = []
    for ds in pan_ds:
        dcfg = cfg["datasets"][ds]
        pad = int(pads[ds])
        out.append(Job("prepare", {"segds": ds}, {"dataset": ds, "d": int(dcfg["d"]), "s": int(dcfg["s"]),
                                                   "seed": seed, "oversize": cfg["oversize"], "padding": pad},
                       inputs={"table": [f"data/processed/{dcfg['table']}.parquet"]}))
        for n in ns:
            wc = {"segds": ds, "segn": str(n)}
            delta = float(cfg["delta_factor"]) / n
            out.append(Job("accountant", wc, {
                "n": n, "d": int(dcfg["d"]), "s": int(dcfg["s"]), "levels": levels, "delta": delta,
                "m_grid": grid, "accountants": list(cfg["accountants"]), "padding": pad,
                "settings": {k: [float(x) for x in v] for k, v in cfg["settings"].items()}}))
            used = sorted({st for d, st in pan if d == ds})
            out.append(Job("params", wc, {
                "dataset": ds, "n": n, "d": int(dcfg["d"]), "s": int(dcfg["s"]), "levels": levels,
                "settings": {k: cfg["settings"][k] for k in used}, "delta": delta,
                "uniform_eps": float(cfg["uniform_eps"]), "accountant": cfg["accountant"], "padding": pad}))
            if "paper" in cfg["baseline_accounting"]:
                out.append(Job("params_paper", wc, {
                    "dataset": ds, "n": n, "d": int(dcfg["d"]), "s": int(dcfg["s"]), "levels": levels,
                    "settings": {k: cfg["settings"][k] for k in used}, "delta": delta,
                    "uniform_eps": float(cfg["uniform_eps"]), "padding": pad}))
    return out


def _run_inputs(protocol: str, dataset: str, n: int, setting: str) -> tuple[Ref, Ref]:
    """The data and the table one panel of a run reads: ours its accountant table, every baseline the
    parameter table of its (dataset, n)."""
    data = Ref("prepare", "data", {"segds": dataset})
    if protocol in OURS_ALL:
        return data, Ref("accountant", "tables", {"segds": dataset, "segn": str(n), "setting": setting})
    step = "params_paper" if protocol in (*PAPER_UNIFORM, *PAPER_LEVEL) else "params"
    return data, Ref(step, "table", {"segds": dataset, "segn": str(n)})


def _run_job(protocol: str, batch: int, common: dict, points: list[dict]) -> Job:
    """One ``run`` job of ``protocol``: ``points`` (each one panel's keys) with the index of its
    data and table in the job's input lists (each input listed once)."""
    inputs: dict[str, list] = {"data": [], "table": []}
    out = []
    for p in points:
        refs = _run_inputs(protocol, p["dataset"], p["n"], p["setting"])
        idx = {}
        for name, ref in zip(("data", "table"), refs, strict=True):
            if ref not in inputs[name]:
                inputs[name].append(ref)
            idx[name] = inputs[name].index(ref)
        out.append(dict(p, **idx))
    return Job("run", {"segproto": protocol, "segb": str(batch)}, dict(common, protocol=protocol, points=out),
               inputs=inputs)


def _level_points(cfg: Mapping, levels: list, pan: list, ns: list) -> dict[str, list[dict]]:
    """Per level protocol (ours, SepMM, Weighted SepMM, and their paper-calibrated variants when
    configured), its panels' keys."""
    from shuffledp.experiments.segmented import ours_protocols

    paper = "paper" in cfg["baseline_accounting"]
    level_points: dict[str, list[dict]] = {}
    for ds, st in pan:
        for n in ns:
            base = dict(dataset=ds, n=n, setting=st, levels=levels, shares=[float(x) for x in cfg["settings"][st]])
            for proto in ours_protocols(cfg):
                p = dict(base, level_histogram=cfg["level_histogram"], sampler=cfg["sampler"],
                         accountant="paper" if proto == OURS_PAPER else cfg["accountant"])
                if p["level_histogram"] == "grr":
                    p["epsilon_p"] = float(cfg["epsilon_p"])
                level_points.setdefault(proto, []).append(p)
            wsep = dict(base, delta=float(cfg["delta_factor"]) / n, wsepmm_power=float(cfg["wsepmm_power"]))
            for suffix in ("", "_paper") if paper else ("",):
                level_points.setdefault("sepmm" + suffix, []).append(dict(base))
                level_points.setdefault("wsepmm" + suffix, []).append(dict(wsep))
    return level_points


def _run_jobs(cfg: Mapping, seed: int, levels: list, pan: list, pan_ds: list, ns: list) -> list[Job]:
    """The ``run`` jobs, per protocol and repetition batch: the level protocols on every panel, the
    uniform baselines on every (dataset, n). The paper-calibrated baselines (``<baseline>_paper``,
    with ``segmented.baseline_accounting: [..., paper]``) are jobs of their own, listed after the others."""
    paper = "paper" in cfg["baseline_accounting"]
    out, late = [], []
    for b, reps in enumerate(batch_ranges(cfg["repetitions"], cfg["batch_size"])):
        common = {"seed": seed, "reps": reps}
        level_points = _level_points(cfg, levels, pan, ns)
        uniform: dict[str, list[dict]] = {}
        for ds in pan_ds:
            for n in ns:
                for proto in UNIFORM_BASELINES:
                    if proto in PAPER_UNIFORM and not paper:
                        continue
                    p = dict(dataset=ds, n=n, setting="none")
                    if proto == "subexp_local":
                        p["subexp_local_eps"] = float(cfg["subexp_local_eps"])
                    uniform.setdefault(proto, []).append(p)
        for proto, pts in {**level_points, **uniform}.items():
            (late if proto in (*PAPER_UNIFORM, *PAPER_LEVEL) else out).append(_run_job(proto, b, common, pts))
    return out + late


def _report_jobs(config: Mapping, cfg: Mapping, table: JobTable, grid: list, pan_ds: list, ns: list) -> list[Job]:
    """``aggregate`` (over ``table``'s runs), one ``figures`` job, and ``claims``."""
    # the accountant tables our runs used, each named by (dataset, n, setting) in the spec, in the
    # order of the inputs (sorted like their file names <dataset>_n<n>_<setting>)
    used = sorted({(p["dataset"], str(p["n"]), p["setting"])
                   for j in table.of_step("run") if j.wildcards["segproto"] in OURS_ALL for p in j.spec["points"]},
                  key=lambda k: f"{k[0]}_n{k[1]}_{k[2]}")
    out = [Job("aggregate", {}, {"accountant": cfg["accountant"],
                                 "scale": config["name"],
                                 "tables": [{"dataset": d, "n": int(n), "setting": st} for d, n, st in used]},
               inputs={"runs": table.refs("run", "table"),
                       "accountant": [Ref("accountant", "tables", {"segds": d, "segn": n, "setting": st})
                                      for d, n, st in used]})]
    summary = [Ref("aggregate", "summary")]
    drawn = [d for d in pan_ds if any(d in f["datasets"] for f in cfg["figures"].values())]
    fig_spec = {"figures": cfg["figures"], "n": ns, "dataset_labels": DATASET_LABELS, "data_datasets": drawn}
    if "paper" in cfg["baseline_accounting"]:  # the figures draw them too (a default spec has no such key)
        fig_spec["paper_baselines"] = True
    out.append(Job("figures", {}, fig_spec,
                   inputs={"summary": summary, "data": [Ref("prepare", "data", {"segds": d}) for d in drawn]}))
    out.append(Job("claims", {}, {"n": ns, "m_grid": grid, "figures": cfg["figures"],
                                  "m_factor": float(cfg["m_factor"]),
                                  "scale": config["name"]},
                   inputs={"summary": summary, "data": table.refs("prepare", "data"),
                           "audits": audits_input(config)}))
    return out


# ------------------------------------------------------------------------------------------- steps


def _prepare(spec, inputs, outputs) -> None:
    import json

    from shuffledp.experiments import segmented as ex

    meta = ex.prepare(inputs["table"][0], outputs["data"], dataset=spec["dataset"], d=spec["d"], s=spec["s"],
                      seed=spec["seed"], oversize=spec["oversize"], padding=spec["padding"])
    print(json.dumps({k: meta[k] for k in ("dataset", "d", "s", "padding", "users", "users_padded",
                                           "users_selected")}))


def _accountant(spec, inputs, outputs) -> None:
    from shuffledp.accountants.special.segmented_optimizer import segmented_table
    from shuffledp.io import write_table

    # one process for every setting: the per-level Poisson rates (the costly part) do not depend on
    # the shares and are cached across settings (shuffledp.accountants.special.segmented_optimizer)
    for setting, shares in spec["settings"].items():
        table = segmented_table(int(spec["n"]), int(spec["d"]), int(spec["s"]), spec["levels"], shares,
                                float(spec["delta"]), spec["m_grid"], accountants=spec["accountants"],
                                padding=spec["padding"])
        write_table(table, outputs["tables"][setting])
        print(outputs["tables"][setting])


def _params_paper(spec, inputs, outputs) -> None:
    from shuffledp.experiments import segmented as ex
    from shuffledp.experiments import segmented_params as sp
    from shuffledp.io import write_table

    n = int(spec["n"])
    df = sp.paper_baseline_params(n, int(spec["d"]), int(spec["s"]), spec["levels"], spec["settings"],
                                  float(spec["delta"]), float(spec["uniform_eps"]), ex.level_counts,
                                  padding=spec["padding"])
    df.insert(0, "dataset", spec["dataset"])
    df.insert(1, "n", n)
    write_table(df, outputs["table"])
    print(df.to_string(index=False))


def _params(spec, inputs, outputs) -> None:
    from shuffledp.experiments import segmented as ex
    from shuffledp.experiments import segmented_params as sp
    from shuffledp.io import write_table

    n = int(spec["n"])
    df = sp.baseline_params(n, int(spec["d"]), int(spec["s"]), spec["levels"], spec["settings"],
                            float(spec["delta"]), float(spec["uniform_eps"]), ex.level_counts, spec["accountant"],
                            padding=spec["padding"])
    df.insert(0, "dataset", spec["dataset"])
    df.insert(1, "n", n)
    write_table(df, outputs["table"])
    print(df.to_string(index=False))


def _run(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments import segmented as ex
    from shuffledp.io import write_table

    points = spec["points"]  # typed (specs.Run); an index into the inputs is checked against them here
    for i, p in enumerate(points):
        for name in ("data", "table"):
            if p[name] >= len(inputs[name]):
                raise UsageError(f"--spec: points[{i}].{name} must index the job's {name} inputs "
                                 f"(0 to {len(inputs[name]) - 1}; got {p[name]!r})")
    # the panels run together, repetition by repetition: those of one (dataset, n) share its users
    frames = ex.run_panels([({k: v for k, v in p.items() if k not in ("data", "table")}
                             | {"protocol": spec["protocol"], "reps": spec["reps"], "seed": spec["seed"]},
                             inputs["data"][p["data"]], inputs["table"][p["table"]]) for p in points])
    for p, df in zip(points, frames, strict=True):
        print(f"{spec['protocol']} {p['dataset']} n={p['n']} {p['setting']}: {len(df)} rows "
              f"({len(spec['reps'])} repetitions), mean error {df['error'].mean():.4g}")
    write_table(pd.concat(frames, ignore_index=True), outputs["table"])


def _aggregate(spec, inputs, outputs) -> None:
    from shuffledp.experiments import segmented as ex

    keys = spec["tables"]
    if len(keys) != len(inputs["accountant"]):
        raise UsageError(f"--spec: tables names {len(keys)} accountant tables, the inputs hold "
                         f"{len(inputs['accountant'])}")
    tables = [(p, k["dataset"], int(k["n"]), k["setting"]) for p, k in zip(inputs["accountant"], keys, strict=True)]
    summ = ex.aggregate(inputs["runs"], tables, outputs["summary"], spec["accountant"], spec["scale"])
    print(f"{len(summ)} points")


def _notes(paths) -> list[str]:
    from shuffledp.experiments import segmented as ex

    return sorted({ex.standin_note(ex.read_meta(p).get("source", {})) for p in paths} - {""})


def _figures(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments import segmented as ex
    from shuffledp.plotting import segmented as pl

    if len(spec["data_datasets"]) != len(inputs["data"]):
        raise UsageError(f"--spec: data_datasets names {len(spec['data_datasets'])} datasets, the inputs hold "
                         f"{len(inputs['data'])}")
    data = dict(zip(spec["data_datasets"], inputs["data"], strict=True))
    summ = pd.read_parquet(inputs["summary"][0])
    if spec.get("paper_baselines", False):  # the paper-calibrated baselines drawn beside ours, labelled
        _check_paper_rows(summ, spec, inputs["summary"][0])
    else:  # the baselines as we calibrate them only (a summary may hold the others: they are not drawn)
        summ = summ[~summ["protocol"].isin(ex.PAPER_BASELINES)]
    for fig, fspec in spec["figures"].items():
        notes = _notes([data[d] for d in fspec["datasets"] if d in data])  # the prepared data of its datasets
        out_base = outputs["pdf"][fig][: -len(".pdf")]  # the figure writes <base>.pdf and <base>.png
        pl.figure(summ, fspec, spec["n"], out_base, "; ".join(notes), spec.get("dataset_labels"))
        if notes:
            print(f"{fig} note:", "; ".join(notes))


def _check_paper_rows(summ, spec: Mapping, path: str) -> None:
    """With ``paper_baselines`` every panel of every figure needs the four paper-calibrated baselines'
    rows in the summary: a missing one is refused, naming it and the panel (never a figure without it)."""
    from shuffledp.experiments import segmented as ex

    for fig, fspec in spec["figures"].items():
        for ds in fspec["datasets"]:
            for st in fspec["settings"]:
                for n in spec["n"]:
                    have = set(ex.panel_frame(summ, ds, int(n), st)["protocol"])
                    missing = [p for p in ex.PAPER_BASELINES if p not in have]
                    if missing:
                        raise UsageError(f"input summary {path}: no rows of {', '.join(missing)} for figure {fig}'s "
                                         f"panel {ds}, n = {n}, {st}, which --spec paper_baselines draws (run them: "
                                         "segmented.baseline_accounting [ours, paper])")


def _figure_names(spec: Mapping) -> list[str]:
    """The figures of the ``figures`` job (its output lists' values), in the config's order."""
    return list(spec["figures"])


def _claims(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.claims import segmented as C
    from shuffledp.experiments import segmented as ex
    from shuffledp.io import write_table, write_text

    summ = pd.read_parquet(inputs["summary"][0])
    standin = sorted({ex.read_meta(p)["dataset"] for p in inputs["data"] if ex.read_meta(p).get("standin")})
    df = C.gate(C.claims(summ, spec, spec["scale"], float(spec["m_factor"]), standin), inputs["audits"])
    write_table(df, outputs["parquet"])
    write_text(outputs["md"], C.claims_markdown(df, "; ".join(_notes(inputs["data"]))))
    print(df[["id", "held"]].to_string(index=False))


def _settings(spec: Mapping) -> list[str]:
    return list(spec["settings"])


DS, N = r"[A-Za-z0-9_]+", r"\d+"

STAGE = Stage(
    name="segmented",
    title=TITLE,
    section="segmented",
    check=check_config,
    jobs=jobs,
    claims=("claims.parquet",),
    steps=(
        Step("prepare", _prepare, spec="Prepare",
             inputs=("table",),
             outputs=(Output("data", "segmented/data/{segds}.parquet"),),
             wildcards={"segds": DS},
             runtime=5,
             priority=5),  # the segmented chain: its steps start as soon as they can (the run's tail)
        Step("accountant", _accountant, spec="Accountant",
             outputs=(Output("tables", "accountant/segmented/{segds}_n{segn}_{setting}.parquet",
                             over="setting", values=_settings),),
             wildcards={"segds": DS, "segn": N},
             runtime=10,
             priority=5),  # the head of the segmented chain (run, aggregate, figures, claims)
        Step("params", _params, spec="Params",
             outputs=(Output("table", "segmented/params/{segds}_n{segn}.parquet"),),
             wildcards={"segds": DS, "segn": N},
             runtime=5,
             priority=5),
        Step("params_paper", _params_paper, spec="ParamsPaper",
             outputs=(Output("table", "segmented/params_paper/{segds}_n{segn}.parquet"),),
             wildcards={"segds": DS, "segn": N},
             runtime=5),
        Step("run", _run, spec="Run",
             inputs=("data", "table"),
             outputs=(Output("table", "segmented/runs/{segproto}/b{segb}.parquet"),),
             wildcards={"segproto": "[a-z_]+", "segb": N},
             mem_mb=1500, runtime=15,
             priority=5),
        Step("aggregate", _aggregate, spec="Aggregate",
             inputs=("runs", "accountant"),
             outputs=(Output("summary", "segmented/summary.parquet"),),
             runtime=5),
        Step("figures", _figures, spec="Figures",
             inputs=("summary", "data"),
             outputs=(
                 Output("pdf", "figures/segmented_{segfig}.pdf", final=True, over="segfig", values=_figure_names),
                 Output("png", "figures/segmented_{segfig}.png", final=True, over="segfig", values=_figure_names,
                        report=Report("captions/figure.rst", "{segfig}")),
             ),
             runtime=5),
        Step("claims", _claims, spec="Claims",
             inputs=("summary", "data", "audits"),
             outputs=(
                 Output("md", "tables/segmented_claims.md", final=True,
                        report=Report("captions/claims.rst", "claims")),
                 Output("parquet", "tables/segmented_claims.parquet", final=True),
             ),
             runtime=5),
    ),
)
