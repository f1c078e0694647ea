"""Collect the personalized-bounds jobs: Figure 4, Table 2 (beside the paper's values), claims."""

import sys

import pandas as pd

from shuffledp.experiments import personalized as E
from shuffledp.io import write_parquet, write_text

sm = snakemake  # noqa: F821
with open(sm.log[0], "w") as log:
    sys.stderr = log
    p = sm.params
    fig = pd.concat([pd.read_parquet(f) for f in sm.input.points], ignore_index=True)
    fig = fig.sort_values(["setting", "mechanism", "bound", "n", "seed"], kind="stable").reset_index(drop=True)
    write_parquet(fig, sm.output.fig_table)
    E.plot_fig4(fig, sm.output.pdf, sm.output.png, float(p.delta_central))
    t2 = E.table2([pd.read_parquet(f) for f in sm.input.rows], p.t2_setting, int(p.t2_n))
    write_parquet(t2, sm.output.t2)
    cap = (f"Table 2 (Liu et al. CIKM'24): delta_s of each bound, {p.t2_setting}, n = {p.t2_n}, "
           f"delta_l = {p.delta_local}, Gaussian mechanism; 'paper' = the paper's printed value (reference "
           f"data copied from its Table 2), not computed here. Scale: {p.scale}.")
    write_text(sm.output.t2_md, E.table2_markdown(t2, cap))
    cl = E.claims(fig, t2, p.scale)
    write_parquet(cl, sm.output.claims)
    write_text(sm.output.claims_md, E.claims_markdown(cl))
    print(cl.to_string(), file=log)
