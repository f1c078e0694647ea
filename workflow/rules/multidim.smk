# Multidimensional categorical data under shuffle DP (seed: multidimensional-categorical-shuffle.md):
# MHM vs FLAME vs TCM (Figures 3, 4, 5, Table 3) and OGM vs NOGM (Figure 10), plus a claims table.
# One job per (mechanism, dataset, eps, batch of repetitions) and per (method, dataset, ratio, batch).
from shuffledp.experiments.multidim import DEFAULT_CLASSES, batch_reps, batches, ratio_tag
from shuffledp.experiments.multidim import check_config as multidim_check_config

multidim_check_config(config)

MD = config["multidim"]
MD_PERS = MD.get("personal", {})
MD_DIR = f"{RESULTS}/multidim"
MD_DATA = f"{PROC}/ipums_{{dataset}}.parquet"


MD_UNIFORM = expand(
    f"{MD_DIR}/uniform/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet",
    dataset=MD["datasets"],
    mechanism=MD["mechanisms"],
    eps=MD["eps"],
    batch=batches(MD["reps"], MD["reps_per_job"]),
)
MD_TIMINGS = expand(
    f"{MD_DIR}/timings/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet",
    dataset=MD["datasets"],
    mechanism=MD["mechanisms"],
    eps=MD["eps"],
    batch=batches(MD["reps"], MD["reps_per_job"]),
)
MD_PERSONAL = expand(
    f"{MD_DIR}/personal/{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.parquet",
    dataset=MD["datasets"],
    method=["ogm", "nogm"],
    ratio=[ratio_tag(r) for r in MD_PERS.get("ratios", [])],
    batch=batches(MD_PERS.get("reps", 1), MD_PERS.get("reps_per_job", 1)),
)


rule multidim_uniform:
    input:
        MD_DATA,
    output:
        table=f"{MD_DIR}/uniform/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet",
        timings=f"{MD_DIR}/timings/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet",
    log:
        f"{LOGS}/multidim/uniform_{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.log",
    benchmark:
        f"{BENCH}/multidim/uniform_{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.tsv"
    wildcard_constraints:
        mechanism="mhm|flame|tcm",
        batch=r"\d+",
    params:
        reps=lambda wc: ",".join(map(str, batch_reps(int(wc.batch), MD["reps"], MD["reps_per_job"]))),
        records=MD["records"],
        seed=config["seed"],
        bound=MD["bound"],
        family_bits=MD["hash_family_bits"],
        np_fraction=MD["flame_np_fraction"],
        flame_variant=MD["flame_variant"],
        topk=MD["topk"],
    resources:
        mem_mb=1500,
        runtime=30,
    conda:
        env_file()
    shell:
        "shuffledp multidim uniform --data {input} --dataset {wildcards.dataset} --mechanism {wildcards.mechanism}"
        " --eps {wildcards.eps} --reps {params.reps} --records {params.records} --seed {params.seed}"
        " --bound {params.bound} --family-bits {params.family_bits} --np-fraction {params.np_fraction}"
        " --flame-variant {params.flame_variant} --topk {params.topk}"
        " --out {output.table} --timings {output.timings} > {log} 2>&1"


rule multidim_personal:
    input:
        MD_DATA,
    output:
        f"{MD_DIR}/personal/{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.parquet",
    log:
        f"{LOGS}/multidim/personal_{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.log",
    benchmark:
        f"{BENCH}/multidim/personal_{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.tsv"
    wildcard_constraints:
        method="ogm|nogm",
        ratio=r"\d+-\d+-\d+",
        batch=r"\d+",
    params:
        reps=lambda wc: ",".join(
            map(str, batch_reps(int(wc.batch), MD_PERS.get("reps", 1), MD_PERS.get("reps_per_job", 1)))
        ),
        ratio=lambda wc: wc.ratio.replace("-", ":"),
        records=MD["records"],
        seed=config["seed"],
        bound=MD["bound"],
        family_bits=MD["hash_family_bits"],
        classes=json.dumps(MD_PERS.get("classes") or DEFAULT_CLASSES),
    resources:
        mem_mb=1500,
        runtime=30,
    conda:
        env_file()
    shell:
        "shuffledp multidim personal --data {input} --dataset {wildcards.dataset} --method {wildcards.method}"
        " --ratio {params.ratio} --reps {params.reps} --records {params.records} --seed {params.seed}"
        " --bound {params.bound} --family-bits {params.family_bits}"
        " --classes {params.classes:q} --out {output} > {log} 2>&1"


rule multidim_report:
    input:
        uniform=MD_UNIFORM,
        timings=MD_TIMINGS,
        personal=MD_PERSONAL,
        data=expand(MD_DATA, dataset=MD["datasets"]),
    output:
        fig3=multiext(f"{RESULTS}/figures/multidim_fig3", ".pdf", ".png"),
        fig4=multiext(f"{RESULTS}/figures/multidim_fig4", ".pdf", ".png"),
        fig5=multiext(f"{RESULTS}/figures/multidim_fig5", ".pdf", ".png"),
        fig10=multiext(f"{RESULTS}/figures/multidim_fig10", ".pdf", ".png"),
        table3=multiext(f"{RESULTS}/tables/multidim_table3", ".parquet", ".md"),
        claims=multiext(f"{RESULTS}/tables/multidim_claims", ".parquet", ".md"),
        uniform=f"{RESULTS}/tables/multidim_uniform.parquet",
        personal=f"{RESULTS}/tables/multidim_personal.parquet",
        timings=f"{RESULTS}/tables/multidim_timings.parquet",
    log:
        f"{LOGS}/multidim/report.log",
    benchmark:
        f"{BENCH}/multidim/report.tsv"
    params:
        data=lambda wc, input: " ".join(f"{d}={p}" for d, p in zip(MD["datasets"], input.data)),
        scale=CONFIG_NAME,
        tables=lambda wc, output: os.path.dirname(output.claims[0]),
        figures=lambda wc, output: os.path.dirname(output.fig3[0]),
        topk=MD["topk"],
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp multidim report --uniform {input.uniform} --timings {input.timings}"
        " --personal {input.personal} --data {params.data} --scale {params.scale}"
        " --tables-dir {params.tables} --figures-dir {params.figures} --topk {params.topk} > {log} 2>&1"


FINAL_TARGETS.extend(rules.multidim_report.output)
