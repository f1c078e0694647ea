"""One figure written as a PDF and a PNG with one layout: the text is measured once, on the renderer
the PNG then reuses.

matplotlib's Agg canvas keeps its renderer while the figure's pixel size and dpi stay the same, and
the renderer keeps the extents of every text it has measured (tick labels, mathtext). A layout
computed with the figure at the PNG's dpi is therefore measured on the very renderer that draws the
PNG, which then measures nothing again. Only public matplotlib calls are used.
"""

from __future__ import annotations

from os import PathLike

import numpy as np

from shuffledp.io import save_figure_file
from shuffledp.plotting._mpl import plt, tight_layout


def tight_layout_at(fig, dpi: float, **kwargs) -> None:
    """``fig.tight_layout(**kwargs)`` measured at ``dpi`` (the PNG's; :func:`shuffledp.plotting._mpl.tight_layout`,
    each Axes measured once), then the ticks frozen (:func:`freeze_ticks`): save with
    :func:`shuffledp.io.save_figure_files` at the same dpi."""
    fig.set_dpi(dpi)
    log_ticks_in_view(fig)
    tight_layout(fig, **kwargs)
    freeze_ticks(fig)


def _inside(locs: np.ndarray, view: tuple[float, float], transform) -> np.ndarray:
    """Which ``locs`` an axis draws: inside its view interval, in the axis' scale, up to 1e-10 of
    the interval's length (the rule of matplotlib's tick update)."""
    a, b = sorted(transform.transform(np.asarray(view, dtype=float)))
    t = transform.transform(locs)
    tol = (b - a) * 1e-10
    return (a - tol <= t) & (t <= b + tol)


def _in_view_locator(base):
    """``base`` (a tick locator), its ticks outside the axis' view left out (never drawn)."""
    from matplotlib.ticker import Locator

    class InView(Locator):
        def set_axis(self, axis):
            super().set_axis(axis)
            base.set_axis(axis)

        def __call__(self):
            locs = np.asarray(base(), dtype=float)
            return locs[_inside(locs, self.axis.get_view_interval(), self.axis.get_transform())]

        def tick_values(self, vmin, vmax):
            return base.tick_values(vmin, vmax)

        def nonsingular(self, v0, v1):
            return base.nonsingular(v0, v1)

        def view_limits(self, vmin, vmax):
            return base.view_limits(vmin, vmax)

    return InView()


def log_ticks_in_view(fig) -> None:
    """On every log axis, locators that give only the ticks inside the view: a log locator also
    returns the decades beyond both ends, and an axis makes a tick object (lines and labels) for
    each tick it is given before dropping those outside. Its formatters label a tick from its value
    and the view alone, so the labels drawn are the same."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_major_locator(_in_view_locator(axis.get_major_locator()))
                axis.set_minor_locator(_in_view_locator(axis.get_minor_locator()))


def freeze_ticks(fig) -> None:
    """Replace each axis' tick locators and formatters by fixed ones holding the ticks and labels
    they give now (the figure laid out: view limits and axis lengths final), only those drawn
    (inside the view). The saves that follow draw the same ticks and the same text without asking
    the locators and formatters again on every draw and tight-bounding-box pass."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            view, tr = axis.get_view_interval(), axis.get_transform()
            for ticker, locs, set_loc, set_fmt in (
                    (axis.major, axis.get_majorticklocs(), axis.set_major_locator, axis.set_major_formatter),
                    (axis.minor, axis.get_minorticklocs(), axis.set_minor_locator, axis.set_minor_formatter)):
                if isinstance(ticker.locator, NullLocator):
                    continue
                locs = np.asarray(locs, dtype=float)
                labels = np.asarray(ticker.formatter.format_ticks(locs), dtype=object)
                offset = ticker.formatter.get_offset()
                keep = _inside(locs, view, tr)
                fixed = FixedFormatter(list(labels[keep]))
                fixed.set_offset_string(offset)
                set_loc(FixedLocator(locs[keep]))
                set_fmt(fixed)


def save_pair_tight(fig, pdf: str | PathLike, png: str | PathLike, *, dpi: float,
                    pdf_raster_dpi: float | None = None) -> None:
    """A figure with a layout engine (e.g. ``layout="constrained"``) cropped to its tight bounding box,
    as ``pdf`` and ``png`` (``savefig(..., bbox_inches="tight")`` in one pass): the engine runs once,
    at ``dpi``, and is then switched off; the bounding box (padded by
    ``savefig.pad_inches``) is measured once on that draw's renderer and given to both saves, so
    neither save draws the figure twice. ``pdf_raster_dpi``: the resolution of the PDF's rasterized
    artists (default ``dpi``)."""
    fig.set_dpi(dpi)
    log_ticks_in_view(fig)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    fig.set_layout_engine("none")
    freeze_ticks(fig)
    bbox = fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
    save_figure_file(fig, pdf, dpi=pdf_raster_dpi or dpi, bbox_inches=bbox)
    save_figure_file(fig, png, dpi=dpi, bbox_inches=bbox)

