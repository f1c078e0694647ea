# Multidimensional categorical data under shuffle DP: MHM vs FLAME vs TCM (Figures 3, 4, 5,
# Table 3) and OGM vs NOGM (Figure 10), plus a claims table. Jobs
# (shuffledp.experiments.multidim.jobs): one per (dataset, mechanism, eps, batch of repetitions) and
# per (dataset, method, ratio, batch), then one report.
from shuffledp.experiments import multidim as MDX

if "multidim" in config:  # the stage is skipped when the config has no multidim section
    MDX.check_config(config)
    MD = JobTable(MDX.jobs(config))
    MD_DIR = f"{RESULTS}/multidim"
    MD_DATA = f"{PROC}/ipums_{{dataset}}.parquet"
    MD_UNIFORM = f"{MD_DIR}/uniform/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet"
    MD_TIMINGS = f"{MD_DIR}/timings/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet"
    MD_PERSONAL = f"{MD_DIR}/personal/{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.parquet"

    rule multidim_uniform:
        input:
            MD_DATA,
        output:
            table=MD_UNIFORM,
            timings=MD_TIMINGS,
        log:
            f"{LOGS}/multidim/uniform_{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.log",
        benchmark:
            f"{BENCH}/multidim/uniform_{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.tsv"
        wildcard_constraints:
            mechanism="mhm|flame|tcm",
            batch=r"\d+",
        params:
            spec=MD.spec("uniform"),
        resources:
            **RESOURCES["multidim_uniform"],
        conda:
            env_file()
        shell:
            "shuffledp multidim uniform --spec {params.spec:q} --data {input:q} --out {output.table:q}"
            " --timings {output.timings:q} > {log:q} 2>&1"

    rule multidim_personal:
        input:
            MD_DATA,
        output:
            MD_PERSONAL,
        log:
            f"{LOGS}/multidim/personal_{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.log",
        benchmark:
            f"{BENCH}/multidim/personal_{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.tsv"
        wildcard_constraints:
            method="ogm|nogm",
            ratio=r"\d+-\d+-\d+",
            batch=r"\d+",
        params:
            spec=MD.spec("personal"),
        resources:
            **RESOURCES["multidim_personal"],
        conda:
            env_file()
        shell:
            "shuffledp multidim personal --spec {params.spec:q} --data {input:q} --out {output:q} > {log:q} 2>&1"

    rule multidim_report:
        input:
            uniform=MD.targets("uniform", MD_UNIFORM),
            timings=MD.targets("uniform", MD_TIMINGS),
            personal=MD.targets("personal", MD_PERSONAL),
            data=expand(MD_DATA, dataset=config["multidim"]["datasets"]),
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
            spec=MD.spec("report"),
            tables=lambda wc, output: os.path.dirname(output.claims[0]),
            figures=lambda wc, output: os.path.dirname(output.fig3[0]),
        resources:
            **RESOURCES["multidim_report"],
        conda:
            env_file()
        shell:
            "shuffledp multidim report --spec {params.spec:q} --uniform {input.uniform:q}"
            " --timings {input.timings:q} --personal {input.personal:q} --data {input.data:q}"
            " --tables-dir {params.tables:q} --figures-dir {params.figures:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(rules.multidim_report.output)
