"""The audits' names and default settings (light: the audits stage reads them while the workflow
parses; the science is :mod:`shuffledp.experiments.audits`)."""

from __future__ import annotations

#: the end-to-end audits of CALM and HDG (MHM component) from RAW records of Adult and Loan
#: (shuffledp.experiments.audits_raw): raw_<framework>_<fixture>
RAW_FIXTURES = ("adult_min", "adult_max", "loan_low", "loan_tie", "loan_split")
RAW_AUDITS = tuple(f"raw_{fw}_{fx}" for fx in RAW_FIXTURES for fw in ("hdg", "calm"))
#: every audit row, in the table's order (the last two: randomizers no experiment runs)
NAMES = ("krr_shuffle", "flame_local", "mhm_local", "tcm_local", "calm_mhm", "calm_flame", "hdg_mhm", "hdg_flame",
         "subexp_shuffle", "segmented_item", "segmented_count", "mm_item", "peruser_alg1", *RAW_AUDITS, "oue", "olh")
#: the raw-record fixtures whose population is not 1,000 records
RAW_N = {"loan_split": 9000}
#: the audits that call their protocol once per trial (its function takes one dataset)
LOOP_AUDITS = ("segmented_item", "segmented_count", "mm_item")

#: per-audit settings (the config's ``audits.settings`` overrides any key; the stage puts the merged
#: setting in each job's spec)
DEFAULT_SETTINGS: dict[str, dict] = {
    "krr_shuffle": {"k": 3, "eps0": 1.5, "n": 20, "delta": 1e-2},
    "flame_local": {"eps_s": 1.0, "n": 30000, "domains": [4, 4]},
    "mhm_local": {"eps_s": 1.0, "n": 300, "domains": [8, 8, 8]},
    "tcm_local": {"eps_s": 1.0, "n": 10000, "domains": [8, 8, 8]},
    "calm_mhm": {"eps_s": 1.0, "n": 300, "domains": [3, 3, 3, 3], "view_size": 2},
    "calm_flame": {"eps_s": 1.0, "n": 30000, "domains": [3, 3, 3, 3], "view_size": 2},
    "hdg_mhm": {"eps_s": 1.0, "n": 300, "d": 3, "domain": 8},
    "hdg_flame": {"eps_s": 1.0, "n": 30000, "d": 3, "domain": 8},
    "subexp_shuffle": {"n": 20, "d": 4, "eps": 1.0, "delta": 1e-2},
    # m < 1: one blanket trial per user (the planted "one short" leaves none)
    "segmented_item": {"n": 20, "m": 0.5, "d": 3, "eps": 2.0, "delta": 1e-2},
    # a setting where the accountant gives lambda = 1 (the count then tells the set size exactly
    # unless padding is sent; with padding sent it is then the same for both neighbours): n = 200, integer m
    "segmented_count": {"n": 200, "m": 2.0, "d": 4, "eps": 2.0, "delta": 1e-2},
    "mm_item": {"n": 40, "d": 4, "eps": 2.0, "delta": 1e-2},  # the accountant's m < 1 (also over d + 1 bins)
    "peruser_alg1": {"d": 3, "eps": 2.0, "eps1_fraction": 0.5, "c": 0.5, "delta": 1e-2},
    # raw-record audits: n raw records (a seeded sample without replacement, the victim included), coded
    # to HDG's common domain; CALM with views of view_size attributes. loan_split: 9,000 loans (below 5,600
    # users at eps_s = 1 HDG's 1-D grids on Loan's 10 attributes have 2 cells, which hide a renumbering of
    # codes that crosses no cell edge but the middle one; the file holds the pair up to about 9,100)
    **{f"raw_hdg_{fx}": {"n": RAW_N.get(fx, 1000), "eps_s": 1.0, "domain": 16} for fx in RAW_FIXTURES},
    **{f"raw_calm_{fx}": {"n": RAW_N.get(fx, 1000), "eps_s": 1.0, "domain": 16, "view_size": 2,
                          "max_view_cells": 4096}
       for fx in RAW_FIXTURES},
}


