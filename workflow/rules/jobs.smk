# The one shape of every stage rule (docs/architecture.md): the stage module's
# `jobs(config) -> list[Job]` (shuffledp.experiments.jobs) gives each job's step, wildcards and spec;
# the stage's .smk defines each path pattern once, passes `params: spec=<stage>.spec("<step>")`
# (canonical JSON of the job's spec, so editing one config key reruns only the jobs whose spec
# holds it) and runs `shuffledp <stage> <step> --spec {params.spec:q} ... > {log:q} 2>&1`.
# RESOURCES is the one place of the stage rules' mem_mb and runtime (minutes): the largest
# benchmark (max RSS, wall time) of the paper scale with ~4x headroom on memory and ~4x on time.
from shuffledp.experiments.jobs import JobTable, canonical

RESOURCES = {
    "accountant_table": {"mem_mb": 1000, "runtime": 10},
    "segmented_prepare": {"mem_mb": 1000, "runtime": 5},
    "segmented_params": {"mem_mb": 1000, "runtime": 5},
    "segmented_run": {"mem_mb": 1500, "runtime": 15},
    "segmented_aggregate": {"mem_mb": 1000, "runtime": 5},
    "segmented_figure": {"mem_mb": 1000, "runtime": 5},
    "segmented_claims": {"mem_mb": 1000, "runtime": 5},
}
