# The one shape of every stage rule (docs/architecture.md): the stage module's
# `jobs(config) -> list[Job]` (shuffledp.experiments.jobs) gives each job's step, wildcards and spec;
# the stage's .smk defines each path pattern once, passes `params: spec=<stage>.spec("<step>")`
# (canonical JSON of the job's spec, so editing one config key reruns only the jobs whose spec
# holds it) and runs `shuffledp <stage> <step> --spec {params.spec:q} ... > {log:q} 2>&1`.
# RESOURCES is the one place of the stage rules' mem_mb and runtime (minutes): the largest
# benchmark (max RSS, wall time) of the paper scale with ~4x headroom on memory and ~4x on time.
from shuffledp.experiments.jobs import JobTable, canonical

RESOURCES = {
    "multidim_prepare": {"mem_mb": 1000, "runtime": 5},
    "multidim_uniform": {"mem_mb": 1000, "runtime": 10},
    "multidim_personal": {"mem_mb": 1000, "runtime": 10},
    "multidim_report": {"mem_mb": 1000, "runtime": 10},
    # every eps inside since issue 14 (4 at paper scale): runtime doubled from 30, an estimate from the
    # per-eps job times in docs/peruser.md, not yet a benchmark of the new layout
    "peruser_job": {"mem_mb": 1500, "runtime": 60},
    "peruser_collect": {"mem_mb": 1000, "runtime": 5},
    "peruser_report": {"mem_mb": 1500, "runtime": 10},
    "accountants_compare_run": {"mem_mb": 2000, "runtime": 30},
    "accountants_compare_report": {"mem_mb": 1000, "runtime": 10},
    "accountants_compare_gain": {"mem_mb": 1000, "runtime": 40},
    "multidim_frameworks_loan": {"mem_mb": 1000, "runtime": 10},
    "multidim_frameworks_adult": {"mem_mb": 1000, "runtime": 10},
    # every eps_s inside (5 at paper scale): estimated from docs/multidim_frameworks.md's per-eps run
    "multidim_frameworks_run": {"mem_mb": 1500, "runtime": 60},
    "multidim_frameworks_report": {"mem_mb": 1000, "runtime": 10},
}
