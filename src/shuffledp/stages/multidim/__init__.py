"""Multidimensional categorical data under shuffle DP (Wang et al., Computers & Security 2025): MHM vs
FLAME vs TCM (Figures 3, 4, 5, Table 3) and OGM vs NOGM (Figure 10), plus a claims table.

Jobs: ``prepare`` (Adult's categorical attributes, when ``adult`` is among the datasets: real data
beside the IPUMS extracts), one ``uniform`` per (dataset, mechanism, eps, batch of repetitions), one
``personal`` per (dataset, method, ratio, batch), one ``report``. The computations are in
:mod:`shuffledp.experiments.multidim` and :mod:`shuffledp.experiments.multidim_report`; the
constants and ratio helpers below are light, so the workflow imports them while parsing.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from shuffledp.errors import ConfigError, UsageError
from shuffledp.experiments.multidim_names import (  # noqa: F401  (the stage's names)
    ADULT,
    ADULT_ATTRIBUTES,
    MECHANISMS,
    METHODS,
    parse_ratio,
    ratio_tag,
)
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable, Ref, audits_input, batch_ranges

TITLE = "Multidimensional categorical data (Wang et al., Computers & Security 2025)"


def check_config(config: Mapping) -> None:
    """Semantic checks of the ``multidim`` section (no-op when the section is absent)."""
    sec = config.get("multidim")
    if not sec:
        return
    ds = list(sec["datasets"])
    if len(set(ds)) != len(ds):
        raise ConfigError(f"config key multidim.datasets: {ds} has a repeated dataset")
    ipums = config["datasets"]["ipums"]
    for name in ds:  # Adult's categorical attributes, or an IPUMS extract the data stage builds
        if name == ADULT:
            continue
        if name not in ipums:
            raise ConfigError(f"config key multidim.datasets: {name!r} is neither 'adult' nor a key of datasets.ipums "
                              f"(configured: {sorted(ipums)})")
        if sec["records"] > ipums[name]["records"]:
            raise ConfigError(f"config key multidim.records: {sec['records']} exceeds datasets.ipums.{name}.records "
                              f"{ipums[name]['records']} (the processed table has that many rows)")
    for m in sec["mechanisms"]:
        if m not in MECHANISMS:
            raise ConfigError(f"config key multidim.mechanisms: unknown mechanism {m!r}")
    eps = list(sec["eps"])
    if eps != sorted(eps) or len(set(eps)) != len(eps):
        raise ConfigError(f"config key multidim.eps: {eps} must be strictly increasing")
    if sec["reps_per_job"] > sec["reps"]:
        raise ConfigError("config key multidim.reps_per_job: exceeds multidim.reps")
    pers = sec.get("personal")  # optional: without it, no personal-budget jobs
    if pers is None:
        return
    names = [c["name"] for c in pers["classes"]]
    if len(set(names)) != len(names):
        raise ConfigError(f"config key multidim.personal.classes: names {names} must differ")
    for r in pers["ratios"]:
        parse_ratio(r, "multidim.personal.ratios")
    if len(pers["classes"]) != 3:
        raise ConfigError("config key multidim.personal.classes: exactly three classes expected")
    if pers["reps_per_job"] > pers["reps"]:
        raise ConfigError("config key multidim.personal.reps_per_job: exceeds multidim.personal.reps")


def _table(dataset: str):
    """The input table of a dataset: Adult's categorical table (the prepare job's), or an IPUMS extract."""
    if dataset == ADULT:
        return Ref("prepare", "table", {"dataset": ADULT})
    return Ref("preprocess_ipums", "table", {"key": dataset}, stage="data")


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage: ``prepare`` for Adult (its categorical attributes), ``uniform`` per
    (dataset, mechanism, batch) with every eps inside, ``personal`` per (dataset, method, batch) with
    every ratio inside (one eps or ratio is a fraction of a process's start-up at the default scale;
    the draws depend on the eps or ratio and the repetition, never on the job), one ``report``.
    Each spec holds only the keys its job uses."""
    sec = config.get("multidim")
    if not sec:
        return []
    seed = int(config["seed"])
    out = []
    if ADULT in sec["datasets"]:
        out.append(Job("prepare", {"dataset": ADULT}, {"dataset": ADULT, "attributes": list(ADULT_ATTRIBUTES)},
                       inputs={"table": [Ref("preprocess_adult", "table", stage="data")]}))
    for ds in sec["datasets"]:
        for mech in sec["mechanisms"]:
            for b, reps in enumerate(batch_ranges(sec["reps"], sec["reps_per_job"])):
                spec = {"dataset": ds, "mechanism": mech, "eps": [float(e) for e in sec["eps"]], "reps": reps,
                        "records": int(sec["records"]), "seed": seed, "topk": int(sec["topk"])}
                if mech == "mhm":
                    spec["bound"] = sec["bound"]
                if mech in ("mhm", "tcm", "mhm_paper"):
                    spec["family_bits"] = int(sec["hash_family_bits"])
                if mech == "flame":
                    spec["np_fraction"] = float(sec["flame_np_fraction"])
                    spec["flame_variant"] = sec["flame_variant"]
                out.append(Job("uniform", {"dataset": ds, "mechanism": mech, "batch": str(b)},
                               spec, inputs={"data": [_table(ds)]}))
    pers = sec.get("personal")  # optional: without it, no personal-budget jobs
    for ds in sec["datasets"] if pers else []:
        for method in METHODS:
            for b, reps in enumerate(batch_ranges(pers["reps"], pers["reps_per_job"])):
                spec = {"dataset": ds, "method": method, "ratios": list(pers["ratios"]), "reps": reps,
                        "records": int(sec["records"]), "seed": seed, "bound": sec["bound"],
                        "family_bits": int(sec["hash_family_bits"]),
                        "classes": pers["classes"]}
                out.append(Job("personal", {"dataset": ds, "method": method, "batch": str(b)}, spec,
                               inputs={"data": [_table(ds)]}))
    table = JobTable(out)
    out.append(Job("report", {}, {"datasets": list(sec["datasets"]), "topk": int(sec["topk"]),
                                  "scale": config["name"]},
                   inputs={"uniform": table.refs("uniform", "table"), "timings": table.refs("uniform", "timings"),
                           "personal": table.refs("personal", "table"),
                           "data": [_table(ds) for ds in sec["datasets"]], "audits": audits_input(config)}))
    return out


# ------------------------------------------------------------------ steps


def _load(spec, path):
    from shuffledp.experiments.multidim import load_dataset

    data, domains, _, _ = load_dataset(path, spec["records"], spec["seed"], spec["dataset"])
    return data, domains


def _prepare(spec, inputs, outputs) -> None:
    import pyarrow.parquet as pq

    from shuffledp.experiments.multidim import prepare_adult
    from shuffledp.io import read_provenance, write_table

    a = spec["attributes"]
    src = inputs["table"][0]
    try:
        table, prov = prepare_adult(pq.read_table(src).to_pandas(), read_provenance(src), a)
    except ValueError as exc:
        raise UsageError(f"input table: {exc}") from None
    write_table(table, outputs["table"], prov)


def _uniform(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments.multidim import run_uniform
    from shuffledp.io import write_table

    eps = spec["eps"]
    data, domains = _load(spec, inputs["data"][0])
    if spec["topk"] > sum(domains):  # Table 3 then ranks every (attribute, value) pair: said, never silent
        print(f"warning: config key multidim.topk {spec['topk']} exceeds the {sum(domains)} (attribute, value) "
              f"pairs of {spec['dataset']}: Table 3 ranks all of them", file=sys.stderr)
    kw = {k: spec[k] for k in ("bound", "family_bits", "np_fraction", "flame_variant") if k in spec}
    runs = [run_uniform(data, domains, spec["mechanism"], float(e), spec["reps"], seed=spec["seed"],
                        dataset=spec["dataset"], topk=spec["topk"], **kw) for e in eps]
    write_table(pd.concat([r[0] for r in runs], ignore_index=True), outputs["table"])
    write_table(pd.concat([r[1] for r in runs], ignore_index=True), outputs["timings"])


def _personal(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments.multidim import run_personal
    from shuffledp.io import write_table

    c, ratios = spec["classes"], spec["ratios"]
    data, domains = _load(spec, inputs["data"][0])
    df = pd.concat([run_personal(data, domains, spec["method"], r, spec["reps"], seed=spec["seed"],
                                 dataset=spec["dataset"], classes=c, bound=spec["bound"],
                                 family_bits=spec["family_bits"]) for r in ratios], ignore_index=True)
    write_table(df, outputs["table"])


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments.multidim_report import report

    if len(inputs["data"]) != len(spec["datasets"]):
        raise UsageError(f"--io: {len(inputs['data'])} data tables for {len(spec['datasets'])} datasets")
    data = dict(zip(spec["datasets"], inputs["data"], strict=True))
    report(inputs["uniform"], inputs["timings"], inputs["personal"], data, scale=spec["scale"], out=outputs,
           topk=spec["topk"], audits=inputs["audits"])


def _figure(k: int, sub: str) -> tuple[Output, Output]:
    return (Output(f"fig{k}", f"figures/multidim_fig{k}.pdf", final=True),
            Output(f"fig{k}_png", f"figures/multidim_fig{k}.png", final=True,
                   report=Report(f"captions/fig{k}.rst", sub)))


_BATCH = r"\d+"

STAGE = Stage(
    name="multidim",
    title=TITLE,
    section="multidim",
    check=check_config,
    jobs=jobs,
    claims=("report.claims",),
    steps=(
        Step("prepare", _prepare, spec="Prepare",
             inputs=("table",),
             outputs=(Output("table", "multidim/data/{dataset}.parquet"),),
             wildcards={"dataset": ADULT},
             mem_mb=1000, runtime=5),
        Step("uniform", _uniform, spec="Uniform",
             inputs=("data",),
             outputs=(Output("table", "multidim/uniform/{dataset}_{mechanism}_b{batch}.parquet"),
                      # wall-clock timings: not reproducible
                      Output("timings", "multidim/timings/{dataset}_{mechanism}_b{batch}.parquet")),
             wildcards={"dataset": "[a-z]+", "mechanism": "mhm_paper|mhm|flame|tcm", "batch": _BATCH},
             mem_mb=1000, runtime=10),
        Step("personal", _personal, spec="Personal",
             inputs=("data",),
             outputs=(Output("table", "multidim/personal/{dataset}_{method}_b{batch}.parquet"),),
             wildcards={"dataset": "[a-z]+", "method": "ogm|nogm", "batch": _BATCH},
             mem_mb=1000, runtime=10),
        Step("report", _report, spec="Report",
             inputs=("uniform", "timings", "personal", "data", "audits"),
             outputs=(*_figure(3, "Fig. 3"),
                      Output("fig3_table", "tables/multidim_fig3.parquet", final=True),
                      *_figure(4, "Fig. 4"), *_figure(5, "Fig. 5"), *_figure(10, "Fig. 10"),
                      Output("table3", "tables/multidim_table3.parquet", final=True),
                      Output("table3_md", "tables/multidim_table3.md", final=True,
                             report=Report("captions/table3.rst", "Table 3")),
                      Output("claims", "tables/multidim_claims.parquet", final=True),
                      Output("claims_md", "tables/multidim_claims.md", final=True,
                             report=Report("captions/claims.rst", "claims")),
                      # decided from wall-clock timings: not reproducible
                      Output("claims_timings", "tables/multidim_claims_timings.parquet", final=True),
                      Output("claims_timings_md", "tables/multidim_claims_timings.md", final=True,
                             report=Report("captions/claims.rst", "claims")),
                      Output("uniform", "tables/multidim_uniform.parquet", final=True),
                      Output("personal", "tables/multidim_personal.parquet", final=True),
                      Output("timings", "tables/multidim_timings.parquet", final=True)),
             mem_mb=1000, runtime=10),
    ),
)
