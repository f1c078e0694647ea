# Personalized shuffle privacy bounds (Liu et al., CIKM'24): Figure 4 (eps_s vs n), Table 2 (delta_s
# vs eps_s) and the claims table. One job per (bound, setting, mechanism, n, seed) point.
from shuffledp.experiments.personalized import check_config as personalized_check_config

personalized_check_config(config)

# the stage is skipped when the configuration has no `personalized:` section
if "personalized" in config:
    PERS = config["personalized"]
    PERS_DIR = f"{RESULTS}/personalized"
    PERS_MECH_BOUNDS = {"laplace": PERS["bounds_pure"], "gaussian": PERS["bounds_approx"]}
    PERS_POINTS = [
        f"{PERS_DIR}/points/{b}_{s}_{m}_{n}_{seed}.parquet"
        for m, bounds in PERS_MECH_BOUNDS.items()
        for b in bounds
        for s in PERS["settings"]
        for n in PERS["n_grid"]
        for seed in PERS["seeds"]
    ]
    PERS_T2 = PERS["table2"]
    PERS_T2_ROWS = [r["name"] for r in PERS_T2["rows"]]
    PERS_ROW = {r["name"]: r for r in PERS_T2["rows"]}


    wildcard_constraints:
        pbound="[a-z0-9]+",
        psetting="[a-z0-9]+",
        pmech="laplace|gaussian",
        pn="[0-9]+",
        pseed="[0-9]+",


    rule personalized_point:
        output:
            f"{PERS_DIR}/points/{{pbound}}_{{psetting}}_{{pmech}}_{{pn}}_{{pseed}}.parquet",
        log:
            f"{LOGS}/personalized/point_{{pbound}}_{{psetting}}_{{pmech}}_{{pn}}_{{pseed}}.log",
        benchmark:
            f"{BENCH}/personalized/point_{{pbound}}_{{psetting}}_{{pmech}}_{{pn}}_{{pseed}}.tsv"
        params:
            bound="{pbound}",
            setting="{psetting}",
            mechanism="{pmech}",
            n="{pn}",
            seed=lambda wc: int(config["seed"]) + int(wc.pseed),
            delta_central=PERS["delta_central"],
            delta_local=lambda wc: 0.0 if wc.pmech == "laplace" else PERS["delta_local_approx"],
            calibration=PERS["calibration"],
        resources:
            mem_mb=1000,
            runtime=10,
        conda:
            env_file()
        script:
            "../scripts/personalized_point.py"


    rule personalized_table2_row:
        output:
            f"{PERS_DIR}/table2_rows/{{prow}}.parquet",
        log:
            f"{LOGS}/personalized/table2_{{prow}}.log",
        benchmark:
            f"{BENCH}/personalized/table2_{{prow}}.tsv"
        params:
            bound=lambda wc: PERS_ROW[wc.prow]["bound"],
            method=lambda wc: PERS_ROW[wc.prow].get("method", "theorem2"),
            calibration=lambda wc: PERS_ROW[wc.prow].get("calibration", PERS["calibration"]),
            clone_factor=lambda wc: PERS_ROW[wc.prow].get("clone_factor"),
            setting=PERS_T2["setting"],
            n=PERS_T2["n"],
            seed=lambda wc: int(config["seed"]) + int(PERS_T2["seed"]),
            delta_local=PERS["delta_local_approx"],
            eps_grid=PERS_T2["eps_central"],
        resources:
            mem_mb=1000,
            runtime=10,
        conda:
            env_file()
        script:
            "../scripts/personalized_table2_row.py"


    rule personalized_report:
        input:
            points=PERS_POINTS,
            rows=expand(f"{PERS_DIR}/table2_rows/{{prow}}.parquet", prow=PERS_T2_ROWS),
        output:
            fig_table=f"{RESULTS}/tables/personalized_fig4.parquet",
            pdf=f"{RESULTS}/figures/personalized_fig4.pdf",
            png=f"{RESULTS}/figures/personalized_fig4.png",
            t2=f"{RESULTS}/tables/personalized_table2.parquet",
            t2_md=f"{RESULTS}/tables/personalized_table2.md",
            claims=f"{RESULTS}/tables/personalized_claims.parquet",
            claims_md=f"{RESULTS}/tables/personalized_claims.md",
        log:
            f"{LOGS}/personalized/report.log",
        benchmark:
            f"{BENCH}/personalized/report.tsv"
        params:
            delta_central=PERS["delta_central"],
            delta_local=PERS["delta_local_approx"],
            t2_setting=PERS_T2["setting"],
            t2_n=PERS_T2["n"],
            scale=CONFIG_NAME,
        resources:
            mem_mb=2000,
            runtime=10,
        conda:
            env_file()
        script:
            "../scripts/personalized_report.py"


    FINAL_TARGETS.extend(
        [
            f"{RESULTS}/figures/personalized_fig4.pdf",
            f"{RESULTS}/figures/personalized_fig4.png",
            f"{RESULTS}/tables/personalized_table2.parquet",
            f"{RESULTS}/tables/personalized_table2.md",
            f"{RESULTS}/tables/personalized_claims.parquet",
            f"{RESULTS}/tables/personalized_claims.md",
        ]
    )
