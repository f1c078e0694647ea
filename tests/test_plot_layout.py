"""shuffledp.plotting._mpl.tight_layout: matplotlib's tight layout with each Axes measured once."""

from __future__ import annotations

import numpy as np

from shuffledp.plotting._mpl import plt, tight_layout


def _fig():
    fig, axes = plt.subplots(2, 3, figsize=(9, 5))
    for k, ax in enumerate(axes.ravel()):
        ax.loglog([0.1, 1, 10 ** (k + 1)], [1e-3, 1e-1, 1])
        ax.set_title(f"panel {k}")
        ax.set_ylabel("a long label\nover two lines" if k % 3 == 0 else "y")
    fig.legend(["a"], loc="lower center")
    return fig


def test_the_layout_is_matplotlibs_with_each_axes_measured_once(monkeypatch):
    """With a rect matplotlib measures every Axes twice (nothing moves in between): the memoized
    layout gives the same subplot parameters bit for bit, measures each Axes once, and leaves no
    override behind."""
    from matplotlib.axes import Axes

    rect = (0, 0.12, 0.8, 0.95)
    ref = _fig()
    ref.tight_layout(rect=rect)
    calls = []
    real = Axes.get_tightbbox
    monkeypatch.setattr(Axes, "get_tightbbox", lambda self, *a, **k: (calls.append(self), real(self, *a, **k))[1])
    fig = _fig()
    tight_layout(fig, rect=rect)
    assert len(calls) == len(fig.axes)  # once each (matplotlib's own: twice each)
    assert all("get_tightbbox" not in vars(ax) for ax in fig.axes)
    got = [ax.get_position().bounds for ax in fig.axes]
    want = [ax.get_position().bounds for ax in ref.axes]
    assert np.array_equal(np.array(got), np.array(want))
    calls.clear()
    ref.tight_layout(rect=rect)
    assert len(calls) == 2 * len(ref.axes)
    plt.close(fig)
    plt.close(ref)
