# Every shuffle accountant on one grid (issue 17; docs/accountants.md): one job per (mechanism, eps0),
# then the table (Parquet, Markdown) and the figure (PDF, PNG).
import json

from shuffledp.experiments.accountants_compare import check_config as ac_check_config
from shuffledp.experiments.accountants_compare import jobs as ac_jobs

ac_check_config(config)
AC_JOBS = ac_jobs(config)

if AC_JOBS:
    AC_SPEC = {(j["wildcards"]["mech"], j["wildcards"]["eps0"]): json.dumps(j["spec"], sort_keys=True)
               for j in AC_JOBS}
    AC_DIR = f"{RESULTS}/accountants_compare/jobs"

    rule accountants_compare_job:
        output:
            f"{AC_DIR}/{{mech}}_e{{eps0}}.json",
        log:
            f"{LOGS}/accountants_compare/{{mech}}_e{{eps0}}.log",
        benchmark:
            f"{BENCH}/accountants_compare/{{mech}}_e{{eps0}}.tsv"
        wildcard_constraints:
            mech="general|krr[0-9]+",
            eps0="[0-9.e+-]+",
        params:
            spec=lambda wc: AC_SPEC[(wc.mech, wc.eps0)],
        threads: 1
        resources:
            mem_mb=2000,
            runtime=30,
        conda:
            env_file()
        shell:
            "OMP_NUM_THREADS={threads} shuffledp accountants-compare run --spec {params.spec:q}"
            " --out {output:q} > {log:q} 2>&1"

    rule accountants_compare_report:
        input:
            [f"{AC_DIR}/{j['wildcards']['mech']}_e{j['wildcards']['eps0']}.json" for j in AC_JOBS],
        output:
            table=f"{RESULTS}/tables/accountants_compare.parquet",
            md=f"{RESULTS}/tables/accountants_compare.md",
            pdf=f"{RESULTS}/figures/accountants_compare.pdf",
            png=f"{RESULTS}/figures/accountants_compare.png",
        log:
            f"{LOGS}/accountants_compare/report.log",
        benchmark:
            f"{BENCH}/accountants_compare/report.tsv"
        params:
            scale=CONFIG_NAME,
        resources:
            mem_mb=2000,
            runtime=10,
        conda:
            env_file()
        shell:
            "shuffledp accountants-compare report --table {output.table:q} --md {output.md:q}"
            " --pdf {output.pdf:q} --png {output.png:q} --scale {params.scale:q} {input:q}"
            " > {log:q} 2>&1"

    FINAL_TARGETS.extend(
        [
            f"{RESULTS}/tables/accountants_compare.parquet",
            f"{RESULTS}/tables/accountants_compare.md",
            f"{RESULTS}/figures/accountants_compare.pdf",
            f"{RESULTS}/figures/accountants_compare.png",
        ]
    )
