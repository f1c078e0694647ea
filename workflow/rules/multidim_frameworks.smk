# Multidimensional seed, Sec. 6.1.2-6.1.3 (Figs 6-9): MHM and FLAME as the frequency component of CALM
# (3-way marginals on BR, MX) and HDG (3-D range queries on Adult, Loan). Jobs and their specs:
# shuffledp.experiments.multidim_frameworks.jobs -- one per (framework, component, dataset) with
# every eps_s and repetition inside, and one report. The two `prepare` rules build HDG's ordinal tables
# (Loan, Adult's ordinal attributes): data-stage tables by role (data.smk defines their paths and
# lists them in the datasets table), in the stage's shape because their specs come from its jobs.
from shuffledp.experiments import multidim_frameworks as MDFX

MDFX.check_config(config)  # semantic checks the schema cannot express, before any job

if config.get("multidim_frameworks"):
    MDF = JobTable(MDFX.jobs(config))
    MDF_RUN = f"{RESULTS}/multidim_frameworks/runs/{{framework}}_{{dataset}}_{{component}}.parquet"
    MDF_RUN_ID = "{framework}_{dataset}_{component}"
    # the processed table each run reads (CALM: an IPUMS extract; HDG: an ordinal table)
    MDF_DATA = {
        **{ds: f"{PROC}/ipums_{ds}.parquet" for ds in config["multidim_frameworks"].get("calm", {}).get("datasets", [])},
        "adult": ADULT_ORDINAL_TABLE,
        "loan": LOAN_TABLE,
    }
    MDF_DATASETS = sorted({j.wildcards["dataset"] for j in MDF.jobs if j.step == "run"})

    wildcard_constraints:
        framework="calm|hdg",
        component="mhm|flame",

    rule multidim_frameworks_loan:
        output:
            LOAN_TABLE,
        log:
            f"{LOGS}/multidim_frameworks/prepare_loan.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/prepare_loan.tsv"
        params:
            spec=lambda wc: canonical(MDF.job("prepare", {"dataset": "loan"}).spec),
            raw_dir=RAW,
        resources:
            **RESOURCES["multidim_frameworks_loan"],
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
            ADULT_ORDINAL_TABLE,
        log:
            f"{LOGS}/multidim_frameworks/prepare_adult.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/prepare_adult.tsv"
        params:
            spec=lambda wc: canonical(MDF.job("prepare", {"dataset": "adult"}).spec),
        resources:
            **RESOURCES["multidim_frameworks_adult"],
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks prepare --spec {params.spec:q} --in {input:q} --out {output:q}"
            " > {log:q} 2>&1"

    rule multidim_frameworks_run:
        input:
            lambda wc: MDF_DATA[wc.dataset],
        output:
            MDF_RUN,
        log:
            f"{LOGS}/multidim_frameworks/run_{MDF_RUN_ID}.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/run_{MDF_RUN_ID}.tsv"
        params:
            spec=MDF.spec("run"),
        resources:
            **RESOURCES["multidim_frameworks_run"],
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks run --spec {params.spec:q} --in {input:q} --out {output:q} > {log:q} 2>&1"

    rule multidim_frameworks_report:
        input:
            runs=MDF.targets("run", MDF_RUN),
            data=[MDF_DATA[ds] for ds in MDF_DATASETS],
        output:
            figs=[f"{RESULTS}/figures/multidim_fig{k}{ext}" for k in (6, 7, 8, 9) for ext in (".pdf", ".png")],
            claims=multiext(f"{RESULTS}/tables/multidim_frameworks_claims", ".parquet", ".md"),
            summary=f"{RESULTS}/tables/multidim_frameworks_summary.parquet",
        log:
            f"{LOGS}/multidim_frameworks/report.log",
        benchmark:
            f"{BENCH}/multidim_frameworks/report.tsv"
        params:
            spec=MDF.spec("report"),
            data=[f"{ds}={MDF_DATA[ds]}" for ds in MDF_DATASETS],
            tables=lambda wc, output: os.path.dirname(output.summary),
            figures=lambda wc, output: os.path.dirname(output.figs[0]),
        resources:
            **RESOURCES["multidim_frameworks_report"],
        conda:
            env_file()
        shell:
            "shuffledp multidim-frameworks report --spec {params.spec:q} --in {input.runs:q} --data {params.data:q}"
            " --tables-dir {params.tables:q} --figures-dir {params.figures:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(rules.multidim_frameworks_report.output)
