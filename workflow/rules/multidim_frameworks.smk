# Multidimensional seed, Sec. 6.1.2-6.1.3 (Figs 6-9): MHM and FLAME as the frequency component of CALM
# (3-way marginals on BR, MX) and HDG (3-D range queries on Adult, Loan). One job per (framework,
# component, dataset, eps_s) with every repetition inside; jobs and their specs come from the library
# (shuffledp.experiments.multidim_frameworks.jobs); each path pattern is defined once here.
from shuffledp.experiments import multidim_frameworks as MDFX

MDFX.check_config(config)  # semantic checks the schema cannot express, before any job
MDF_JOBS = MDFX.jobs(config, CONFIG_NAME)

if MDF_JOBS:
    MDF_DIR = f"{RESULTS}/multidim_frameworks"
    MDF_RUN = f"{MDF_DIR}/runs/{{framework}}_{{dataset}}_{{component}}_eps{{eps}}.parquet"
    MDF_HDG_DATA = {d: MDFX.data_path("hdg", d, PROC) for d in ("adult", "loan")}
    MDF_REPORT = MDFX.find_job(MDF_JOBS, "report")

    rule multidim_frameworks_loan:
        output:
            MDF_HDG_DATA["loan"],
        log:
            f"{LOGS}/multidim_frameworks/prepare_loan.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/prepare_loan.tsv"
        params:
            spec=lambda wc: MDFX.find_job(MDF_JOBS, "prepare", dataset="loan").spec_json(),
            raw_dir=RAW,
        resources:
            mem_mb=1000,
            runtime=10,
        localrule: True
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks prepare --spec {params.spec:q} --raw-dir {params.raw_dir:q}"
            " --out {output:q} > {log:q} 2>&1"

    rule multidim_frameworks_adult:
        input:
            f"{PROC}/adult.parquet",
        output:
            MDF_HDG_DATA["adult"],
        log:
            f"{LOGS}/multidim_frameworks/prepare_adult.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/prepare_adult.tsv"
        params:
            spec=lambda wc: MDFX.find_job(MDF_JOBS, "prepare", dataset="adult").spec_json(),
        resources:
            mem_mb=1000,
            runtime=10,
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks prepare --spec {params.spec:q} --in {input:q} --out {output:q} > {log:q} 2>&1"

    rule multidim_frameworks_run:
        input:
            lambda wc: MDFX.data_path(wc.framework, wc.dataset, PROC),
        output:
            MDF_RUN,
        log:
            f"{LOGS}/multidim_frameworks/run_{{framework}}_{{dataset}}_{{component}}_eps{{eps}}.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/run_{{framework}}_{{dataset}}_{{component}}_eps{{eps}}.tsv"
        wildcard_constraints:
            framework="calm|hdg",
            component="mhm|flame",
        params:
            spec=lambda wc: MDFX.find_job(
                MDF_JOBS, "run", framework=wc.framework, component=wc.component, dataset=wc.dataset, eps=wc.eps
            ).spec_json(),
        resources:
            mem_mb=1500,
            runtime=30,
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks run --spec {params.spec:q} --in {input:q} --out {output:q} > {log:q} 2>&1"

    MDF_RUNS = [expand(MDF_RUN, **j.wildcards)[0] for j in MDF_JOBS if j.step == "run"]
    MDF_DATASETS = {
        j.wildcards["dataset"]: MDFX.data_path(j.wildcards["framework"], j.wildcards["dataset"], PROC)
        for j in MDF_JOBS
        if j.step == "run"
    }

    rule multidim_frameworks_report:
        input:
            runs=MDF_RUNS,
            data=list(MDF_DATASETS.values()),
        output:
            figs=[f"{RESULTS}/figures/multidim_fig{k}{ext}" for k in (6, 7, 8, 9) for ext in (".pdf", ".png")],
            claims=multiext(f"{RESULTS}/tables/multidim_frameworks_claims", ".parquet", ".md"),
            summary=f"{RESULTS}/tables/multidim_frameworks_summary.parquet",
        log:
            f"{LOGS}/multidim_frameworks/report.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/report.tsv"
        params:
            spec=MDF_REPORT.spec_json(),
            data=" ".join(f"{d}={p}" for d, p in MDF_DATASETS.items()),
            tables=lambda wc, output: os.path.dirname(output.summary),
            figures=lambda wc, output: os.path.dirname(output.figs[0]),
        resources:
            mem_mb=1000,
            runtime=10,
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks report --spec {params.spec:q} --in {input.runs:q} --data {params.data}"
            " --tables-dir {params.tables:q} --figures-dir {params.figures:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(rules.multidim_frameworks_report.output)
