"""Shared drawing helpers: a y range read from the informative part of the curves, off-scale
markers that the legend explains, and horizontal reference lines whose markers never coincide."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

OFF_SCALE_LABEL = "off scale, in the series' colour: value beyond the axis (in the table)"
OFF_SCALE_STYLE = dict(marker="^", ms=8, mec="black", mew=0.8, ls="none")


def _logs(values: Iterable[float]) -> np.ndarray:
    a = np.asarray(list(values), dtype=float)
    a = a[np.isfinite(a) & (a > 0)]
    return np.log10(a)


def central_part(values: Sequence[float], *, fence: float = 4.0, floor: float = 0.25) -> np.ndarray:
    """The points of one curve that are not spikes, in log10 space: within ``fence`` robust
    spreads of the median, the spread being 1.4826 x the median absolute deviation of the log10
    values and at least ``floor`` decades (so a curve keeps at least a decade either side of its
    median, and a smooth trend is never cut). Robust with few points: with 4 points one spike
    moves neither the median nor the median deviation far."""
    lg = _logs(values)
    if lg.size < 3:
        return lg
    med = float(np.median(lg))
    spread = max(1.4826 * float(np.median(np.abs(lg - med))), floor)
    return lg[np.abs(lg - med) <= fence * spread]


def robust_log_limits(levels: Iterable[float], curves: Iterable[Sequence[float]],
                      *, pad: float = 0.06) -> tuple[float, float] | None:
    """y limits of a log axis: every flat level (a baseline) and the central part of every curve,
    padded by ``pad`` of the span (at least 0.05 decades) on each side. Spikes of a curve (far
    outside its inter-quartile range) do not stretch the axis; None when there is nothing finite."""
    parts = [_logs(levels)] + [central_part(c) for c in curves]
    lg = np.concatenate([p for p in parts if p.size]) if any(p.size for p in parts) else np.array([])
    if lg.size == 0:
        return None
    lo, hi = float(lg.min()), float(lg.max())
    margin = max(pad * (hi - lo), 0.05)
    return 10 ** (lo - margin), 10 ** (hi + margin)


def mark_off_scale(ax, x: Sequence[float], y: Sequence[float], lims: tuple[float, float], color,
                   *, slot: int = 0, values: bool = False) -> int:
    """Draw an off-scale marker at the top (or bottom) edge of ``ax`` for every point of (x, y)
    above (below) ``lims``; return how many there are. Series ``slot`` 1, 2, ... stack their
    markers just inside the edge, so that two series clipped at the same x both show; with
    ``values`` the clipped value is written beside its marker."""
    from matplotlib.transforms import blended_transform_factory

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    tr = blended_transform_factory(ax.transData, ax.transAxes)
    count = 0
    step = 0.075 * slot
    for sel, edge, marker in ((y > lims[1], 0.97 - step, "^"), (y < lims[0], 0.03 + step, "v")):
        if sel.any():
            ax.plot(x[sel], [edge] * int(sel.sum()), transform=tr, clip_on=False, zorder=20,
                    color=color, **{**OFF_SCALE_STYLE, "marker": marker})
            count += int(sel.sum())
            for xi, yi in zip(x[sel], y[sel], strict=True) if values else ():
                ax.annotate(f"{yi:.2g}", (xi, edge), xycoords=tr, xytext=(-6, -1), textcoords="offset points",
                            ha="right", va="center", fontsize=6.5, color=color, zorder=20,
                            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
    return count


def off_scale_handle():
    """The legend entry that explains the off-scale markers (drawn in the clipped series' colour)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color="0.75", label=OFF_SCALE_LABEL, **OFF_SCALE_STYLE)


def level_line(ax, x0: float, x1: float, y: float, k: int, of: int, *, per_line: int = 4, **style):
    """A horizontal line at ``y`` from ``x0`` to ``x1`` (log x) with ``per_line`` markers, placed
    so that the markers of line ``k`` of ``of`` never share an x with another line's."""
    t = (np.arange(per_line) + (k + 0.5) / max(of, 1)) / per_line
    lx0, lx1 = np.log10(x0), np.log10(x1)
    xs = np.concatenate([[x0], 10 ** (lx0 + t * (lx1 - lx0)), [x1]])
    return ax.plot(xs, [y] * len(xs), markevery=list(range(1, per_line + 1)), **style)


def unique_legend(axes) -> tuple[list, list[str]]:
    """Handles and labels of every axis, each label once, in order of first appearance."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels and not lab.startswith("_"):
                handles.append(h)
                labels.append(lab)
    return handles, labels
