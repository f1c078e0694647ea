# shuffledp: the reproducible workflow. `snakemake --cores 2` builds rule all from config/config.yaml;
# `snakemake --cores 2 --configfile config/paper.yaml` builds the papers' full scale.
import os
import sys

from snakemake.utils import min_version

min_version("9.0")


# The default config read by the package's loader before Snakemake's: a YAML syntax error, a file
# that is not UTF-8, a folder, a list, an alias "bomb" each stop here with one line naming the file.
try:
    import shuffledp  # noqa: F401
except ImportError:  # not installed: still parse, lint, dry-run
    sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from shuffledp.config import ConfigError as _ConfigError, load_yaml as _load_yaml  # noqa: E402

if os.path.lexists("config/config.yaml"):
    try:
        _load_yaml("config/config.yaml")
    except _ConfigError as _exc:
        sys.stderr.write(f"shuffledp: invalid configuration:\n{_exc}\n")
        sys.exit(2)


configfile: "config/config.yaml"
report: "workflow/report/workflow.rst"  # snakemake --report: the global description (captions: workflow/report/)


include: "workflow/rules/common.smk"
include: "workflow/rules/stages.smk"


rule all:
    default_target: True
    input:
        FINAL_TARGETS,


# every run ends with the list of its datasets, real or stand-in, and their checksums (the same list is
# the report's datasets table)
onsuccess:
    print(datasets_summary(), file=sys.stderr)


onerror:
    print(datasets_summary(), file=sys.stderr)
