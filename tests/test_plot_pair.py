"""plotting._pair: one layout per figure for its PDF and PNG gives the PNG that matplotlib's own
``savefig(bbox_inches="tight")`` / ``tight_layout()`` gives, pixel for pixel."""

from __future__ import annotations

import numpy as np

from shuffledp.io import save_figure_file, save_figure_files
from shuffledp.plotting._mpl import plt
from shuffledp.plotting._pair import log_ticks_in_view, save_pair_tight, tight_layout_at


def _figure(layout=None):
    fig, axes = plt.subplots(1, 2, figsize=(7, 3), layout=layout)
    x = np.array([0.2, 0.6, 1.0, 2.0, 4.0])
    axes[0].plot(x, 3e-3 / x ** 2, marker="o", label="a")
    axes[0].plot(x, 2e-4 / x, marker="s", label="b")
    axes[0].set_yscale("log")
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend()
    axes[1].plot(x, [4.0, 3.9, 3.7, 3.6, 3.4], marker="o")
    axes[1].set_xscale("log", base=2)
    sc = axes[1].scatter(x, x, c=np.log10(x + 1), s=4)
    fig.colorbar(sc, ax=axes[1], label="log10 size")
    fig.suptitle("a title\non two lines")
    return fig


def _pixels(path) -> np.ndarray:
    return plt.imread(str(path))


def test_tight_pair_gives_matplotlibs_tight_png(tmp_path):
    ref = _figure("constrained")
    save_figure_file(ref, tmp_path / "ref.png", dpi=120, bbox_inches="tight")
    plt.close(ref)
    fig = _figure("constrained")
    save_pair_tight(fig, tmp_path / "f.pdf", tmp_path / "f.png", dpi=120, pdf_raster_dpi=240)
    plt.close(fig)
    a, b = _pixels(tmp_path / "ref.png"), _pixels(tmp_path / "f.png")
    assert a.shape == b.shape and np.array_equal(a, b)
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")


def test_tight_layout_pair_gives_the_plain_png(tmp_path):
    ref = _figure()
    ref.set_dpi(130)
    ref.tight_layout()
    save_figure_file(ref, tmp_path / "ref.png", dpi=130)
    plt.close(ref)
    fig = _figure()
    tight_layout_at(fig, 130)
    save_figure_files(fig, tmp_path / "f.pdf", tmp_path / "f.png", dpi=130)
    plt.close(fig)
    assert np.array_equal(_pixels(tmp_path / "ref.png"), _pixels(tmp_path / "f.png"))


def test_log_locators_give_only_the_ticks_in_view():
    fig = _figure()
    fig.canvas.draw()
    axis = fig.axes[0].yaxis
    lo, hi = fig.axes[0].get_ylim()
    raw = [list(axis.get_majorticklocs()), list(axis.get_minorticklocs())]
    log_ticks_in_view(fig)
    kept = [list(axis.get_majorticklocs()), list(axis.get_minorticklocs())]
    plt.close(fig)
    for r, k in zip(raw, kept, strict=True):
        assert k == [v for v in r if lo <= v <= hi]
    assert sum(map(len, kept)) < sum(map(len, raw))  # the log locator did give ticks beyond the view
