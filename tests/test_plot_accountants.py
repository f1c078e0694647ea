"""The accountant comparison figure: few series per panel, one style per bound everywhere, the
legend outside the panels, and the reference values (not bounds) drawn and labelled as such."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.plotting import accountants_compare as ac  # noqa: E402

UPPER = ["blanket-bennett", "blanket-hoeffding", "decomposition", "fmt21", "fmt21-closed-form", "fmt23",
         "variation-ratio", "lzx"]


def _table() -> pd.DataFrame:
    """Two randomizers x two eps0 x three n: every upper bound above the lower bound, the two
    reference values below it (as HPS-uniform and CCC are at large eps0)."""
    rows = []
    for mech in ("krr2", "general"):
        for e0 in (1.0, 4.0):
            for n in (1000, 10000, 100000):
                low = e0 / np.sqrt(n)
                vals = {b: low * (1.2 + 0.3 * i) for i, b in enumerate(UPPER)}
                vals |= {"hps-uniform": 0.5 * low, "ccc": 0.8 * low, "lower": low}
                for b, v in vals.items():
                    kind = "reference" if b in ("hps-uniform", "ccc") else ("lower" if b == "lower" else "upper")
                    rows.append({"mechanism": mech, "eps0": e0, "n": n, "delta": 1e-6, "bound": b, "kind": kind,
                                 "eps": v, "best_lower": low, "best_upper": vals[UPPER[0]]})
                rows.append({"mechanism": mech, "eps0": e0, "n": n, "delta": 1e-6, "bound": "exact",
                             "kind": "exact" if mech == "krr2" else "lower",
                             "eps": low if n == 1000 else np.nan, "best_lower": low, "best_upper": vals[UPPER[0]]})
    return pd.DataFrame(rows)


def _series(ax):
    return [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]


def test_each_panel_holds_at_most_eight_bounds_and_every_bound_is_drawn_somewhere():
    fig = ac.draw(_table())
    drawn = set()
    for ax in fig.axes:
        bounds = [ln for ln in _series(ax) if mcolors.to_hex(ln.get_color()) != "#000000"]
        assert len(bounds) <= 8, [ln.get_label() for ln in bounds]  # the old figure had 11 in each
        drawn |= {ln.get_label() for ln in bounds}
    assert len(drawn) == len(UPPER) + 2
    plt.close(fig)


def test_a_bound_has_one_colour_marker_and_line_style_in_every_panel_and_no_two_share_them():
    fig = ac.draw(_table())
    style: dict[str, set] = {}
    for ax in fig.axes:
        for ln in _series(ax):
            key = (mcolors.to_hex(ln.get_color()), ln.get_marker(), str(ln.get_linestyle()),
                   str(ln.get_markerfacecolor()))  # the two exact stars differ by their fill only
            style.setdefault(ln.get_label(), set()).add(key)
    assert all(len(v) == 1 for v in style.values()), style
    keys = [next(iter(v)) for v in style.values()]
    assert len(set(keys)) == len(keys)
    plt.close(fig)


def test_legend_is_outside_every_panel():
    fig = ac.draw(_table())
    fig.canvas.draw()
    leg = fig.legends[0].get_window_extent()
    right = max(ax.get_window_extent().x1 for ax in fig.axes)
    assert leg.x0 >= right
    plt.close(fig)


def test_reference_values_are_labelled_not_bounds_and_drawn_dotted_and_hollow():
    fig = ac.draw(_table())
    seen = {}
    for ax in fig.axes:
        for ln in _series(ax):
            seen[ln.get_label()] = ln
    refs = [lab for lab in seen if lab.startswith(("HPS", "CCC"))]
    assert len(refs) == 2
    for lab in refs:
        assert "not a bound" in lab and "reference" in lab
        assert seen[lab].get_linestyle() == ":" and seen[lab].get_markerfacecolor() == "none"
    for lab, ln in seen.items():  # no bound is drawn as the references are (dotted and hollow)
        if lab not in refs and ln.get_marker() not in ("*", "None", None, ""):
            assert not (ln.get_linestyle() == ":" and ln.get_markerfacecolor() == "none"), lab
    # the region below the best lower bound is shaded and named in the legend
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert ac.SHADE_LABEL in texts
    plt.close(fig)


def test_figure_keeps_its_call_and_writes_both_files(tmp_path):
    ac.figure(_table(), str(tmp_path / "a.pdf"), str(tmp_path / "a.png"), scale="default")
    assert (tmp_path / "a.pdf").stat().st_size > 0 and (tmp_path / "a.png").stat().st_size > 0
