"""matplotlib as the figure jobs use it: the Agg backend (no display, the same bytes everywhere) and
``pyplot`` (:data:`plt`).

Each module that draws imports :data:`plt` from here, so a job that only renders tables
(:mod:`~shuffledp.plotting.html_table`) never imports matplotlib. matplotlib's private functions are
not touched: its text-measurement and mathtext caches, kept per renderer, could be shared across a
job's saves, but only by replacing private functions (the scan of tests/test_binom_backend.py refuses
private names reached through strings).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "tight_layout"]


def tight_layout(fig, **kwargs) -> None:
    """``fig.tight_layout(**kwargs)``, each Axes measured once. With a ``rect``, matplotlib's tight
    layout measures every Axes' tight box twice on the same renderer with nothing moved in between
    (a first pass gives the margins, the second fits them into ``rect``), so the second pass returns
    the first's boxes; each Axes' ``get_tightbbox`` is memoized for the call (an instance attribute
    over the method, removed afterwards, as matplotlib's own bbox_inches="tight" overrides
    ``apply_aspect``). The layout is the one ``fig.tight_layout`` computes, bit for bit."""
    added = []
    for ax in fig.axes:
        if "get_tightbbox" not in vars(ax):
            ax.get_tightbbox = _memoized(ax.get_tightbbox)
            added.append(ax)
    try:
        fig.tight_layout(**kwargs)
    finally:
        for ax in added:
            del ax.get_tightbbox


def _memoized(method):
    boxes: dict = {}

    def get_tightbbox(renderer=None, *args, **kwargs):
        key = (id(renderer), args, tuple(sorted(kwargs.items())))
        if key not in boxes:
            boxes[key] = (renderer, method(renderer, *args, **kwargs))  # the renderer kept: its id stays its own
        return boxes[key][1]

    return get_tightbbox
