# Multidimensional categorical data under shuffle DP: MHM vs FLAME vs TCM (Figures 3, 4, 5,
# Table 3) and OGM vs NOGM (Figure 10), plus a claims table. Jobs
# (shuffledp.experiments.multidim.jobs): Adult's categorical attributes (prepare, when `adult` is
# among the datasets: real data beside the IPUMS extracts), one per (dataset, mechanism, eps, batch
# of repetitions) and per (dataset, method, ratio, batch), then one report.
from shuffledp.experiments import multidim as MDX

if "multidim" in config:  # the stage is skipped when the config has no multidim section
    MDX.check_config(config)
    MD = JobTable(MDX.jobs(config))
    MD_DIR = f"{RESULTS}/multidim"
    MD_DATA = f"{PROC}/ipums_{{dataset}}.parquet"
    MD_ADULT = f"{MD_DIR}/data/{{dataset}}.parquet"  # dataset = adult (MDX.ADULT)
    MD_CATEGORY = "Multidimensional categorical data (Wang et al., Computers & Security 2025)"  # --report

    # the input table of each dataset: an IPUMS extract, or Adult's categorical table
    MD_INPUT = {
        ds: (MD_ADULT if ds == MDX.ADULT else MD_DATA).format(dataset=ds) for ds in config["multidim"]["datasets"]
    }
    # snakemake --report: caption workflow/report/<name>.rst, one subcategory per figure / table
    MD_REPORT = {
        name: dict(caption=f"../report/{name}.rst", category=MD_CATEGORY, subcategory=sub)
        for name, sub in [
            ("multidim_fig3", "Fig. 3"),
            ("multidim_fig4", "Fig. 4"),
            ("multidim_fig5", "Fig. 5"),
            ("multidim_fig10", "Fig. 10"),
            ("multidim_table3", "Table 3"),
            ("multidim_claims", "claims"),
        ]
    }


    rule multidim_prepare:
        input:
            f"{PROC}/adult.parquet",
        output:
            MD_ADULT,
        log:
            f"{LOGS}/multidim/prepare_{{dataset}}.log",
        benchmark:
            f"{BENCH}/multidim/prepare_{{dataset}}.tsv"
        wildcard_constraints:
            dataset=MDX.ADULT,
        params:
            spec=MD.spec("prepare"),
        resources:
            **RESOURCES["multidim_prepare"],
        conda:
            env_file()
        shell:
            "shuffledp multidim prepare --spec {params.spec:q} --input {input:q} --out {output:q} > {log:q} 2>&1"
    MD_UNIFORM = f"{MD_DIR}/uniform/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet"
    MD_TIMINGS = f"{MD_DIR}/timings/{{dataset}}_{{mechanism}}_eps{{eps}}_b{{batch}}.parquet"
    MD_PERSONAL = f"{MD_DIR}/personal/{{dataset}}_{{method}}_r{{ratio}}_b{{batch}}.parquet"

    rule multidim_uniform:
        input:
            lambda w: MD_INPUT[w.dataset],
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
            lambda w: MD_INPUT[w.dataset],
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
            data=[MD_INPUT[ds] for ds in config["multidim"]["datasets"]],
        output:
            fig3=f"{RESULTS}/figures/multidim_fig3.pdf",
            fig3_png=report(f"{RESULTS}/figures/multidim_fig3.png", **MD_REPORT["multidim_fig3"]),
            fig4=f"{RESULTS}/figures/multidim_fig4.pdf",
            fig4_png=report(f"{RESULTS}/figures/multidim_fig4.png", **MD_REPORT["multidim_fig4"]),
            fig5=f"{RESULTS}/figures/multidim_fig5.pdf",
            fig5_png=report(f"{RESULTS}/figures/multidim_fig5.png", **MD_REPORT["multidim_fig5"]),
            fig10=f"{RESULTS}/figures/multidim_fig10.pdf",
            fig10_png=report(f"{RESULTS}/figures/multidim_fig10.png", **MD_REPORT["multidim_fig10"]),
            table3=f"{RESULTS}/tables/multidim_table3.parquet",
            table3_md=report(f"{RESULTS}/tables/multidim_table3.md", **MD_REPORT["multidim_table3"]),
            claims=f"{RESULTS}/tables/multidim_claims.parquet",
            claims_md=report(f"{RESULTS}/tables/multidim_claims.md", **MD_REPORT["multidim_claims"]),
            claims_timings=f"{RESULTS}/tables/multidim_claims_timings.parquet",  # wall clock: not reproducible
            claims_timings_md=report(f"{RESULTS}/tables/multidim_claims_timings.md", **MD_REPORT["multidim_claims"]),
            uniform=f"{RESULTS}/tables/multidim_uniform.parquet",
            personal=f"{RESULTS}/tables/multidim_personal.parquet",
            timings=f"{RESULTS}/tables/multidim_timings.parquet",
        log:
            f"{LOGS}/multidim/report.log",
        benchmark:
            f"{BENCH}/multidim/report.tsv"
        params:
            spec=MD.spec("report"),
            tables=lambda wc, output: os.path.dirname(output.claims),
            figures=lambda wc, output: os.path.dirname(output.fig3),
        resources:
            **RESOURCES["multidim_report"],
        conda:
            env_file()
        shell:
            "shuffledp multidim report --spec {params.spec:q} --uniform {input.uniform:q}"
            " --timings {input.timings:q} --personal {input.personal:q} --data {input.data:q}"
            " --tables-dir {params.tables:q} --figures-dir {params.figures:q} > {log:q} 2>&1"

    FINAL_TARGETS.extend(rules.multidim_report.output)
