"""End-to-end audits of CALM and HDG FROM RAW RECORDS on Adult and Loan.

A protocol-level audit on coded records cannot see a coding that crosses users: when bin edges are
computed from the data (the old equal-width bins between the data's own minimum and maximum, the old
equal-frequency quantiles), one person's raw record moves other people's codes, and no accountant of a
coded table covers that. These audits therefore start from the raw files:

1. **Fixture** (:data:`FIXTURES`): a neighbouring pair of RAW tables. From the real raw file, the victim
   (an extreme record), and a seeded sample of ``n - 1`` (``n - 2`` for ``loan_tie``) other raw
   records WITHOUT replacement; the two datasets differ only in the victim's raw value of one
   attribute:

   * ``adult_min``: the record with the smallest fnlwgt, its fnlwgt replaced by the file's median;
   * ``adult_max``: the record with the largest fnlwgt, its fnlwgt replaced by the file's median;
   * ``loan_low``: the loan with the lowest int_rate, its int_rate moved above the file's maximum (28.99)
     to the top of Lending Club's documented range (31, :data:`shuffledp.datasets.coding.LOAN_CODING`);
   * ``loan_tie``: both datasets hold the lowest loan already moved above the maximum; the victim is
     the next-lowest loan, moved above the maximum too (a tie-block pair of quantile codes);
   * ``loan_split``: the issue's pair where two tied edges stop coinciding (:func:`split_population`): the
     population holds exactly ``floor((n - 1) j / k) + 2`` loans with the smallest inq_last_12m (0) and
     ``n`` minus that many with a larger one, so that the block of zeros covers the equal-frequency edge
     positions ``1..j`` (``k = domain - 1`` bins, ``j >= 2`` edges inside the block in the file) and ends one
     rank past edge ``j``; the victim, one of the zeros, moves to the public top (15). Under
     equal-frequency codes edge ``j`` then leaves the block, the merged edges split and every higher code
     is renumbered; under the public coding only the victim's row moves.

2. **Coding**: the data stage's own functions (:data:`CODERS`, resolved at run time):
   ``shuffledp.datasets.adult.encode`` then the merge of ``shuffledp.datasets.adult_ordinal`` (Adult's
   ordinal table), ``shuffledp.datasets.loan.encode`` (Loan).
3. **Protocol**: CALM (views by ``select_views``, ``encode_views``) or HDG (``granularities``, ``Grids``,
   ``encode_grids``) with the MHM component, called as :mod:`shuffledp.experiments.multidim_frameworks`
   calls them, at ``eps_s`` and ``delta_s = 1/n``; one full run per trial (its own hash family and
   shuffle); the released output is every unit's estimate (Norm-Sub and consistency after it are
   post-processing, so auditing before them is the stronger test).
4. **Distinguisher**: the released vector projected on the difference of the two datasets' mean
   outputs, each cell divided by its variance (a diagonal linear discriminant over the cells that
   moved), estimated on the selection half of the trials (the first half); the event on that
   projection is chosen on the same half (:func:`shuffledp.experiments.audits.distinguish`), and the
   bound comes from the held-out half: Clopper-Pearson lower bound on eps at ``delta_s``.
5. **Claim**: the accountant's ``(eps_s, delta_s)``. Verdict: consistent when ``eps_lb <= eps_s``.

The mutant (:mod:`shuffledp.experiments.audit_mutants`, ``_data_edges("minmax")`` / ``("quantile")``) puts the
data-dependent edges back in :meth:`shuffledp.datasets.coding.Bins.codes`; the audit must flag it.
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.seeding import rng as seeded_rng

#: fixture -> (dataset, attribute, what the victim's change is)
FIXTURES: dict[str, tuple[str, str, str]] = {
    "adult_min": ("adult", "fnlwgt", "smallest fnlwgt replaced by the file's median"),
    "adult_max": ("adult", "fnlwgt", "largest fnlwgt replaced by the file's median"),
    "loan_low": ("loan", "int_rate", "lowest int_rate moved above the file's maximum (to the public top, 31%)"),
    "loan_tie": ("loan", "int_rate", "with the lowest int_rate above the maximum, the next-lowest moved there too"),
    "loan_split": ("loan", "inq_last_12m", "a record of the lowest value's tie block, built to end one rank past an "
                   "equal-frequency edge position, moved to the public top (two tied edges stop coinciding)"),
}

#: the data stage's coders (module, attribute): resolved at run time, so a planted bug is what runs
CODERS = {"adult": ("shuffledp.datasets.adult", "encode"), "loan": ("shuffledp.datasets.loan", "encode")}


def coder(dataset: str):
    mod, attr = CODERS[dataset]
    return getattr(importlib.import_module(mod), attr)


# ------------------------------------------------------------------ raw files


#: the last raw table read, by its files' identity: an audit and its mutant run (and the next raw audit of
#: the same files in a batch) parse the files once; each caller gets its own copy
_LAST_READ: list = []


def read_raw(dataset: str, paths: Mapping[str, str]) -> pd.DataFrame:
    """The raw table with the data stage's readers: Adult ``paths["data"]``, ``paths["test"]``
    (:func:`shuffledp.datasets.adult.read_raw`; both files, as the data stage reads them); Loan
    ``paths["loan"]`` (:func:`shuffledp.datasets.loan.read_any`). A copy of the last table read when
    the same files (path, size, modification time) are asked for again."""
    names = ("data", "test") if dataset == "adult" else ("loan",)
    from shuffledp.io import file_version

    key = (dataset, tuple(file_version(paths[k]) for k in names))
    if _LAST_READ and _LAST_READ[0] == key:
        return _LAST_READ[1].copy()
    table = _read_raw(dataset, paths)
    _LAST_READ[:] = [key, table.copy()]
    return table


def _read_raw(dataset: str, paths: Mapping[str, str]) -> pd.DataFrame:
    if dataset == "adult":
        from shuffledp.datasets.adult import read_raw as read_adult

        return read_adult(paths["data"], paths["test"])
    from shuffledp.datasets.loan import read_any

    return read_any(paths["loan"])


def mirror_paths(mirror: str | None = None) -> dict[str, str]:
    """Raw files in the data mirror (``SHUFFLEDP_DATA_MIRROR``), for tests and interactive use."""
    root = Path(mirror or os.environ.get("SHUFFLEDP_DATA_MIRROR", ""))
    return {"data": str(root / "adult" / "adult.data"), "test": str(root / "adult" / "adult.test"),
            "loan": str(root / "lending_club.parquet")}


# ------------------------------------------------------------------ fixtures


def split_population(x: np.ndarray, n: int, k: int, rng) -> tuple[np.ndarray, int, dict]:
    """``loan_split``'s population: indices (into ``x``, the attribute's raw values of the file) of ``n``
    records with a value, sampled without replacement, and the victim among them. With ``v0`` the
    smallest value and ``j = floor(k * share of v0 in the file)`` the equal-frequency edges (of ``k``
    bins, ``np.quantile``'s linear rule at ``i / k``) lying in the block of ``v0`` (refused unless
    ``j >= 2``: two tied edges), the population holds ``Z = floor((n - 1) j / k) + 2`` records at ``v0``
    (the block covers edge positions ``1..j`` and ends one rank past position ``j``) and ``n - Z`` above
    it; refused when ``(n - 1) j / k`` is an integer (edge ``j`` would not leave the block)."""
    ok = np.flatnonzero(~np.isnan(x))
    v0 = float(x[ok].min())
    low, high = ok[x[ok] == v0], ok[x[ok] > v0]
    j = int(np.floor(k * low.size / ok.size))
    pos = (n - 1) * j / k
    if j < 2 or pos == int(pos):
        raise ValueError(f"raw-record audit loan_split: no split pair at n={n}, {k} bins (edges in the lowest "
                         f"block: {j}; position {pos:g})")
    z = int(np.floor(pos)) + 2
    if z > low.size or n - z > high.size or n - z < 1:
        raise ValueError(f"raw-record audit loan_split: n={n} needs {z} records at the lowest value "
                         f"({low.size} in the file) and {n - z} above it ({high.size})")
    pick_low = rng.choice(low, z, replace=False)
    pick = np.concatenate([pick_low, rng.choice(high, n - z, replace=False)])
    return np.sort(pick), int(pick_low[0]), {"edges_in_block": j, "block": z, "bins": int(k)}


def neighbours(raw: pd.DataFrame, fixture: str, n: int, seed: int, domain: int = 16
               ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The fixture's two raw tables of ``n`` records (a seeded sample WITHOUT replacement of the
    file's other records, the victim and, for ``loan_tie``, the moved lowest loan included; for
    ``loan_split`` the population of :func:`split_population` at ``domain - 1`` bins), in the file's
    order; they differ only in the victim's value of the fixture's attribute."""
    dataset, attr, _ = FIXTURES[fixture]
    x = raw[attr].to_numpy(dtype=float)
    order = np.argsort(np.where(np.isnan(x), np.inf, x), kind="stable")
    top = float(np.nanmax(x))
    med = float(np.nanquantile(x, 0.5, method="lower"))  # the median: a value of the file
    # above the file's maximum: the top of the documented public range (a possible loan), else max + 1
    from shuffledp.datasets.coding import LOAN_CODING

    above = max(float(LOAN_CODING.get(attr, {}).get("hi", top + 1.0)), top + 1.0)
    base = raw.copy()
    base[attr] = base[attr].astype(float)
    forced, extra = [], {}
    if fixture == "loan_split":
        idx, victim, extra = split_population(x, n, int(domain) - 1, seeded_rng(seed, "audits", "raw", fixture))
        new = float(LOAN_CODING[attr]["hi"])  # the public top (a possible value; inside the range)
    elif fixture == "adult_min":
        victim, new = int(order[0]), med
    elif fixture == "adult_max":
        victim = int(np.flatnonzero(x == top)[0])
        new = med
    elif fixture == "loan_low":
        victim, new = int(order[0]), above
    elif fixture == "loan_tie":
        first = int(order[0])
        base.loc[base.index[first], attr] = above
        forced = [first]
        victim, new = int(order[1]), above
    else:
        raise ValueError(f"raw-record audit: unknown fixture {fixture!r} (known: {', '.join(FIXTURES)})")
    if fixture != "loan_split":
        keep = [victim, *forced]
        if n < len(keep) + 1 or n > len(raw):
            raise ValueError(f"raw-record audit {fixture}: n must be in {len(keep) + 1}..{len(raw)}, got {n}")
        others = np.setdiff1d(np.arange(len(raw)), keep)
        pick = seeded_rng(seed, "audits", "raw", fixture).choice(others, n - len(keep), replace=False)
        idx = np.sort(np.concatenate([pick, keep]))
    d0 = base.iloc[idx].reset_index(drop=True)
    d1 = d0.copy()
    pos = int(np.flatnonzero(idx == victim)[0])
    old = float(d0.at[pos, attr])
    d1.at[pos, attr] = new
    info = {"fixture": fixture, "dataset": dataset, "attribute": attr, "victim_row": victim, "old": old,
            "new": new, "n": int(n), **extra}
    return d0, d1, info


def code(dataset: str, raw: pd.DataFrame, c: int, coding: Mapping | None = None) -> np.ndarray:
    """The coded table the framework reads (codes ``0..c-1``), by the data stage's coder: Adult's
    :func:`~shuffledp.datasets.adult.encode` then adult_ordinal's merge into ``c`` codes (as
    ``adult_ordinal.derive`` does); Loan's :func:`~shuffledp.datasets.loan.encode` at ``c``."""
    if dataset == "adult":
        from shuffledp.datasets.adult_ordinal import ATTRIBUTES, rebin

        table, doms = coder("adult")(raw, coding)
        cols = [rebin(table[a].to_numpy(), int(doms[a]), c) for a in ATTRIBUTES]
    else:
        table, _ = coder("loan")(raw, c, coding)
        cols = [table[a].to_numpy() for a in table.columns]
    return np.stack(cols, axis=1).astype(np.int64)


# ------------------------------------------------------------------ the protocol, end to end


def _released(framework: str, data: np.ndarray, c: int, p: Mapping, trials: int, rng) -> np.ndarray:
    """``trials`` runs of the framework with the MHM component on the coded ``data``: each row the
    concatenation of the released unit estimates."""
    from shuffledp.tasks.frequency import make_component

    n, d = data.shape
    eps, delta = float(p["eps_s"]), 1.0 / n
    comp = make_component("mhm")
    domains = [c] * d
    if framework == "calm":
        from shuffledp.tasks import marginals as M

        views = M.select_views(domains, int(p["view_size"]), p.get("max_view_cells"))
        codes, vdoms = M.encode_views(data, domains, views)
    else:
        from shuffledp.tasks import range_queries as R

        grids = R.Grids(d, c, *R.granularities(n, d, eps, c))
        codes, vdoms = R.encode_grids(data, grids), list(grids.domains)
    out = []
    for _ in range(int(trials)):
        fe = comp.estimate(codes, vdoms, eps, delta, rng)
        out.append(np.concatenate([np.ravel(e) for e in fe.estimates]))
    return np.asarray(out, dtype=float)


Z_KEEP = 3.0  #: a cell enters the discriminant when its two-sample z on the selection half is at least this


def project(y0: np.ndarray, y1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both samples projected on the difference of their means divided by the cells' pooled variances
    (a diagonal linear discriminant) over the cells whose two-sample z is at least :data:`Z_KEEP` (all cells
    if none is), all estimated on the selection halves (the first half of each), so the held-out halves
    stay independent of the statistic's choice."""
    h0, h1 = len(y0) // 2, len(y1) // 2
    a, b = y0[:h0], y1[:h1]
    var = 0.5 * (a.var(axis=0) + b.var(axis=0))
    diff = a.mean(axis=0) - b.mean(axis=0)
    w = diff / np.where(var > 0, var, np.inf)
    z = diff / np.sqrt(np.where(var > 0, var, np.inf) * (1 / max(h0, 1) + 1 / max(h1, 1)))
    keep = np.abs(z) >= Z_KEEP  # cells that moved on the selection half (noise cells add only noise)
    if keep.any():
        w = np.where(keep, w, 0.0)
    return y0 @ w, y1 @ w


def audit_raw(framework: str, fixture: str, p: Mapping, trials: int, rng, raw: pd.DataFrame, seed: int,
              coding: Mapping | None = None) -> dict:
    """One end-to-end audit's samples and claim (the row of :func:`shuffledp.experiments.audits.run_audit`)."""
    from shuffledp.tasks.frequency import make_component

    dataset = FIXTURES[fixture][0]
    n, c = int(p["n"]), int(p["domain"])
    d0, d1, info = neighbours(raw, fixture, n, seed, c)
    data = [code(dataset, t, c, coding) for t in (d0, d1)]
    moved = int((data[0] != data[1]).any(axis=1).sum())
    y = [_released(framework, x, c, p, trials, rng) for x in data]
    s0, s1 = project(*y)
    eps_s, delta = float(p["eps_s"]), 1.0 / n
    st = make_component("mhm").setting(n, [c] * data[0].shape[1], eps_s, delta)
    note = f"fixture {fixture}: {FIXTURES[fixture][2]}; coded rows that differ: {moved}"
    return {"samples": [s0, s1], "delta": delta, "eps_ub": eps_s,
            "upper_by": "the accountant's eps_s (MHM, delta_s = 1/n)", "eps_exact": math.nan, "n": n,
            "exact_note": note,
            "setting_extra": {**info, "moved_rows": moved, "eps_l": float(st.eps_l)}}
