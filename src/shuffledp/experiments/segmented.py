"""Experiments of Section 6 of the segmented paper: data preparation, one run, aggregation, claims.

Workflow (the stage :mod:`shuffledp.stages.segmented`, which also holds the jobs and config check):

1. ``prepare``: a dataset's processed sets -> fixed-width ``(N, s)`` sets (padding rule below),
   ``results/segmented/data/<dataset>.parquet``; the ground truth is the item frequency over all N
   processed sets (the population the n users are sampled from).
2. accountant tables (step ``accountant``: one job per (dataset, n)) give ``lambda_k``
   per ``(m, level)``; the baseline parameters (Subexp-shuffle's ``eps0``, the balls-into-bins blanket rates) come from
   :mod:`shuffledp.experiments.segmented_params` (``baseline_params``; ``paper_baseline_params`` for the
   labelled variant ``<baseline>_paper``, calibrated as the paper did).
3. ``run``: one job per (protocol, dataset, n, setting or none, batch); one row per (m, repetition)
   with the squared error summed over items.
4. ``aggregate`` -> summary (mean and 95% interval per point); figures; claims.

Padding / selection rule (paper: "4 items after item padding or random selection"): a user with
more than ``s`` items keeps a uniformly random ``s``-subset (``oversize: random``, or its first
``s`` items in index order with ``oversize: first``), drawn once per (config seed, dataset) so the
population is fixed; a user with fewer keeps all its items and, when the dataset pads
(``padding = s``, every dataset whose source does not guarantee ``s`` items per user), holds items
of PrivSet's padding domain ``{d..d+s-1}`` in their place. Every protocol sends them like any item:
the Poisson and balls-into-bins randomizers with the user's rate and blankets over ``d + s`` items
(their accountants over ``d + s`` items), the subset exponential mechanism in its output space as
PrivSet does; the padding bins are dropped after estimation. A dataset that does not pad
(``padding = 0``: synthetic sets of at least ``s`` items) runs the paper's protocol over ``d`` items;
``prepare`` refuses it if a user holds fewer than ``s`` items. True frequencies are those of the
processed (selected) sets over the real items.

Randomness: user sample and level assignment of repetition ``r`` depend only on
(seed, dataset, n, [setting], r), so every protocol and every ``m`` sees the same users and levels
(common random numbers); mechanism noise depends on all wildcards and ``r``, never on batching.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from shuffledp.io import file_version, write_table
from shuffledp.mechanisms import poisson_set as ps
from shuffledp.protocols import mm, segmented, subexp
from shuffledp.seeding import rng as make_rng
from shuffledp.seeding import rng_under

OURS = "segmented"
OURS_PAPER = "segmented_paper"  # ours with Theorem 3 as printed (optimistic), a labelled reference
OURS_ALL = (OURS, OURS_PAPER)
UNIFORM_BASELINES = ("subexp_local", "subexp_shuffle", "mm_shuffle")
LEVEL_BASELINES = ("sepmm", "wsepmm")
BASELINES = (*UNIFORM_BASELINES, *LEVEL_BASELINES)    # the five, calibrated by our sound accountants
# the labelled variant ``segmented.baseline_accounting: paper``: the four shuffle baselines calibrated
# as the paper did (experiments.segmented_params.paper_baseline_params); Subexp-local needs no accountant
PAPER_SUFFIX = "_paper"
RECALIBRATED = ("subexp_shuffle", "mm_shuffle", "sepmm", "wsepmm")
PAPER_BASELINES = tuple(b + PAPER_SUFFIX for b in RECALIBRATED)
PAPER_UNIFORM = ("subexp_shuffle" + PAPER_SUFFIX, "mm_shuffle" + PAPER_SUFFIX)
BASELINES_PAPER = ("subexp_local", *PAPER_BASELINES)  # the five as the paper calibrated them
PROTOCOLS = (OURS, OURS_PAPER, *UNIFORM_BASELINES, *LEVEL_BASELINES, *PAPER_BASELINES)
LABELS = {
    OURS: "Ours (segmented MM)",
    OURS_PAPER: "Ours, Thm 3 as printed (optimistic)",
    "subexp_local": "Subexp, local",
    "subexp_shuffle": "Subexp, shuffle",
    "mm_shuffle": "MM, shuffle",
    "sepmm": "SepMM, shuffle",
    "wsepmm": "Weighted SepMM, shuffle",
    "subexp_shuffle_paper": "Subexp, shuffle (published VR parameters)",
    "mm_shuffle_paper": "MM, shuffle (Luo et al.'s analysis)",
    "sepmm_paper": "SepMM, shuffle (Luo et al.'s analysis)",
    "wsepmm_paper": "Weighted SepMM, shuffle (Luo et al.'s analysis)",
}


def base_protocol(protocol: str) -> str:
    """The baseline a paper-calibrated variant runs (``mm_shuffle_paper`` -> ``mm_shuffle``); any
    other protocol is itself."""
    return protocol[: -len(PAPER_SUFFIX)] if protocol in PAPER_BASELINES else protocol
META_KEY = b"shuffledp"


# ----------------------------------------------------------------------------- configuration
def m_grid(cfg: Mapping) -> np.ndarray:
    """The log grid of blanket rates ``m`` (numpy.geomspace, both ends included), rounded to 12
    significant digits like the accountant CLI's ``log:`` grids (so 1.0 is exactly 1.0)."""
    g = cfg["m_grid"]
    raw = np.geomspace(float(g["min"]), float(g["max"]), int(g["num"]))
    return np.array([float(f"{x:.12g}") for x in raw])


def level_counts(n: int, shares) -> np.ndarray:
    """Exact level histogram ``n_k``: ``floor(share_k n)``, the remainder to the last level."""
    c = np.floor(np.asarray(shares, dtype=float) * n + 1e-9).astype(np.int64)
    c[-1] = n - c[:-1].sum()
    return c


def panels(cfg: Mapping) -> list[tuple[str, str]]:
    """The (dataset, setting) pairs the figures need."""
    out = []
    for spec in cfg["figures"].values():
        for ds in spec["datasets"]:
            for st in spec["settings"]:
                if (ds, st) not in out:
                    out.append((ds, st))
    return out


# ----------------------------------------------------------------------------- data preparation
def read_meta(path: str | Path) -> dict:
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(META_KEY)
    return json.loads(raw) if raw else {}


def standin_note(prov: Mapping) -> str:
    from shuffledp.datasets.provenance import standin_note as _note

    return _note(prov)


def fixed_width_sets(items: pa.Array, s: int, rng: np.random.Generator,
                     oversize: str = "random") -> np.ndarray:
    """``(N, s)`` int array from a list<int> column; padding ``-1``; see the module docstring."""
    arr = items.combine_chunks() if isinstance(items, pa.ChunkedArray) else items
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = np.asarray(arr.values.to_numpy(zero_copy_only=False), dtype=np.int64)
    offsets = offsets - offsets[0]
    values = values[: offsets[-1]]
    sizes = np.diff(offsets)
    n_users = sizes.size
    owner = np.repeat(np.arange(n_users), sizes)
    if oversize == "random":
        keys = rng.random(values.size)
    elif oversize == "first":
        keys = np.arange(values.size, dtype=float)
    else:
        raise ValueError(f"oversize: {oversize!r} must be 'random' or 'first'")
    order = np.lexsort((keys, owner))
    rank = np.empty(values.size, dtype=np.int64)
    rank[order] = np.arange(values.size) - offsets[owner[order]]
    keep = rank < s
    out = np.full((n_users, s), ps.PAD, dtype=np.int64)
    out[owner[keep], rank[keep]] = values[keep]
    return out


def prepare(in_path: str, out_path: str, *, dataset: str, d: int, s: int, seed: int,
            oversize: str = "random", padding: int | None = None) -> dict:
    """The fixed-width sets of ``dataset`` and its truth (module doc). ``padding``: the padding
    domain's size, ``s`` (default: users may hold fewer than ``s`` items) or 0 (every user holds at
    least ``s``: refused otherwise); recorded in the metadata, which the run jobs follow."""
    padding = s if padding is None else int(padding)
    if padding not in (0, s):
        raise ValueError(f"padding: {padding} must be 0 or s = {s}")
    prov = read_meta(in_path)
    table = pq.read_table(in_path, columns=["items"])
    g = make_rng(seed, "segmented", "select", dataset, s)
    sets = fixed_width_sets(table.column("items"), s, g, oversize)
    if sets.size and sets.max() >= d:
        raise ValueError(f"{in_path}: item {int(sets.max())} outside the domain 0..{d - 1} (config d = {d})")
    if padding == 0 and np.any(sets < 0):
        raise ValueError(f"{in_path}: {int((sets < 0).any(axis=1).sum())} users hold fewer than s = {s} items, "
                         "but the dataset is declared without padding (padding 0)")
    if "domain" in prov and int(prov["domain"]) != d:
        raise ValueError(f"{in_path}: domain {prov['domain']} differs from config d = {d}")
    truth = np.bincount(sets[sets >= 0], minlength=d) / sets.shape[0]
    sizes = np.diff(np.asarray(table.column("items").combine_chunks().offsets))
    meta = {
        "dataset": dataset, "d": d, "s": s, "padding": padding, "users": int(sets.shape[0]), "oversize": oversize,
        "users_padded": int((sizes < s).sum()), "users_selected": int((sizes > s).sum()),
        "truth": truth.tolist(), "source": prov, "standin": bool(prov.get("standin", False)),
    }
    cols = {f"item_{i}": pa.array(sets[:, i].astype(np.int32)) for i in range(s)}
    write_table(pa.table(cols), out_path, meta)
    return meta


def load_prepared(path: str) -> tuple[np.ndarray, dict]:
    tab = pq.read_table(path)
    meta = read_meta(path)
    sets = np.stack([tab.column(f"item_{i}").to_numpy() for i in range(meta["s"])], axis=1).astype(np.int64)
    return sets, meta


def _load_prepared_once(path: str) -> tuple[np.ndarray, dict]:
    """:func:`load_prepared`, read once per file version in a process (a run job reads one dataset
    for each of its panels): keyed by the path and the file's size and modification time; the sets
    come back read-only and the metadata as a copy."""
    sets, meta = _prepared_cached(*file_version(path))
    return sets, json.loads(json.dumps(meta))


@functools.lru_cache(maxsize=4)
def _prepared_cached(path: str, size: int, mtime_ns: int) -> tuple[np.ndarray, dict]:
    sets, meta = load_prepared(path)
    sets.flags.writeable = False
    return sets, meta


# ----------------------------------------------------------------------------- parameters
def _read_table_once(path) -> pd.DataFrame:
    """``pd.read_parquet(path)``, read once per file version in a process (a run job reads one
    parameter or accountant table for each of its panels): keyed like :func:`_load_prepared_once`;
    each caller gets its own copy."""
    return _table_cached(*file_version(path)).copy()


@functools.lru_cache(maxsize=16)
def _table_cached(path: str, size: int, mtime_ns: int) -> pd.DataFrame:
    return pd.read_parquet(path)


def accountant_rows(acct: pd.DataFrame, accountant: str = "sound") -> pd.DataFrame:
    """The grid rows of one accountant variant of an accountant table (which also holds the optimum
    ``m*`` rows, ``source == "optimum"``, and possibly several ``accountant`` variants)."""
    if "source" in acct:
        acct = acct[acct["source"] == "grid"]
    if "accountant" in acct:
        acct = acct[acct["accountant"] == accountant]
        if acct.empty:
            raise ValueError(f"accountant table has no rows for accountant {accountant!r}")
    return acct


def params_from_table(acct: pd.DataFrame, m_index: int, levels, accountant: str = "sound") -> tuple[float, np.ndarray]:
    """``(m, lambdas)`` at grid point ``m_index`` of an accountant table: the index-th of the table's
    own grid values of ``m`` (ascending), the lambda of level ``k`` from its row with ``level == k``
    (1-based). Nothing is matched by float tolerance: the level values are only checked against
    ``levels`` (a table built for other levels is refused)."""
    grid, pick = _table_grid(acct, accountant)
    if not 0 <= int(m_index) < len(grid):
        raise ValueError(f"accountant table has no grid point {m_index} (it has {len(grid)})")
    return pick(int(m_index), levels)


def table_params(acct: pd.DataFrame, levels, accountant: str = "sound") -> list[tuple[float, np.ndarray]]:
    """:func:`params_from_table` at every grid point of the table, in grid order (the table's rows
    are selected once, not once per point)."""
    grid, pick = _table_grid(acct, accountant)
    return [pick(i, levels) for i in range(int(np.count_nonzero(~np.isnan(grid))))]  # as nunique: NaN is no point


def _table_grid(acct: pd.DataFrame, accountant: str):
    """``(grid, pick)``: the ascending grid values of ``m`` of one accountant variant's rows and
    ``pick(index, levels)``, the ``(m, lambdas)`` of that grid point (checked as
    :func:`params_from_table` says), on the rows' columns as arrays."""
    acct = accountant_rows(acct, accountant)
    grid = np.sort(acct["m"].unique())
    m_col = acct["m"].to_numpy(dtype=float)
    level_col = acct["level"].to_numpy() if "level" in acct else None
    eps_col, lam_col = acct["eps"].to_numpy(), acct["lambda"].to_numpy()

    def pick(m_index: int, levels) -> tuple[float, np.ndarray]:
        m = float(grid[m_index])
        rows = np.flatnonzero(m_col == m)
        out = []
        for k, e in enumerate(levels, start=1):
            r = rows[level_col[rows] == k] if level_col is not None else rows[k - 1:k]
            if len(r) != 1:
                raise ValueError(f"accountant table: {len(r)} rows for m = {m}, level {k}")
            if not np.isclose(float(eps_col[r[0]]), float(e), rtol=1e-12, atol=0):
                raise ValueError(f"accountant table: level {k} has eps {float(eps_col[r[0]])}, the job's levels "
                                 f"say {float(e)} (a table built for other levels: rebuild it)")
            lam = float(lam_col[r[0]])
            if not 0.0 <= lam <= 1.0:
                raise ValueError(f"accountant table: lambda {lam} for m = {m}, eps = {e} outside [0, 1]")
            out.append(lam)
        return m, np.asarray(out)

    return grid, pick


# ----------------------------------------------------------------------------- one job
def sample_users(seed: int, dataset: str, n: int, rep: int, population: int) -> tuple[np.ndarray, bool]:
    r = make_rng(seed, "segmented", "users", dataset, n, rep)
    if n <= population:
        return r.choice(population, size=n, replace=False), False
    return r.integers(0, population, size=n), True


def assign_levels(seed: int, dataset: str, n: int, setting: str, rep: int, shares) -> np.ndarray:
    r = make_rng(seed, "segmented", "levels", dataset, n, setting, rep)
    return r.permutation(np.repeat(np.arange(len(shares)), level_counts(n, shares)))


def _baseline_params(protocol: str, table_path, setting, levels_eps: list[float],
                     padding: int = 0) -> tuple[dict, np.ndarray | None]:
    """(extra columns, SepMM's per-level m or None) of a shuffle baseline from its parameter table."""
    extra: dict[str, float] = {}
    m_levels = None
    prm = _read_table_once(table_path)
    if protocol in ("mm_shuffle", "sepmm", "wsepmm"):
        _check_table_padding(prm, table_path, padding)
    if protocol == "subexp_shuffle":
        row = prm[prm["baseline"] == "subexp_shuffle"].iloc[0]
        extra["eps0"] = float(row["eps0"])
        extra["k"] = float(row["k"])
    elif protocol == "mm_shuffle":
        row = prm[prm["baseline"] == "mm_shuffle"].iloc[0]
        extra["m_mm"] = float(row["m"])
    else:
        rows = prm[(prm["baseline"] == "sepmm") & (prm["setting"] == setting)].sort_values("level")
        if len(rows) != len(levels_eps):
            raise ValueError(f"{table_path}: {len(rows)} SepMM rows for setting {setting}")
        m_levels = rows["m"].to_numpy(dtype=float)
        for k, mk in enumerate(m_levels):
            extra[f"m_level_{k + 1}"] = float(mk)
    return extra, m_levels


def _check_table_padding(table: pd.DataFrame, table_path, padding: int) -> None:
    """A parameter or accountant table must be computed for the data's padding domain (its
    ``padding`` column): rates certified over ``d`` items do not cover a protocol over ``d + s``."""
    if "padding" not in table:
        raise ValueError(f"{table_path}: no padding column (built before padding was sent): rebuild it")
    got = sorted({int(x) for x in table["padding"]})
    if got != [int(padding)]:
        raise ValueError(f"{table_path}: computed for padding {got}, the data has padding {int(padding)}: rebuild it")


def _job_params(spec: Mapping, protocol: str, table_path, levels_eps: list[float], d: int, s: int,
                padding: int = 0):
    """(grid points [(m index, m, lambdas)], extra columns, SepMM's per-level m) of one run job."""
    extra: dict[str, float] = {}
    m_levels = None
    points: list[tuple[int | None, float, np.ndarray]] = [(None, float("nan"), np.full(len(levels_eps), np.nan))]
    variant = spec.get("accountant", "")
    protocol = base_protocol(protocol)  # a paper-calibrated baseline reads its own parameter table
    if protocol in OURS_ALL:
        acct = _read_table_once(table_path)
        _check_table_padding(acct, table_path, padding)
        points = [(i, m, lam) for i, (m, lam) in enumerate(table_params(acct, levels_eps, variant))]
    elif protocol in ("subexp_shuffle", "mm_shuffle", "sepmm", "wsepmm"):
        extra, m_levels = _baseline_params(protocol, table_path, spec["setting"], levels_eps, padding)
    if protocol == "subexp_local":
        from shuffledp.mechanisms import subset_exp as se

        extra["eps0"] = float(spec["subexp_local_eps"])
        extra["k"] = float(se.best_subset_size(d, s, extra["eps0"]))
    return points, extra, m_levels


def _estimate(spec: Mapping, protocol: str, sets, lv, lam, m_val, d: int, s: int, g, extra: dict, m_levels, w,
              row: dict, n: int, pad: bool, held=None):
    """One protocol run's estimate (our protocol's messages per user go into ``row``); ``pad``: the
    dataset's padding items are sent (the multi-message protocols; Subexp always pads); ``held``:
    our protocol's :func:`shuffledp.protocols.segmented.hold` of ``sets`` and ``lv`` (the same at every m)."""
    protocol = base_protocol(protocol)
    if protocol in OURS_ALL:
        run = segmented.run_segmented(sets, lv, lam, m_val, d, g, level_mode=spec["level_histogram"],
                                      epsilon_p=spec.get("epsilon_p"), sampler=spec["sampler"], padding=pad,
                                      held=held)
        row["messages_per_user"] = run.n_messages / n
        return run.estimate
    if protocol in ("subexp_local", "subexp_shuffle"):
        est, _ = subexp.run_subexp(sets, d, s, extra["eps0"], g, k=int(extra["k"]))
        return est
    if protocol == "mm_shuffle":
        return mm.run_mm(sets, extra["m_mm"], d, g, padding=pad)
    est, _ = mm.run_sepmm(sets, lv, m_levels, d, g, weights=w, padding=pad)
    return est


def run_job(spec: Mapping, data_path: str, table_path: str | None = None) -> pd.DataFrame:
    """One ``run`` job: one row per (``m``, repetition) of one protocol on one (dataset, n, setting).

    ``table_path``: for our protocol the accountant table (every ``m`` of its grid runs, with the
    table's own certified ``lambda_k``); for the shuffle baselines their parameter table (for a
    paper-calibrated variant, ``<baseline>_paper``, the paper-calibration table).
    ``spec`` keys: protocol, dataset, n, setting, reps, seed; levels and shares (level protocols);
    accountant, level_histogram, sampler, [epsilon_p] (ours); delta, wsepmm_power (wsepmm);
    subexp_local_eps (subexp_local). Seeds depend on (seed, protocol, dataset, n, setting, m index,
    repetition), never on the batching."""
    return run_panels([(spec, data_path, table_path)])[0]


def run_panels(panels: list[tuple[Mapping, str, str | None]]) -> list[pd.DataFrame]:
    """:func:`run_job` of each ``(spec, data_path, table_path)``, the repetitions outermost: the
    panels of one (seed, dataset, n, data) -- one job's settings -- share each repetition's user
    sample (it depends on nothing else, :func:`sample_users`), drawn and gathered once; every other
    draw comes from the panel's own generators, so each frame is the one :func:`run_job` gives."""
    states = [_panel(*p) for p in panels]
    rows: list[list[dict]] = [[] for _ in states]
    for r in dict.fromkeys(r for st in states for r in st["reps"]):
        users: dict[tuple, tuple[np.ndarray, bool]] = {}
        for st, out in zip(states, rows, strict=True):
            key = (st["seed"], st["dataset"], st["n"], id(st["sets_all"]))
            for _ in range(st["reps"].count(r)):
                if key not in users:
                    idx, with_repl = sample_users(st["seed"], st["dataset"], st["n"], r, st["sets_all"].shape[0])
                    # np.take: the rows sets_all[idx], gathered about ten times faster than by indexing
                    sets = np.take(st["sets_all"], idx, axis=0)
                    sets.flags.writeable = False  # shared by the panels
                    users[key] = sets, with_repl
                out.extend(_rep_rows(st, r, *users[key]))
    return [_job_frame(out, st["spec"], st["extra"], st["lead"]) for st, out in zip(states, rows, strict=True)]


def _panel(spec: Mapping, data_path: str, table_path: str | None) -> dict:
    """What one panel's repetitions read: its data, parameters and generators (checked here)."""
    protocol = spec["protocol"]
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol: {protocol!r} must be one of {PROTOCOLS}")
    sets_all, meta = _load_prepared_once(data_path)
    d, s = int(meta["d"]), int(meta["s"])
    if "padding" not in meta:
        raise ValueError(f"{data_path}: no padding record (prepared before padding was sent): rebuild it")
    n, seed, dataset, setting = int(spec["n"]), int(spec["seed"]), spec["dataset"], spec["setting"]
    levels_eps = [float(e) for e in spec.get("levels", [])]
    points, extra, m_levels = _job_params(spec, protocol, table_path, levels_eps, d, s, int(meta["padding"]))
    w = None
    if base_protocol(protocol) == "wsepmm":
        w = mm.wsepmm_weights(level_counts(n, spec.get("shares")), levels_eps, d, s, float(spec["delta"]),
                              float(spec["wsepmm_power"]))
    return {"spec": spec, "protocol": protocol, "sets_all": sets_all, "d": d, "s": s, "pad": bool(meta["padding"]),
            "truth": np.asarray(meta["truth"]), "n": n, "seed": seed, "dataset": dataset, "setting": setting,
            "levels_eps": levels_eps, "shares": spec.get("shares"), "points": points, "extra": extra,
            "m_levels": m_levels, "w": w, "reps": list(spec["reps"]),
            # one generator per (m index, repetition) under the panel's prefix
            "mech_rng": rng_under(seed, "segmented", "mech", protocol, dataset, n, setting),
            "lead": (("protocol", protocol), ("dataset", dataset), ("n", n), ("d", d), ("s", s),
                     ("setting", setting))}


def _rep_rows(st: dict, r: int, sets: np.ndarray, with_repl: bool) -> list[dict]:
    """The rows of repetition ``r`` of one panel (:func:`_panel`), one per grid point, on the
    repetition's users ``sets``."""
    spec, protocol, n = st["spec"], st["protocol"], st["n"]
    lv = None if st["shares"] is None else assign_levels(st["seed"], st["dataset"], n, st["setting"], r, st["shares"])
    # our protocol's held sets and item-level counts: the same at every m (they draw nothing)
    held = segmented.hold(sets, lv, st["d"], len(st["levels_eps"]), padding=st["pad"]) if protocol in OURS_ALL else None
    out = []
    for m_index, m_val, lam in st["points"]:
        g = st["mech_rng"](m_index, r)
        row = {"m_index": -1 if m_index is None else m_index, "m": m_val, "rep": r, "messages_per_user": np.nan}
        row.update({f"lambda_{k + 1}": float(x) for k, x in enumerate(lam)})
        est = _estimate(spec, protocol, sets, lv, lam, m_val, st["d"], st["s"], g, st["extra"], st["m_levels"],
                        st["w"], row, n, st["pad"], held)
        row["error"] = float(np.sum((est - st["truth"]) ** 2))
        row["with_replacement"] = with_repl
        out.append(row)
    return out


def _job_frame(rows_out: list[dict], spec: Mapping, extra: dict, lead) -> pd.DataFrame:
    """The job's rows ordered by (m index, repetition), with the ``lead`` columns first and the
    protocol's parameters after."""
    df = pd.DataFrame(rows_out).sort_values(["m_index", "rep"], kind="stable").reset_index(drop=True)
    for pos, (key, val) in enumerate(lead):
        df.insert(pos, key, val)
    for key, val in extra.items():
        df[key] = val
    if "delta" in spec:
        df["delta"] = float(spec["delta"])
    df["accountant"] = spec.get("accountant", "")
    return df


# ----------------------------------------------------------------------------- aggregation
def aggregate(run_paths: list[str], accountant_tables: list[tuple[str, str, int, str]], out_path: str,
              accountant: str = "sound", scale: str = "") -> pd.DataFrame:
    """Mean error and 95% interval (normal approximation, mean +- 1.96 sd / sqrt(R)) per point.

    ``accountant_tables``: (path, dataset, n, setting) of each accountant table our runs used (its
    ``mse_bound`` joins our points)."""
    runs = pd.concat([pd.read_parquet(p) for p in sorted(run_paths)], ignore_index=True)
    keys = ["protocol", "dataset", "n", "d", "s", "setting", "m_index", "m"]
    g = runs.groupby(keys, dropna=False)["error"]
    summ = g.agg(error_mean="mean", error_sd="std", reps="count").reset_index()
    half = 1.96 * summ["error_sd"].fillna(0.0) / np.sqrt(summ["reps"])
    summ["ci_lo"] = summ["error_mean"] - half
    summ["ci_hi"] = summ["error_mean"] + half
    lam_cols = [c for c in runs.columns if c.startswith("lambda_")]
    first = runs.groupby(keys, dropna=False)[lam_cols + ["messages_per_user"]].mean().reset_index()
    summ = summ.merge(first, on=keys, how="left")
    bounds = []
    variants = {OURS: accountant}
    if accountant != "paper":
        variants[OURS_PAPER] = "paper"
    for p, ds, n, setting in sorted(accountant_tables):
        raw = pd.read_parquet(p)
        for proto, variant in variants.items():
            try:
                a = accountant_rows(raw, variant)
            except ValueError:
                continue
            b = a.groupby("m", as_index=False)["mse_bound"].first()
            b["dataset"], b["n"], b["setting"], b["protocol"] = ds, int(n), setting, proto
            bounds.append(b)
    if bounds:
        bt = pd.concat(bounds, ignore_index=True)
        summ["_mkey"] = summ["m"].round(12)
        bt["_mkey"] = bt["m"].round(12)
        summ = summ.merge(bt.drop(columns="m"), on=["protocol", "dataset", "n", "setting", "_mkey"], how="left")
        summ = summ.drop(columns="_mkey")
    else:
        summ["mse_bound"] = np.nan
    summ.loc[~summ["protocol"].isin(OURS_ALL), "mse_bound"] = np.nan
    summ["scale"] = scale
    summ = summ.sort_values(keys).reset_index(drop=True)
    write_table(summ, out_path)
    return summ


def panel_frame(summ: pd.DataFrame, dataset: str, n: int, setting: str) -> pd.DataFrame:
    """Rows of one panel: ours at every m, the uniform baselines (setting 'none'), SepMM variants."""
    sel = (summ["dataset"] == dataset) & (summ["n"] == n)
    sel &= (summ["setting"] == setting) | (summ["protocol"].isin((*UNIFORM_BASELINES, *PAPER_UNIFORM)))
    return summ[sel]


# ----------------------------------------------------------------------------- claims
PAPER_M_STAR = {"msnbc": {5000: 2.0, 50000: 0.3}, "synth_T128_s4": {5000: 4.0, 50000: 1.0}}


def _ours(summ, dataset, n, setting, ours=OURS):
    p = panel_frame(summ, dataset, n, setting)
    return p[p["protocol"] == ours].sort_values("m")


def optimal_m(summ, dataset, n, setting, ours=OURS) -> tuple[float, float]:
    o = _ours(summ, dataset, n, setting, ours)
    if o.empty:
        return float("nan"), float("nan")
    i = int(o["error_mean"].to_numpy().argmin())
    return float(o["m"].iloc[i]), float(o["error_mean"].iloc[i])


def best_baseline(summ, dataset, n, setting, protocols=None) -> tuple[str, float]:
    p = panel_frame(summ, dataset, n, setting)
    p = p[~p["protocol"].isin(OURS_ALL)]
    if protocols is not None:
        p = p[p["protocol"].isin(protocols)]
    if p.empty:
        return "", float("nan")
    i = int(p["error_mean"].to_numpy().argmin())
    return str(p["protocol"].iloc[i]), float(p["error_mean"].iloc[i])




# ----------------------------------------------------------------------------- protocols a config runs
def ours_protocols(cfg: Mapping) -> list[str]:
    """Our protocol under the configured accountant, plus the labelled Theorem-3-as-printed reference
    when ``compare_paper_accountant`` is set (and the configured accountant is not already paper)."""
    out = [OURS]
    if cfg["compare_paper_accountant"] and cfg["accountant"] != "paper":
        out.append(OURS_PAPER)
    return out
