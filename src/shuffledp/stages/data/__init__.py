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

from shuffledp.errors import ConfigError, UsageError
from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.checks import is_int, is_name, is_nonneg_int, is_positive_int, require
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
    """The extract's attributes (name -> domain size, in the config's order; the spec holds pairs)."""
    from shuffledp.errors import UsageError

    attrs = spec.get("attributes")
    if isinstance(attrs, list) and all(isinstance(a, list) and len(a) == 2 for a in attrs):
        attrs = {str(k): v for k, v in attrs}
    if not isinstance(attrs, dict) or not attrs or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 2 for v in attrs.values()):
        raise UsageError("--spec: \"attributes\" must map attribute names to domain sizes >= 2")
    return attrs


def _download_ipums(spec, inputs, outputs) -> None:
    from shuffledp.datasets import ipums

    ipums.find_or_download(spec.get("sample", ""), list(_attributes(spec)), outputs["raw"], log=_log)


def _source_and_seed(spec: Mapping) -> None:
    require(spec, "source", lambda s: s in ("auto", "real", "standin"), "must be auto, real or standin")
    require(spec, "seed", is_nonneg_int, "must be an integer >= 0")


def _preprocess_msnbc(spec, inputs, outputs) -> None:
    from pathlib import Path

    from shuffledp.datasets import prepare

    _source_and_seed(spec)
    require(spec, "standin_users", lambda u: is_int(u) and u >= 2, "must be an integer >= 2")

    folder = Path(outputs["sets"]).parent
    written = prepare.prepare_msnbc(spec["source"], spec["raw"], str(folder), _mirror(spec), spec["seed"],
                                    spec["standin_users"], log=_log)
    _check_written(written, outputs)


def _check_written(written, outputs: Mapping[str, str]) -> None:
    """The preprocessing writes its files by name: they must be the declared outputs."""
    from pathlib import Path

    missing = [p for p in outputs.values() if not Path(p).is_file()]
    if missing:
        raise RuntimeError(f"preprocessing did not write {missing} (wrote {written})")


def _preprocess_adult(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare
    from shuffledp.datasets.coding import adult_bins

    _source_and_seed(spec)
    if "coding" in spec:
        require(spec, "coding", lambda c: isinstance(c, dict), "must be an object (attribute -> public bins)")
    coding = spec.get("coding") or {}
    try:
        adult_bins(coding)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"--spec: coding: {exc}") from None
    prepare.prepare_adult(spec["source"], spec["raw_dir"], outputs["table"], _mirror(spec), spec["seed"], log=_log,
                          coding=coding)


def _preprocess_ipums(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare

    require(spec, "extract", lambda e: isinstance(e, dict) and {"source", "records"} <= set(e),
            "must be an object with the keys source, records and attributes")
    require(spec["extract"], "records", is_positive_int, "must be a positive integer")
    require(spec, "seed", is_nonneg_int, "must be an integer >= 0")

    extract = {**spec["extract"], "attributes": _attributes(spec["extract"])}
    prepare.prepare_ipums(spec["key"], extract, spec["raw_dir"], outputs["table"], spec["seed"], log=_log)


def _synthetic(spec, inputs, outputs) -> None:
    from shuffledp.datasets import prepare

    require(spec, "name", is_name, "must be letters, digits and underscores")
    require(spec, "domain", lambda d: is_int(d) and d >= 2, "must be an integer >= 2")
    require(spec, "set_size", lambda s: is_positive_int(s) and s <= spec["domain"], "must lie in [1, domain]")
    require(spec, "users", is_positive_int, "must be a positive integer")
    require(spec, "distribution", lambda d: d in ("uniform", "zipf"), "must be uniform or zipf")
    require(spec, "zipf_exponent", lambda z: z > 0, "must be > 0")
    require(spec, "seed", is_nonneg_int, "must be an integer >= 0")

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


_MIRROR = frozenset({"mirror"})

STAGE = Stage(
    name="data",
    title="Datasets",
    check=check_config,
    jobs=jobs,
    steps=(
        Step("download_msnbc", _download_msnbc, local=True, spec_keys=_MIRROR,
             outputs=(Output("raw", "raw/msnbc/msnbc990928.seq.gz", root="data"),)),
        Step("preprocess_msnbc", _preprocess_msnbc, local=True, inputs=("raw", "source"),
             spec_keys=frozenset({"source", "raw", "mirror", "seed", "standin_users"}),
             outputs=(Output("sequences", "processed/msnbc_sequences.parquet", root="data"),
                      Output("sets", "processed/msnbc_sets.parquet", root="data"),
                      Output("categories", "processed/msnbc_categories.parquet", root="data")),
             mem_mb=3000, runtime=10),
        Step("download_adult", _download_adult, local=True, spec_keys=_MIRROR,
             outputs=(Output("data", "raw/adult/adult.data", root="data"),
                      Output("test", "raw/adult/adult.test", root="data"))),
        Step("preprocess_adult", _preprocess_adult, local=True, inputs=("raw", "source"),
             spec_keys=frozenset({"source", "raw_dir", "mirror", "seed"}), optional_keys=frozenset({"coding"}),
             outputs=(Output("table", "processed/adult.parquet", root="data"),), runtime=10),
        Step("synthetic", _synthetic, wildcards={"name": "[A-Za-z0-9_]+"},
             spec_keys=frozenset({"name", "domain", "set_size", "users", "distribution", "zipf_exponent", "seed"}),
             outputs=(Output("table", "processed/synthetic_{name}.parquet", root="data"),),
             mem_mb=2000, runtime=10),
        Step("download_ipums", _download_ipums, local=True, wildcards={"key": "[A-Za-z0-9_]+"},
             spec_keys=frozenset({"sample", "source", "records"}),
             optional_keys=frozenset({"ddi", "data", "attributes"}),
             outputs=(Output("raw", "raw/ipums_{key}", root="data", directory=True),)),
        Step("preprocess_ipums", _preprocess_ipums, inputs=("raw",), wildcards={"key": "[A-Za-z0-9_]+"},
             spec_keys=frozenset({"key", "extract", "raw_dir", "seed"}),
             outputs=(Output("table", "processed/ipums_{key}.parquet", root="data"),),
             mem_mb=2000, runtime=20),
        Step("datasets_table", _datasets_table, inputs=("tables",),
             outputs=(Output("parquet", "tables/datasets.parquet", final=True),
                      Output("md", "tables/datasets.md", final=True,
                             report=Report("captions/datasets_table.rst", "datasets"))),
             runtime=5),
        Step("msnbc_category_shares", _msnbc_figure, inputs=("sequences", "sets", "categories"),
             outputs=(Output("pdf", "figures/msnbc_category_shares.pdf", final=True),
                      Output("png", "figures/msnbc_category_shares.png", final=True,
                             report=Report("captions/msnbc_category_shares.rst", "MSNBC"))),
             runtime=5),
    ),
)
