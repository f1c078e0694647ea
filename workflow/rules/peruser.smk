# Per-user histograms in the shuffle model (issue 7; docs/peruser.md).
# One job per (method, dataset, eps, eps1 split, clustering, repetition batch); every c of the
# config runs inside a job. Then one collect rule per table and one report rule (figures 1-4 and
# the claims table).
import json

from shuffledp.experiments.peruser import check_config as peruser_check_config
from shuffledp.experiments.peruser import jobs as peruser_jobs

PU = config.get("peruser")

if PU:
    peruser_check_config(config)
    PU_JOBS = peruser_jobs(PU)
    PU_SECTION = json.dumps(PU, sort_keys=True)
    PU_SOURCES = {d["name"]: d["source"] for d in PU["datasets"]}
    PU_DIR = f"{RESULTS}/peruser/jobs"
    PU_PATTERN = "{dataset}/{method}_{clustering}_e{eps}_s{split}_b{batch}"

    PU_JOB_PATHS = {
        kind: [f"{PU_DIR}/{PU_PATTERN.format(**j)}.{kind}.parquet" for j in PU_JOBS]
        for kind in ("runs", "users")
    }

    rule peruser_job:
        input:
            lambda wc: (
                [f"{PROC}/msnbc_sequences.parquet"] if PU_SOURCES[wc.dataset] == "msnbc" else []
            ),
        output:
            runs=f"{PU_DIR}/{PU_PATTERN}.runs.parquet",
            users=f"{PU_DIR}/{PU_PATTERN}.users.parquet",
        log:
            f"{LOGS}/peruser/{PU_PATTERN}.log",
        benchmark:
            f"{BENCH}/peruser/{PU_PATTERN}.tsv"
        wildcard_constraints:
            dataset="[A-Za-z0-9_]+?",
            method="[A-Za-z0-9]+",
            clustering="[a-z]+",
            eps="[0-9.e+-]+",
            split="[0-9.a-z]+",
            batch="[0-9]+",
        params:
            section=PU_SECTION,
            seed=config["seed"],
            scale=CONFIG_NAME,
            msnbc=lambda wc, input: f"--msnbc {input[0]}" if len(input) else "",
        threads: 1
        resources:
            mem_mb=3000,
            runtime=30,
        conda:
            env_file()
        shell:
            "OMP_NUM_THREADS={threads} shuffledp peruser run --section {params.section:q}"
            " --seed {params.seed} --scale {params.scale} --method {wildcards.method}"
            " --dataset {wildcards.dataset} --eps {wildcards.eps} --split {wildcards.split}"
            " --clustering {wildcards.clustering} --batch {wildcards.batch} {params.msnbc}"
            " --out-runs {output.runs} --out-users {output.users} > {log} 2>&1"

    rule peruser_collect:
        input:
            lambda wc: PU_JOB_PATHS[wc.kind],
        output:
            f"{RESULTS}/tables/peruser_{{kind}}.parquet",
        log:
            f"{LOGS}/peruser/collect_{{kind}}.log",
        benchmark:
            f"{BENCH}/peruser/collect_{{kind}}.tsv"
        wildcard_constraints:
            kind="runs|users",
        resources:
            mem_mb=2000,
            runtime=10,
        conda:
            env_file()
        shell:
            "shuffledp peruser collect --out {output} {input} > {log} 2>&1"

    rule peruser_report:
        input:
            runs=f"{RESULTS}/tables/peruser_runs.parquet",
            users=f"{RESULTS}/tables/peruser_users.parquet",
        output:
            figures=expand(f"{RESULTS}/figures/peruser_fig{{k}}.{{ext}}", k=[1, 2, 3, 4], ext=["pdf", "png"]),
            claims_md=f"{RESULTS}/tables/peruser_claims.md",
            claims=f"{RESULTS}/tables/peruser_claims.parquet",
        log:
            f"{LOGS}/peruser/report.log",
        benchmark:
            f"{BENCH}/peruser/report.tsv"
        params:
            section=PU_SECTION,
            scale=CONFIG_NAME,
            fig_prefix=lambda wc, output: output.figures[0][: -len("1.pdf")],
            claims_prefix=lambda wc, output: output.claims[: -len(".parquet")],
        resources:
            mem_mb=2000,
            runtime=10,
        conda:
            env_file()
        shell:
            "shuffledp peruser report --runs {input.runs} --users {input.users}"
            " --section {params.section:q} --scale {params.scale} --figures {params.fig_prefix}"
            " --claims {params.claims_prefix} > {log} 2>&1"

    FINAL_TARGETS.extend(
        rules.peruser_report.output.figures
        + [rules.peruser_report.output.claims_md, rules.peruser_report.output.claims]
    )
