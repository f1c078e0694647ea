"""Empirical privacy audits of the implementations the experiments run (docs/audits.md).

Jobs: one ``run`` per audit (its trials, its accountant's upper bound; the audits are independent
and of very different costs), one ``report`` (the table ``audits.{parquet,md}``, its timings and the
figure). The computations are in :mod:`shuffledp.experiments.audits`; the claims gate that keeps a
violating protocol's claims from counting as evidence is :mod:`shuffledp.claims.audit_gate`.
"""

from __future__ import annotations

from collections.abc import Mapping

from shuffledp.errors import ConfigError
from shuffledp.experiments.audit_names import DEFAULT_SETTINGS, LOOP_AUDITS, NAMES, RAW_AUDITS
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, JobTable, Ref

RAW = "data/raw"  # where the Loan subset is fetched (checksum-verified), as the multidim_frameworks stage does

TITLE = "Privacy audits of the implementations (ours; no paper)"
AUDIT_NAMES = NAMES


def check_config(config: Mapping) -> None:
    c = config.get("audits")
    if c is None:
        return
    unknown = [a for a in c["include"] if a not in AUDIT_NAMES]
    if unknown:
        raise ConfigError(f"config key audits.include: unknown audit(s) {', '.join(map(repr, unknown))} "
                          f"(known: {', '.join(AUDIT_NAMES)})")
    bad = [a for a in c["settings"] if a not in DEFAULT_SETTINGS]
    if bad:
        raise ConfigError(f"config key audits.settings: unknown audit(s) {', '.join(map(repr, bad))}")
    for a, over in c["settings"].items():
        unknown = sorted(set(over) - set(DEFAULT_SETTINGS[a]))
        if unknown:
            raise ConfigError(f"config key audits.settings.{a}: unknown key(s) {', '.join(unknown)} "
                              f"(known: {', '.join(sorted(DEFAULT_SETTINGS[a]))})")


def jobs(config: Mapping) -> list[Job]:
    c = config.get("audits")
    if not c:
        return []
    out = []
    for name in c["include"]:
        loop = name in LOOP_AUDITS
        # the whole setting in the spec: a changed default or override reruns exactly that audit
        setting = {**DEFAULT_SETTINGS.get(name, {}), **c["settings"].get(name, {})}
        trials = c["raw_trials"] if name in RAW_AUDITS else c["loop_trials"] if loop else c["trials"]
        spec = {"audit": name, "trials": int(trials),
                "alpha": float(c["alpha"]), "seed": int(config["seed"]), "settings": setting}
        inputs = {}
        if name in RAW_AUDITS:  # code as the experiments do: their domain and public coding
            mf = config.get("multidim_frameworks") or {}
            if "domain" not in c["settings"].get(name, {}) and (mf.get("hdg") or {}).get("domain"):
                setting["domain"] = int(mf["hdg"]["domain"])
            coding = (config["datasets"]["adult"].get("coding") if "_adult_" in name
                      else (mf.get("loan") or {}).get("coding"))
            spec["coding"] = dict(coding or {})
            spec["delta_test"] = bool(c.get("raw_delta", True))
        if name.startswith("raw_") and "_adult_" in name:  # the data stage's verified raw Adult files
            inputs = {"raw": [Ref("download_adult", "data", stage="data"), Ref("download_adult", "test", stage="data")]}
        elif name.startswith("raw_"):  # the Loan subset, fetched and verified by its SHA-256 in the job
            spec.update(mirror=config["data_mirror"] or "", raw_dir=RAW)
        out.append(Job("run", {"audit": name}, spec, inputs=inputs))
    table = JobTable(out)
    out.append(Job("report", {}, {"scale": config["name"], "alpha": float(c["alpha"])},
                   inputs={"rows": table.refs("run", "row"), "timings": table.refs("run", "timing")}))
    return out


def _run(spec, inputs, outputs) -> None:
    import pandas as pd

    from shuffledp.experiments import audits as A
    from shuffledp.io import write_table

    raw_paths = None
    if spec["audit"] in RAW_AUDITS:
        if "_adult_" in spec["audit"]:
            raw_paths = {"data": inputs["raw"][0], "test": inputs["raw"][1]}
        else:
            from pathlib import Path

            from shuffledp.datasets import loan
            from shuffledp.datasets.download import mirror_location

            loan.fetch_subset(spec["raw_dir"], mirror_location(spec["mirror"]))
            raw_paths = {"loan": str(Path(spec["raw_dir"]) / loan.FILENAME)}
    row, seconds = A.audit_row(spec["audit"], int(spec["trials"]), float(spec["alpha"]), int(spec["seed"]),
                               spec["settings"], raw_paths=raw_paths, coding=spec.get("coding"),
                               delta_test=bool(spec.get("delta_test")))
    write_table(pd.DataFrame([row]), outputs["row"])
    write_table(pd.DataFrame([{"audit": spec["audit"], "trials": row["trials"], "seconds": seconds}]),
                outputs["timing"])
    print(pd.Series(row).to_string())
    print(f"seconds: {seconds:.2f}")


def _report(spec, inputs, outputs) -> None:
    from shuffledp.experiments import audits as A

    print(A.report(inputs["rows"], inputs["timings"], spec, outputs).to_string())


STAGE = Stage(
    name="audits",
    title=TITLE,
    section="audits",
    check=check_config,
    jobs=jobs,
    steps=(
        Step("run", _run, spec="Run",
             inputs=("raw",),
             outputs=(Output("row", "audits/{audit}.parquet"),
                      Output("timing", "audits/timings/{audit}_timings.parquet")),
             wildcards={"audit": "[a-z0-9_]+"},
             mem_mb=3000, runtime=30),
        Step("report", _report, spec="Report",
             inputs=("rows", "timings"), required_inputs=frozenset(("rows", "timings")),
             outputs=(
                 Output("table", "tables/audits.parquet", final=True),
                 Output("md", "tables/audits.md", final=True, report=Report("captions/table.rst", "audits")),
                 Output("timings", "tables/audits_timings.parquet", final=True),
                 Output("pdf", "figures/audits.pdf", final=True),
                 Output("png", "figures/audits.png", final=True, report=Report("captions/figure.rst", "audits")),
             ),
             runtime=5),
    ),
)
