# Data stage: one download rule and one preprocess rule per dataset, then the datasets table and
# the MSNBC figure. Downloads are local rules (cluster nodes often have no internet).
# source: real -> the download rule runs and the preprocess rule reads its verified file;
# source: auto -> the preprocess job tries the raw folder, the mirror and the publisher itself and
#                 falls back to the labelled stand-in only when no source could be reached at all
#                 (a damaged file -- wrong checksum, unreadable, truncated -- is always an error);
# source: standin -> the stand-in.
# Every substitution in a shell command is quoted ({...:q}): paths and the mirror may hold spaces.
import json

from shuffledp.datasets.prepare import resolve_ipums_source

DATA = "data"  # raw downloads and processed tables, relative to the working directory
RAW = f"{DATA}/raw"
PROC = f"{DATA}/processed"
DS = config["datasets"]
SYNTH = {s["name"]: s for s in DS.get("synthetic", []) or []}
IPUMS = DS.get("ipums", {}) or {}
MIRROR = config.get("data_mirror") or ""  # "" = none (the CLI lets SHUFFLEDP_DATA_MIRROR override it)
DS_SOURCE = {name: DS.get(name, {}).get("source", "auto") for name in ("msnbc", "adult")}
IPUMS_SPEC = {key: {"sample": "", **spec} for key, spec in IPUMS.items()}
# the IPUMS API download runs only when an extract's source resolves to `ipums`
IPUMS_VIA_API = {key: resolve_ipums_source(spec["source"], spec) == "ipums" for key, spec in IPUMS.items()}
# HDG's ordinal tables (Figs 6-9): their rules are the multidim_frameworks stage's steps loan and adult
# (shuffledp.stages.multidim_frameworks; its jobs give their specs); they are datasets all the same, so the datasets table lists the ones the config builds.
LOAN_TABLE = f"{PROC}/loan.parquet"
ADULT_ORDINAL_TABLE = f"{PROC}/adult_ordinal.parquet"
HDG_DATASETS = ((config.get("multidim_frameworks") or {}).get("hdg") or {}).get("datasets", [])


rule download_msnbc:
    output:
        f"{RAW}/msnbc/msnbc990928.seq.gz",
    log:
        f"{LOGS}/data/download_msnbc.log",
    params:
        raw_dir=lambda wc, output: os.path.dirname(output[0]),
        mirror=MIRROR,
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download msnbc --raw-dir {params.raw_dir:q} --mirror={params.mirror:q} > {log:q} 2>&1"


rule preprocess_msnbc:
    input:
        lambda wc: rules.download_msnbc.output if DS_SOURCE["msnbc"] == "real" else [],
    output:
        sequences=f"{PROC}/msnbc_sequences.parquet",
        sets=f"{PROC}/msnbc_sets.parquet",
        categories=f"{PROC}/msnbc_categories.parquet",
    log:
        f"{LOGS}/data/preprocess_msnbc.log",
    benchmark:
        f"{BENCH}/data/preprocess_msnbc.tsv"
    params:
        source=DS_SOURCE["msnbc"],
        raw_dir=f"{RAW}/msnbc",
        out_dir=lambda wc, output: os.path.dirname(output.sets),
        mirror=MIRROR,
        seed=config["seed"],
        standin_users=DS.get("msnbc", {}).get("standin_users", 20000),
    localrule: True
    resources:
        mem_mb=3000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data prepare msnbc --source {params.source:q} --raw-dir {params.raw_dir:q}"
        " --out {params.out_dir:q} --mirror={params.mirror:q} --seed {params.seed:q}"
        " --standin-users {params.standin_users:q} > {log:q} 2>&1"


rule download_adult:
    output:
        data=f"{RAW}/adult/adult.data",
        test=f"{RAW}/adult/adult.test",
    log:
        f"{LOGS}/data/download_adult.log",
    params:
        raw_dir=lambda wc, output: os.path.dirname(output.data),
        mirror=MIRROR,
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download adult --raw-dir {params.raw_dir:q} --mirror={params.mirror:q} > {log:q} 2>&1"


rule preprocess_adult:
    input:
        lambda wc: rules.download_adult.output if DS_SOURCE["adult"] == "real" else [],
    output:
        f"{PROC}/adult.parquet",
    log:
        f"{LOGS}/data/preprocess_adult.log",
    benchmark:
        f"{BENCH}/data/preprocess_adult.tsv"
    params:
        source=DS_SOURCE["adult"],
        raw_dir=f"{RAW}/adult",
        mirror=MIRROR,
        seed=config["seed"],
    localrule: True
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data prepare adult --source {params.source:q} --raw-dir {params.raw_dir:q}"
        " --out {output:q} --mirror={params.mirror:q} --seed {params.seed:q} > {log:q} 2>&1"


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
        domain=lambda wc: SYNTH[wc.name]["domain"],
        set_size=lambda wc: SYNTH[wc.name]["set_size"],
        users=lambda wc: SYNTH[wc.name]["users"],
        distribution=lambda wc: SYNTH[wc.name]["distribution"],
        zipf_exponent=lambda wc: SYNTH[wc.name].get("zipf_exponent", 1.0),
        seed=config["seed"],
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        env_file()
    shell:
        "shuffledp data synthetic --name {wildcards.name:q} --domain {params.domain:q}"
        " --set-size {params.set_size:q} --users {params.users:q} --distribution {params.distribution:q}"
        " --zipf-exponent {params.zipf_exponent:q} --seed {params.seed:q} --out {output:q} > {log:q} 2>&1"


rule download_ipums:
    output:
        directory(f"{RAW}/ipums_{{key}}"),
    log:
        f"{LOGS}/data/download_ipums_{{key}}.log",
    params:
        spec=lambda wc: json.dumps(IPUMS_SPEC[wc.key]),
    localrule: True
    conda:
        env_file()
    shell:
        "shuffledp data download ipums --key {wildcards.key:q} --spec {params.spec:q} --raw-dir {output:q}"
        " > {log:q} 2>&1"


rule preprocess_ipums:
    input:
        lambda wc: rules.download_ipums.output if IPUMS_VIA_API[wc.key] else [],
    output:
        f"{PROC}/ipums_{{key}}.parquet",
    log:
        f"{LOGS}/data/preprocess_ipums_{{key}}.log",
    benchmark:
        f"{BENCH}/data/preprocess_ipums_{{key}}.tsv"
    wildcard_constraints:
        key="|".join(IPUMS) or "NO_IPUMS_EXTRACT",
    params:
        spec=lambda wc: json.dumps(IPUMS_SPEC[wc.key]),
        raw_dir=RAW,
        seed=config["seed"],
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        env_file()
    shell:
        "shuffledp data prepare ipums --key {wildcards.key:q} --spec {params.spec:q} --source auto"
        " --raw-dir {params.raw_dir:q} --out {output:q} --seed {params.seed:q} > {log:q} 2>&1"


DATASET_TABLES = (
    [rules.preprocess_msnbc.output.sets, rules.preprocess_adult.output[0]]
    + [f"{PROC}/synthetic_{n}.parquet" for n in SYNTH]
    + [f"{PROC}/ipums_{k}.parquet" for k in IPUMS]
    + [path for name, path in (("adult", ADULT_ORDINAL_TABLE), ("loan", LOAN_TABLE)) if name in HDG_DATASETS]
)


rule datasets_table:
    input:
        DATASET_TABLES,
    output:
        parquet=f"{RESULTS}/tables/datasets.parquet",
        md=report(f"{RESULTS}/tables/datasets.md", caption="../report/datasets_table.rst", category="Datasets"),
    log:
        f"{LOGS}/data/datasets_table.log",
    benchmark:
        f"{BENCH}/data/datasets_table.tsv"
    conda:
        env_file()
    shell:
        "shuffledp data summary {input:q} --out {output.parquet:q} --md {output.md:q} > {log:q} 2>&1"


rule msnbc_category_shares:
    input:
        sequences=rules.preprocess_msnbc.output.sequences,
        sets=rules.preprocess_msnbc.output.sets,
        categories=rules.preprocess_msnbc.output.categories,
    output:
        pdf=f"{RESULTS}/figures/msnbc_category_shares.pdf",
        png=report(
            f"{RESULTS}/figures/msnbc_category_shares.png",
            caption="../report/msnbc_category_shares.rst",
            category="Datasets",
        ),
    log:
        f"{LOGS}/data/msnbc_category_shares.log",
    benchmark:
        f"{BENCH}/data/msnbc_category_shares.tsv"
    params:
        out_base=lambda wc, output: os.path.splitext(output.pdf)[0],
    conda:
        env_file()
    shell:
        "shuffledp data figure msnbc-shares --sequences {input.sequences:q} --sets {input.sets:q}"
        " --categories {input.categories:q} --out-base {params.out_base:q} > {log:q} 2>&1"


FINAL_TARGETS.extend(rules.datasets_table.output)
FINAL_TARGETS.extend(rules.msnbc_category_shares.output)
