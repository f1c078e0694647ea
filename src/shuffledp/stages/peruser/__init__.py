"""Per-user histograms in the shuffle model (docs/peruser.md): Figures 1-4 and the claims table.

Jobs: one ``job`` per (method, dataset, clustering, repetition batch) with every eps, eps1 split, c
and repetition inside; one ``collect`` per table (``runs``, ``users``); one ``report``
(figures 1-4, claims table). The computations are in :mod:`shuffledp.experiments.peruser`.
"""

from __future__ import annotations

from collections.abc import Mapping

from shuffledp.errors import ConfigError, UsageError
from shuffledp.experiments.peruser_names import CLUSTERED, METHODS
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable, Ref, audits_input, batch_ranges, check_spellings, num

# the method names of shuffledp.experiments.peruser (not imported here: it loads numpy)
TITLE = "Per-user histograms (our experiments; the paper has none)"
MSNBC = "data/processed/msnbc_sequences.parquet"  # built by the data stage (workflow/rules/data.smk)


def _check_peruser_sources(config: Mapping) -> None:
    sec = config.get("peruser")
    if not sec:
        return
    for i, ds in enumerate(sec["datasets"]):
        if ds["source"] == "synthetic":
            for key in ("d", "clusters", "kind"):
                if key not in ds:
                    raise ConfigError(f"config key peruser.datasets[{i}].{key}: required for source synthetic")
            # views: optional here (each job's spec holds the dataset as configured; the experiment
            # reads its default there), so only a given range is checked
            lo, hi = ds["views"] if "views" in ds else (0, 0)
            if lo > hi:
                raise ConfigError(f"config key peruser.datasets[{i}].views: [{lo}, {hi}] must be [min, max]")


def _check_peruser_clusters(config: Mapping) -> None:
    """k-means needs at most as many clusters as the smallest dataset has users."""
    pu = config.get("peruser")
    if pu:
        smallest = min((d["n"] for d in pu["datasets"]), default=None)
        if smallest is not None and pu["kmeans_k"] > smallest:
            raise ConfigError(f"config key peruser.kmeans_k: {pu['kmeans_k']} clusters exceed the smallest "
                              f"peruser.datasets n ({smallest})")
        if smallest is not None and pu["user_sample"] > smallest:  # no silent cap at n
            raise ConfigError(f"config key peruser.user_sample: {pu['user_sample']} users exceed the smallest "
                              f"peruser.datasets n ({smallest})")


def check_config(config: Mapping) -> None:
    """Semantic checks of the ``peruser`` section (no-op when absent)."""
    sec = config.get("peruser")
    if not sec:
        return
    _check_peruser_sources(config)
    _check_peruser_clusters(config)
    check_spellings(sec["eps"], "peruser.eps")
    check_spellings(sec["eps1_fractions"], "peruser.eps1_fractions")
    for f in sec["eps1_fractions"]:
        if not 0 < f < 1:
            raise ConfigError(f"config key peruser.eps1_fractions: {f} must lie in (0, 1)")
    for m in sec["methods"]:
        if m not in METHODS:
            raise ConfigError(f"config key peruser.methods: unknown method {m!r}")
    names = [d["name"] for d in sec["datasets"]]
    if len(set(names)) != len(names):
        raise ConfigError("config key peruser.datasets: duplicate names")
    if sec["repetitions"] % sec["batch_size"]:
        raise ConfigError("config key peruser.repetitions: must be a multiple of peruser.batch_size")
    fig = sec["figure"]  # each of its keys optional: the report picks one when not given
    if "eps" in fig and fig["eps"] not in sec["eps"]:
        raise ConfigError("config key peruser.figure.eps: must be one of peruser.eps")
    if "c" in fig and fig["c"] not in sec["c"]:
        raise ConfigError("config key peruser.figure.c: must be one of peruser.c")
    if "split" in fig and fig["split"] not in sec["eps1_fractions"]:
        raise ConfigError("config key peruser.figure.split: must be one of peruser.eps1_fractions")


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage. ``job``: one per (method, dataset, clustering, batch) with every eps,
    the eps1 splits, every c and the batch's repetitions inside (grid points and
    repetitions of one protocol go inside its job); ``collect`` (runs, users); ``report``.
    Seeds derive from the config's seed and (dataset, method, eps, split, clustering, c, repetition),
    never from the batch or from which eps values share a job."""
    sec = config.get("peruser")
    if not sec:
        return []
    seed = int(config["seed"])
    out = []
    for b, reps in enumerate(batch_ranges(sec["repetitions"], sec["batch_size"])):
        for ds in sec["datasets"]:
            for m in sec["methods"]:
                if m in CLUSTERED:
                    splits = [num(f) for f in sec["eps1_fractions"]]
                    if sec["theorem4_split"]:
                        splits.append("thm4")
                    combos = [(cl, splits) for cl in sec["clusterings"]]
                elif m in ("oracle", "single"):
                    combos = [("kmeans", ["none"])]
                else:
                    combos = [("none", ["none"])]
                for cl, splits in combos:
                    spec = {"dataset": dict(ds), "method": m, "clustering": cl, "eps": [num(e) for e in sec["eps"]],
                            "splits": splits, "c": [float(c) for c in sec["c"]], "delta": float(sec["delta"]),
                            "kmeans_k": int(sec["kmeans_k"]), "reps": reps, "seed": seed,
                            "user_sample": int(sec["user_sample"])}
                    if cl == "dbscan":
                        spec["dbscan"] = dict(sec["dbscan"])
                    out.append(Job("job", {"dataset": ds["name"], "method": m, "clustering": cl, "batch": str(b)},
                                   spec, inputs={"msnbc": [MSNBC] if ds["source"] == "msnbc" else []}))
    table = JobTable(out)
    for kind in ("runs", "users"):
        out.append(Job("collect", {"kind": kind}, {}, inputs={"tables": table.refs("job", kind)}))
    out.append(Job("report", {}, {"figure": dict(sec["figure"]), "eps": list(sec["eps"]),
                                  "eps1_fractions": list(sec["eps1_fractions"]),
                                  "scale": config["name"]},
                   inputs={"runs": [Ref("collect", "table", {"kind": "runs"})],
                           "users": [Ref("collect", "table", {"kind": "users"})],
                           "audits": audits_input(config)}))
    return out


def _job(spec, inputs, outputs) -> None:
    from shuffledp.experiments import peruser as E
    from shuffledp.io import write_table

    msnbc = inputs["msnbc"]
    if spec["dataset"].get("source") == "msnbc" and len(msnbc) != 1:
        raise UsageError("input msnbc: one msnbc_sequences.parquet is required for an msnbc dataset")
    runs, users = E.run_job(spec, msnbc_path=msnbc[0] if msnbc else None)
    write_table(runs, outputs["runs"])
    write_table(users, outputs["users"])


def _collect(spec, inputs, outputs) -> None:
    from shuffledp.experiments import peruser as E
    from shuffledp.io import write_table

    write_table(E.collect(inputs["tables"]), outputs["table"])


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments import peruser as E

    print(E.report(spec, inputs["runs"][0], inputs["users"][0], outputs, audits=inputs["audits"]).to_string())


def _figures() -> tuple[Output, ...]:
    out = []
    for k in (1, 2, 3, 4):
        out.append(Output(f"fig{k}_pdf", f"figures/peruser_fig{k}.pdf", final=True))
        out.append(Output(f"fig{k}_png", f"figures/peruser_fig{k}.png", final=True,
                          report=Report("captions/figure.rst", f"Fig. {k}")))
    return tuple(out)


STAGE = Stage(
    name="peruser",
    title=TITLE,
    section="peruser",
    check=check_config,
    jobs=jobs,
    claims=("report.claims",),
    steps=(
        # the rule name peruser_job is the SLURM profile's group key (profiles/slurm/config.yaml)
        Step("job", _job, spec="Job",
             inputs=("msnbc",),
             outputs=(Output("runs", "peruser/jobs/{dataset}/{method}_{clustering}_b{batch}.runs.parquet"),
                      Output("users", "peruser/jobs/{dataset}/{method}_{clustering}_b{batch}.users.parquet")),
             wildcards={"dataset": "[A-Za-z0-9_]+?", "method": "[A-Za-z0-9]+", "clustering": "[a-z]+",
                        "batch": "[0-9]+"},
             # every eps inside (4 at paper scale): runtime doubled from 30, an estimate from
             # the per-eps job times in docs/peruser.md, not yet a benchmark of the new layout
             mem_mb=1500, runtime=60,
             threads=1),  # one BLAS/OpenMP thread per job (as OMP_NUM_THREADS=1 before): jobs run side by side
        Step("collect", _collect, spec="Collect",
             inputs=("tables",), required_inputs=frozenset({"tables"}),
             outputs=(Output("table", "tables/peruser_{kind}.parquet"),),
             wildcards={"kind": "runs|users"},
             mem_mb=1000, runtime=5),
        Step("report", _report, spec="Report",
             inputs=("runs", "users", "audits"),
             outputs=(*_figures(),
                      Output("claims_md", "tables/peruser_claims.md", final=True,
                             report=Report("captions/claims.rst", "claims")),
                      Output("claims", "tables/peruser_claims.parquet", final=True)),
             mem_mb=1500, runtime=10),
    ),
)
