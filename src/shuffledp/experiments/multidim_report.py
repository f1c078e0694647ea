"""Figures 3, 4, 5, 10, Table 3 and the claims table of the multidimensional seed, from job tables."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.experiments.multidim import ADULT, dataset_label, standin_note
from shuffledp.io import read_provenance, write_table, write_text

LABELS = {"mhm": "MHM", "mhm_paper": "MHM as printed (not eps_l-LDP)", "flame": "FLAME", "tcm": "TCM", "ogm": "OGM",
          "nogm": "NOGM"}
COLORS = {"mhm": "tab:red", "mhm_paper": "tab:orange", "flame": "tab:blue", "tcm": "tab:green", "ogm": "tab:red",
          "nogm": "tab:gray"}
MARKERS = {"mhm": "o", "mhm_paper": "D", "flame": "s", "tcm": "^", "ogm": "o", "nogm": "s"}


def _concat(paths) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _note(provs: dict) -> str:
    """Stand-in warning of the inputs, plus the Adult label ("Adult (real), not IPUMS") when Adult is
    among them: every figure title and table caption of the stage carries it."""
    parts = [standin_note(*provs.values())] if provs else []
    if ADULT in provs:
        parts.append(f"{ADULT} = {dataset_label(ADULT, provs[ADULT])}")
    return "; ".join(p for p in parts if p)


def _title(text: str, note: str) -> str:
    return f"{text}\n({note})" if note else text


PNG_DPI = 130


def summarise_uniform(df: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "mechanism", "eps"]
    agg = df.groupby(keys, sort=True).agg(
        mse=("mse", "mean"), mse_sd=("mse", "std"), reps=("rep", "count"), eps_l=("eps_l", "mean"),
        g=("g", "first"), bits_total=("bits_total", "mean"), TP=("TP", "mean"), FP=("FP", "mean"),
        TN=("TN", "mean"), FN=("FN", "mean"), valid_range=("valid_range", "all"))
    return agg.reset_index()


def use_log_axis(values) -> bool:
    """A log y axis only when the positive values span a decade or more: over less, matplotlib
    labels one or two ticks and the panel reads as flat; a linear axis shows the differences."""
    y = np.asarray(values, dtype=float)
    y = y[np.isfinite(y) & (y > 0)]
    return bool(len(y)) and float(y.max() / y.min()) >= 10.0


def mean_band(grp: pd.DataFrame, ycol: str):
    """The 95% t interval of each plotted mean (columns ``<ycol>_sd`` and ``reps``), the band the
    claims' engine decides on; (None, None) without repetitions. The lower edge is kept positive
    (a log axis), so a band reaching 0 is drawn to the axis."""
    sd, reps = f"{ycol}_sd", "reps"
    if sd not in grp.columns or reps not in grp.columns:
        return None, None
    from shuffledp.claims.engine import t_ppf

    n = grp[reps].to_numpy(float)
    ok = n >= 2
    if not ok.any():
        return None, None
    q = np.where(ok, t_ppf(0.975, np.maximum(n - 1, 1)), np.nan)
    h = q * grp[sd].to_numpy(float) / np.sqrt(np.maximum(n, 1))
    m = grp[ycol].to_numpy(float)
    return np.maximum(m - h, m * 1e-3), m + h


def fig_lines(summary: pd.DataFrame, ycol: str, ylabel: str, title: str, note: str, pdf, png,
              xcol: str = "eps", group: str = "mechanism", logy: bool = True, xlabel: str = "privacy budget eps_s",
              provs: dict | None = None):
    from shuffledp.io import save_figure_files
    from shuffledp.plotting._mpl import plt
    from shuffledp.plotting._pair import tight_layout_at

    datasets = sorted(summary["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(5 * len(datasets), 3.8), squeeze=False)
    for ax, ds in zip(axes[0], datasets, strict=True):
        sub = summary[summary.dataset == ds]
        for key, grp in sub.groupby(group, sort=True):
            x = grp[xcol].astype(str) if xcol == "ratio" else grp[xcol]
            ax.plot(x, grp[ycol], marker=MARKERS.get(key, "o"), color=COLORS.get(key), label=LABELS.get(key, key))
            lo, hi = mean_band(grp, ycol)
            if lo is not None:
                ax.fill_between(x, lo, hi, color=COLORS.get(key), alpha=0.18, lw=0)
        if logy and use_log_axis(sub[ycol]):
            ax.set_yscale("log")
        ax.set_title(dataset_label(ds, (provs or {}).get(ds)))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(_title(title, note), fontsize=10)
    tight_layout_at(fig, PNG_DPI)
    save_figure_files(fig, pdf, png, dpi=PNG_DPI)
    plt.close(fig)


def table3(summary: pd.DataFrame, topk: int) -> pd.DataFrame:
    t = summary[["dataset", "eps", "mechanism", "TP", "FP", "TN", "FN", "reps"]].copy()
    t["k"] = topk
    return t.sort_values(["dataset", "eps", "mechanism"]).reset_index(drop=True)


def table3_md(t: pd.DataFrame, note: str, scale: str) -> str:
    lines = [f"# Table 3: top-{int(t.k.iloc[0]) if len(t) else 50} frequent attribute values "
             f"(mean over repetitions), scale `{scale}`", ""]
    if note:
        lines += [f"*{note}*", ""]
    lines += ["| dataset | eps | mechanism | TP | FP | TN | FN | reps |", "|---|---|---|---|---|---|---|---|"]
    for r in t.itertuples():
        lines.append(f"| {r.dataset} | {r.eps:g} | {LABELS[r.mechanism]} | {r.TP:.1f} | {r.FP:.1f} | {r.TN:.1f} | "
                     f"{r.FN:.1f} | {r.reps} |")
    return "\n".join(lines) + "\n"


def claims(summary: pd.DataFrame, personal: pd.DataFrame, scale: str, timings=None, standin=None,
           domains=None) -> pd.DataFrame:
    """The paper's claims: see :mod:`shuffledp.claims.multidim`."""
    from shuffledp.claims import multidim as C

    return C.claims(summary, personal, scale, timings, standin, domains)


def data_domains(data_files: Mapping[str, str], provs: Mapping[str, Mapping]) -> dict[str, list[int]]:
    """Each dataset's public domain sizes |C_i| (its table's provenance, for its columns)."""
    import pyarrow.parquet as pq

    from shuffledp.datasets.provenance import public_domains

    return {k: public_domains(provs[k], pq.read_schema(p).names, p) for k, p in data_files.items()}


def claims_md(c: pd.DataFrame, note: str, scale: str) -> str:
    from shuffledp.claims import multidim as C

    return C.claims_markdown(c, note, scale)


def _timings(timing_files, note: str, out: Mapping[str, str], provs) -> pd.DataFrame:
    """The user-side timings (written, labelled not reproducible) and Fig. 4 from them."""
    tim = _concat(timing_files)
    if len(tim):
        tim = tim.sort_values(["dataset", "mechanism", "eps", "rep"]).reset_index(drop=True)
        tim["note"] = "wall-clock timings: NOT reproducible, excluded from byte-identity checks"
        write_table(tim, out["timings"])
        ts = tim.groupby(["dataset", "mechanism", "eps"], sort=True)["user_seconds_per_user"].median().reset_index()
        ts["us_per_user"] = ts["user_seconds_per_user"] * 1e6
        fig_lines(ts, "us_per_user", "user-side time per user (microseconds)",
                  "Fig. 4: user-side running time per user (vectorised over all users; not reproducible)", note,
                  out["fig4"], out["fig4_png"], provs=provs)
    return tim


def _personal(personal_files, note: str, out: Mapping[str, str], provs) -> pd.DataFrame:
    """The personalized runs (written) and Fig. 10 from them."""
    pers = _concat(personal_files)
    if len(pers):
        pers = pers.sort_values(["dataset", "method", "ratio", "rep"]).reset_index(drop=True)
        write_table(pers, out["personal"])
        ps = pers.groupby(["dataset", "method", "ratio"], sort=False).agg(
            mse=("mse", "mean"), mse_sd=("mse", "std"), reps=("mse", "count")).reset_index()
        shares = {r: [int(x) for x in r.split(":")] for r in pers["ratio"].unique()}
        # x axis: from the most conservative population to the most liberal
        order = sorted(shares, key=lambda r: (-shares[r][0] / sum(shares[r]), -shares[r][1] / sum(shares[r])))
        ps["ratio"] = pd.Categorical(ps["ratio"], categories=order, ordered=True)
        ps = ps.sort_values(["dataset", "method", "ratio"])
        fig_lines(ps, "mse", "MSE (per-attribute average)",
                  "Fig. 10: OGM vs NOGM, conservative:moderate:liberal = (0.1, 1/(10n)):(0.5, 1/n):(1, 10/n); "
                  "bands: 95% t intervals over repetitions (a lower edge at or below 0 drawn at mean/1000)", note,
                  out["fig10"], out["fig10_png"], xcol="ratio", group="method",
                  xlabel="ratio conservative:moderate:liberal", provs=provs)
    return pers


def report(uniform_files, timing_files, personal_files, data_files: dict, *, scale: str, out: Mapping[str, str],
           topk: int = 50, audits: list[str] | None = None) -> None:
    """Every output of the stage's report step, by name (``out``: ``fig3``/``fig3_png`` ... ``fig10_png``,
    ``fig3_table``, ``table3``/``table3_md``, ``claims``/``claims_md``, ``claims_timings``/
    ``claims_timings_md``, ``uniform``, ``personal``, ``timings``). ``audits``: the audits table's paths
    (the claims' gate, :mod:`shuffledp.claims.audit_gate`; empty or None: the audits did not run)."""
    provs = {k: read_provenance(v) for k, v in data_files.items()}
    note = _note(provs)
    uni = _concat(uniform_files)
    uni = uni.sort_values(["dataset", "mechanism", "eps", "rep"]).reset_index(drop=True)
    write_table(uni, out["uniform"])
    summ = summarise_uniform(uni)
    write_table(summ, out["fig3_table"])
    fig_lines(summ, "mse", "MSE (per-attribute average)", "Fig. 3: frequency estimation MSE, delta=1/n; bands: "
              "95% t intervals over repetitions (a lower edge at or below 0 drawn at mean/1000)", note,
              out["fig3"], out["fig3_png"], provs=provs)
    fig_lines(summ, "bits_total", "bits per user (sent + received)",
              "Fig. 5: communication per user (TCM includes the encoding-rule broadcast)", note,
              out["fig5"], out["fig5_png"], provs=provs)
    tim = _timings(timing_files, note, out, provs)
    t3 = table3(summ, topk)
    write_table(t3, out["table3"])
    write_text(out["table3_md"], table3_md(t3, note, scale))
    pers = _personal(personal_files, note, out, provs)
    c = claims(summ, pers, scale, tim, [k for k, p in provs.items() if p.get("standin")] if provs else None,
               data_domains(data_files, provs))
    from shuffledp.claims import multidim as C

    _write_claims(C.gate(c, audits or []), note, scale, out)


def _write_claims(c: pd.DataFrame, note: str, scale: str, out: Mapping[str, str]) -> None:
    # claims decided from wall-clock timings (Fig. 4's user time) cannot be byte-identical across
    # runs: they get their own table, labelled not reproducible, beside the reproducible one
    timed = c["id"].str.startswith("fig4_user_time")
    write_table(c[~timed].reset_index(drop=True), out["claims"])
    write_text(out["claims_md"], claims_md(c[~timed], note, scale))
    tnote = "; ".join(x for x in (note, "decided from wall-clock timings: NOT reproducible") if x)
    write_table(c[timed].reset_index(drop=True), out["claims_timings"])
    write_text(out["claims_timings_md"], claims_md(c[timed], tnote, scale))
