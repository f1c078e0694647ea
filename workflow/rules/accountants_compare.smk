# Every shuffle accountant on one grid (issue 17; docs/accountants.md). Jobs:
# shuffledp.experiments.accountants_compare.jobs -- one `run` per (mechanism, eps0) with its
# (n, delta) grid inside, one `report` (the table in Parquet and Markdown, the figure), one `gain`
# (what the tighter accountant buys: local eps and MSE; only with `accountants_compare.gain`).
from shuffledp.experiments import accountants_compare as ACX

ACX.check_config(config)

# the stage is skipped when the configuration has no `accountants_compare:` section
if "accountants_compare" in config:
    ACC = JobTable(ACX.jobs(config))
    ACC_RUN = f"{RESULTS}/accountants_compare/runs/{{acmech}}_e{{aceps0}}.parquet"
    ACC_TIMINGS = f"{RESULTS}/accountants_compare/timings/{{acmech}}_e{{aceps0}}_timings.parquet"  # not reproducible

    wildcard_constraints:
        acmech="general|krr[0-9]+",
        aceps0="[0-9.e+-]+",

    rule accountants_compare_run:
        output:
            run=ACC_RUN,
            timings=ACC_TIMINGS,
        log:
            f"{LOGS}/accountants_compare/run_{{acmech}}_e{{aceps0}}.log",
        benchmark:
            f"{BENCH}/accountants_compare/run_{{acmech}}_e{{aceps0}}.tsv"
        params:
            spec=ACC.spec("run"),
        resources:
            **RESOURCES["accountants_compare_run"],
        conda:
            env_file()
        shell:
            "shuffledp accountants-compare run --spec {params.spec:q} --out {output.run:q}"
            " --timings {output.timings:q} > {log:q} 2>&1"

    rule accountants_compare_report:
        input:
            runs=ACC.targets("run", ACC_RUN),
            timings=ACC.targets("run", ACC_TIMINGS),
        output:
            table=f"{RESULTS}/tables/accountants_compare.parquet",
            md=report(
                f"{RESULTS}/tables/accountants_compare.md",
                caption="../report/accountants_compare_table.rst",
                category="Shuffle accountants (all papers)",
                subcategory="every bound on one grid",
            ),
            timings_md=f"{RESULTS}/tables/accountants_compare_timings.md",
            pdf=f"{RESULTS}/figures/accountants_compare.pdf",
            png=report(
                f"{RESULTS}/figures/accountants_compare.png",
                caption="../report/accountants_compare.rst",
                category="Shuffle accountants (all papers)",
                subcategory="every bound on one grid",
            ),
        log:
            f"{LOGS}/accountants_compare/report.log",
        benchmark:
            f"{BENCH}/accountants_compare/report.tsv"
        params:
            spec=ACC.spec("report"),
        resources:
            **RESOURCES["accountants_compare_report"],
        conda:
            env_file()
        shell:
            "shuffledp accountants-compare report --spec {params.spec:q} --inputs {input.runs:q}"
            " --timings {input.timings:q} --timings-md {output.timings_md:q}"
            " --table {output.table:q} --md {output.md:q} --pdf {output.pdf:q} --png {output.png:q}"
            " > {log:q} 2>&1"

    if ACC.targets("gain", "gain"):

        rule accountants_compare_gain:
            output:
                table=f"{RESULTS}/tables/accountants_gain.parquet",
                measured=f"{RESULTS}/tables/accountants_gain_measured.parquet",
                md=report(
                    f"{RESULTS}/tables/accountants_gain.md",
                    caption="../report/accountants_gain.rst",
                    category="Shuffle accountants (all papers)",
                    subcategory="what the tighter accountant buys",
                ),
                pdf=f"{RESULTS}/figures/accountants_gain.pdf",
                png=report(
                    f"{RESULTS}/figures/accountants_gain.png",
                    caption="../report/accountants_gain.rst",
                    category="Shuffle accountants (all papers)",
                    subcategory="what the tighter accountant buys",
                ),
            log:
                f"{LOGS}/accountants_compare/gain.log",
            benchmark:
                f"{BENCH}/accountants_compare/gain.tsv"
            params:
                spec=ACC.spec("gain"),
            resources:
                **RESOURCES["accountants_compare_gain"],
            conda:
                env_file()
            shell:
                "shuffledp accountants-compare gain --spec {params.spec:q} --table {output.table:q}"
                " --measured {output.measured:q} --md {output.md:q} --pdf {output.pdf:q}"
                " --png {output.png:q} > {log:q} 2>&1"

        FINAL_TARGETS.extend(
            [
                rules.accountants_compare_gain.output.table,
                rules.accountants_compare_gain.output.measured,
                rules.accountants_compare_gain.output.md,
                rules.accountants_compare_gain.output.pdf,
                rules.accountants_compare_gain.output.png,
            ]
        )

    FINAL_TARGETS.extend(
        [
            rules.accountants_compare_report.output.table,
            rules.accountants_compare_report.output.md,
            rules.accountants_compare_report.output.pdf,
            rules.accountants_compare_report.output.png,
        ]
    )
