# Personalized shuffle privacy bounds (Liu et al., CIKM'24): Figure 4 (eps_s vs n), Table 2 (delta_s
# vs eps_s) and the claims table. Jobs: shuffledp.experiments.personalized.jobs -- one per
# (bound, setting, mechanism) with the n grid and seeds inside, one per Table-2 row, one report.
from shuffledp.experiments import personalized as PERSX

PERSX.check_config(config)

# the stage is skipped when the configuration has no `personalized:` section
if "personalized" in config:
    PERS = JobTable(PERSX.jobs(config))
    PERS_POINT = f"{RESULTS}/personalized/points/{{pbound}}_{{psetting}}_{{pmech}}.parquet"
    PERS_ROW = f"{RESULTS}/personalized/table2_rows/{{prow}}.parquet"
    PERS_CATEGORY = "Personalized shuffle bounds (Liu et al., CIKM 2024)"  # snakemake --report

    wildcard_constraints:
        pbound="[a-z0-9]+",
        psetting="[a-z0-9]+",
        pmech="laplace|gaussian",
        prow="[A-Za-z0-9_]+",

    rule personalized_points:
        output:
            PERS_POINT,
        log:
            f"{LOGS}/personalized/points_{{pbound}}_{{psetting}}_{{pmech}}.log",
        benchmark:
            f"{BENCH}/personalized/points_{{pbound}}_{{psetting}}_{{pmech}}.tsv"
        params:
            spec=PERS.spec("points"),
        resources:
            **RESOURCES["personalized_points"],
        conda:
            env_file()
        shell:
            "shuffledp personalized points --spec {params.spec:q} --out {output:q} > {log:q} 2>&1"

    rule personalized_table2_row:
        output:
            PERS_ROW,
        log:
            f"{LOGS}/personalized/table2_{{prow}}.log",
        benchmark:
            f"{BENCH}/personalized/table2_{{prow}}.tsv"
        params:
            spec=PERS.spec("table2_row"),
        resources:
            **RESOURCES["personalized_table2_row"],
        conda:
            env_file()
        shell:
            "shuffledp personalized table2-row --spec {params.spec:q} --out {output:q} > {log:q} 2>&1"

    rule personalized_report:
        input:
            points=PERS.targets("points", PERS_POINT),
            rows=PERS.targets("table2_row", PERS_ROW),
        output:
            fig_table=f"{RESULTS}/tables/personalized_fig4.parquet",
            pdf=f"{RESULTS}/figures/personalized_fig4.pdf",
            png=report(
                f"{RESULTS}/figures/personalized_fig4.png",
                caption="../report/personalized_fig4.rst",
                category=PERS_CATEGORY,
                subcategory="Fig. 4",
            ),
            t2=f"{RESULTS}/tables/personalized_table2.parquet",
            t2_md=report(
                f"{RESULTS}/tables/personalized_table2.md",
                caption="../report/personalized_table2.rst",
                category=PERS_CATEGORY,
                subcategory="Table 2",
            ),
            claims=f"{RESULTS}/tables/personalized_claims.parquet",
            claims_md=report(
                f"{RESULTS}/tables/personalized_claims.md",
                caption="../report/personalized_claims.rst",
                category=PERS_CATEGORY,
                subcategory="claims",
            ),
        log:
            f"{LOGS}/personalized/report.log",
        benchmark:
            f"{BENCH}/personalized/report.tsv"
        params:
            spec=PERS.spec("report"),
        resources:
            **RESOURCES["personalized_report"],
        conda:
            env_file()
        shell:
            "shuffledp personalized report --spec {params.spec:q} --points {input.points:q}"
            " --rows {input.rows:q} --fig-table {output.fig_table:q} --pdf {output.pdf:q}"
            " --png {output.png:q} --t2 {output.t2:q} --t2-md {output.t2_md:q}"
            " --claims {output.claims:q} --claims-md {output.claims_md:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(
        [
            rules.personalized_report.output.pdf,
            rules.personalized_report.output.png,
            rules.personalized_report.output.t2,
            rules.personalized_report.output.t2_md,
            rules.personalized_report.output.claims,
            rules.personalized_report.output.claims_md,
        ]
    )
