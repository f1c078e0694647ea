"""Experiments of the personalized-privacy shuffle paper (Liu et al., CIKM'24): Figure 4, Table 2, claims.

The jobs and config check of the stage are in :mod:`shuffledp.stages.personalized`."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from shuffledp.claims.personalized import PAPER_TABLE2, PAPER_TABLE2_EPS
from shuffledp.io import write_table, write_text


def run_points(spec: Mapping) -> pd.DataFrame:
    """One ``points`` job: every (n, seed) of one (bound, setting, mechanism)."""
    parts = [point(spec["bound"], spec["setting"], spec["mechanism"], int(n), int(seed),
                   float(spec["delta_central"]), float(spec["delta_local"]), spec.get("calibration", "analytic"))
             for n in spec["n_grid"] for seed in spec["seeds"]]
    df = pd.concat(parts, ignore_index=True)
    if spec.get("variant"):   # a labelled variant point (fig4_calibrations): its calibration travels with it
        df["calibration"] = spec["calibration"]
    return df


def run_table2_row(spec: Mapping) -> pd.DataFrame:
    return table2_row(spec["bound"], spec["setting"], int(spec["n"]), int(spec["seed"]),
                      float(spec["delta_local"]), list(spec["eps_grid"]), spec.get("calibration", "analytic"),
                      method=spec.get("method", "theorem2"), clone_factor=spec.get("clone_factor"),
                      mechanism=spec.get("mechanism", "gaussian"))


def report(spec: Mapping, points: list[str], rows: list[str], out: Mapping[str, str]) -> pd.DataFrame:
    """Figure 4 (table and plot), Table 2 beside the paper's values, and the claims table."""
    every = pd.concat([pd.read_parquet(f) for f in points], ignore_index=True)
    every = every.sort_values(["setting", "mechanism", "bound", "n", "seed"], kind="stable").reset_index(drop=True)
    # variant points (another calibration of Gaussian HPS) decide the claims' variant rows only
    fig = every if "calibration" not in every else \
        every[every["calibration"].isna()].drop(columns="calibration").reset_index(drop=True)
    write_table(fig, out["fig_table"])
    plot_fig4(fig, out["pdf"], out["png"], float(spec["delta_central"]))
    t2 = table2([pd.read_parquet(f) for f in rows], spec["t2_setting"], int(spec["t2_n"]))
    write_table(t2, out["t2"])
    cap = (f"Table 2 (Liu et al. CIKM'24): delta_s of each bound, {spec['t2_setting']}, n = {spec['t2_n']}, "
           f"delta_l = {spec['delta_local']}, Gaussian mechanism (rows marked [laplace]: the Laplace mechanism with "
           f"delta_l = 0, the pure-PLDP table the paper calls similar but does not print); 'paper' = the paper's "
           f"printed value (reference data copied from its Table 2), not computed here. Scale: {spec['scale']}.")
    write_text(out["t2_md"], table2_markdown(t2, cap))
    cl = claims(every, t2, spec["scale"])
    write_table(cl, out["claims"])
    write_text(out["claims_md"], claims_markdown(cl))
    return cl


def point(bound: str, setting: str, mechanism: str, n: int, seed: int, delta_central: float,
          delta_local: float, calibration: str) -> pd.DataFrame:
    """One Figure-4 point: eps_s of ``bound`` at delta_s for a seeded draw of local epsilons."""
    from shuffledp.accountants.special import personalized as P

    e = P.draw_local_eps(setting, n, seed)
    kw = {"calibration": calibration} if bound == "hps" else {}
    eps = P.personalized_eps(bound, e, delta_local, delta_central, mechanism=mechanism, **kw)
    return pd.DataFrame([{
        "bound": bound, "setting": setting, "mechanism": mechanism, "n": int(n), "seed": int(seed),
        "delta_local": float(delta_local), "delta_central": float(delta_central),
        "eps_local_max": float(e.max()), "eps_local_mean": float(e.mean()), "eps_central": float(eps),
    }])


def table2_row(bound: str, setting: str, n: int, seed: int, delta_local: float, eps_grid, calibration: str,
               method: str = "theorem2", clone_factor: float | None = None,
               mechanism: str = "gaussian") -> pd.DataFrame:
    """One row of Table 2: delta_s at each eps_s. ``mechanism="laplace"``: the pure-PLDP row the
    paper does not print ("similar", Sec. 4), labelled ``<bound>[laplace]``, with delta_l = 0 and no
    paper value beside it."""
    from shuffledp.accountants.special import personalized as P

    e = P.draw_local_eps(setting, n, seed)
    rows = []
    for x in eps_grid:
        kw = {}
        if bound == "hps":
            kw = {"calibration": calibration, "method": method}
        if bound == "ccc" and clone_factor is not None:
            kw = {"clone_factor": clone_factor}
        pure = mechanism == "laplace"
        if pure:
            kw.pop("calibration", None)
        d = P.personalized_delta(bound, e, 0.0 if pure else delta_local, float(x), mechanism=mechanism, **kw)
        label = bound
        if bound == "hps" and (method != "theorem2" or (calibration != "analytic" and not pure)):
            label = f"hps[{method},{calibration}]"
        if bound == "ccc" and clone_factor not in (None, 1, 1.0):
            label = f"ccc[x{clone_factor:g}]"
        if pure:
            label = f"{label}[laplace]"
        rows.append({"bound": label, "paper_row": label if pure else bound, "eps_central": float(x),
                     "delta": float(d)})
    return pd.DataFrame(rows)


def table2(parts: list[pd.DataFrame], setting: str, n: int) -> pd.DataFrame:
    df = pd.concat(parts, ignore_index=True)
    ref = []
    for _, r in df.iterrows():
        vals = PAPER_TABLE2.get(r["paper_row"])
        v = math.nan
        if vals is not None and r["eps_central"] in PAPER_TABLE2_EPS:
            v = vals[PAPER_TABLE2_EPS.index(r["eps_central"])]
        ref.append(v)
    df["paper_delta"] = ref
    df["ratio_measured_over_paper"] = df["delta"] / df["paper_delta"]
    df["setting"] = setting
    df["n"] = int(n)
    return df.sort_values(["bound", "eps_central"], kind="stable").reset_index(drop=True)


def table2_markdown(df: pd.DataFrame, caption: str) -> str:
    lines = [caption, "", "| bound | eps_s | delta_s (measured) | delta_s (paper, Table 2) | measured / paper |",
             "|---|---|---|---|---|"]
    for _, r in df.iterrows():
        pv = "" if math.isnan(r["paper_delta"]) else f"{r['paper_delta']:.3g}"
        ra = "" if math.isnan(r["ratio_measured_over_paper"]) else f"{r['ratio_measured_over_paper']:.3g}"
        lines.append(f"| {r['bound']} | {r['eps_central']:g} | {r['delta']:.3g} | {pv} | {ra} |")
    return "\n".join(lines) + "\n"


def claims(fig: pd.DataFrame, t2: pd.DataFrame, scale: str) -> pd.DataFrame:
    """The paper's claims checked against the measured Figure 4 and Table 2: see
    :mod:`shuffledp.claims.personalized`."""
    from shuffledp.claims import personalized as C

    return C.claims(fig, t2, scale)


def claims_markdown(df: pd.DataFrame) -> str:
    from shuffledp.claims import personalized as C

    return C.claims_markdown(df)


def plot_fig4(fig: pd.DataFrame, out_pdf: str, out_png: str, delta_central: float) -> None:
    """Figure 4, drawn by :func:`shuffledp.plotting.personalized.plot_fig4`."""
    from shuffledp.plotting.personalized import plot_fig4 as draw

    draw(fig, out_pdf, out_png, delta_central)
