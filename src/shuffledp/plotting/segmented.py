"""Figures 2-6 of the segmented paper: error against the blanket rate m, log-log axes.

Our protocol's measured error (mean over repetitions, 95% band) and its theoretical MSE bound
(Section 5.2, from the accountant table) against m; the five baselines as flat lines.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.experiments import segmented as ex  # noqa: E402
from shuffledp.io import save_figure_file  # noqa: E402

STYLE = {
    "subexp_local": dict(color="tab:gray", ls=":"),
    "subexp_shuffle": dict(color="tab:brown", ls="-."),
    "mm_shuffle": dict(color="tab:orange", ls="--"),
    "sepmm": dict(color="tab:green", ls="--"),
    "wsepmm": dict(color="tab:purple", ls="-"),
}


def _clip_off_scale(ax, p: pd.DataFrame, ours: pd.DataFrame, ref: pd.DataFrame) -> None:
    """Keep the interesting range readable: clip far-off-scale points (their values are in the
    summary table) at 30x the largest baseline error, marking the clipped ones with arrows."""
    base = p[~p["protocol"].isin(ex.OURS_ALL)]["error_mean"]
    if base.empty:
        return
    lows = [float(base.min())] + [float(o["error_mean"].min()) for o in (ours, ref) if not o.empty]
    top = 30 * max(float(base.max()), max(lows))
    bottom = 0.5 * min(lows)
    if any((o["error_mean"] > top).any() for o in (ours, ref) if not o.empty):
        for o, col in ((ours, "tab:blue"), (ref, "tab:cyan")):
            off = o[o["error_mean"] > top]
            if not off.empty:
                ax.plot(off["m"], [top * 0.8] * len(off), "^", color=col, ms=7)
        ax.set_ylim(bottom, top)


def _panel(ax, summ: pd.DataFrame, ds, st, n, dataset_labels: Mapping) -> None:
    """One panel: our protocol's error (and bound, and the printed-Theorem-3 reference) against m,
    the baselines as flat lines."""
    p = ex.panel_frame(summ, ds, n, st)
    ours = p[p["protocol"] == ex.OURS].sort_values("m")
    if not ours.empty:
        ax.plot(ours["m"], ours["error_mean"], "o-", color="tab:blue", label=ex.LABELS[ex.OURS], zorder=5)
        ax.fill_between(ours["m"], ours["ci_lo"].clip(lower=1e-12), ours["ci_hi"], color="tab:blue",
                        alpha=0.2, lw=0)
        if ours["mse_bound"].notna().any():
            ax.plot(ours["m"], ours["mse_bound"], "x--", color="tab:red", label="Ours, MSE bound")
    ref = p[p["protocol"] == ex.OURS_PAPER].sort_values("m")
    if not ref.empty:
        ax.plot(ref["m"], ref["error_mean"], "s:", color="tab:cyan", ms=4, label=ex.LABELS[ex.OURS_PAPER])
    for proto in (*ex.UNIFORM_BASELINES, *ex.LEVEL_BASELINES):
        b = p[p["protocol"] == proto]
        if not b.empty:
            ax.axhline(float(b["error_mean"].iloc[0]), label=ex.LABELS[proto], lw=1.4, **STYLE[proto])
    ax.set_xscale("log")
    ax.set_yscale("log")
    _clip_off_scale(ax, p, ours, ref)
    ax.set_xlabel("blanket messages per user m")
    ax.set_ylabel("MSE (sum over items)")
    s = int(ours["s"].iloc[0]) if not ours.empty else None
    label = dataset_labels.get(ds, ds)
    ax.set_title(f"{label}, {st}, n = {n:,}" + (f", s = {s}" if s else ""), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)


def figure(summ: pd.DataFrame, fig_spec: Mapping, ns, out_stem: str, note: str = "",
           dataset_labels: Mapping | None = None) -> list[str]:
    """Draw one figure (panels: datasets x settings x n) and write ``out_stem``.pdf/.png."""
    dataset_labels = dataset_labels or {}
    combos = [(ds, st, n) for ds in fig_spec["datasets"] for st in fig_spec["settings"] for n in ns]
    cols = min(len(combos), 4)
    rows = (len(combos) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.1 * rows + 0.6), squeeze=False)
    for ax, (ds, st, n) in zip(axes.ravel(), combos, strict=False):
        _panel(ax, summ, ds, st, n, dataset_labels)
    for ax in axes.ravel()[len(combos):]:
        ax.axis("off")
    handles, labels = axes.ravel()[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    title = fig_spec.get("title", "")
    if note:
        title = f"{title} ({note})" if title else note
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.08 if rows == 1 else 0.05, 1, 0.95))
    out = [f"{out_stem}.pdf", f"{out_stem}.png"]
    save_figure_file(fig, out[0])
    save_figure_file(fig, out[1], dpi=130)
    plt.close(fig)
    return out
