"""Figures 2-6 of the segmented paper: error against the blanket rate m, log-log axes.

Our protocol's measured error (mean over repetitions, 95% band) and its theoretical MSE bound
(Section 5.2, from the accountant table) against m; the five baselines as flat lines. Every series
has its own (colour, marker, line style); the baselines' hollow markers sit at different m, so
baselines with equal error stay visible. The y range comes from the baselines and the central part
of each curve: the spikes of the sound accountant at integer m (its lambda collapses there) would
stretch the axis by decades, so a point outside the range is drawn as an off-scale marker at the
panel's edge, explained in the legend (its value is in the summary table).

With ``segmented.baseline_accounting: [ours, paper]`` the summary also holds the four shuffle
baselines as the paper calibrated them (``<baseline>_paper``); they are drawn beside ours, labelled
"<baseline> (paper's calibration)", as flat lines in a darker shade of their baseline's colour,
densely dotted, with filled markers (our calibration's markers are hollow). A summary without them
draws exactly the figure it drew before.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.experiments import segmented as ex
from shuffledp.io import save_figure_files
from shuffledp.plotting._mpl import plt, tight_layout
from shuffledp.plotting._style import (
    level_line,
    mark_off_scale,
    off_scale_handle,
    robust_log_limits,
    unique_legend,
)

PNG_DPI = 130  # the figure is made at its PNG's dpi (io.save_figure_files)
BOUND_LABEL = "Ours, MSE bound"
PAPER_CALIBRATION = "paper's calibration"
_PAPER_LS = (0, (1, 1))  # densely dotted: the paper-calibrated variants
# series -> style: colour, marker and line style differ for every pair of series
STYLE = {
    ex.OURS: dict(color="tab:blue", marker="o", ls="-", ms=5, lw=1.6, zorder=6),
    "bound": dict(color="tab:red", marker="x", ls="--", ms=5, lw=1.2, zorder=5),
    ex.OURS_PAPER: dict(color="tab:cyan", marker="s", ls=":", ms=5, lw=1.4, mfc="none", mew=1.2, zorder=7),
    "subexp_local": dict(color="tab:gray", marker="v", ls=":", lw=1.4),
    "subexp_shuffle": dict(color="tab:brown", marker="^", ls="-."),
    "mm_shuffle": dict(color="tab:orange", marker="D", ls="--"),
    "sepmm": dict(color="tab:green", marker="P", ls=(0, (5, 1.5, 1, 1.5, 1, 1.5))),
    "wsepmm": dict(color="tab:purple", marker="h", ls="-"),
    # the paper-calibrated variants: a darker shade of their baseline's colour, filled markers
    "subexp_shuffle_paper": dict(color="#4e2a22", marker="<", ls=_PAPER_LS, mfc="#4e2a22"),
    "mm_shuffle_paper": dict(color="#a34700", marker="d", ls=_PAPER_LS, mfc="#a34700"),
    "sepmm_paper": dict(color="#145a14", marker="X", ls=_PAPER_LS, mfc="#145a14"),
    "wsepmm_paper": dict(color="#4b2a7b", marker="p", ls=_PAPER_LS, mfc="#4b2a7b"),
}
BASELINES = (*ex.UNIFORM_BASELINES, *ex.LEVEL_BASELINES, *ex.PAPER_BASELINES)  # legend order
# solid lines below dashed ones, so that a dashed line on top of an equal solid one shows both; the
# dotted paper-calibrated variants on top
_BASE_Z = {"wsepmm": 2.0, "subexp_local": 2.2, "subexp_shuffle": 2.4, "sepmm": 2.6, "mm_shuffle": 2.8,
           "wsepmm_paper": 3.0, "subexp_shuffle_paper": 3.1, "sepmm_paper": 3.2, "mm_shuffle_paper": 3.3}


def series_label(protocol: str) -> str:
    """A series' legend label: a paper-calibrated variant is its baseline's label with
    "(paper's calibration)"."""
    if protocol in ex.PAPER_BASELINES:
        return f"{ex.LABELS[ex.base_protocol(protocol)]} ({PAPER_CALIBRATION})"
    return ex.LABELS[protocol]


def _curves(p: pd.DataFrame) -> list[tuple[str, str, pd.DataFrame, str]]:
    """The m-curves of a panel: (key, label, rows sorted by m, column)."""
    ours = p[p["protocol"] == ex.OURS].sort_values("m")
    ref = p[p["protocol"] == ex.OURS_PAPER].sort_values("m")
    out = [(ex.OURS, ex.LABELS[ex.OURS], ours, "error_mean")]
    if not ours.empty and ours["mse_bound"].notna().any():
        out.append(("bound", BOUND_LABEL, ours, "mse_bound"))
    out.append((ex.OURS_PAPER, ex.LABELS[ex.OURS_PAPER], ref, "error_mean"))
    return [c for c in out if not c[2].empty]


def _levels(p: pd.DataFrame) -> list[tuple[str, float]]:
    """The baselines of a panel (protocol, error), in legend order."""
    out = []
    for proto in BASELINES:
        b = p[p["protocol"] == proto]
        if not b.empty:
            out.append((proto, float(b["error_mean"].iloc[0])))
    return out


def panel_limits(p: pd.DataFrame) -> tuple[float, float] | None:
    """The y range of a panel: the baselines and the central part of each m-curve."""
    return robust_log_limits([v for _, v in _levels(p)], [c[2][c[3]].to_numpy() for c in _curves(p)])


def _draw(ax, p: pd.DataFrame) -> None:
    curves, levels = _curves(p), _levels(p)
    for key, label, rows, col in curves:
        ax.plot(rows["m"], rows[col], label=label, **STYLE[key])
        if key == ex.OURS:
            ax.fill_between(rows["m"], rows["ci_lo"].clip(lower=1e-12), rows["ci_hi"], color="tab:blue",
                            alpha=0.2, lw=0, zorder=4)
    ms = p["m"].dropna()
    x0, x1 = (float(ms.min()), float(ms.max())) if not ms.empty else (0.1, 10.0)
    for k, (proto, v) in enumerate(levels):
        style = {"lw": 1.4, "ms": 5, "mfc": "none", **STYLE[proto]}
        level_line(ax, x0, x1, v, k, len(levels), label=series_label(proto), zorder=_BASE_Z.get(proto, 2.0), **style)


def off_scale_notes(p: pd.DataFrame, lims, where: str) -> list[str]:
    """One caption line per off-scale point of our protocol's error in a panel, with what the run
    itself says about it: the error, the MSE bound, and the largest calibrated Poisson rate lambda_k
    at that m (near 0: the accountant admits almost no data-dependent message there, so the estimate
    is nearly all blanket noise)."""
    if lims is None:
        return []
    ours = p[p["protocol"] == ex.OURS].sort_values("m")
    lam = [c for c in ours.columns if c.startswith("lambda_") and ours[c].notna().any()]
    out = []
    for _, r in ours.iterrows():
        e = float(r["error_mean"])
        if not (np.isfinite(e) and (e > lims[1] or e < lims[0])):
            continue
        text = f"{where}, m = {r['m']:.3g}: MSE {e:.3g}"
        if "mse_bound" in r and np.isfinite(r["mse_bound"]):
            text += f" (its bound {r['mse_bound']:.3g})"
        if lam:
            top = float(np.nanmax(r[lam].to_numpy(float)))
            text += f", largest lambda_k {top:.2g}" + (" (almost no data-dependent message at this m)"
                                                        if top < 0.05 else "")
        out.append(text)
    return out


def _panel(ax, summ: pd.DataFrame, ds, st, n, dataset_labels: Mapping, notes: list | None = None) -> int:
    """One panel: our protocol's error (and bound, and the printed-Theorem-3 reference) against m,
    the baselines as flat lines. Returns the number of off-scale points; appends to ``notes`` a
    caption line for each off-scale point of our error (:func:`off_scale_notes`)."""
    p = ex.panel_frame(summ, ds, n, st)
    _draw(ax, p)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lims, clipped = panel_limits(p), 0
    if lims is not None:
        ax.set_ylim(*lims)
        for slot, (key, _, rows, col) in enumerate(_curves(p)):
            clipped += mark_off_scale(ax, rows["m"], rows[col], lims, STYLE[key]["color"], slot=slot,
                                      values=slot == 0)  # our error's value written beside its marker
    ax.set_xlabel("blanket messages per user m")
    ax.set_ylabel("MSE (sum over items)")
    ours = p[p["protocol"] == ex.OURS]
    s = int(ours["s"].iloc[0]) if not ours.empty and np.isfinite(ours["s"].iloc[0]) else None
    label = dataset_labels.get(ds, ds)
    ax.set_title(f"{label}, {st}, n = {n:,}" + (f", s = {s}" if s else ""), fontsize=9)
    if notes is not None:
        notes += off_scale_notes(p, lims, f"{label} {st} n = {n:,}")
    ax.grid(True, which="both", alpha=0.3)
    return clipped


def draw(summ: pd.DataFrame, fig_spec: Mapping, ns, note: str = "", dataset_labels: Mapping | None = None):
    """The figure (panels: datasets x settings x n), not yet saved."""
    dataset_labels = dataset_labels or {}
    combos = [(ds, st, n) for ds in fig_spec["datasets"] for st in fig_spec["settings"] for n in ns]
    cols = min(len(combos), 4)
    rows = (len(combos) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.1 * rows + 0.6), squeeze=False,
                             dpi=PNG_DPI)
    notes: list[str] = []
    clipped = sum(_panel(ax, summ, ds, st, n, dataset_labels, notes)
                  for ax, (ds, st, n) in zip(axes.ravel(), combos, strict=False))
    for ax in axes.ravel()[len(combos):]:
        ax.axis("off")
    handles, labels = unique_legend(axes.ravel())
    if clipped:
        h = off_scale_handle()
        handles.append(h)
        labels.append(h.get_label())
    ncol = max(1, min(5, len(labels), int(3.6 * cols / 2.8)))  # a label is about 2.8 in wide
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    title = fig_spec.get("title", "")
    if note:
        title = f"{title} ({note})" if title else note
    if notes:  # the caption says what the run shows at each off-scale point of our error
        title = (f"{title}\n" if title else "") + textwrap.fill("Off scale: " + "; ".join(notes), int(28 * cols))
    if title:
        fig.suptitle(title, fontsize=10 if not notes else 8)
    legend_h = 0.12 + 0.2 * -(-len(labels) // ncol)  # the legend's rows, in inches
    # the paper-calibrated variants' longer legend makes the figure taller (a figure without them keeps its size)
    extra = max(0.0, legend_h - 1.2) if any(lab.endswith(f"({PAPER_CALIBRATION})") for lab in labels) else 0.0
    height = 3.1 * rows + 0.6 + extra
    if extra:
        fig.set_size_inches(3.6 * cols, height)
    top = 0.95 if not notes else max(0.6, 1 - (0.13 * (title.count("\n") + 1) + 0.03) / height)
    tight_layout(fig, rect=(0, legend_h / height, 1, top))
    return fig


def figure(summ: pd.DataFrame, fig_spec: Mapping, ns, out_stem: str, note: str = "",
           dataset_labels: Mapping | None = None) -> list[str]:
    """Draw one figure (panels: datasets x settings x n) and write ``out_stem``.pdf/.png."""
    fig = draw(summ, fig_spec, ns, note, dataset_labels)
    out = [f"{out_stem}.pdf", f"{out_stem}.png"]
    save_figure_files(fig, out[0], out[1], dpi=PNG_DPI)
    plt.close(fig)
    return out
