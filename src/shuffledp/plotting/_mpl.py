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

__all__ = ["plt"]
