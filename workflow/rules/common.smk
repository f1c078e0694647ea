# Shared definitions: config validation (before any job runs), paths, seeds and the list of final targets.
# Every stage file appends its final targets to FINAL_TARGETS; `rule all` in the Snakefile collects them.
import os
import sys

from snakemake.utils import validate

try:
    import shuffledp  # noqa: F401
except ImportError:  # not installed (`pip install -e .` is needed to run jobs): still parse, lint, dry-run
    sys.path.insert(0, os.path.join(workflow.basedir, "src"))

validate(config, schema="../schemas/config.schema.yaml")

from shuffledp.config import check_config  # noqa: E402  (semantic checks the JSON schema cannot express)

check_config(config)

FINAL_TARGETS = []

RESULTS = config.get("results_dir", "results")
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
CONFIG_NAME = config.get("name", "default")


def env_file():
    return "../../envs/shuffledp.yaml"


# ---- data stage -------------------------------------------------------------------------------
import json

from shuffledp.datasets.prepare import resolve_ipums_source

DATA = config.get("data_dir", "data")
RAW = f"{DATA}/raw"
PROC = f"{DATA}/processed"
DS = config["datasets"]
SYNTH = {s["name"]: s for s in DS.get("synthetic", []) or []}
IPUMS = DS.get("ipums", {}) or {}


def mirror_arg():
    """The offline mirror as a CLI flag (the CLI lets SHUFFLEDP_DATA_MIRROR override it)."""
    return f"--mirror {config['data_mirror']}" if config.get("data_mirror") else ""


def ds_source(name):
    return DS.get(name, {}).get("source", "auto")


def ipums_spec(key):
    spec = dict(IPUMS[key])
    spec.setdefault("sample", "")
    return spec


def ipums_download_input(wc):
    """The API download only when the extract's source resolves to `ipums`."""
    spec = IPUMS[wc.key]
    return rules.download_ipums.output if resolve_ipums_source(spec["source"], spec) == "ipums" else []
