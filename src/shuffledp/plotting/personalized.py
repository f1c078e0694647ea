"""Figure 4 of the personalized paper (Liu et al., CIKM'24): central eps_s of each bound against n.

What each curve is, in its legend label: BGN, FV, LZX and HPS with valid Laplace weights (ours) are
upper bounds; HPS as the paper defines it (its clone weights are testing probabilities, which for the
Laplace mechanism exceed the largest valid mixture weight) is not a proven bound, and CCC is a
Gaussian-DP central-limit approximation, not a bound. Those two are drawn dotted with hollow
markers. A bound that gives no finite eps_s at delta_s (FV's Gaussian form, whose added term grows
with n * delta_l and at large n leaves no room in delta_s) gets a marker at the panel's top edge
instead of a silent gap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from shuffledp.io import save_figure_files
from shuffledp.plotting._mpl import plt, tight_layout
from shuffledp.plotting._style import unique_legend

LABELS = {
    "hps": "HPS, the paper's clone weights (not a proven bound)",
    "hpsvalid": "HPS, valid Laplace weights (ours; upper bound)",
    "ccc": "CCC as published (CLT approximation, not a bound)",
    "bgn": "BGN (upper bound)",
    "fv": "FV (upper bound)",
    "lzx": "LZX (upper bound)",
}
PNG_DPI = 120  # the figure is made at its PNG's dpi (io.save_figure_files)
NOT_BOUNDS = ("hps", "ccc")  # drawn dotted, hollow markers
STYLE = {
    "hps": dict(color="C3", marker="o", ls=":", mfc="none"),
    "ccc": dict(color="C2", marker="s", ls=":", mfc="none"),
    "hpsvalid": dict(color="C1", marker="D", ls="--"),
    "bgn": dict(color="C7", marker="v", ls="-"),
    "fv": dict(color="C0", marker="^", ls="-"),
    "lzx": dict(color="C4", marker="P", ls="-."),
}
ORDER = ("hps", "ccc", "hpsvalid", "bgn", "fv", "lzx")
NO_FINITE_LABEL = "no finite eps_s at this delta_s\n(top-edge marker, in the bound's colour)"


def _label(bound: str) -> str:
    return LABELS.get(bound, bound.upper())


def _panel(ax, sub: pd.DataFrame, seeds: int) -> bool:
    """One (setting, mechanism) panel; True when some bound has no finite eps_s at an n."""
    from matplotlib.transforms import blended_transform_factory

    infinite = False
    tr = blended_transform_factory(ax.transData, ax.transAxes)
    present = list(dict.fromkeys(sub["bound"]))
    for b in sorted(present, key=lambda x: ORDER.index(x) if x in ORDER else len(ORDER)):
        grp = sub[sub["bound"] == b]
        st = grp.groupby("n")["eps_central"].agg(["median", "min", "max"])
        style = {"ms": 3.5, "lw": 1.4, **STYLE.get(b, dict(color="0.4", marker="o", ls="-"))}
        fin = st[np.isfinite(st["median"])]
        if not fin.empty:
            ax.plot(fin.index, fin["median"], label=_label(b), **style)
            if seeds > 1:
                ax.fill_between(fin.index, fin["min"], fin["max"], alpha=0.25, color=style["color"], lw=0)
        inf = st[~np.isfinite(st["median"]) & ~st["median"].isna()]
        if not inf.empty:
            ax.plot(inf.index, [0.97] * len(inf), transform=tr, clip_on=False, ls="none", marker="^", ms=6,
                    mec="black", mew=0.6, color=style["color"])
            infinite = True
    ax.set_xscale("log")
    return infinite


def _spread(fig: pd.DataFrame, seeds: int) -> str:
    """The title's note on the band over seeds (it can be thinner than the line)."""
    if seeds <= 1:
        return "one seed: no band"
    st = fig.groupby(["setting", "mechanism", "bound", "n"])["eps_central"].agg(["median", "min", "max"])
    st = st[np.isfinite(st["median"])].dropna()
    widest = float(((st["max"] - st["min"]) / st["median"]).max()) if len(st) else float("nan")
    return f"line = median, band = min..max over {seeds} seeds (widest band {100 * widest:.2g}% of its median)"


def draw_fig4(fig: pd.DataFrame, delta_central: float, settings: list[str] | None = None):
    """The figure (rows: Laplace / Gaussian local mechanism, columns: settings), not yet saved."""
    settings = settings or list(dict.fromkeys(fig["setting"]))
    mechs = [m for m in ("laplace", "gaussian") if m in set(fig["mechanism"])]
    f, axes = plt.subplots(len(mechs), len(settings), figsize=(3.5 * len(settings) + 3.6, 3.1 * len(mechs) + 0.3),
                           squeeze=False, sharex=True, dpi=PNG_DPI)
    seeds = int(fig["seed"].nunique()) if len(fig) else 0  # a band needs two seeds or more
    infinite = False
    for i, m in enumerate(mechs):
        for j, s in enumerate(settings):
            ax = axes[i][j]
            infinite |= _panel(ax, fig[(fig["mechanism"] == m) & (fig["setting"] == s)], seeds)
            ax.set_title(f"{s}, {'pure (Laplace)' if m == 'laplace' else 'approx. (Gaussian)'}", fontsize=9)
            if i == len(mechs) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(rf"$\varepsilon_s$ at $\delta_s$={delta_central:g}")
    handles, labels = unique_legend(axes.ravel())
    if infinite:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], ls="none", marker="^", ms=6, mec="black", mew=0.6, color="0.75"))
        labels.append(NO_FINITE_LABEL)
    f.legend(handles, labels, loc="upper left", bbox_to_anchor=(1 - 3.5 / f.get_figwidth(), 0.9), fontsize=7.5,
             frameon=False)
    f.suptitle(f"Personalized shuffle bounds (Liu et al. CIKM'24, Fig. 4); {_spread(fig, seeds)}", fontsize=10)
    tight_layout(f, rect=(0, 0, 1 - 3.6 / f.get_figwidth(), 1))
    return f


def plot_fig4(fig: pd.DataFrame, out_pdf: str, out_png: str, delta_central: float) -> None:
    """Draw Fig. 4 and write it as ``out_pdf`` and ``out_png``."""
    from shuffledp.accountants.special.personalized import SETTINGS

    settings = [s for s in SETTINGS if s in set(fig["setting"])]
    f = draw_fig4(fig, delta_central, settings)
    save_figure_files(f, out_pdf, out_png, dpi=PNG_DPI)
    plt.close(f)
