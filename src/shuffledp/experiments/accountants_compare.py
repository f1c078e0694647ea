"""One table of every shuffle accountant we have, on one grid.

The stage (jobs, config check, steps) is :mod:`shuffledp.stages.accountants_compare`: ``run``, one
job per (mechanism, eps0): every bound at every (n, delta) of the grid, with its run time
(:func:`run_job`); ``report``: the table and figure (:func:`report`); ``gain`` (if
``accountants_compare.gain`` is set): what the tighter accountant buys,
:mod:`shuffledp.experiments.accountants_gain`.
:func:`collect` adds each row's gap to the best lower bound of its point and writes the table;
:mod:`shuffledp.plotting.accountants_compare` draws the figure.

Bounds (``kind``: ``upper`` = a guarantee, ``lower`` = an impossibility, ``exact``, ``reference`` =
shown for comparison but not a guarantee for these randomizers, never the "best upper"):

* ``decomposition`` (k-RR only): the blanket decomposition, :mod:`~shuffledp.accountants.decomposition`;
* ``variation-ratio``: Wang et al.'s reduction with the sound parameters;
* ``fmt21``, ``fmt23``: clones (numerical); ``fmt21-closed-form``: FMT21's Theorem 3.1;
* ``blanket-hoeffding``, ``blanket-bennett``: Balle et al.'s blanket (exact k-RR moments for k-RR,
  generic constants for general eps0-LDP);
* ``hps-uniform``, ``ccc``, ``lzx``: the personalized bounds with every user at eps0 (``note``
  states their scope: HPS's clone probabilities are those of the Laplace randomizer on [0, 1],
  CCC is a Gaussian-DP (CLT) approximation, LZX holds for any eps0-LDP randomizer); computed
  only for ``n <= personalized_max_n`` (per-user arrays);
* ``lower``: the largest of the exact real-pair divergences (k-RR; binary RR for the general
  class) and the variation-ratio module's witness;
* ``exact`` (k = 2 and the general class at ``n <= exact_max_n``): binary randomized response,
  worst case over every configuration of the other users (the count of ones is sufficient), so
  for the general class it is a lower bound on the class's worst case, recorded as ``lower``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.experiments.accountants_compare_names import BOUNDS

PERSONALIZED = ("hps-uniform", "ccc", "lzx")
REFERENCE = ("hps-uniform", "ccc")  # shown for reference, never taken as the best upper bound
NOTES = {
    "hps-uniform": "Laplace randomizer on [0,1] only",
    "ccc": "Gaussian-DP (CLT) approximation",
    "lzx": "any eps0-LDP randomizer",
}


def fmt(x: float) -> str:
    """A number as in file names and labels (``1``, ``0.25``)."""
    return f"{float(x):g}"


# ----------------------------------------------------------------------------- exact binary RR
def binary_rr_exact_eps(eps0: float, n: int, delta: float, *, rtol: float = 1e-6) -> float:
    """Exact worst-case shuffled eps of binary randomized response (``n`` users): the largest eps
    over every configuration ``j`` (others holding 1) at which ``D_{e^eps}`` of the count of ones
    exceeds ``delta``, both directions; the returned eps is the upper end of a bracket of relative
    width ``rtol`` (a verified point where every configuration meets ``delta``)."""
    from scipy import signal, stats

    from shuffledp.accountants.hockey_stick import bisect_eps

    e = math.exp(eps0)
    p, q = e / (e + 1.0), 1.0 / (e + 1.0)
    N = n - 1
    rows = []
    for j in range(N + 1):
        a = stats.binom.pmf(np.arange(j + 1), j, p)
        b = stats.binom.pmf(np.arange(N - j + 1), N - j, q)
        rows.append(np.clip(signal.fftconvolve(a, b), 0.0, None) if j and j < N else (a if j else b))
    others = np.array([np.pad(r, (0, N + 1 - r.size)) for r in rows])  # (N+1 configs, N+1 counts)
    shifted = np.pad(others, ((0, 0), (1, 0)))
    base = np.pad(others, ((0, 0), (0, 1)))
    P = p * shifted + q * base   # victim holds 1
    Q = q * shifted + p * base   # victim holds 0

    def fn(x: float) -> float:
        ee = math.exp(x)
        return float(max(np.maximum(P - ee * Q, 0).sum(axis=1).max(),
                         np.maximum(Q - ee * P, 0).sum(axis=1).max()))

    return bisect_eps(fn, delta, eps0, rtol)[1]


# ----------------------------------------------------------------------------- one job
def _bound_fns(spec: Mapping, n: int, delta: float) -> dict:
    from shuffledp.accountants import best, blanket, clones, personalized
    from shuffledp.accountants import decomposition as dec
    from shuffledp.accountants import variation_ratio as vr

    mech, k, eps0, rtol = spec["mechanism"], spec["k"], spec["eps0"], spec["rtol"]
    fns = {}
    if mech == "krr":
        fns["decomposition"] = lambda: dec.decomposition_eps(
            None, n, delta, pairs=dec.krr_pairs(k, eps0), rtol=rtol,
            guess=dec.krr_pair_lower_eps(k, eps0, n, delta, rtol=rtol)[0])
    params = vr.vr_params("krr", eps0, k=k) if mech == "krr" else vr.vr_params("general", eps0)
    fns["variation-ratio"] = lambda: vr.vr_eps(params, n, delta, rtol=rtol)
    fns["fmt21"] = lambda: clones.eps_clones(eps0, n, delta, variant="fmt21", rtol=rtol)
    fns["fmt23"] = lambda: clones.eps_clones(eps0, n, delta, variant="fmt23", rtol=rtol)
    fns["fmt21-closed-form"] = lambda: clones.eps_clones(eps0, n, delta, closed_form=True)
    bmech = {"mechanism": "krr", "k": k} if mech == "krr" else {"mechanism": "generic"}
    fns["blanket-hoeffding"] = lambda: blanket.eps_blanket(eps0, n, delta, bound="hoeffding", rtol=rtol, **bmech)
    fns["blanket-bennett"] = lambda: blanket.eps_blanket(eps0, n, delta, bound="bennett", rtol=rtol, **bmech)
    if n <= spec["personalized_max_n"]:
        local = np.full(n, eps0)
        fns["hps-uniform"] = lambda: personalized.hps_eps(local, 0.0, delta, mechanism="laplace")
        fns["ccc"] = lambda: personalized.ccc_eps(local, 0.0, delta)
        fns["lzx"] = lambda: personalized.lzx_eps(local, delta)
    fns["lower"] = lambda: max(f() for f in best.lower_bounds(mech, eps0, n, delta, k=k,
                                                              rtol=rtol).values())
    if (mech == "general" or k == 2) and n <= spec["exact_max_n"]:
        fns["exact"] = lambda: binary_rr_exact_eps(eps0, n, delta, rtol=min(rtol, 1e-6))
    return fns


def run_job(spec: Mapping) -> pd.DataFrame:
    """Every selected bound at every (n, delta) of the spec: one row each."""
    rows = []
    for n in spec["n_grid"]:
        for delta in spec["deltas"]:
            fns = _bound_fns(spec, n, delta)
            for name in spec["bounds"]:
                kind = {"lower": "lower", "exact": "exact"}.get(name, "upper")
                if name in REFERENCE:
                    kind = "reference"  # not a valid upper bound for this randomizer class
                note = NOTES.get(name, "")
                if name == "exact" and spec["mechanism"] == "general":
                    kind, note = "lower", "binary RR, exact worst case (lower bound for the class)"
                if name not in fns:
                    why = {"decomposition": "k-RR only",
                           "exact": f"not enumerated (n > {spec['exact_max_n']} or k > 2)"}
                    note = why.get(name, f"skipped: n > personalized_max_n = {spec['personalized_max_n']}")
                    rows.append(_row(spec, n, delta, name, kind, math.nan, math.nan, note))
                    continue
                t0 = time.perf_counter()
                value = float(fns[name]())
                sec = time.perf_counter() - t0
                rows.append(_row(spec, n, delta, name, kind, min(value, spec["eps0"]), sec, note))
    return pd.DataFrame(rows)


def _row(spec, n, delta, name, kind, eps, seconds, note) -> dict:
    return {"mechanism": spec["label"], "k": spec["k"] if spec["k"] is not None else 0,
            "eps0": spec["eps0"], "n": int(n), "delta": float(delta), "bound": name, "kind": kind,
            "eps": eps, "seconds": seconds, "note": note}


# ----------------------------------------------------------------------------- collect
def collect(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate job tables; add ``best_lower`` (largest lower/exact value of the point) and
    ``gap`` = eps / best_lower - 1 for upper bounds (0 for the exact value)."""
    df = pd.concat(frames, ignore_index=True)
    key = ["mechanism", "eps0", "n", "delta"]
    low = df[df["kind"].isin(["lower", "exact"])].groupby(key)["eps"].max().rename("best_lower")
    df = df.merge(low, left_on=key, right_index=True, how="left")
    with np.errstate(divide="ignore", invalid="ignore"):
        df["gap"] = np.where(df["best_lower"] > 0, df["eps"] / df["best_lower"] - 1.0, np.nan)
    up = df[df["kind"] == "upper"].groupby(key)["eps"].min().rename("best_upper")
    df = df.merge(up, left_on=key, right_index=True, how="left")
    df["is_best_upper"] = (df["kind"] == "upper") & (df["eps"] == df["best_upper"])
    return df.sort_values(key + ["bound"]).reset_index(drop=True)


TIMING_KEY = ["mechanism", "eps0", "n", "delta", "bound"]


def markdown(df: pd.DataFrame, *, scale: str = "default", timings: bool = False) -> str:
    """One line per (mechanism, eps0, n, delta): the best upper bound and its gap, the lower
    bound, then every bound's eps; with ``timings``, every bound's run time in seconds instead
    (wall clock: measured, not reproducible, so it lives in its own file)."""
    key = ["mechanism", "eps0", "n", "delta"]
    names = [b for b in BOUNDS if b in set(df["bound"])]
    head = ["mechanism", "eps0", "n", "delta", "best upper", "gap"] + names
    what = ("run time in seconds (wall clock on the machine that ran it: NOT reproducible)" if timings
            else "eps")
    lines = [f"Accountants compared (scale: {scale}); each cell: {what}; gap = best upper / "
             "best lower - 1; '-' not computed (see the Parquet table's note column).", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for keys, g in df.groupby(key, sort=True):
        by = {r.bound: r for r in g.itertuples()}
        ups = g[g["kind"] == "upper"].dropna(subset=["eps"])
        bu = ups.loc[ups["eps"].idxmin()] if len(ups) else None
        cells = [str(keys[0]), fmt(keys[1]), f"{keys[2]:.0e}", f"{keys[3]:.0e}",
                 f"{bu['bound']} {bu['eps']:.5g}" if bu is not None else "-",
                 f"{100 * bu['gap']:.2f}%" if bu is not None and np.isfinite(bu["gap"]) else "-"]
        for nm in names:
            r = by.get(nm)
            if r is None or not np.isfinite(r.eps):
                cells.append("-")
            else:
                cells.append(f"{r.seconds:.2g}" if timings else f"{r.eps:.5g}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def split_timings(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A ``run`` job's rows without their run times (reproducible) and the run times alone."""
    return df.drop(columns=["seconds"]), df[TIMING_KEY + ["seconds"]]


def report(spec: Mapping, inputs: list[str], timings: list[str], out: Mapping[str, str]) -> pd.DataFrame:
    """The ``report`` step: collect the ``run`` jobs' tables, write the Parquet and Markdown tables
    (no run times, so reruns are byte-identical), the run times' own Markdown table (labelled not
    reproducible) and the figure."""
    from shuffledp.io import write_table, write_text
    from shuffledp.plotting.accountants_compare import figure

    df = collect([pd.read_parquet(p) for p in inputs])
    df["scale"] = spec["scale"]
    write_table(df, out["table"])
    write_text(out["md"], markdown(df, scale=spec["scale"]))
    if timings:
        sec = pd.concat([pd.read_parquet(p) for p in timings], ignore_index=True)
        write_text(out["timings_md"], markdown(df.merge(sec, on=TIMING_KEY, how="left"), scale=spec["scale"],
                                               timings=True))
    figure(df, out["pdf"], out["png"], scale=spec["scale"])
    return df
