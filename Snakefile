# shuffledp: the reproducible workflow. `snakemake --cores 2` builds rule all from config/config.yaml;
# `snakemake --cores 2 --configfile config/paper.yaml` builds the papers' full scale.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/accountant.smk"
include: "workflow/rules/peruser.smk"
include: "workflow/rules/segmented.smk"
include: "workflow/rules/personalized_bounds.smk"
include: "workflow/rules/multidim.smk"
include: "workflow/rules/multidim_frameworks.smk"


rule all:
    default_target: True
    input:
        FINAL_TARGETS,
