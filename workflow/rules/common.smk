# Shared definitions: config validation (before any job runs), paths, seeds and the list of final targets.
# Every stage file appends its final targets to FINAL_TARGETS; `rule all` in the Snakefile collects them.
import os
import sys

try:
    import shuffledp  # noqa: F401
except ImportError:  # not installed (`pip install -e .` is needed to run jobs): still parse, lint, dry-run
    sys.path.insert(0, os.path.join(workflow.basedir, "src"))

from shuffledp.config import ConfigError, validate_config  # noqa: E402

# The one validation (schema with unknown keys refused, finite numbers, every cross-key rule);
# `shuffledp config validate` and the tests call the same function.
try:
    validate_config(config, os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
except ConfigError as exc:
    sys.stderr.write(f"shuffledp: invalid configuration:\n{exc}\n")
    sys.exit(1)

FINAL_TARGETS = []

RESULTS = config.get("results_dir", "results")
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
CONFIG_NAME = config.get("name", "default")


def env_file():
    return "../../envs/shuffledp.yaml"
