# Accountant tables: results/accountant/segmented/<dataset>_n<n>_<setting>.parquet, one row per
# (accountant, m, level) plus the optimum m* rows. One job per (dataset, n) writes the tables of
# every level setting (`shuffledp segmented accountant`): the per-level Poisson rates do not depend
# on the shares, so the settings share one process's cache (2.1-3x less work than one job per
# setting). Its spec (shuffledp.experiments.segmented.jobs, step "accountant") holds n, d, s, the
# levels, delta = delta_factor / n, the m grid, the accountants and the settings' shares.
# Experiment jobs read these tables and never recompute a bound. No final targets here.
if "segmented" in config:

    rule accountant_table:
        output:
            [SEG_ACCT.replace("{setting}", st) for st in config["segmented"]["settings"]],
        params:
            spec=SEG.spec("accountant"),
        log:
            f"{LOGS}/accountant/segmented/{{segds}}_n{{segn}}.log",
        benchmark:
            f"{BENCH}/accountant/segmented/{{segds}}_n{{segn}}.tsv"
        conda:
            env_file()
        resources:
            **RESOURCES["accountant_table"],
        shell:
            "shuffledp segmented accountant --spec {params.spec:q} --out {output:q} > {log:q} 2>&1"
