"""Figures 6-9 of the multidimensional seed: MSE against eps_s, MHM vs FLAME, one panel per dataset."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.io import save_figure_file  # noqa: E402

STYLE = {"mhm": {"marker": "o", "label": "MHM"}, "flame": {"marker": "s", "label": "FLAME"},
         "exact": {"marker": "x", "label": "no noise"}}


def figure(summ: pd.DataFrame, metric: str, datasets: Sequence[str], labels: Mapping[str, str], title: str,
           notes: Mapping[str, str], pdf: str | Path, png: str | Path) -> None:
    """The figure as ``pdf`` and ``png``; a panel whose data is a stand-in says so in its title."""
    for path in (pdf, png):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    width = max(7.0, 4.2 * max(1, len(datasets)))
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(width, 4.0), squeeze=False)
    for ax, ds in zip(axes[0], datasets, strict=False):
        sub = summ[summ.dataset == ds]
        for comp, g in sub.groupby("component"):
            g = g.sort_values("eps")
            st = STYLE.get(comp, {"marker": ".", "label": comp})
            ax.plot(g.eps, g[metric], marker=st["marker"], label=st["label"])
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
    fig.tight_layout()
    save_figure_file(fig, pdf)
    save_figure_file(fig, png, dpi=130)
    plt.close(fig)
