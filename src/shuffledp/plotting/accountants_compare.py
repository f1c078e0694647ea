"""Figure of the accountant comparison: eps against n, one panel per (mechanism, eps0)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.io import save_figure_file  # noqa: E402

STYLE = {"upper": "-", "reference": ":", "lower": "--", "exact": "--"}


def figure(df: pd.DataFrame, pdf: str, png: str, *, scale: str = "default") -> None:
    """Panels: rows = mechanisms, columns = eps0; smallest delta of the table; log-log eps vs n.
    The lower bound and the exact value are dashed, reference curves (not guarantees) dotted."""
    delta = float(df["delta"].min())
    d = df[(df["delta"] == delta) & np.isfinite(df["eps"])]
    mechs = list(dict.fromkeys(df["mechanism"]))
    eps0s = sorted(df["eps0"].unique())
    fig, axes = plt.subplots(len(mechs), len(eps0s), figsize=(3.2 * len(eps0s), 2.6 * len(mechs)),
                             squeeze=False, sharex=True)
    bounds = list(dict.fromkeys(df["bound"]))
    colors = {b: plt.cm.tab20(i % 20) for i, b in enumerate(bounds)}
    for i, m in enumerate(mechs):
        for j, e0 in enumerate(eps0s):
            ax = axes[i][j]
            sel = d[(d["mechanism"] == m) & (d["eps0"] == e0)]
            for b in bounds:
                s = sel[sel["bound"] == b].sort_values("n")
                if len(s) == 0:
                    continue
                kind = s["kind"].iloc[0]
                ax.plot(s["n"], s["eps"], STYLE.get(kind, "-"), marker=".", color=colors[b],
                        label=f"{b} ({kind})" if kind != "upper" else b)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{m}, eps0 = {e0:g}", fontsize=9)
            if i == len(mechs) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel("shuffled eps")
    handles, labels = [], []
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(f"Shuffle accountants compared (delta = {delta:g}; scale: {scale})", fontsize=10)
    fig.tight_layout(rect=(0, 0.08, 1, 0.97))
    for path, kw in ((pdf, {}), (png, {"dpi": 110})):
        save_figure_file(fig, path, bbox_inches="tight", **kw)
    plt.close(fig)


def gain_figure(gain: pd.DataFrame, pdf: str, png: str, *, scale: str = "default") -> None:
    """What the tighter accountant buys: left, the local eps each accountant certifies against
    eps_s (solid: best, dashed: today); right, the MSE gain in per cent. One colour per
    (randomizer, n)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11.0, 3.6))
    keys = list(dict.fromkeys(zip(gain["randomizer"], gain["n"], strict=True)))
    for i, (r, n) in enumerate(keys):
        s = gain[(gain["randomizer"] == r) & (gain["n"] == n)].sort_values("eps_s")
        c = plt.cm.tab20(i % 20)
        lab = f"{r}, n = {n:.0e}"
        mk = "." if len(s) > 1 else "o"  # a single eps_s (the subset exponential rows): visible points
        a1.plot(s["eps_s"], s["eps_l_best"], "-", marker=mk, color=c, label=lab)
        a1.plot(s["eps_s"], s["eps_l_today"], "--", marker=mk, color=c, mfc="none")
        a2.plot(s["eps_s"], s["mse_gain_pct"], "-", marker=mk, color=c, label=lab)
    a1.set_xlabel("eps_s")
    a1.set_ylabel("certified local eps (solid/filled: best,\ndashed/open: today)")
    a2.set_xlabel("eps_s")
    a2.set_ylabel("MSE gain (%)")
    a2.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"What the tighter accountant buys (delta_s = delta_n / n; subexp: the segmented setting's; "
                 f"scale: {scale})", fontsize=10)
    fig.tight_layout()
    for path, kw in ((pdf, {}), (png, {"dpi": 110})):
        save_figure_file(fig, path, bbox_inches="tight", **kw)
    plt.close(fig)
