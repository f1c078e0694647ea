"""The audits figure: per audit, the empirical lower bound, the accountant's upper bound and the
exact epsilon of the audited pair where known; the planted bug's lower bound (open triangle). The
raw_* rows audit CALM and HDG end to end from raw Adult and Loan records; where they also bound delta
at the accountant's epsilon (``delta_lb``), a second panel shows that bound against the claimed delta."""

from __future__ import annotations

import numpy as np

PNG_DPI = 150  # the figure is made at its PNG's dpi (io.save_figure_files)


def figure(df, pdf_path: str, png_path: str) -> None:
    from shuffledp.io import save_figure_files
    from shuffledp.plotting._mpl import plt

    d = df[df["verdict"] != "not run"].reset_index(drop=True)
    y = np.arange(len(d))[::-1]
    dd = d[d["delta_lb"].notna()] if "delta_lb" in d else d.iloc[:0]
    if len(dd):
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.0, 0.42 * max(len(d), 3) + 1.2), sharey=True,
                                     gridspec_kw={"width_ratios": [2.2, 1]}, dpi=PNG_DPI)
    else:
        fig, ax = plt.subplots(figsize=(7.0, 0.42 * max(len(d), 3) + 1.2), dpi=PNG_DPI)
    ax.barh(y, d["eps_ub"], color="#c7d7ea", label="accountant upper bound")
    bad = d["verdict"] == "violation"
    ax.scatter(d.loc[~bad, "eps_lb"], y[~bad.to_numpy()], color="#1f4e79", zorder=3, label="empirical lower bound")
    if bad.any():
        ax.scatter(d.loc[bad, "eps_lb"], y[bad.to_numpy()], color="#c0392b", zorder=3,
                   label="empirical lower bound (violation)")
    if "mutant_eps_lb" in d:
        mu = d["mutant_eps_lb"].notna()
        ax.scatter(d.loc[mu, "mutant_eps_lb"], y[mu.to_numpy()], marker="^", facecolors="none",
                   edgecolors="#7f7f7f", zorder=2, label="lower bound with the planted bug")
    ex = d["eps_exact"].notna()
    if ex.any():
        ax.scatter(d.loc[ex, "eps_exact"], y[ex.to_numpy()], marker="x", color="black", zorder=4,
                   label="exact (audited pair)")
    ax.set_yticks(y)
    ax.set_yticklabels([f"{a} ({k})" for a, k in zip(d["audit"], d["kind"], strict=True)], fontsize=8)
    ax.set_xlabel("epsilon")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Privacy audits: empirical lower bound vs accountant", fontsize=10)
    if len(dd):
        _delta_panel(bx, dd, y[dd.index.to_numpy()])
    fig.tight_layout()
    save_figure_files(fig, pdf_path, png_path, dpi=PNG_DPI)
    plt.close(fig)


def _delta_panel(bx, dd, yd) -> None:
    """The raw rows' lower bound on delta at the accountant's epsilon against the claimed delta."""
    bx.scatter(dd["delta"], yd, marker="|", s=200, color="black", zorder=3, label="claimed delta")
    bad = (dd["delta_lb"] > dd["delta"]).to_numpy()
    bx.scatter(dd["delta_lb"], yd, color=np.where(bad, "#c0392b", "#1f4e79"), zorder=4, label="lower bound on delta")
    if "mutant_delta_lb" in dd:
        bx.scatter(dd["mutant_delta_lb"], yd, marker="^", facecolors="none", edgecolors="#7f7f7f", zorder=2,
                   label="with the planted bug")
    bx.set_xlim(-0.02, 1.02)
    bx.set_xlabel("delta at the accountant's epsilon")
    bx.legend(fontsize=7, loc="best")
    bx.set_title("raw-record audits: delta", fontsize=10)
