# Segmented multi-message shuffle (Wang et al.), Section 6: Figures 2-6 and the claims table.
# Jobs (shuffledp.experiments.segmented.jobs): prepare (per dataset) -> accountant tables
# (accountant.smk) and baseline params (per dataset, n) -> run (one per protocol, dataset, n,
# setting or none, batch; every m and repetition inside) -> aggregate -> figures, claims.
from shuffledp.experiments import segmented as SEGX

SEGX.check_config(config)

if "segmented" in config:
    SEG = JobTable(SEGX.jobs(config))
    SEG_DATA = f"{RESULTS}/segmented/data/{{segds}}.parquet"
    SEG_PARAMS = f"{RESULTS}/segmented/params/{{segds}}_n{{segn}}.parquet"
    SEG_RUN = f"{RESULTS}/segmented/runs/{{segproto}}/{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.parquet"
    SEG_ACCT = f"{RESULTS}/accountant/segmented/{{segds}}_n{{segn}}_{{setting}}.parquet"  # accountant.smk
    SEG_SUMMARY = f"{RESULTS}/segmented/summary.parquet"
    SEG_CATEGORY = "Segmented multi-message shuffle (Wang et al.)"  # snakemake --report
    SEG_PREPARED = SEG.targets("prepare", SEG_DATA)
    SEG_ACCT_USED = sorted(
        {
            SEG_ACCT.format(segds=j.wildcards["segds"], segn=j.wildcards["segn"], setting=j.wildcards["segset"])
            for j in SEG.jobs
            if j.step == "run" and j.wildcards["segproto"] in SEGX.OURS_ALL
        }
    )

    wildcard_constraints:
        segds="|".join(sorted(config["segmented"]["datasets"])),
        segn=r"\d+",
        segset=r"[A-Za-z0-9]+",
        segb=r"\d+",
        segproto="|".join(SEGX.PROTOCOLS),

    rule segmented_prepare:
        input:
            lambda w: f"{PROC}/{config['segmented']['datasets'][w.segds]['table']}.parquet",
        output:
            SEG_DATA,
        params:
            spec=SEG.spec("prepare"),
        log:
            f"{LOGS}/segmented/prepare_{{segds}}.log",
        benchmark:
            f"{BENCH}/segmented/prepare_{{segds}}.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_prepare"],
        shell:
            "shuffledp segmented prepare --spec {params.spec:q} --input {input:q} --out {output:q} > {log:q} 2>&1"

    rule segmented_params:
        output:
            SEG_PARAMS,
        params:
            spec=SEG.spec("params"),
        log:
            f"{LOGS}/segmented/params_{{segds}}_n{{segn}}.log",
        benchmark:
            f"{BENCH}/segmented/params_{{segds}}_n{{segn}}.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_params"],
        shell:
            "shuffledp segmented params --spec {params.spec:q} --out {output:q} > {log:q} 2>&1"

    rule segmented_run:
        input:
            data=SEG_DATA,
            # ours reads its accountant table, every baseline its parameter table
            table=lambda w: (
                SEG_ACCT.format(segds=w.segds, segn=w.segn, setting=w.segset)
                if w.segproto in SEGX.OURS_ALL
                else SEG_PARAMS.format(segds=w.segds, segn=w.segn)
            ),
        output:
            SEG_RUN,
        params:
            spec=SEG.spec("run"),
        log:
            f"{LOGS}/segmented/run_{{segproto}}_{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.log",
        benchmark:
            f"{BENCH}/segmented/run_{{segproto}}_{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_run"],
        shell:
            "shuffledp segmented run --spec {params.spec:q} --data {input.data:q} --table {input.table:q}"
            " --out {output:q} > {log:q} 2>&1"

    rule segmented_aggregate:
        input:
            runs=SEG.targets("run", SEG_RUN),
            accountant=SEG_ACCT_USED,
        output:
            SEG_SUMMARY,
        params:
            spec=SEG.spec("aggregate"),
        log:
            f"{LOGS}/segmented/aggregate.log",
        benchmark:
            f"{BENCH}/segmented/aggregate.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_aggregate"],
        shell:
            "shuffledp segmented aggregate --spec {params.spec:q} --runs {input.runs:q}"
            " --accountant {input.accountant:q} --out {output:q} > {log:q} 2>&1"

    rule segmented_figure:
        input:
            summary=SEG_SUMMARY,
            data=SEG_PREPARED,
        output:
            pdf=f"{RESULTS}/figures/segmented_{{segfig}}.pdf",
            png=report(
                f"{RESULTS}/figures/segmented_{{segfig}}.png",
                caption="../report/segmented_figure.rst",
                category=SEG_CATEGORY,
                subcategory="{segfig}",
            ),
        wildcard_constraints:
            segfig="|".join(sorted(config["segmented"]["figures"])),
        params:
            spec=SEG.spec("figure"),
            out_base=lambda w, output: output.pdf[: -len(".pdf")],
        log:
            f"{LOGS}/segmented/figure_{{segfig}}.log",
        benchmark:
            f"{BENCH}/segmented/figure_{{segfig}}.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_figure"],
        shell:
            "shuffledp segmented figure --spec {params.spec:q} --summary {input.summary:q} --data {input.data:q}"
            " --out-base {params.out_base:q} > {log:q} 2>&1"

    rule segmented_claims:
        input:
            summary=SEG_SUMMARY,
            data=SEG_PREPARED,
        output:
            md=report(
                f"{RESULTS}/tables/segmented_claims.md",
                caption="../report/segmented_claims.rst",
                category=SEG_CATEGORY,
                subcategory="claims",
            ),
            parquet=f"{RESULTS}/tables/segmented_claims.parquet",
        params:
            spec=SEG.spec("claims"),
        log:
            f"{LOGS}/segmented/claims.log",
        benchmark:
            f"{BENCH}/segmented/claims.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["segmented_claims"],
        shell:
            "shuffledp segmented claims --spec {params.spec:q} --summary {input.summary:q} --data {input.data:q}"
            " --md {output.md:q} --parquet {output.parquet:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(
        SEG.targets("figure", f"{RESULTS}/figures/segmented_{{segfig}}.pdf")
        + SEG.targets("figure", f"{RESULTS}/figures/segmented_{{segfig}}.png")
        + [rules.segmented_claims.output.md, rules.segmented_claims.output.parquet]
    )
