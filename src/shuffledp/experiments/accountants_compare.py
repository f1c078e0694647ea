"""One table of every shuffle accountant we have, on one grid.

The stage (jobs, config check, steps) is :mod:`shuffledp.stages.accountants_compare`: ``run``, one
job per mechanism: every bound at every (eps0, n, delta) of the grid, with its run time
(:func:`run_job`); ``report``: the table and figure (:func:`report`); ``gain`` (if
``accountants_compare.gain`` is set): what the tighter accountant buys,
:mod:`shuffledp.experiments.accountants_gain`.
:func:`collect` adds each row's gap to the best lower bound of its point and writes the table;
:mod:`shuffledp.plotting.accountants_compare` draws the figure.

Bounds: any name of the one registry, :mod:`shuffledp.accountants.registry` (its order is the
table's column order). ``kind``: ``upper`` = a guarantee, ``lower`` = an impossibility, ``exact``
(the registry's ``exact_on``: binary RR's exact worst case for k-RR with k = 2; a lower bound for
the general class), ``reference`` = shown for comparison but not a guarantee for these
randomizers, never the "best upper". A bound that does not apply, exceeds the job's cost limits
(``personalized_max_n`` for per-user bounds, ``exact_max_n`` for enumerations) or declines the
point has NaN and the reason in ``note``; a bound's scope note (the registry's ``notes``) is in
``note`` otherwise. ``lower`` is the largest of the lower bounds ``shuffledp account best`` runs.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.accountants.registry import NAMES as BOUNDS


def binary_rr_exact_eps(eps0: float, n: int, delta: float, *, rtol: float = 1e-6) -> float:
    """The table's ``exact`` value: :func:`shuffledp.accountants.lower.lower_bounds.binary_rr_exact_eps`."""
    from shuffledp.accountants.lower.lower_bounds import binary_rr_exact_eps as exact

    return exact(eps0, n, delta, rtol=rtol)


def fmt(x: float) -> str:
    """A number as in file names and labels (``1``, ``0.25``)."""
    return f"{float(x):g}"


# ----------------------------------------------------------------------------- one job
# notes of the rows a bound does not answer, where the generic one ("not for <randomizer>") was
# worded otherwise before the registry (kept: the default tables stay byte-identical)
SKIPPED = {"decomposition": "k-RR only"}


def _skip_note(acc, spec: Mapping, n: int) -> str | None:
    """Why the bound ``acc`` is not evaluated at this point of the job, or None if it is."""
    applies = acc.applies(spec["mechanism"], spec["k"])
    if acc.cost == "enumeration" and (not applies or n > spec["exact_max_n"]):
        high = acc.k_range[1]
        return f"not enumerated (n > {spec['exact_max_n']}" + (f" or k > {high})" if high else ")")
    if not applies:
        return SKIPPED.get(acc.name, f"not for {spec['label']}")
    if acc.cost == "per-user" and n > spec["personalized_max_n"]:
        return f"skipped: n > personalized_max_n = {spec['personalized_max_n']}"
    return None


def _kind(acc, mechanism: str) -> str:
    return "exact" if mechanism in acc.exact_on else acc.kind


def _one_row(spec: Mapping, n: int, delta: float, name: str) -> dict:
    """The row of bound ``name`` at ``(n, delta)``: its eps (at most eps0) and run time, or NaN
    and the reason in ``note``."""
    from shuffledp.accountants import registry

    acc = registry.get(name)
    mech = spec["mechanism"]
    kind, note = _kind(acc, mech), acc.note(mech)
    skip = _skip_note(acc, spec, n)
    if skip is None:
        t0 = time.perf_counter()
        try:
            value = acc.eps_for_delta(mech, spec["eps0"], n, delta, rtol=spec["rtol"], k=spec["k"])
        except registry.NotEvaluated as exc:
            skip = f"not evaluated: {exc}"
        else:
            return _row(spec, n, delta, name, kind, min(value, spec["eps0"]), time.perf_counter() - t0, note)
    return _row(spec, n, delta, name, kind, math.nan, math.nan, skip)


def run_job(spec: Mapping) -> pd.DataFrame:
    """Every selected bound (a registered name, :mod:`shuffledp.accountants.registry`) at every
    (eps0, n, delta) of the spec: one row each. ``eps0``: one value or a list (the workflow's job:
    every eps0 of one mechanism, in one process)."""
    eps0s = spec["eps0"] if isinstance(spec["eps0"], list | tuple) else [spec["eps0"]]
    return pd.DataFrame([_one_row(dict(spec, eps0=float(e)), n, delta, name) for e in eps0s
                         for n in spec["n_grid"] for delta in spec["deltas"] for name in spec["bounds"]])


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
