# Shared definitions: config validation (before any job runs), paths, seeds and the list of final targets.
# Every stage file appends its final targets to FINAL_TARGETS; `rule all` in the Snakefile collects them.
import os

from snakemake.utils import validate

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
