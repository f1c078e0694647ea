"""Figures. Every figure is written as PDF and PNG with fixed metadata (no timestamps).

The package imports no matplotlib itself: a module that draws selects the Agg backend and imports
pyplot at its top, so a job that only renders tables (:mod:`~shuffledp.plotting.html_table`) does not
pay for matplotlib's import."""

from __future__ import annotations

from pathlib import Path

from shuffledp.io import save_figure_files

PNG_DPI = 150  # save_figure's PNG; a figure made at it is drawn for the PNG on the renderer its layout used


def save_figure(fig, out_base: str | Path) -> list[str]:
    """Write ``<out_base>.pdf`` and ``<out_base>.png`` atomically; return the paths."""
    out_base = str(out_base)
    for suffix in ("", ".pdf", ".png"):
        if suffix and out_base.endswith(suffix):
            out_base = out_base[: -len(suffix)]
    paths = [f"{out_base}.{ext}" for ext in ("pdf", "png")]
    save_figure_files(fig, *paths, dpi=PNG_DPI)
    import matplotlib.pyplot as plt  # already loaded by whoever drew the figure

    plt.close(fig)
    return paths


def with_note(title: str, note: str) -> str:
    """A title followed, on its own line, by the stand-in note when there is one."""
    return f"{title}\n[{note}]" if note else title
