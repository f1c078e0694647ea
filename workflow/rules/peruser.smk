# Per-user histograms in the shuffle model (docs/peruser.md). Jobs (shuffledp.experiments.peruser.jobs):
# one per (method, dataset, clustering, repetition batch) with every eps, eps1 split, c and
# repetition inside; one collect job per table and one report job (figures 1-4, claims table).
from shuffledp.experiments import peruser as PUX

if config.get("peruser"):
    PUX.check_config(config)
    PU = JobTable(PUX.jobs(config))
    PU_SOURCES = {d["name"]: d["source"] for d in config["peruser"]["datasets"]}
    PU_JOB = f"{RESULTS}/peruser/jobs/{{dataset}}/{{method}}_{{clustering}}_b{{batch}}"
    PU_CATEGORY = "Per-user histograms (our experiments; the paper has none)"  # snakemake --report

    rule peruser_job:
        input:
            lambda wc: [f"{PROC}/msnbc_sequences.parquet"] if PU_SOURCES[wc.dataset] == "msnbc" else [],
        output:
            runs=f"{PU_JOB}.runs.parquet",
            users=f"{PU_JOB}.users.parquet",
        log:
            f"{LOGS}/peruser/{{dataset}}/{{method}}_{{clustering}}_b{{batch}}.log",
        benchmark:
            f"{BENCH}/peruser/{{dataset}}/{{method}}_{{clustering}}_b{{batch}}.tsv"
        wildcard_constraints:
            dataset="[A-Za-z0-9_]+?",
            method="[A-Za-z0-9]+",
            clustering="[a-z]+",
            batch="[0-9]+",
        params:
            spec=PU.spec("run"),
            msnbc=lambda wc, input: ["--msnbc", input[0]] if len(input) else [],
        threads: 1
        resources:
            **RESOURCES["peruser_job"],
        conda:
            env_file()
        shell:
            "OMP_NUM_THREADS={threads} shuffledp peruser run --spec {params.spec:q} {params.msnbc:q}"
            " --out-runs {output.runs:q} --out-users {output.users:q} > {log:q} 2>&1"

    rule peruser_collect:
        input:
            lambda wc: PU.targets("run", f"{PU_JOB}.{wc.kind}.parquet"),
        output:
            f"{RESULTS}/tables/peruser_{{kind}}.parquet",
        log:
            f"{LOGS}/peruser/collect_{{kind}}.log",
        benchmark:
            f"{BENCH}/peruser/collect_{{kind}}.tsv"
        wildcard_constraints:
            kind="runs|users",
        resources:
            **RESOURCES["peruser_collect"],
        conda:
            env_file()
        shell:
            "shuffledp peruser collect --out {output:q} {input:q} > {log:q} 2>&1"

    rule peruser_report:
        input:
            runs=f"{RESULTS}/tables/peruser_runs.parquet",
            users=f"{RESULTS}/tables/peruser_users.parquet",
        output:
            figures=[
                f"{RESULTS}/figures/peruser_fig{k}.pdf" if ext == "pdf" else report(
                    f"{RESULTS}/figures/peruser_fig{k}.png",
                    caption="../report/peruser_figure.rst",
                    category=PU_CATEGORY,
                    subcategory=f"Fig. {k}",
                )
                for k in (1, 2, 3, 4)
                for ext in ("pdf", "png")
            ],
            claims_md=report(
                f"{RESULTS}/tables/peruser_claims.md",
                caption="../report/peruser_claims.rst",
                category=PU_CATEGORY,
                subcategory="claims",
            ),
            claims=f"{RESULTS}/tables/peruser_claims.parquet",
        log:
            f"{LOGS}/peruser/report.log",
        benchmark:
            f"{BENCH}/peruser/report.tsv"
        params:
            spec=PU.spec("report"),
            fig_prefix=lambda wc, output: output.figures[0][: -len("1.pdf")],
            claims_prefix=lambda wc, output: output.claims[: -len(".parquet")],
        resources:
            **RESOURCES["peruser_report"],
        conda:
            env_file()
        shell:
            "shuffledp peruser report --spec {params.spec:q} --runs {input.runs:q} --users {input.users:q}"
            " --figures {params.fig_prefix:q} --claims {params.claims_prefix:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(
        rules.peruser_report.output.figures
        + [rules.peruser_report.output.claims_md, rules.peruser_report.output.claims]
    )
