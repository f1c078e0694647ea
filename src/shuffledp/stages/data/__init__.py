"""Data: one download and one preprocess step per dataset, synthetic set-valued tables, the datasets
table and the MSNBC figure.

``source: real``: the download job runs (a local job: cluster nodes often have no internet) and the
preprocess job reads its verified file; ``source: auto``: the preprocess job tries the raw folder,
the mirror and the publisher itself and falls back to the labelled stand-in only when no source
could be reached at all (a damaged file -- wrong checksum, unreadable, truncated -- is always an
error); ``source: standin``: the stand-in. HDG's ordinal tables (Figs 6-9) are built by the
multidim_frameworks stage; the datasets table lists the ones the config builds.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from shuffledp.errors import ConfigError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, Ref

RAW = "data/raw"
MSNBC_RAW = f"{RAW}/msnbc/msnbc990928.seq.gz"
ADULT_RAW = f"{RAW}/adult"
MARKERS = "data/.sources"  # one source marker per real dataset (shuffledp.datasets.availability)


def marker(name: str) -> str:
    """The source marker of a real dataset: an input of its preprocess job under ``source: auto``."""
    return f"{MARKERS}/{name}"


def real_data(config: Mapping) -> dict:
    """The real datasets this config reads with ``source: auto`` (a stand-in is possible), by name:
    :class:`~shuffledp.datasets.availability.RealData` (the file names are the mirror's layout)."""
    from shuffledp.datasets.availability import RealData

    ds = config["datasets"]
    out = {}
    if ds["msnbc"]["source"] == "auto":
        out["msnbc"] = RealData("msnbc", ("msnbc/msnbc990928.seq.gz",), "data/processed/msnbc_sets.parquet")
    if ds["adult"]["source"] == "auto":
        out["adult"] = RealData("adult", ("adult/adult.data", "adult/adult.test"), "data/processed/adult.parquet")
    hdg = (config.get("multidim_frameworks") or {}).get("hdg")
    if hdg and "loan" in hdg["datasets"] and config["multidim_frameworks"]["loan"]["source"] == "auto":
        out["loan"] = RealData("loan", ("lending_club.parquet",), "data/processed/loan.parquet")
    return out


def refresh_sources(config: Mapping) -> list[str]:
    """Before the workflow runs: each real dataset's source marker exists, and is renewed when its
    processed table is a stand-in while the real files are now on this machine (the raw folder or
    a folder mirror), so that the stand-in and everything built from it are rebuilt. Returns the
    names of the stale stand-ins. A folder mirror without a file is an error naming both."""
    from shuffledp.datasets.availability import refresh_marker
    from shuffledp.datasets.download import mirror_location

    mirror = mirror_location(config["data_mirror"] or None)
    return [name for name, data in real_data(config).items() if refresh_marker(data, marker(name), RAW, mirror)]


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _check_synthetic_names(config: Mapping) -> None:
    synth = config["datasets"]["synthetic"]
    names = [s["name"] for s in synth]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"config key datasets.synthetic: duplicate names {dupes}")
    for i, s in enumerate(synth):
        if s["set_size"] > s["domain"]:
            raise ConfigError(
                f"config key datasets.synthetic[{i}].set_size: {s['set_size']} exceeds domain {s['domain']} "
                f"(dataset {s['name']})"
            )


def _check_ipums_sources(config: Mapping) -> None:
    """``source: file`` needs an existing codebook and data file; ``source: ipums`` needs a sample."""
    for key, spec in config["datasets"]["ipums"].items():
        where = f"datasets.ipums.{key}"
        if "attributes" not in spec:
            raise ConfigError(f"config key {where}.attributes: required (attribute name -> domain size)")
        if spec["source"] == "file":
            for k in ("ddi", "data"):
                if not spec.get(k):
                    raise ConfigError(f"config key {where}.{k}: required for source file")
                if not Path(spec[k]).is_file():
                    raise ConfigError(f"config key {where}.{k}: no such file: {spec[k]}")
        if spec["source"] == "ipums" and not spec["sample"]:
            raise ConfigError(f"config key {where}.sample: required for source ipums (e.g. br2010a)")


def check_config(config: Mapping) -> None:
    """The datasets section's rules the schema cannot express."""
    _check_synthetic_names(config)
    _check_ipums_sources(config)


def jobs(config: Mapping) -> list[Job]:
    """Every job of the stage: downloads (run only when a preprocess job reads their files),
    preprocessing, synthetic tables, the datasets table and the MSNBC figure."""
    from shuffledp.datasets.prepare import resolve_ipums_source

    ds = config["datasets"]
    mirror = config["data_mirror"] or ""  # "" = none (SHUFFLEDP_DATA_MIRROR overrides it)
    seed = int(config["seed"])
    source = {name: ds[name]["source"] for name in ("msnbc", "adult")}
    out = [
        Job("download_msnbc", {}, {"mirror": mirror}),
        Job("preprocess_msnbc", {}, {"source": source["msnbc"], "raw": MSNBC_RAW, "mirror": mirror, "seed": seed,
                                     "standin_users": int(ds["msnbc"]["standin_users"])},
            inputs={"raw": [Ref("download_msnbc", "raw")] if source["msnbc"] == "real" else [],
                    "source": [marker("msnbc")] if source["msnbc"] == "auto" else []}),
        Job("download_adult", {}, {"mirror": mirror}),
        Job("preprocess_adult", {}, {"source": source["adult"], "raw_dir": ADULT_RAW, "mirror": mirror, "seed": seed,
                                     "coding": dict(ds["adult"].get("coding") or {})},
            inputs={"raw": [Ref("download_adult", "data"), Ref("download_adult", "test")]
                    if source["adult"] == "real" else [],
                    "source": [marker("adult")] if source["adult"] == "auto" else []}),
    ]
    tables = [Ref("preprocess_msnbc", "sets"), Ref("preprocess_adult", "table")]
    for s in ds["synthetic"]:
        spec = {k: s[k] for k in ("name", "domain", "set_size", "users", "distribution")}
        spec.update(zipf_exponent=float(s["zipf_exponent"]), seed=seed)
        out.append(Job("synthetic", {"name": s["name"]}, spec))
        tables.append(Ref("synthetic", "table", {"name": s["name"]}))
    for key, extract in ds["ipums"].items():
        spec = dict(extract)
        if isinstance(extract.get("attributes"), Mapping):  # their order is the table's column order:
            spec["attributes"] = [[k, v] for k, v in extract["attributes"].items()]  # a list keeps it in JSON
        out.append(Job("download_ipums", {"key": key}, spec))
        via_api = resolve_ipums_source(extract["source"], spec) == "ipums"
        out.append(Job("preprocess_ipums", {"key": key}, {"key": key, "extract": spec, "raw_dir": RAW, "seed": seed},
                       inputs={"raw": [Ref("download_ipums", "raw", {"key": key})] if via_api else []}))
        tables.append(Ref("preprocess_ipums", "table", {"key": key}))
    # the ordinal tables of multidim_frameworks.hdg (an optional part of an optional section)
    hdg = (config.get("multidim_frameworks") or {}).get("hdg")
    hdg = hdg["datasets"] if hdg else []
    tables += [Ref(name, "table", stage="multidim_frameworks") for name in ("adult", "loan") if name in hdg]
    out.append(Job("datasets_table", {}, {}, inputs={"tables": tables}))
    out.append(Job("msnbc_category_shares", {}, {}, inputs={
        "sequences": [Ref("preprocess_msnbc", "sequences")], "sets": [Ref("preprocess_msnbc", "sets")],
        "categories": [Ref("preprocess_msnbc", "categories")]}))
    return out


def _mirror(spec: Mapping) -> str | None:
    from shuffledp.datasets.download import mirror_location

    return mirror_location(spec["mirror"] or None)


def _download_msnbc(spec, inputs, outputs) -> None:
    from pathlib import Path

    from shuffledp.datasets import msnbc

    msnbc.download(Path(outputs["raw"]), _mirror(spec), log=_log)


def _download_adult(spec, inputs, outputs) -> None:
    from pathlib import Path

    from shuffledp.datasets import adult

    adult.download(str(Path(outputs["data"]).parent), _mirror(spec), log=_log)


def _attributes(spec: Mapping) -> dict:
    """The extract's attributes (name -> domain size, in the config's order; the spec holds pairs,
    typed by ``specs.DownloadIpums``)."""
    return {str(k): v for k, v in spec["attributes"]}


def _download_ipums(spec, inputs, outputs) -> None:
    from shuffledp.datasets import ipums

    ipums.find_or_download(spec.get("sample", ""), list(_attributes(spec)), outputs["raw"], log=_log)


def _preprocess_msnbc(spec, inputs, outputs) -> None:
    from pathlib import Path

    from shuffledp.datasets import prepare

    folder = Path(outputs["sets"]).parent
    _check_names(STAGE.step("preprocess_msnbc"), outputs, folder)
    written = prepare.prepare_msnbc(spec["source"], spec["raw"], str(folder), _mirror(spec), spec["seed"],
                                    spec["standin_users"], log=_log)
    _check_written(written, outputs)


def _check_names(step: Step, outputs: Mapping[str, str], folder: Path) -> None:
    """The preprocessing names its files itself (``msnbc_sets.parquet``, ...) in one folder: an io
    file naming others is refused before anything is read or written."""
    from shuffledp.errors import UsageError

    for o in step.outputs:
        want = folder / Path(o.path).name
        if Path(outputs[o.name]) != want:
            raise UsageError(f"--io: output {o.name}: {outputs[o.name]} must be {want} (the preprocessing names "
                             f"its files: {', '.join(Path(x.path).name for x in step.outputs)} in one folder)")


def _check_written(written, outputs: Mapping[str, str]) -> None:
    """The preprocessing writes its files by name: they must be the declared outputs."""
    from pathlib import Path

    missing = [p for p in outputs.values() if not Path(p).is_file()]
    if missing:
        raise RuntimeError(f"preprocessing did not write {missing} (wrote {written})")


def _preprocess_adult(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare

    # the coding was checked with the spec (specs.PreprocessAdult: typed, and adult_bins accepts it)
    prepare.prepare_adult(spec["source"], spec["raw_dir"], outputs["table"], _mirror(spec), spec["seed"], log=_log,
                          coding=spec.get("coding") or {})


def _preprocess_ipums(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare

    extract = {**spec["extract"], "attributes": _attributes(spec["extract"])}
    prepare.prepare_ipums(spec["key"], extract, spec["raw_dir"], outputs["table"], spec["seed"], log=_log)


def _synthetic(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare

    prepare.prepare_synthetic(spec["name"], int(spec["domain"]), int(spec["set_size"]), int(spec["users"]),
                              spec["distribution"], spec["seed"], outputs["table"], spec["zipf_exponent"], log=_log)


def _datasets_table(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare
    from shuffledp.datasets.provenance import merge_provenance
    from shuffledp.io import markdown_table, read_provenance, write_table, write_text

    paths = inputs["tables"]
    df = prepare.summary_table(paths)
    meta = merge_provenance([read_provenance(p) for p in paths])
    write_table(df, outputs["parquet"], meta)
    caption = "Datasets used by the workflow (one row per processed table)."
    if meta["standin_note"]:
        caption += f" Includes {meta['standin_note']}: rows with standin = True are generated stand-ins."
    write_text(outputs["md"], markdown_table(df, caption))


def _msnbc_figure(spec, inputs, outputs) -> None:
    import os

    from shuffledp.plotting.datasets import msnbc_category_shares

    msnbc_category_shares(inputs["sequences"][0], inputs["sets"][0], inputs["categories"][0],
                          os.path.splitext(outputs["pdf"])[0])


STAGE = Stage(
    name="data",
    title="Datasets",
    check=check_config,
    jobs=jobs,
    steps=(
        Step("download_msnbc", _download_msnbc, spec="Download", local=True,
             outputs=(Output("raw", "raw/msnbc/msnbc990928.seq.gz", root="data"),)),
        Step("preprocess_msnbc", _preprocess_msnbc, spec="PreprocessMsnbc", local=True, inputs=("raw", "source"),
             outputs=(Output("sequences", "processed/msnbc_sequences.parquet", root="data"),
                      Output("sets", "processed/msnbc_sets.parquet", root="data"),
                      Output("categories", "processed/msnbc_categories.parquet", root="data")),
             mem_mb=3000, runtime=10),
        Step("download_adult", _download_adult, spec="Download", local=True,
             outputs=(Output("data", "raw/adult/adult.data", root="data"),
                      Output("test", "raw/adult/adult.test", root="data"))),
        Step("preprocess_adult", _preprocess_adult, spec="PreprocessAdult", local=True, inputs=("raw", "source"),
             outputs=(Output("table", "processed/adult.parquet", root="data"),), runtime=10),
        Step("synthetic", _synthetic, spec="Synthetic", wildcards={"name": "[A-Za-z0-9_]+"},
             outputs=(Output("table", "processed/synthetic_{name}.parquet", root="data"),),
             mem_mb=2000, runtime=10,
             priority=5),  # heads the segmented chain (prepare, run, aggregate, figures): started early
        Step("download_ipums", _download_ipums, spec="DownloadIpums", local=True, wildcards={"key": "[A-Za-z0-9_]+"},
             outputs=(Output("raw", "raw/ipums_{key}", root="data", directory=True),)),
        Step("preprocess_ipums", _preprocess_ipums, spec="PreprocessIpums", inputs=("raw",),
             wildcards={"key": "[A-Za-z0-9_]+"},
             outputs=(Output("table", "processed/ipums_{key}.parquet", root="data"),),
             mem_mb=2000, runtime=20),
        Step("datasets_table", _datasets_table, spec="Nothing", inputs=("tables",), summary_input="tables",
             required_inputs=frozenset({"tables"}),
             outputs=(Output("parquet", "tables/datasets.parquet", final=True),
                      Output("md", "tables/datasets.md", final=True,
                             report=Report("captions/datasets_table.rst", "datasets"))),
             runtime=5),
        Step("msnbc_category_shares", _msnbc_figure, spec="Nothing", inputs=("sequences", "sets", "categories"),
             outputs=(Output("pdf", "figures/msnbc_category_shares.pdf", final=True),
                      Output("png", "figures/msnbc_category_shares.png", final=True,
                             report=Report("captions/msnbc_category_shares.rst", "MSNBC"))),
             runtime=5),
    ),
)
