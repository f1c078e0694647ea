# shuffledp: the reproducible workflow. `snakemake --cores 2` builds rule all from config/config.yaml;
# `snakemake --cores 2 --configfile config/paper.yaml` builds the papers' full scale.
import sys

from snakemake.utils import min_version

min_version("9.0")


# No `configfile:`: Snakemake's `config` holds only what the user passes (each --configfile, merged by
# Snakemake among themselves as its documentation says, then --config); workflow/rules/common.smk
# reads the defaults, config/config.yaml of the working folder, with the package's loader (a YAML
# syntax error, a file that is not UTF-8, a folder, a list, an alias "bomb": one line naming the file)
# and puts the user's config over them with the README's overlay rule (shuffledp.config.workflow_config).


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
