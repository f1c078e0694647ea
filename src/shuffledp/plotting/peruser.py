"""Figures 1-4 of the per-user histogram experiments (PDF and PNG)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.experiments.peruser_names import METHOD_LABELS
from shuffledp.plotting._mpl import plt
from shuffledp.plotting._pair import save_pair_tight

FIGURES = (1, 2, 3, 4)
DPI = 120  # the PNGs'
RASTER_DPI = 180  # the PDF's rasterized scatter (_save)


def figure_paths(prefix: str) -> dict[str, str]:
    """The output names of :func:`all_figures` (``fig<k>_pdf``, ``fig<k>_png``) for files named
    ``<prefix><k>.pdf|png``."""
    return {f"fig{k}_{ext}": f"{prefix}{k}.{ext}" for k in FIGURES for ext in ("pdf", "png")}


def _save(fig, out: Mapping[str, str], k: int) -> None:
    # the PDF's rasterized per-user scatter (Fig. 4) at 1.5 times the PNG's resolution: each rasterized
    # panel is drawn on a buffer of the whole figure's size, so twice the PNG's resolution raised the
    # paper-scale report job's peak memory by about 240 MB (1.5 times: about 70 MB)
    save_pair_tight(fig, out[f"fig{k}_pdf"], out[f"fig{k}_png"], dpi=DPI, pdf_raster_dpi=RASTER_DPI)
    plt.close(fig)


def _notes(df: pd.DataFrame, ds: str) -> str:
    n = df.loc[df.dataset == ds, "note"].dropna().unique() if "note" in df else []
    return f"\n({n[0]})" if len(n) and n[0] else ""


def _flat_note(ax, values, eps: float | None = None,
               text: str = "no user amplified here: {what} for every user") -> None:
    """Say so on a panel whose eps' is the same for every user (nobody amplified at this scale), so
    that a vertical ECDF or a flat line reads as a finding, not as a broken figure."""
    v = pd.Series(values, dtype=float).dropna()
    if len(v) and v.nunique() == 1:
        what = f"eps' = {v.iloc[0]:g}" if eps is None else f"eps'/eps = {v.iloc[0]:g}"
        ax.annotate(text.format(what=what), xy=(0.5, 0.5), xycoords="axes fraction",
                    ha="center", va="center", fontsize=8, bbox={"boxstyle": "round", "fc": "white", "alpha": 0.85})


def _pick(sec: Mapping, runs: pd.DataFrame) -> tuple[float, float, str]:
    fig = sec.get("figure", {}) or {}
    eps = float(fig.get("eps", sorted(runs.eps.unique())[len(runs.eps.unique()) // 2]))
    c = float(fig.get("c", sorted(runs.c.unique())[0]))
    fr = sec.get("eps1_fractions") or [0.5]
    split = f"{float(fig.get('split', fr[len(fr) // 2])):g}"
    return eps, c, split


def _series(runs: pd.DataFrame, split: str) -> list[tuple[str, pd.DataFrame]]:
    out = []
    for m in ("alg1", "alg1T"):
        for cl in sorted(runs.loc[runs.method == m, "clustering"].unique()):
            sel = runs[(runs.method == m) & (runs.clustering == cl) & (runs.split == split) & runs.feasible]
            if len(sel):
                out.append((f"{METHOD_LABELS[m]}, {cl}, eps1={split} eps", sel))
    for m in ("ldp", "global", "oracle", "single"):
        sel = runs[runs.method == m]
        if len(sel):
            out.append((METHOD_LABELS[m], sel))
    return out


def fig1(runs: pd.DataFrame, sec: Mapping, out: Mapping[str, str]) -> None:
    """Mean per-user L1 error and top-3 accuracy against eps; error against median eps'."""
    _, c, split = _pick(sec, runs)
    r = runs[runs.c == c]
    dss = list(dict.fromkeys(r.dataset))
    fig, axes = plt.subplots(3, len(dss), figsize=(4.6 * len(dss), 10.5), squeeze=False, layout="constrained")
    for j, ds in enumerate(dss):
        rd = r[r.dataset == ds]
        for si, (label, sel) in enumerate(_series(rd, split)):
            g = sel.groupby("eps")[["err_mean", "top3_mean", "epsp_numeric_median"]].mean().reset_index()
            ls = "--" if "NON-PRIVATE" in label else "-"
            col = f"C{si % 10}"
            axes[0, j].plot(g.eps, g.err_mean, ls, marker="o", label=label, color=col)
            axes[1, j].plot(g.eps, g.top3_mean, ls, marker="o", label=label, color=col)
            if g.epsp_numeric_median.notna().any():
                axes[2, j].plot(g.epsp_numeric_median, g.err_mean, ls, marker="o", label=label, color=col)
        axes[0, j].set_title(f"{ds}, c={c:g}{_notes(runs, ds)}", fontsize=9)
        axes[0, j].set_ylabel("mean per-user L1 error")
        axes[1, j].set_ylabel("per-user top-3 accuracy")
        axes[2, j].set_ylabel("mean per-user L1 error")
        axes[2, j].set_xlabel("median per-user eps' (numerical clones bound)")
        for i in (0, 1):
            axes[i, j].set_xlabel("local budget eps")
            axes[i, j].set_xscale("log", base=2)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Per-user histograms: utility against eps (Fig. 1)")
    _save(fig, out, 1)


def fig2(users: pd.DataFrame, runs: pd.DataFrame, sec: Mapping, out: Mapping[str, str]) -> None:
    """ECDF of per-user eps'/eps of Algorithm 1 (k-means) per dataset, one line per (eps, split)."""
    _, c, _ = _pick(sec, runs)
    u = users[(users.method == "alg1") & (users.c == c)]
    dss = list(dict.fromkeys(users.dataset))
    fig, axes = plt.subplots(1, len(dss), figsize=(4.6 * len(dss), 3.8), squeeze=False, layout="constrained")
    for j, ds in enumerate(dss):
        ax = axes[0, j]
        ud = u[u.dataset == ds]
        for (eps, split, cl), g in ud.groupby(["eps", "split", "clustering"]):
            if cl != "kmeans" and "kmeans" in set(ud.clustering):
                continue
            # the shuffled copy's amplification (eps' - eps1)/eps2: eps' >= eps1 always (Theorem 2
            # amplifies eps2 only), so eps'/eps could not fall below eps1/eps and would hide it
            x = np.sort((g.eps_prime_numeric.to_numpy() - g.eps1.to_numpy()) / g.eps2.to_numpy())
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"eps={eps:g}, eps1={split} eps")
            xc = np.sort((g.eps_prime_closed.to_numpy() - g.eps1.to_numpy()) / g.eps2.to_numpy())
            ax.step(xc, np.arange(1, len(xc) + 1) / len(xc), where="post", ls=":", color=ax.lines[-1].get_color())
        if len(ud):
            _flat_note(ax, ud.eps_prime_numeric / ud.eps, eps=1.0)
        ax.set_xlabel("(eps' - eps1) / eps2: amplification of the shuffled copy\n"
                      "(solid: numerical clones; dotted: Thm 6 closed form)")
        ax.set_ylabel("share of users (ECDF)")
        ax.set_title(f"{ds}, Algorithm 1 (k-means), c={c:g}{_notes(runs, ds)}", fontsize=9)
    axes[0, 0].legend(fontsize=6)
    fig.suptitle("Distribution of the per-user amplification of eps2 (Fig. 2)")
    _save(fig, out, 2)


def fig3(runs: pd.DataFrame, sec: Mapping, out: Mapping[str, str]) -> None:
    """eps1 trade-off: error and median eps' against eps1/eps; Theorem 4's choice marked."""
    _, c, _ = _pick(sec, runs)
    r = runs[(runs.method == "alg1") & (runs.c == c)]
    dss = list(dict.fromkeys(runs.dataset))
    fig, axes = plt.subplots(2, len(dss), figsize=(4.6 * len(dss), 7), squeeze=False, layout="constrained")
    for j, ds in enumerate(dss):
        rd = r[(r.dataset == ds) & (r.clustering == "kmeans")]
        for eps, g in rd.groupby("eps"):
            f = g[(g.split != "thm4") & g.feasible].copy()
            f["frac"] = f.split.astype(float)
            m = f.groupby("frac")[["err_mean", "epsp_numeric_median"]].mean().reset_index()
            line = axes[0, j].plot(m.frac, m.err_mean, marker="o", label=f"eps={eps:g}")[0]
            axes[1, j].plot(m.frac, m.epsp_numeric_median / eps, marker="o", color=line.get_color())
            t4 = g[g.split == "thm4"]
            if len(t4):
                e1 = float(t4.eps1_thm4.mean())
                frac = e1 / eps
                if frac < 1 and t4.feasible.any():
                    for i in (0, 1):
                        axes[i, j].axvline(frac, color=line.get_color(), ls="--")
                else:
                    y = 0.95 - 0.07 * len(axes[0, j].texts)
                    axes[0, j].annotate(f"Thm 4: eps1={e1:.3g} > eps={eps:g}", xy=(0.02, y),
                                        xycoords="axes fraction", fontsize=7, color=line.get_color())
        feas = rd[(rd.split != "thm4") & rd.feasible]
        if len(feas):
            _flat_note(axes[1, j], feas.epsp_numeric_median / feas.eps, eps=1.0,
                       text="median {what} at every eps and split")
        axes[0, j].set_title(f"{ds}, Algorithm 1 (k-means), c={c:g}{_notes(runs, ds)}", fontsize=9)
        axes[0, j].set_ylabel("mean per-user L1 error")
        axes[1, j].set_ylabel("median eps' / eps (numerical clones)")
        axes[1, j].set_xlabel("eps1 / eps")
        axes[0, j].legend(fontsize=7, loc="best")
    fig.suptitle("The eps1 trade-off; Theorem 4's eps1 dashed where feasible (Fig. 3)")
    _save(fig, out, 3)


def fig4(users: pd.DataFrame, runs: pd.DataFrame, sec: Mapping, out: Mapping[str, str]) -> None:
    """Per user: eps' against the L1 distance to its group's centre, coloured by group size."""
    eps, c, split = _pick(sec, runs)
    u = users[(users.method == "alg1") & (users.c == c) & (users.clustering == "kmeans")]
    # the configured (eps, split), and the largest split at the smallest eps (most amplification)
    dss = list(dict.fromkeys(users.dataset))
    fr = max(sec.get("eps1_fractions") or [float(split)])
    emin = float(min(sec["eps"]))
    sets = [(eps, split), (emin, f"{fr:g}")]
    fig, axes = plt.subplots(len(sets), len(dss), figsize=(5.4 * len(dss), 4.2 * len(sets)), squeeze=False,
                             layout="constrained")
    for i, (e, s) in enumerate(sets):
        for j, ds in enumerate(dss):
            ax = axes[i, j]
            g = u[(u.dataset == ds) & (u.eps == e) & (u.split == s)]
            if len(g):
                sc = ax.scatter(g.dist_centre, g.eps_prime_numeric, c=np.log10(g.group_size), s=4, cmap="viridis",
                                rasterized=True)  # in the PDF: one image, not a path per user
                fig.colorbar(sc, ax=ax, label="log10 group size")
                _flat_note(ax, g.eps_prime_numeric)
            ax.set_title(f"{ds}, eps={e:g}, eps1={s} eps, c={c:g}{_notes(runs, ds)}", fontsize=9)
            ax.set_xlabel("L1 distance to group centre (true histograms)")
            ax.set_ylabel("eps' (numerical clones)")
    fig.suptitle("Per-user eps' against distance to the cluster centre (Fig. 4)")
    _save(fig, out, 4)


def all_figures(runs: pd.DataFrame, users: pd.DataFrame, sec: Mapping, out: Mapping[str, str]) -> None:
    """Figures 1-4, each as PDF and PNG, to ``out["fig<k>_pdf"]`` and ``out["fig<k>_png"]``
    (:func:`figure_paths`)."""
    if "feasible" in runs:
        runs = runs.assign(feasible=runs.feasible.fillna(False).astype(bool))
    fig1(runs, sec, out)
    fig2(users, runs, sec, out)
    fig3(runs, sec, out)
    fig4(users, runs, sec, out)
