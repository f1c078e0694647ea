# Accountant tables: results/accountant/<experiment>/<dataset>_n<n>_<setting>.parquet, one row per
# (accountant, m, level) plus the optimum m* rows, computed once per configuration by
# `shuffledp account-table segmented`. Experiment jobs read these tables and never recompute a bound.
# One job per (dataset, n) writes the tables of every level setting: the per-level Poisson rates do
# not depend on the shares, so the settings share one process's cache (2.1-3x less work than
# one job per setting). No final targets here: each experiment's .smk requests the tables it needs.
# Keys read from config[<experiment>]: see shuffledp.experiments.accountant and docs/accountants.md.


from shuffledp.experiments import accountant as ACCT_TABLES


if "segmented" in config:

    rule accountant_table:
        output:
            expand(
                f"{RESULTS}/accountant/segmented/{{{{dataset}}}}_n{{{{n}}}}_{{setting}}.parquet",
                setting=ACCT_TABLES.settings(config, "segmented"),
            ),
        params:
            args=lambda w, output: ACCT_TABLES.table_args(
                config, "segmented", w.dataset, w.n, ACCT_TABLES.settings(config, "segmented"), output
            ),
        log:
            f"{LOGS}/accountant/segmented/{{dataset}}_n{{n}}.log",
        benchmark:
            f"{BENCH}/accountant/segmented/{{dataset}}_n{{n}}.tsv"
        wildcard_constraints:
            dataset=r"[A-Za-z0-9_]+?",
            n=r"\d+",
        conda:
            "../../envs/shuffledp.yaml"
        resources:
            mem_mb=1000,
            runtime=15,
        shell:
            "shuffledp account-table segmented {params.args} > {log} 2>&1"
