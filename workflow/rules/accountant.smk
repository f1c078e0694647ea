# Accountant tables (helper acct-vr): results/accountant/<experiment>/<dataset>_n<n>_<setting>.parquet,
# one row per (accountant, m, level) plus the optimum m* rows, computed once per configuration by
# `shuffledp account-table segmented`. Experiment jobs read these tables and never recompute a bound.
# No final targets here: each experiment's .smk requests the tables it needs.
# Keys read from config[<experiment>]: see shuffledp.experiments.accountant and docs/accountants.md.


from shuffledp.experiments import accountant as ACCT_TABLES


rule accountant_table:
    output:
        f"{RESULTS}/accountant/{{experiment}}/{{dataset}}_n{{n}}_{{setting}}.parquet",
    params:
        args=lambda w: ACCT_TABLES.table_args(config, w.experiment, w.dataset, w.n, w.setting),
    log:
        f"{LOGS}/accountant/{{experiment}}/{{dataset}}_n{{n}}_{{setting}}.log",
    benchmark:
        f"{BENCH}/accountant/{{experiment}}/{{dataset}}_n{{n}}_{{setting}}.tsv"
    wildcard_constraints:
        experiment=r"[A-Za-z0-9]+",
        dataset=r"[A-Za-z0-9_]+",
        n=r"\d+",
        setting=r"[A-Za-z0-9]+",
    conda:
        "../../envs/shuffledp.yaml"
    resources:
        mem_mb=1000,
        runtime=15,
    shell:
        "shuffledp account-table segmented {params.args} --out {output} > {log} 2>&1"
