"""Figure of the accountant comparison: eps against n, one panel per (mechanism, eps0)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from shuffledp.io import save_figure_files
from shuffledp.plotting._mpl import plt, tight_layout
from shuffledp.plotting._style import unique_legend

# The two groups of series, one row of panels each: the sound upper bounds of the shuffle model, and
# the personalized paper's baselines in their uniform case (LZX is a bound; HPS-uniform and CCC are
# reference values only). A bound missing here joins the first group if it is an upper bound.
SOUND = ("decomposition", "variation-ratio", "fmt21", "fmt21-closed-form", "fmt23", "blanket-hoeffding",
         "blanket-bennett")
PERSONALIZED = ("lzx", "hps-uniform", "ccc")
GROUPS = (("sound upper bounds", SOUND), ("personalized baselines", PERSONALIZED))
# one (colour, marker, line style) per bound, the same in every panel
BOUND_STYLE = {
    "decomposition": dict(color="tab:blue", marker="o", ls="-"),
    "variation-ratio": dict(color="tab:orange", marker="s", ls="--"),
    "fmt21": dict(color="tab:green", marker="^", ls="-."),
    "fmt21-closed-form": dict(color="tab:red", marker="v", ls=":"),
    "fmt23": dict(color="tab:purple", marker="D", ls="-", mfc="none", ms=6.5),  # hollow, larger: often
    # equal to the variation ratio, whose square then shows inside it
    "blanket-hoeffding": dict(color="tab:brown", marker="P", ls="--"),
    "blanket-bennett": dict(color="tab:pink", marker="X", ls="-."),
    "lzx": dict(color="tab:olive", marker="h", ls="-"),
    # reference values, not bounds: hollow markers, dotted
    "hps-uniform": dict(color="tab:cyan", marker="o", ls=":", mfc="none"),
    "ccc": dict(color="tab:gray", marker="s", ls=":", mfc="none"),
}
BOUND_LABEL = {
    "hps-uniform": "HPS, uniform (reference, not a bound here: the paper's weights for the Laplace randomizer)",
    "ccc": "CCC (reference, not a bound: Gaussian-DP CLT approximation)",
    "lzx": "LZX (upper bound, any eps0-LDP randomizer)",
}
LOWER_STYLE = dict(color="black", marker="_", ls="--", lw=1.3, zorder=4)
BEST_UPPER_STYLE = dict(color="black", ls="-", lw=0.8, alpha=0.6, zorder=1)
SHADE = dict(color="0.88", lw=0, zorder=0)
PNG_DPI = 110  # the figures are made at their PNG's dpi (io.save_figure_files)
# the legend's long labels run past the 4.1 in kept for it: the figure is that much wider, so that the
# legend lies inside it (the saved files are cut to the tight box, the blank rest never shows) and the
# PNG is cut out of the figure's one drawing (io.save_figure_files)
LEGEND_SPILL = 2.5
SHADE_LABEL = "below the best lower bound: no valid upper bound lies here"


def _style(bound: str, kind: str) -> dict:
    """The bound's fixed style; an unknown bound a grey one (dotted if it is not an upper bound)."""
    st = BOUND_STYLE.get(bound, dict(color="0.4", marker=".", ls="-" if kind == "upper" else ":"))
    return {"ms": 4.5, "lw": 1.3, **st}


def _group_of(bound: str, kind: str) -> int:
    for i, (_, members) in enumerate(GROUPS):
        if bound in members:
            return i
    return 0 if kind == "upper" else 1


def _floor(ax, sel: pd.DataFrame, with_best_upper: bool) -> None:
    """The best lower bound (dashed black), the region below it (shaded), the exact value where
    enumerated, and in the baselines' panels the best sound upper bound (thin black) to compare."""
    low = sel.groupby("n")["best_lower"].first().dropna().sort_index()
    low = low[low > 0]
    if not low.empty:
        ax.plot(low.index, low.values, label="best lower bound (lower or exact)", **LOWER_STYLE)
        ax.fill_between(low.index, low.values * 1e-6, low.values, label=SHADE_LABEL, **SHADE)
    ex = sel[(sel["bound"] == "exact")].sort_values("n")
    for kind, mfc, lab in (("exact", "black", "exact (binary RR, enumerated)"),
                           ("lower", "none", "exact binary RR (a lower bound for the class)")):
        e = ex[ex["kind"] == kind]
        if not e.empty:
            ax.plot(e["n"], e["eps"], ls="none", marker="*", ms=9, color="black", mfc=mfc, zorder=6, label=lab)
    if with_best_upper:
        up = sel.groupby("n")["best_upper"].first().dropna().sort_index()
        if not up.empty:
            ax.plot(up.index, up.values, label="best sound upper bound (of the top row)", **BEST_UPPER_STYLE)


def _panel(ax, sel: pd.DataFrame, group: int, bounds: list[tuple[str, str]]) -> None:
    for b, kind in bounds:
        if _group_of(b, kind) != group or b == "exact" or kind == "lower":
            continue
        s = sel[sel["bound"] == b].sort_values("n")
        if len(s):
            ax.plot(s["n"], s["eps"], label=BOUND_LABEL.get(b, b), zorder=3, **_style(b, kind))
    ax.set_xscale("log")
    ax.set_yscale("log")
    _floor(ax, sel, with_best_upper=group == 1)


def _y_range(sel: pd.DataFrame) -> tuple[float, float]:
    """One y range for both panels of a (mechanism, eps0): every eps drawn, with a margin."""
    v = pd.concat([sel["eps"], sel["best_lower"]]).to_numpy(dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    return (float(v.min()) / 1.6, float(v.max()) * 1.6) if v.size else (1e-3, 10.0)


def _legend(fig, axes, left: float) -> None:
    """One legend outside the panels, on the right (its left edge ``left`` inches from the figure's):
    the groups' bounds in their order, then the lower bound, the shaded region and the exact values."""
    handles, labels = unique_legend(axes)
    by = dict(zip(labels, handles, strict=True))
    from matplotlib.lines import Line2D

    order, out = [], []
    for title, members in GROUPS:
        order.append((title + ":", Line2D([], [], ls="none")))
        order += [(BOUND_LABEL.get(b, b), by.get(BOUND_LABEL.get(b, b))) for b in members]
    order.append(("every panel:", Line2D([], [], ls="none")))
    known = {lab for lab, _ in order}
    order += [(lab, by[lab]) for lab in labels if lab not in known]
    out = [(lab, h) for lab, h in order if h is not None]
    leg = fig.legend([h for _, h in out], [lab for lab, _ in out], loc="upper left", fontsize=7.5, frameon=False,
                     bbox_to_anchor=(left / fig.get_figwidth(), 0.96))
    for t in leg.get_texts():
        if t.get_text().endswith(":"):  # the group headings
            t.set_fontweight("bold")


def figure(df: pd.DataFrame, pdf: str, png: str, *, scale: str = "default") -> None:
    """Draw the comparison (:func:`draw`) and write it as ``pdf`` and ``png``."""
    fig = draw(df, scale=scale)
    save_figure_files(fig, pdf, png, dpi=PNG_DPI, tight=True)
    plt.close(fig)


def draw(df: pd.DataFrame, *, scale: str = "default"):
    """Panels: two rows per mechanism (the sound upper bounds; the personalized paper's baselines
    with the best sound bound beside them), one column per eps0; the smallest delta of the table;
    log-log eps vs n. Each bound has one colour, marker and line style in every panel; reference
    values (not bounds) are dotted with hollow markers; the region below the best lower bound is
    shaded; the legend is outside, on the right."""
    delta = float(df["delta"].min())
    d = df[(df["delta"] == delta) & np.isfinite(df["eps"])]
    mechs = list(dict.fromkeys(df["mechanism"]))
    eps0s = sorted(df["eps0"].unique())
    bounds = list(dict.fromkeys(zip(df["bound"], df["kind"], strict=True)))
    rows = [(m, g) for m in mechs for g in range(len(GROUPS))]
    panels = 2.9 * len(eps0s) + 0.1  # inches: the panels' area, then 4.1 in of the figure's for the legend
    width = panels + 4.1 + LEGEND_SPILL
    fig, axes = plt.subplots(len(rows), len(eps0s), figsize=(width, 2.05 * len(rows) + 0.5),
                             squeeze=False, sharex=True, dpi=PNG_DPI)
    for i, (m, g) in enumerate(rows):
        for j, e0 in enumerate(eps0s):
            ax, sel = axes[i][j], d[(d["mechanism"] == m) & (d["eps0"] == e0)]
            _panel(ax, sel, g, bounds)
            ax.set_ylim(*_y_range(sel))  # the same y range for both rows of a mechanism
            ax.set_title(f"{m}, eps0 = {e0:g}", fontsize=8)
            ax.tick_params(which="both", labelsize=7)
            if i == len(rows) - 1:
                ax.set_xlabel("n")
            if j == 0:
                ax.set_ylabel(f"{GROUPS[g][0]}\nshuffled eps", fontsize=8)
    _legend(fig, axes.ravel(), panels + 0.1)
    fig.suptitle(f"Shuffle accountants compared (delta = {delta:g}; scale: {scale})", fontsize=10,
                 x=0.5 * (panels + 4.1) / width)  # centred over the panels and the legend's 4.1 in
    tight_layout(fig, rect=(0, 0, panels / width, 0.98))
    return fig


def gain_figure(gain: pd.DataFrame, pdf: str, png: str, *, scale: str = "default") -> None:
    """What the tighter accountant buys: left, the local eps each accountant certifies against
    eps_s (solid: best, dashed: today); right, the MSE gain in per cent. One colour per
    (randomizer, n)."""
    # laid out at matplotlib's default dpi, not the PNG's: its legend, beside the right panel, sets the panels'
    # widths, and measured at 110 dpi its text is a few per cent narrower (the PNG would be 9 px narrower)
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
    save_figure_files(fig, pdf, png, dpi=PNG_DPI, tight=True)
    plt.close(fig)
