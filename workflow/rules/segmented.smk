# Segmented multi-message shuffle (Wang et al.), Section 6: Figures 2-6 and the claims table.
# Jobs: prepare (per dataset) -> baseline params (per dataset, n; via the accountants) ->
# runs (one per protocol, dataset, n, setting, m index or none, batch) -> aggregate -> figures, claims.
# Our protocol's lambdas come from helper acct-vr's tables
# results/accountant/segmented/<dataset>_n<n>_<setting>.parquet (workflow/rules/accountant.smk).
import os

from shuffledp.experiments import segmented as SEGX

SEGX.check_config(config)

if "segmented" in config:
    SEG = config["segmented"]

    wildcard_constraints:
        segds="|".join(sorted(SEG["datasets"])),
        segn=r"\d+",
        segset=r"[A-Za-z0-9]+",
        segmi=r"\d+",
        segb=r"\d+",
        segproto_uniform="subexp_local|subexp_shuffle|mm_shuffle",
        segproto_sep="sepmm|wsepmm",
        segours="segmented|segmented_paper",

    rule segmented_prepare:
        input:
            lambda w: f"data/processed/{SEG['datasets'][w.segds]['table']}.parquet",
        output:
            f"{RESULTS}/segmented/data/{{segds}}.parquet",
        params:
            d=lambda w: SEG["datasets"][w.segds]["d"],
            s=lambda w: SEG["datasets"][w.segds]["s"],
            seed=config["seed"],
            oversize=SEG.get("oversize", "random"),
        log:
            f"{LOGS}/segmented/prepare_{{segds}}.log",
        benchmark:
            f"{BENCH}/segmented/prepare_{{segds}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=2000,
            runtime=10,
        shell:
            "shuffledp segmented prepare --input {input} --output {output} --dataset {wildcards.segds} "
            "--d {params.d} --s {params.s} --seed {params.seed} --oversize {params.oversize} > {log} 2>&1"

    rule segmented_params:
        output:
            f"{RESULTS}/segmented/params/{{segds}}_n{{segn}}.parquet",
        params:
            spec=lambda w: SEGX.params_spec(config, w.segds, w.segn),
        log:
            f"{LOGS}/segmented/params_{{segds}}_n{{segn}}.log",
        benchmark:
            f"{BENCH}/segmented/params_{{segds}}_n{{segn}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=2000,
            runtime=30,
        shell:
            "shuffledp segmented params --spec '{params.spec}' --output {output} > {log} 2>&1"

    rule segmented_run_ours:
        input:
            data=f"{RESULTS}/segmented/data/{{segds}}.parquet",
            accountant=f"{RESULTS}/accountant/segmented/{{segds}}_n{{segn}}_{{segset}}.parquet",
        output:
            f"{RESULTS}/segmented/runs/{{segours}}/{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.parquet",
        params:
            spec=lambda w: SEGX.job_spec(config, w.segours, w.segds, w.segn, w.segset, w.segmi, w.segb, CONFIG_NAME),
        log:
            f"{LOGS}/segmented/run_{{segours}}_{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.log",
        benchmark:
            f"{BENCH}/segmented/run_{{segours}}_{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=1500,
            runtime=15,
        shell:
            "shuffledp segmented run --spec '{params.spec}' --data {input.data} "
            "--accountant {input.accountant} --output {output} > {log} 2>&1"

    rule segmented_run_uniform:
        input:
            data=f"{RESULTS}/segmented/data/{{segds}}.parquet",
            params=f"{RESULTS}/segmented/params/{{segds}}_n{{segn}}.parquet",
        output:
            f"{RESULTS}/segmented/runs/{{segproto_uniform}}/{{segds}}_n{{segn}}_none_b{{segb}}.parquet",
        params:
            spec=lambda w: SEGX.job_spec(config, w.segproto_uniform, w.segds, w.segn, "none", None, w.segb, CONFIG_NAME),
        log:
            f"{LOGS}/segmented/run_{{segproto_uniform}}_{{segds}}_n{{segn}}_none_b{{segb}}.log",
        benchmark:
            f"{BENCH}/segmented/run_{{segproto_uniform}}_{{segds}}_n{{segn}}_none_b{{segb}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=3000,
            runtime=15,
        shell:
            "shuffledp segmented run --spec '{params.spec}' --data {input.data} "
            "--params {input.params} --output {output} > {log} 2>&1"

    rule segmented_run_sep:
        input:
            data=f"{RESULTS}/segmented/data/{{segds}}.parquet",
            params=f"{RESULTS}/segmented/params/{{segds}}_n{{segn}}.parquet",
        output:
            f"{RESULTS}/segmented/runs/{{segproto_sep}}/{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.parquet",
        params:
            spec=lambda w: SEGX.job_spec(config, w.segproto_sep, w.segds, w.segn, w.segset, None, w.segb, CONFIG_NAME),
        log:
            f"{LOGS}/segmented/run_{{segproto_sep}}_{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.log",
        benchmark:
            f"{BENCH}/segmented/run_{{segproto_sep}}_{{segds}}_n{{segn}}_{{segset}}_b{{segb}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=1500,
            runtime=15,
        shell:
            "shuffledp segmented run --spec '{params.spec}' --data {input.data} "
            "--params {input.params} --output {output} > {log} 2>&1"

    rule segmented_aggregate:
        input:
            runs=SEGX.run_targets(config, RESULTS),
            accountant=SEGX.accountant_tables(config, RESULTS),
        output:
            f"{RESULTS}/segmented/summary.parquet",
        params:
            variant=SEG.get("accountant", "sound"),
        log:
            f"{LOGS}/segmented/aggregate.log",
        benchmark:
            f"{BENCH}/segmented/aggregate.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=2000,
            runtime=10,
        shell:
            "shuffledp segmented aggregate --runs {input.runs} --accountant {input.accountant} "
            "--variant {params.variant} --output {output} > {log} 2>&1"

    rule segmented_figure:
        input:
            summary=f"{RESULTS}/segmented/summary.parquet",
            data=SEGX.prepared_tables(config, RESULTS),
        output:
            pdf=f"{RESULTS}/figures/segmented_{{segfig}}.pdf",
            png=f"{RESULTS}/figures/segmented_{{segfig}}.png",
        wildcard_constraints:
            segfig="|".join(sorted(SEG["figures"])),
        params:
            spec=SEGX.summary_spec(config),
            outdir=lambda w, output: os.path.dirname(output.pdf),
        log:
            f"{LOGS}/segmented/figure_{{segfig}}.log",
        benchmark:
            f"{BENCH}/segmented/figure_{{segfig}}.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=1500,
            runtime=10,
        shell:
            "shuffledp segmented figures --summary {input.summary} --spec '{params.spec}' "
            "--data {input.data} --outdir {params.outdir} --only {wildcards.segfig} > {log} 2>&1"

    rule segmented_claims:
        input:
            summary=f"{RESULTS}/segmented/summary.parquet",
            data=SEGX.prepared_tables(config, RESULTS),
        output:
            md=f"{RESULTS}/tables/segmented_claims.md",
            parquet=f"{RESULTS}/tables/segmented_claims.parquet",
        params:
            spec=SEGX.summary_spec(config, scale=CONFIG_NAME),
        log:
            f"{LOGS}/segmented/claims.log",
        benchmark:
            f"{BENCH}/segmented/claims.tsv"
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=1000,
            runtime=5,
        shell:
            "shuffledp segmented claims --summary {input.summary} --spec '{params.spec}' "
            "--data {input.data} --md {output.md} --parquet {output.parquet} > {log} 2>&1"

    FINAL_TARGETS.extend(
        [f"{RESULTS}/figures/segmented_{f}.{ext}" for f in SEG["figures"] for ext in ("pdf", "png")]
        + [f"{RESULTS}/tables/segmented_claims.md", f"{RESULTS}/tables/segmented_claims.parquet"]
    )
