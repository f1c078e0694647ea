"""Figures 6-9 of the multidimensional seed: MSE against eps_s, MHM vs FLAME, one panel per dataset."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.io import save_figure_files
from shuffledp.plotting._mpl import plt
from shuffledp.plotting._pair import tight_layout_at

PNG_DPI = 130  # the PNG's; the layout is measured at it (plotting._pair.tight_layout_at)
STYLE = {"mhm": {"marker": "o", "label": "MHM"}, "flame": {"marker": "s", "label": "FLAME"},
         "exact": {"marker": "x", "label": "no noise"}}


def _band(runs: pd.DataFrame | None, ds: str, comp: str, metric: str) -> pd.DataFrame | None:
    """eps -> 95% t interval (lo, hi) of the mean of ``metric`` over repetitions (lo kept positive for
    the log axis); None without repetitions."""
    if runs is None or not len(runs) or metric not in runs.columns:
        return None
    from shuffledp.claims.engine import t_ppf

    r = runs[(runs.dataset == ds) & (runs.component == comp)]
    g = r.groupby("eps")[metric].agg(["mean", "std", "count"])
    g = g[g["count"] >= 2]
    if not len(g):
        return None
    h = t_ppf(0.975, g["count"] - 1) * g["std"] / np.sqrt(g["count"])
    return pd.DataFrame({"lo": np.maximum(g["mean"] - h, g["mean"] * 1e-3), "hi": g["mean"] + h})


def figure(summ: pd.DataFrame, metric: str, datasets: Sequence[str], labels: Mapping[str, str], title: str,
           notes: Mapping[str, str], pdf: str | Path, png: str | Path, runs: pd.DataFrame | None = None) -> None:
    """The figure as ``pdf`` and ``png``; a panel whose data is a stand-in says so in its title.
    ``runs``: the per-repetition rows; each curve then carries its 95% t band over repetitions (the
    interval the claims decide on), where a point has 2 or more."""
    for path in (pdf, png):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    width = max(7.0, 4.2 * max(1, len(datasets)))
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(width, 4.0), squeeze=False)
    for ax, ds in zip(axes[0], datasets, strict=False):
        sub = summ[summ.dataset == ds]
        for comp, g in sub.groupby("component"):
            g = g.sort_values("eps")
            st = STYLE.get(comp, {"marker": ".", "label": comp})
            (line,) = ax.plot(g.eps, g[metric], marker=st["marker"], label=st["label"])
            band = _band(runs, ds, comp, metric)
            if band is not None:
                ax.fill_between(band.index, band["lo"], band["hi"], color=line.get_color(), alpha=0.18, lw=0)
        ax.set_yscale("log")
        ax.set_xlabel("eps_s (delta_s = 1/n)")
        ax.set_ylabel("MSE")
        head = labels.get(ds, ds)
        if notes.get(ds):
            head += "\n" + notes[ds].upper()
        ax.set_title(head, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    standin = [n for n in notes.values() if n]
    text = title + ("\n(built from STAND-IN data: " + "; ".join(sorted(set(standin))) + ")" if standin else "")
    fig.suptitle("\n".join(textwrap.fill(line, int(width * 13)) for line in text.split("\n")), fontsize=10)
    tight_layout_at(fig, PNG_DPI)  # measured on the renderer the PNG reuses
    save_figure_files(fig, pdf, png, dpi=PNG_DPI)
    plt.close(fig)
