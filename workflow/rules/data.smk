# Data stage: one download rule and one preprocess rule per dataset, then the datasets table and
# the MSNBC figure. Downloads are local rules (cluster nodes often have no internet).
# source: real -> the download rule runs and the preprocess rule reads its verified file;
# source: auto -> the preprocess job tries the raw folder, the mirror and the publisher itself and
#                 falls back to the labelled stand-in (never on a checksum mismatch);
# source: standin -> the stand-in.
rule download_msnbc:
    output:
        f"{RAW}/msnbc/msnbc990928.seq.gz",
    log:
        f"{LOGS}/data/download_msnbc.log",
    params:
        raw_dir=lambda wc, output: os.path.dirname(output[0]),
        mirror=mirror_arg(),
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download msnbc --raw-dir {params.raw_dir} {params.mirror} > {log} 2>&1"


rule preprocess_msnbc:
    input:
        lambda wc: rules.download_msnbc.output if ds_source("msnbc") == "real" else [],
    output:
        sequences=f"{PROC}/msnbc_sequences.parquet",
        sets=f"{PROC}/msnbc_sets.parquet",
        categories=f"{PROC}/msnbc_categories.parquet",
    log:
        f"{LOGS}/data/preprocess_msnbc.log",
    benchmark:
        f"{BENCH}/data/preprocess_msnbc.tsv"
    params:
        source=ds_source("msnbc"),
        raw_dir=f"{RAW}/msnbc",
        out_dir=lambda wc, output: os.path.dirname(output.sets),
        mirror=mirror_arg(),
        seed=config["seed"],
        standin_users=DS.get("msnbc", {}).get("standin_users", 20000),
    localrule: True
    resources:
        mem_mb=3000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data prepare msnbc --source {params.source} --raw-dir {params.raw_dir}"
        " --out {params.out_dir} {params.mirror} --seed {params.seed}"
        " --standin-users {params.standin_users} > {log} 2>&1"


rule download_adult:
    output:
        data=f"{RAW}/adult/adult.data",
        test=f"{RAW}/adult/adult.test",
    log:
        f"{LOGS}/data/download_adult.log",
    params:
        raw_dir=lambda wc, output: os.path.dirname(output.data),
        mirror=mirror_arg(),
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download adult --raw-dir {params.raw_dir} {params.mirror} > {log} 2>&1"


rule preprocess_adult:
    input:
        lambda wc: rules.download_adult.output if ds_source("adult") == "real" else [],
    output:
        f"{PROC}/adult.parquet",
    log:
        f"{LOGS}/data/preprocess_adult.log",
    benchmark:
        f"{BENCH}/data/preprocess_adult.tsv"
    params:
        source=ds_source("adult"),
        raw_dir=f"{RAW}/adult",
        mirror=mirror_arg(),
        seed=config["seed"],
    localrule: True
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data prepare adult --source {params.source} --raw-dir {params.raw_dir}"
        " --out {output} {params.mirror} --seed {params.seed} > {log} 2>&1"


rule synthetic_sets:
    output:
        f"{PROC}/synthetic_{{name}}.parquet",
    log:
        f"{LOGS}/data/synthetic_{{name}}.log",
    benchmark:
        f"{BENCH}/data/synthetic_{{name}}.tsv"
    wildcard_constraints:
        name="|".join(SYNTH) or "NO_SYNTHETIC_DATASET",
    params:
        spec=lambda wc: SYNTH[wc.name],
        seed=config["seed"],
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data synthetic --name {wildcards.name} --domain {params.spec[domain]}"
        " --set-size {params.spec[set_size]} --users {params.spec[users]}"
        " --distribution {params.spec[distribution]} --seed {params.seed} --out {output} > {log} 2>&1"


rule download_ipums:
    output:
        directory(f"{RAW}/ipums_{{key}}"),
    log:
        f"{LOGS}/data/download_ipums_{{key}}.log",
    params:
        spec=lambda wc: json.dumps(ipums_spec(wc.key)),
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download ipums --key {wildcards.key} --spec {params.spec:q} --raw-dir {output}"
        " > {log} 2>&1"


rule preprocess_ipums:
    input:
        ipums_download_input,
    output:
        f"{PROC}/ipums_{{key}}.parquet",
    log:
        f"{LOGS}/data/preprocess_ipums_{{key}}.log",
    benchmark:
        f"{BENCH}/data/preprocess_ipums_{{key}}.tsv"
    wildcard_constraints:
        key="|".join(IPUMS) or "NO_IPUMS_EXTRACT",
    params:
        spec=lambda wc: json.dumps(ipums_spec(wc.key)),
        raw_dir=RAW,
        seed=config["seed"],
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        env_file()
    shell:
        "shuffledp data prepare ipums --key {wildcards.key} --spec {params.spec:q} --source auto"
        " --raw-dir {params.raw_dir} --out {output} --seed {params.seed} > {log} 2>&1"


DATASET_TABLES = (
    [rules.preprocess_msnbc.output.sets, rules.preprocess_adult.output[0]]
    + [f"{PROC}/synthetic_{n}.parquet" for n in SYNTH]
    + [f"{PROC}/ipums_{k}.parquet" for k in IPUMS]
)


rule datasets_table:
    input:
        DATASET_TABLES,
    output:
        parquet=f"{RESULTS}/tables/datasets.parquet",
        md=f"{RESULTS}/tables/datasets.md",
    log:
        f"{LOGS}/data/datasets_table.log",
    benchmark:
        f"{BENCH}/data/datasets_table.tsv"
    conda:
        env_file()
    shell:
        "shuffledp data summary {input} --out {output.parquet} --md {output.md} > {log} 2>&1"


rule msnbc_category_shares:
    input:
        sequences=rules.preprocess_msnbc.output.sequences,
        sets=rules.preprocess_msnbc.output.sets,
        categories=rules.preprocess_msnbc.output.categories,
    output:
        pdf=f"{RESULTS}/figures/msnbc_category_shares.pdf",
        png=f"{RESULTS}/figures/msnbc_category_shares.png",
    log:
        f"{LOGS}/data/msnbc_category_shares.log",
    benchmark:
        f"{BENCH}/data/msnbc_category_shares.tsv"
    params:
        out_base=lambda wc, output: os.path.splitext(output.pdf)[0],
    conda:
        env_file()
    shell:
        "shuffledp data figure msnbc-shares --sequences {input.sequences} --sets {input.sets}"
        " --categories {input.categories} --out-base {params.out_base} > {log} 2>&1"


FINAL_TARGETS.extend(rules.datasets_table.output)
FINAL_TARGETS.extend(rules.msnbc_category_shares.output)
