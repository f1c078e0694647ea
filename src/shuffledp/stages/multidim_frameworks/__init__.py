"""Multidimensional seed, Sec. 6.1.2-6.1.3 (Wang et al., Computers & Security 2025): MHM and FLAME as
the frequency component of CALM (3-way marginals on BR, MX, and on the real Adult and Loan tables) and HDG
(3-D range queries on Adult, Loan),
Figs 6-9 and the claims table.

Jobs: ``loan`` and ``adult`` build the ordinal tables of HDG and of CALM on real data (data-stage tables by role, under
``data/processed``, listed in the datasets table; here because their specs come from this stage's
config), one ``run`` per (framework, dataset, component) with every eps_s and repetition inside, and
one ``report``. The computations are in :mod:`shuffledp.experiments.multidim_frameworks`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from shuffledp.errors import ConfigError, UsageError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.data import marker as data_marker
from shuffledp.stages.jobs import Job, JobTable, Ref, audits_input

TITLE = "Multidimensional frameworks: CALM and HDG (Wang et al., Computers & Security 2025)"
FRAMEWORKS = ("calm", "hdg")
RAW = "data/raw"


ORDINAL = ("adult", "loan")  # the ordinal tables of this stage's own steps (HDG's data; CALM's real data)


def data_table(config: Mapping, dataset: str) -> Ref:
    """The processed table a run of ``dataset`` reads: an IPUMS extract of the data stage (CALM's BR,
    MX), or an ordinal table of this stage's ``loan``/``adult`` steps (HDG, and CALM on real data)."""
    if dataset in ORDINAL:
        return Ref(dataset, "table")
    return Ref("preprocess_ipums", "table", {"key": dataset}, stage="data")


def _parts(sec: Mapping) -> tuple[Mapping | None, Mapping | None]:
    """The ``calm`` and ``hdg`` parts of the section; each optional (``None``: that framework has no runs)."""
    return sec.get("calm"), sec.get("hdg")


def check_config(config: Mapping) -> None:
    sec = config.get("multidim_frameworks")
    if not sec:
        return
    eps = list(sec["eps"])
    if eps != sorted(eps) or len(set(eps)) != len(eps):
        raise ConfigError(f"config key multidim_frameworks.eps: {eps} must be strictly increasing")
    calm, hdg = _parts(sec)
    if hdg and "adult" in hdg["datasets"] and hdg["query_dim"] > 5:
        raise ConfigError("config key multidim_frameworks.hdg.query_dim: Adult has 5 ordinal attributes")
    if hdg and hdg["domain"] & (hdg["domain"] - 1):
        raise ConfigError(f"config key multidim_frameworks.hdg.domain: {hdg['domain']} is not a power of two")
    loan = sec["loan"]
    if loan["source"] == "file" and not loan["path"]:
        raise ConfigError("config key multidim_frameworks.loan.path: required with source: file")
    uses_loan = "loan" in (hdg["datasets"] if hdg else []) or "loan" in (calm["datasets"] if calm else [])
    if uses_loan and loan["source"] == "file" and not os.path.isfile(loan["path"]):
        raise ConfigError(f"config key multidim_frameworks.loan.path: no such file: {loan['path']}")
    for ds in calm["datasets"] if calm else []:
        if ds in ORDINAL:
            _check_calm_ordinal(calm, hdg, ds)
            continue
        if ds not in config["datasets"]["ipums"]:
            raise ConfigError(f"config key multidim_frameworks.calm.datasets: {ds!r} is not in datasets.ipums")
        _check_calm_dataset(calm, ds, config["datasets"]["ipums"][ds])


def _check_calm_ordinal(calm: Mapping, hdg: Mapping | None, ds: str) -> None:
    """CALM on the ordinal Adult or Loan table: its codes come from ``hdg.domain``; views and marginals
    no wider than its attributes."""
    from shuffledp.datasets import adult_ordinal, loan

    if not hdg:
        raise ConfigError(f"config key multidim_frameworks.calm.datasets: {ds!r} needs the hdg part "
                          "(multidim_frameworks.hdg.domain codes its ordinal table)")
    width = len({"adult": adult_ordinal.ATTRIBUTES, "loan": loan.ATTRIBUTES}[ds])
    for key in ("view_size", "marginal_size"):
        if calm[key] > width:
            raise ConfigError(f"config key multidim_frameworks.calm.{key}: {calm[key]} exceeds the {width} "
                              f"ordinal attributes of {ds}")


def _check_calm_dataset(calm: Mapping, ds: str, extract: Mapping) -> None:
    """CALM on one IPUMS extract: no more records than the extract has, views and marginals no wider
    than its attributes (else a job would fail late, or quietly use fewer)."""
    if calm["records"] is not None and calm["records"] > extract["records"]:
        raise ConfigError(f"config key multidim_frameworks.calm.records: {calm['records']} exceeds "
                          f"datasets.ipums.{ds}.records {extract['records']} (the processed table has that many rows)")
    width = len(extract.get("attributes") or {})
    for key in ("view_size", "marginal_size"):
        if calm[key] > width:
            raise ConfigError(f"config key multidim_frameworks.calm.{key}: {calm[key]} exceeds the {width} "
                              f"attributes of datasets.ipums.{ds}")


def _ordinal_jobs(config: Mapping, datasets: set[str]) -> list[Job]:
    """The ``loan`` and ``adult`` jobs: the ordinal tables of HDG and of CALM on real data, each built
    once when a framework reads it (coded to ``hdg.domain`` values)."""
    sec, seed, out = config["multidim_frameworks"], int(config["seed"]), []
    domain = int(sec["hdg"]["domain"]) if datasets & set(ORDINAL) else 0
    loan = sec["loan"]
    if "loan" in datasets:
        out.append(Job("loan", {},
                       {"dataset": "loan", "seed": seed, "domain": domain,
                        "source": loan["source"], "path": loan["path"],
                        "records": loan["records"], "mirror": config["data_mirror"], "raw_dir": RAW,
                        "coding": dict(loan.get("coding") or {})},
                       # the source marker: a stand-in is rebuilt when the real file arrives (stages.data)
                       inputs={"source": [data_marker("loan")] if loan["source"] == "auto" else []}))
    if "adult" in datasets:
        out.append(Job("adult", {}, {"dataset": "adult", "domain": domain},
                       inputs={"table": [Ref("preprocess_adult", "table", stage="data")]}))
    return out


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage (empty without a ``multidim_frameworks`` section)."""
    sec = config.get("multidim_frameworks")
    if not sec:
        return []
    seed = int(config["seed"])
    scale = config["name"]
    common = {"seed": seed}
    comp_opts = {"mhm": {"bound": sec["bound"], "family_bits": int(sec["hash_family_bits"])},
                 "flame": {"np_fraction": float(sec["flame_np_fraction"]), "variant": sec["flame_variant"]}}
    calm, hdg = _parts(sec)
    hdg_datasets = list(hdg["datasets"]) if hdg else []
    out = _ordinal_jobs(config, set(hdg_datasets) | set(calm["datasets"] if calm else []))
    runs = []
    for fw, part in (("calm", calm), ("hdg", hdg)):
        for ds in part["datasets"] if part else []:
            for comp in sec["components"]:
                spec = {"framework": fw, "component": comp, "dataset": ds, "eps": [float(e) for e in sec["eps"]],
                        "records": part["records"], "reps": int(part["reps"]), **common, **comp_opts[comp]}
                if fw == "calm":
                    spec.update({k: calm[k] for k in ("view_size", "max_view_cells", "marginals",
                                                       "marginal_size", "rounds")})
                else:
                    spec.update({k: hdg[k] for k in ("domain", "queries", "query_dim", "volume", "rounds")})
                    spec["granularity"] = hdg["granularity"]
                runs.append(Job("run", {"framework": fw, "dataset": ds, "component": comp}, spec,
                                inputs={"table": [data_table(config, ds)]}))
    out += runs
    if runs:
        datasets = sorted({j.wildcards["dataset"] for j in runs})
        out.append(Job("report", {}, {"scale": scale, "eps": [float(e) for e in sec["eps"]],
                                      "components": list(sec["components"]),
                                      "calm_datasets": list(calm["datasets"]) if calm else [],
                                      # None: the part is not configured
                                      **{k: calm[k] if calm else None for k in ("marginals", "marginal_size")},
                                      **{k: hdg[k] if hdg else None for k in ("queries", "query_dim")},
                                      "hdg_datasets": hdg_datasets, "datasets": datasets},
                       inputs={"runs": JobTable(runs).refs("run", "table"),
                               "data": [data_table(config, ds) for ds in datasets],
                               "audits": audits_input(config)}))
    return out


# ------------------------------------------------------------------ steps


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _loan(spec, inputs, outputs) -> None:
    from shuffledp.datasets import loan
    from shuffledp.datasets.download import mirror_location

    c = spec["domain"]
    coding = spec.get("coding") or {}  # checked with the spec (specs.Loan: typed, and loan_bins accepts it)
    try:
        loan.prepare(spec["source"], spec["raw_dir"], outputs["table"], mirror_location(spec["mirror"]),
                     int(spec["seed"]), c=c, path=spec["path"], records=spec["records"], log=_log, coding=coding)
    except ValueError as exc:
        raise UsageError(f"--spec: {exc}") from None


def _adult(spec, inputs, outputs) -> None:
    from shuffledp.datasets import adult_ordinal

    adult_ordinal.derive(inputs["table"][0], outputs["table"], c=spec["domain"], log=_log)


def _run(spec, inputs, outputs) -> None:
    from shuffledp.experiments import multidim_frameworks as ex

    try:
        df = ex.run_job(spec, inputs["table"][0])
    except ValueError as exc:
        raise UsageError(f"input table: {exc}") from None
    ex.write_table(df, outputs["table"])
    print(df.drop(columns=["standin"]).to_string(index=False))


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments import multidim_frameworks as ex

    if len(inputs["data"]) != len(spec["datasets"]):
        raise UsageError(f"--io: {len(inputs['data'])} data tables for {len(spec['datasets'])} datasets")
    data = dict(zip(spec["datasets"], inputs["data"], strict=True))
    print(ex.report(inputs["runs"], data, spec, outputs, audits=inputs["audits"]).to_string(index=False))


def _figures() -> tuple[Output, ...]:
    out = []
    for k, sub in ((6, "Fig. 6 (CALM views)"), (7, "Fig. 7 (CALM marginals)"), (8, "Fig. 8 (HDG grids)"),
                   (9, "Fig. 9 (HDG range queries)")):
        out += [Output(f"fig{k}_pdf", f"figures/multidim_fig{k}.pdf", final=True),
                Output(f"fig{k}_png", f"figures/multidim_fig{k}.png", final=True,
                       report=Report(f"captions/fig{k}.rst", sub))]
    return tuple(out)


STAGE = Stage(
    name="multidim_frameworks",
    title=TITLE,
    section="multidim_frameworks",
    check=check_config,
    jobs=jobs,
    claims=("report.claims",),
    steps=(
        Step("loan", _loan, spec="Loan", inputs=("source",),
             outputs=(Output("table", "processed/loan.parquet", root="data"),),
             local=True, mem_mb=1000, runtime=10),
        Step("adult", _adult, spec="Adult",
             inputs=("table",),
             outputs=(Output("table", "processed/adult_ordinal.parquet", root="data"),),
             mem_mb=1000, runtime=10),
        # every eps_s inside (5 at paper scale): estimated from docs/multidim_frameworks.md's per-eps run
        Step("run", _run, spec="Run",
             inputs=("table",),
             outputs=(Output("table", "multidim_frameworks/runs/{framework}_{dataset}_{component}.parquet"),),
             wildcards={"framework": "calm|hdg", "dataset": "[A-Za-z0-9]+", "component": "mhm|flame"},
             mem_mb=1500, runtime=60),
        Step("report", _report, spec="Report",
             inputs=("runs", "data", "audits"),
             outputs=(*_figures(),
                      Output("claims", "tables/multidim_frameworks_claims.parquet", final=True),
                      Output("claims_md", "tables/multidim_frameworks_claims.md", final=True,
                             report=Report("captions/claims.rst", "claims")),
                      Output("summary", "tables/multidim_frameworks_summary.parquet", final=True)),
             mem_mb=1000, runtime=10),
    ),
)
