"""One figure written as a PDF and a PNG with one layout: the text is measured once, on the renderer
the PNG then reuses.

matplotlib's Agg canvas keeps its renderer while the figure's pixel size and dpi stay the same, and
the renderer keeps the extents of every text it has measured (tick labels, mathtext). A layout
computed with the figure at the PNG's dpi is therefore measured on the very renderer that draws the
PNG, which then measures nothing again. Only public matplotlib calls are used.
"""

from __future__ import annotations

from os import PathLike

from shuffledp.io import save_figure_file
from shuffledp.plotting._mpl import plt


def tight_layout_at(fig, dpi: float, **kwargs) -> None:
    """``fig.tight_layout(**kwargs)`` measured at ``dpi`` (the PNG's): then save with
    :func:`save_pair` at the same dpi."""
    fig.set_dpi(dpi)
    fig.tight_layout(**kwargs)


def save_pair(fig, pdf: str | PathLike, png: str | PathLike, *, dpi: float) -> None:
    """A figure already laid out (:func:`tight_layout_at` at ``dpi``) as ``pdf`` and ``png``."""
    save_figure_file(fig, pdf)
    save_figure_file(fig, png, dpi=dpi)


def save_pair_tight(fig, pdf: str | PathLike, png: str | PathLike, *, dpi: float,
                    pdf_raster_dpi: float | None = None) -> None:
    """A figure with a layout engine (e.g. ``layout="constrained"``) cropped to its tight bounding box,
    as ``pdf`` and ``png`` (``savefig(..., bbox_inches="tight")`` in one pass): the engine runs once,
    at ``dpi``, and is then switched off; the bounding box (padded by
    ``savefig.pad_inches``) is measured once on that draw's renderer and given to both saves, so
    neither save draws the figure twice. ``pdf_raster_dpi``: the resolution of the PDF's rasterized
    artists (default ``dpi``)."""
    fig.set_dpi(dpi)
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
    fig.set_layout_engine("none")
    bbox = fig.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
    save_figure_file(fig, pdf, dpi=pdf_raster_dpi or dpi, bbox_inches=bbox)
    save_figure_file(fig, png, dpi=dpi, bbox_inches=bbox)

