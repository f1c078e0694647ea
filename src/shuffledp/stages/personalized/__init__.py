"""Personalized shuffle privacy bounds (Liu et al., CIKM 2024): Figure 4 (eps_s against n), Table 2
(delta_s against eps_s) and the claims table.

Jobs: one ``points`` job per (bound, mechanism) with every setting, the n grid and the seeds inside
(a setting's work is a fraction of a process's start-up at the default scale), one ``table2``
job with every row of Table 2 (a row is a few closed-form evaluations, far less than a process's
start-up), one ``report``. The computations are in
:mod:`shuffledp.experiments.personalized`.
"""

from __future__ import annotations

from collections.abc import Mapping

from shuffledp.errors import ConfigError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable

PURE_BOUNDS = ["hps", "bgn", "fv", "ccc", "lzx", "hpsvalid"]
APPROX_BOUNDS = ["hps", "fv", "ccc"]
TITLE = "Personalized shuffle bounds (Liu et al., CIKM 2024)"


def check_config(config: Mapping) -> None:
    c = config.get("personalized")
    if c is None:
        return
    from shuffledp.accountants.special.personalized import SETTINGS

    for s in c["settings"]:
        if s not in SETTINGS:
            raise ConfigError(f"config key personalized.settings: unknown setting {s!r}")
    for key, allowed in (("bounds_pure", PURE_BOUNDS), ("bounds_approx", APPROX_BOUNDS)):
        for b in c[key]:
            if b not in allowed:
                raise ConfigError(f"config key personalized.{key}: {b!r} not one of {allowed}")
    if sorted(set(c["n_grid"])) != list(c["n_grid"]):
        raise ConfigError("config key personalized.n_grid: must be strictly increasing")
    if not 0 < c["delta_central"] < 1 or not 0 < c["delta_local_approx"] < 1:
        raise ConfigError("config key personalized.delta_central/delta_local_approx: must lie in (0, 1)")
    if c["table2"]["setting"] not in SETTINGS:
        raise ConfigError("config key personalized.table2.setting: unknown setting")
    names = [r["name"] for r in c["table2"]["rows"]]
    dups = sorted({n for i, n in enumerate(names) if n in names[:i]})
    if dups:  # a row's name is its identity in the table2 job's spec and in Table 2
        raise ConfigError(f"config key personalized.table2.rows: duplicate names {', '.join(map(repr, dups))}")


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage. Seeds: the config's base seed plus the ``seeds`` offsets (the draw of
    local epsilons is seeded by (setting, n, seed))."""
    c = config.get("personalized")
    if not c:
        return []
    base = int(config["seed"])
    out = []
    for mech, bounds, dl in (("laplace", c["bounds_pure"], 0.0), ("gaussian", c["bounds_approx"],
                                                                   float(c["delta_local_approx"]))):
        for b in bounds:  # one process per bound and mechanism, every setting inside
            spec = {"bound": b, "settings": list(c["settings"]), "mechanism": mech,
                    "n_grid": [int(n) for n in c["n_grid"]], "seeds": [base + int(x) for x in c["seeds"]],
                    "delta_central": float(c["delta_central"]), "delta_local": dl}
            if b == "hps":
                spec["calibration"] = c["calibration"]
            out.append(Job("points", {"pbound": b, "pmech": mech}, spec))
    # Fig. 4's Gaussian HPS panels under other calibrations (e.g. the authors' hps-code), as labelled
    # variant points: they feed the claims' variant rows, never the figure or its table
    for cal in c.get("fig4_calibrations", []):
        spec = {"bound": "hps", "settings": list(c["settings"]), "mechanism": "gaussian",
                "n_grid": [int(n) for n in c["n_grid"]], "seeds": [base + int(x) for x in c["seeds"]],
                "delta_central": float(c["delta_central"]), "delta_local": float(c["delta_local_approx"]),
                "calibration": cal, "variant": True}
        out.append(Job("points", {"pbound": f"hps-{cal}", "pmech": "gaussian"}, spec))
    t2 = c["table2"]
    rows = []
    for r in t2["rows"]:
        spec = {"name": r["name"], "bound": r["bound"], "setting": t2["setting"], "n": int(t2["n"]),
                "seed": base + int(t2["seed"]), "delta_local": float(c["delta_local_approx"]),
                "eps_grid": [float(x) for x in t2["eps_central"]]}
        if r["bound"] == "hps":
            spec["method"] = r["method"]
            # a row's calibration defaults to the section's: a default no schema can state
            spec["calibration"] = r.get("calibration", c["calibration"])
        if r["bound"] == "ccc" and "clone_factor" in r:  # optional: no clone factor when absent
            spec["clone_factor"] = float(r["clone_factor"])
        if r.get("mechanism", "gaussian") != "gaussian":  # optional: the Gaussian rows' specs stay as they were
            spec["mechanism"] = r["mechanism"]
        rows.append(spec)
    out.append(Job("table2", {}, {"rows": rows}))
    table = JobTable(out)
    out.append(Job("report", {}, {"delta_central": float(c["delta_central"]),
                                  "delta_local": float(c["delta_local_approx"]), "t2_setting": t2["setting"],
                                  "t2_n": int(t2["n"]), "scale": config["name"]},
                   inputs={"points": table.refs("points", "table"), "rows": table.refs("table2", "table")}))
    return out


def _points(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments import personalized as E
    from shuffledp.io import write_table

    settings = spec["settings"]
    rest = {k: v for k, v in spec.items() if k != "settings"}
    df = pd.concat([E.run_points(dict(rest, setting=s)) for s in settings], ignore_index=True)
    write_table(df, outputs["table"])
    print(df.to_string())


def _table2(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments import personalized as E
    from shuffledp.io import write_table

    rows = spec["rows"]
    # the rows in the config's order, each computed alone (its own draw of local epsilons)
    df = pd.concat([E.run_table2_row(r) for r in rows], ignore_index=True)
    write_table(df, outputs["table"])
    print(df.to_string())


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments import personalized as E

    print(E.report(spec, inputs["points"], inputs["rows"], outputs).to_string())


STAGE = Stage(
    name="personalized",
    title=TITLE,
    section="personalized",
    check=check_config,
    jobs=jobs,
    claims=("report.claims",),
    steps=(
        Step("points", _points, spec="Points",
             outputs=(Output("table", "personalized/points/{pbound}_{pmech}.parquet"),),
             wildcards={"pbound": "[a-z0-9-]+", "pmech": "laplace|gaussian"},
             runtime=10),
        Step("table2", _table2, spec="Table2",
             outputs=(Output("table", "personalized/table2_rows.parquet"),),
             runtime=5),
        Step("report", _report, spec="Report",
             inputs=("points", "rows"), required_inputs=frozenset(("points", "rows")),
             outputs=(
                 Output("fig_table", "tables/personalized_fig4.parquet"),
                 Output("pdf", "figures/personalized_fig4.pdf", final=True),
                 Output("png", "figures/personalized_fig4.png", final=True,
                        report=Report("captions/fig4.rst", "Fig. 4")),
                 Output("t2", "tables/personalized_table2.parquet", final=True),
                 Output("t2_md", "tables/personalized_table2.md", final=True,
                        report=Report("captions/table2.rst", "Table 2")),
                 Output("claims", "tables/personalized_claims.parquet", final=True),
                 Output("claims_md", "tables/personalized_claims.md", final=True,
                        report=Report("captions/claims.rst", "claims")),
             ),
             runtime=5),
    ),
)
