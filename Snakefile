# shuffledp: the reproducible workflow. `snakemake --cores 2` builds rule all from config/config.yaml;
# `snakemake --cores 2 --configfile config/paper.yaml` builds the papers' full scale.
import os
import sys

import yaml
from snakemake.utils import min_version

min_version("9.0")


# A YAML syntax error in the default config names its file and line (snakemake's loader would not);
# for a --configfile, `shuffledp config validate FILE` does the same.
if os.path.exists("config/config.yaml"):
    try:
        yaml.safe_load(open("config/config.yaml", encoding="utf-8"))
    except yaml.YAMLError as _exc:
        _mark = getattr(_exc, "problem_mark", None)
        sys.exit(f"config/config.yaml:{_mark.line + 1 if _mark else '?'}: YAML syntax error: "
                 f"{getattr(_exc, 'problem', None) or _exc}")


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
