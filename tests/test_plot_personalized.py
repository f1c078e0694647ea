"""Personalized Fig. 4: a curve that is not a proven bound (HPS with the paper's clone weights, CCC)
says so in its label and is drawn apart from the bounds; an n where a bound has no finite eps_s is
marked, not left as a silent gap."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.experiments import personalized  # noqa: E402
from shuffledp.plotting import personalized as pp  # noqa: E402


def _table(fv_infinite_from: int | None = None) -> pd.DataFrame:
    rows = []
    pure, approx = ["hps", "bgn", "fv", "ccc", "lzx", "hpsvalid"], ["hps", "fv", "ccc"]
    for mech, bounds in (("laplace", pure), ("gaussian", approx)):
        for k, b in enumerate(bounds):
            for n in (1000, 3000, 10000):
                for seed in (0, 1):
                    v = (1 + 0.1 * k) / np.sqrt(n) + 0.001 * seed
                    if b == "fv" and mech == "gaussian" and fv_infinite_from and n >= fv_infinite_from:
                        v = np.inf
                    rows.append({"bound": b, "setting": "uniform1", "mechanism": mech, "n": n, "seed": seed,
                                 "eps_central": v})
    return pd.DataFrame(rows)


def _legend_texts(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_labels_say_which_curves_are_not_bounds():
    fig = pp.draw_fig4(_table(), 1e-5)
    texts = _legend_texts(fig)
    hps = [t for t in texts if t.startswith("HPS, the paper")]
    ccc = [t for t in texts if t.startswith("CCC")]
    assert len(hps) == 1 and "not a proven bound" in hps[0]
    assert len(ccc) == 1 and "not a bound" in ccc[0] and "approximation" in ccc[0]
    for t in texts:
        if t.startswith(("BGN", "FV", "LZX", "HPS, valid")):
            assert "upper bound" in t and "not" not in t
    plt.close(fig)


def test_not_bounds_are_dotted_and_hollow_and_the_bounds_are_not():
    fig = pp.draw_fig4(_table(), 1e-5)
    for ax in fig.axes:
        for ln in ax.get_lines():
            lab = ln.get_label()
            if lab.startswith("_"):
                continue
            apart = ln.get_linestyle() == ":" and ln.get_markerfacecolor() == "none"
            assert apart == ("not" in lab), lab
    plt.close(fig)


def test_no_finite_eps_is_marked_and_explained_only_when_it_happens():
    fig = pp.draw_fig4(_table(fv_infinite_from=10000), 1e-5)
    assert pp.NO_FINITE_LABEL in _legend_texts(fig)
    gauss = fig.axes[1]  # the Gaussian row
    marks = [ln for ln in gauss.get_lines() if ln.get_label().startswith("_") and ln.get_marker() == "^"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [10000]
    plt.close(fig)
    fig = pp.draw_fig4(_table(), 1e-5)
    assert pp.NO_FINITE_LABEL not in _legend_texts(fig)
    plt.close(fig)


def test_the_experiments_call_still_writes_both_files(tmp_path):
    personalized.plot_fig4(_table(), str(tmp_path / "f.pdf"), str(tmp_path / "f.png"), 1e-5)
    assert (tmp_path / "f.pdf").stat().st_size > 0 and (tmp_path / "f.png").stat().st_size > 0
