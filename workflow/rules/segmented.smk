# Segmented multi-message shuffle (Wang et al.), Section 6: Figures 2-6 and the claims table.
# Jobs: prepare (per dataset) -> baseline params (per dataset, n; via the accountants) ->
# runs (one per protocol, dataset, n, setting, m index or none, batch) -> aggregate -> figures, claims.
# Our protocol's lambdas come from helper acct-vr's tables
# results/accountant/segmented/<dataset>_n<n>_<setting>.parquet (workflow/rules/accountant.smk).
import json

from shuffledp.experiments import segmented as SEGX

SEGX.check_config(config)

if "segmented" in config:
    SEG = config["segmented"]
    SEG_GRID = [float(x) for x in SEGX.m_grid(SEG)]
    SEG_BATCHES = list(range(-(-int(SEG["repetitions"]) // int(SEG["batch_size"]))))
    SEG_PANELS = SEGX.panels(SEG)
    SEG_DATASETS = sorted({ds for ds, _ in SEG_PANELS})
    SEG_N = [int(n) for n in SEG["n"]]

    wildcard_constraints:
        segds="|".join(sorted(SEG["datasets"])),
        segn=r"\d+",
        segset=r"[A-Za-z0-9]+",
        segmi=r"\d+",
        segb=r"\d+",
        segproto_uniform="subexp_local|subexp_shuffle|mm_shuffle",
        segproto_sep="sepmm|wsepmm",

    def seg_spec(protocol, w, setting, m_index):
        shares = SEG["settings"][setting] if setting != "none" else None
        return SEGX.jsonable_spec(
            protocol=protocol, dataset=w.segds, n=int(w.segn), setting=setting, m_index=m_index,
            batch=int(w.segb), batch_size=int(SEG["batch_size"]), seed=int(config["seed"]),
            levels=SEG["levels"], shares=shares, delta_factor=SEG["delta_factor"], m_grid=SEG_GRID,
            level_histogram=SEG.get("level_histogram", "exact"), epsilon_p=SEG.get("epsilon_p", 1.0),
            sampler=SEG.get("sampler", "counts"), subexp_local_eps=SEG.get("subexp_local_eps", 2.0),
            wsepmm_power=SEG.get("wsepmm_power", 0.5), accountant=SEG.get("accountant", "sound"),
            scale=CONFIG_NAME,
        )

    def seg_run_targets():
        out = []
        for ds, st in SEG_PANELS:
            for n in SEG_N:
                for b in SEG_BATCHES:
                    for mi in range(len(SEG_GRID)):
                        out.append(f"{RESULTS}/segmented/runs/segmented/{ds}_n{n}_{st}_m{mi}_b{b}.parquet")
                    for p in ("sepmm", "wsepmm"):
                        out.append(f"{RESULTS}/segmented/runs/{p}/{ds}_n{n}_{st}_b{b}.parquet")
        for ds in SEG_DATASETS:
            for n in SEG_N:
                for b in SEG_BATCHES:
                    for p in ("subexp_local", "subexp_shuffle", "mm_shuffle"):
                        out.append(f"{RESULTS}/segmented/runs/{p}/{ds}_n{n}_none_b{b}.parquet")
        return out

    def seg_accountant_tables():
        return [f"{RESULTS}/accountant/segmented/{ds}_n{n}_{st}.parquet" for ds, st in SEG_PANELS for n in SEG_N]

    def seg_spec_json(**extra):
        keys = ("levels", "settings", "n", "figures", "m_grid", "m_factor", "delta_factor")
        body = {k: SEG[k] for k in keys if k in SEG}
        body.update(extra)
        return SEGX.jsonable_spec(**body)

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
            spec=lambda w: SEGX.jsonable_spec(
                dataset=w.segds, n=int(w.segn), d=SEG["datasets"][w.segds]["d"], s=SEG["datasets"][w.segds]["s"],
                levels=SEG["levels"], settings=SEG["settings"], delta_factor=SEG["delta_factor"],
                uniform_eps=SEG.get("uniform_eps", 0.5), accountant=SEG.get("accountant", "sound"),
            ),
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
            f"{RESULTS}/segmented/runs/segmented/{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.parquet",
        params:
            spec=lambda w: seg_spec("segmented", w, w.segset, int(w.segmi)),
        log:
            f"{LOGS}/segmented/run_segmented_{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.log",
        benchmark:
            f"{BENCH}/segmented/run_segmented_{{segds}}_n{{segn}}_{{segset}}_m{{segmi}}_b{{segb}}.tsv"
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
            spec=lambda w: seg_spec(w.segproto_uniform, w, "none", None),
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
            spec=lambda w: seg_spec(w.segproto_sep, w, w.segset, None),
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
            runs=seg_run_targets(),
            accountant=seg_accountant_tables(),
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
            data=[f"{RESULTS}/segmented/data/{ds}.parquet" for ds in SEG_DATASETS],
        output:
            pdf=f"{RESULTS}/figures/segmented_{{segfig}}.pdf",
            png=f"{RESULTS}/figures/segmented_{{segfig}}.png",
        wildcard_constraints:
            segfig="|".join(sorted(SEG["figures"])),
        params:
            spec=seg_spec_json(dataset_labels={"msnbc": "MSNBC", "synth_T128_s4": "synthetic T=128",
                                               "synth_T128_s8": "synthetic T=128"}),
            outdir=f"{RESULTS}/figures",
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
            data=[f"{RESULTS}/segmented/data/{ds}.parquet" for ds in SEG_DATASETS],
        output:
            md=f"{RESULTS}/tables/segmented_claims.md",
            parquet=f"{RESULTS}/tables/segmented_claims.parquet",
        params:
            spec=seg_spec_json(scale=CONFIG_NAME),
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
