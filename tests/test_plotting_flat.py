"""Figures that would show nothing say so: flat per-user eps' panels are annotated, and personalized
Fig. 4 draws its band over seeds only when there are two seeds or more."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.experiments import personalized  # noqa: E402
from shuffledp.plotting.peruser import _flat_note  # noqa: E402


def test_flat_eps_prime_panel_is_annotated_and_a_spread_one_is_not():
    fig, (a, b) = plt.subplots(1, 2)
    _flat_note(a, [2.0, 2.0, 2.0])
    _flat_note(b, [1.9, 2.0, 1.95])
    assert len(a.texts) == 1 and "no user amplified" in a.texts[0].get_text()
    assert len(b.texts) == 0
    plt.close(fig)


def _fig_table(seeds):
    rows = [{"bound": "hps", "setting": "uniform1", "mechanism": "laplace", "n": n, "seed": s,
             "eps_central": 1.0 / n ** 0.5 + 0.01 * s} for n in (1000, 10000) for s in seeds]
    return pd.DataFrame(rows)


def test_fig4_band_only_with_two_seeds_or_more(tmp_path, monkeypatch):
    made = []
    real = plt.Axes.fill_between

    def spy(self, *args, **kwargs):
        made.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(plt.Axes, "fill_between", spy)
    personalized.plot_fig4(_fig_table([0]), str(tmp_path / "a.pdf"), str(tmp_path / "a.png"), 1e-5)
    assert made == []
    personalized.plot_fig4(_fig_table([0, 1, 2]), str(tmp_path / "b.pdf"), str(tmp_path / "b.png"), 1e-5)
    assert made == [1]
