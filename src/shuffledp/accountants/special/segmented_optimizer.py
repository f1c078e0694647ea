"""Parameter optimisation of the segmented protocol (Section 5.2 of the segmented-shuffle paper).

For ``n`` users holding ``s``-item sets over ``d`` items, privacy levels ``E_1 < ... < E_K``
chosen by shares ``n_k / n``, failure probability ``delta`` and blanket rate ``m``:

* ``lambda_k*(m)`` -- the largest Poisson rate meeting constraint (7) for level ``k``
  (:func:`shuffledp.accountants.special.poisson.solve_poisson_lambda`, a point of a fixed grid in
  ``-log lambda``, rounded down; :func:`level_lambda` caches it and the search starts from the answers
  at neighbouring ``m``);
* ``m_k`` -- the smallest ``m`` at which ``lambda_k = 1`` is feasible
  (:func:`shuffledp.accountants.special.poisson.min_blanket_rate`);
* the MSE bound ``(n m + s sum_k n_k lambda_k) / (sum_k n_k lambda_k)^2``;
* ``m*`` -- the minimiser of the MSE bound over the paper's interval between the smallest and the
  largest ``m_k`` (the paper writes ``(m_1, m_K]``; with increasing levels ``m_1 >= m_K``, so the
  interval is taken between the two, whatever their order), by a log grid then a golden-section
  refinement around the best grid point.

Edge cases the paper skips:

* a level with share 0 has no users: its ``lambda`` is still reported (what such a user would
  use) but it is inactive -- it neither enters the MSE nor bounds the ``m`` interval;
* ``m`` below the interval (all active ``lambda_k < 1``) or above it (all ``lambda_k = 1``) is
  allowed when given explicitly; the result says which (``regime``);
* no feasible ``lambda`` (only when floating point cannot certify any ``lambda > 0``, since
  ``lambda = delta/(s e^E_k)`` always meets (7)): ``feasible = False`` and an infinite MSE bound;
* ``m_k = inf`` (``lambda_k = 1`` not reached up to ``m_max``): the interval's upper end is
  ``m_max``.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache

import numpy as np
import pandas as pd

from shuffledp.accountants.numerics.hockey_stick import bisect_eps
from shuffledp.accountants.special.poisson import (
    ACCOUNTANTS,
    group_privacy,
    min_blanket_rate,
    single_item_parts,
    solve_poisson_lambda,
)
from shuffledp.accountants.validation import POISSON_N_MAX, AccountantDomainError, check_int

__all__ = [
    "mse_bound",
    "level_lambda",
    "level_m_k",
    "achieved_eps",
    "optimize_segmented",
    "segmented_table",
    "check_segmented_inputs",
    "TABLE_COLUMNS",
    "M_MAX",
]

M_MAX = 1e4
TABLE_COLUMNS = [
    "accountant", "n", "d", "s", "padding", "delta", "m", "level", "eps", "share", "lambda", "eps_achieved",
    "delta_achieved", "m_k", "mse_bound", "feasible", "active", "regime", "source",
]


def check_segmented_inputs(n, d, s, levels, shares, delta):
    """Validate and normalise the inputs (ValueError naming the argument)."""
    n = check_int(n, "n", 2, POISSON_N_MAX)
    d = check_int(d, "d", 2)
    s = check_int(s, "s", 1)
    levels = [float(e) for e in levels]
    shares = [float(x) for x in shares]
    if len(levels) == 0:
        raise AccountantDomainError("levels", "need at least one privacy level")
    if any(not (math.isfinite(e) and e > 0) for e in levels):
        raise AccountantDomainError("levels", f"{levels} must all be finite and > 0")
    if any(b <= a for a, b in zip(levels, levels[1:], strict=False)):
        raise AccountantDomainError("levels", f"{levels} must be strictly increasing")
    if len(shares) != len(levels):
        raise AccountantDomainError("shares", f"{len(shares)} shares for {len(levels)} levels")
    if any(not (x >= 0) for x in shares) or abs(math.fsum(shares) - 1.0) > 1e-9:
        raise AccountantDomainError("shares", f"{shares} must be >= 0 and sum to 1")
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise AccountantDomainError("delta", f"{delta!r} must lie in (0, 1)")
    return n, d, s, levels, shares, delta


def mse_bound(n: int, m: float, s: int, shares, lambdas) -> float:
    """``(n m + s sum n_k lambda_k) / (sum n_k lambda_k)^2`` with ``n_k = share_k n``."""
    lam_sum = math.fsum(float(x) * n * float(lam) for x, lam in zip(shares, lambdas, strict=True))
    if lam_sum <= 0:
        return math.inf
    return (n * m + s * lam_sum) / lam_sum**2


@lru_cache(maxsize=65536)
def level_lambda(n: int, m: float, d: int, s: int, eps: float, delta: float, accountant: str = "sound"):
    """Cached :func:`solve_poisson_lambda` (constraint (7) does not depend on the shares)."""
    return solve_poisson_lambda(n, m, d, s, eps, delta, accountant=accountant)


@lru_cache(maxsize=4096)
def level_m_k(n: int, d: int, s: int, eps: float, delta: float, accountant: str = "sound") -> float:
    """Cached ``m_k`` (:func:`min_blanket_rate` with ``lambda = 1``)."""
    return min_blanket_rate(n, d, s, eps, delta, m_max=M_MAX, accountant=accountant)


@lru_cache(maxsize=65536)
def achieved_eps(lam: float, n: int, m: float, d: int, s: int, eps: float, delta: float,
                 rtol: float = 1e-4, accountant: str = "sound") -> float:
    """Smallest user-level eps (rounded up, relative precision ``rtol``) at which rate ``lam``
    meets ``delta`` by Theorem 3, searched in ``(0, eps]`` (``eps`` itself must be feasible).
    The returned value is an evaluated feasible point."""
    tail = max(1e-300, 1e-6 * delta / (s * math.exp(eps)))

    @cache
    def parts(e: float):
        return single_item_parts(lam, n, m, d, e / s, accountant=accountant, tail=tail)

    def user_delta(e: float) -> float:
        if e <= 0:
            return 1.0
        t, sl, sk = parts(e)
        return group_privacy(e / s, min(1.0, t + sl + sk), s)[1]

    def proxy(e: float) -> float:
        return group_privacy(e / s, parts(e)[0], s)[1] if e > 0 else 1.0

    if user_delta(eps) > delta:
        raise AccountantDomainError("eps", f"{eps!r} is not feasible for lambda = {lam!r}")
    _, hi = bisect_eps(user_delta, delta, float(eps), rtol, eps_lo=0.0, search_fn=proxy)
    return hi


def _evaluate(n, d, s, levels, shares, delta, m, accountant="sound"):
    res = [level_lambda(n, float(m), d, s, e, delta, accountant) for e in levels]
    lambdas = [r.lam for r in res]
    active = [x > 0 for x in shares]
    feasible = all(r.feasible for r, a in zip(res, active, strict=True) if a)
    mse = mse_bound(n, m, s, shares, lambdas) if feasible else math.inf
    return res, lambdas, feasible, mse


def _m_range(m_ks, shares):
    act = [mk for mk, x in zip(m_ks, shares, strict=True) if x > 0]
    lo = min(act)
    hi = max(act)
    lo = min(lo, M_MAX)
    hi = min(hi, M_MAX)
    return lo, hi


def _regime(m, lo, hi):
    if m < lo:
        return "below"
    if m > hi:
        return "above"
    return "inside"


def _search_m(n, d, s, levels, shares, delta, lo, hi, grid: int = 10, rtol: float = 1e-2,
              accountant: str = "sound"):
    """Approximate argmin of the MSE bound over (lo, hi]: log grid, then golden section."""

    def f(m):
        return _evaluate(n, d, s, levels, shares, delta, m, accountant)[3]

    if hi <= 0:
        return 0.0
    if lo <= 0:
        lo = hi * 1e-3
    if hi <= lo * (1 + rtol):
        return hi
    ratio = hi / lo
    ms = [lo * ratio ** ((i + 1) / grid) for i in range(grid)]
    ms[-1] = hi
    vals = [f(m) for m in ms]
    i = int(np.argmin(vals))
    best_m, best_v = ms[i], vals[i]
    a = math.log(ms[i - 1]) if i > 0 else math.log(lo)
    b = math.log(ms[i + 1]) if i + 1 < len(ms) else math.log(hi)
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(math.exp(x1)), f(math.exp(x2))
    while b - a > rtol:
        if f1 <= f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(math.exp(x1))
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(math.exp(x2))
    for x, v in ((x1, f1), (x2, f2)):
        if v < best_v and math.exp(x) > lo:
            best_m, best_v = math.exp(x), v
    return best_m


def optimize_segmented(n: int, d: int, s: int, levels, shares, delta: float, m: float | None = None,
                       *, accountant: str = "sound") -> dict:
    """Optimised (or, with ``m`` given, evaluated) parameters of the segmented protocol.

    Returns a dict: ``m``, ``lambdas`` (per level), ``m_k`` (per level), ``mse_bound``,
    ``feasible`` (all active levels), ``level_feasible``, ``eps_achieved`` and ``delta_achieved``
    (per level, user level, Theorem 3),
    ``m_range`` ([lower, upper] of the search interval), ``regime`` (m below / inside / above it),
    ``active`` (share > 0 per level), ``accountant``. ``accountant``: ``"sound"`` (default, see
    :mod:`shuffledp.accountants.special.poisson`) or ``"paper"`` (Theorem 3 as printed).
    """
    n, d, s, levels, shares, delta = check_segmented_inputs(n, d, s, levels, shares, delta)
    if accountant not in ACCOUNTANTS:
        raise AccountantDomainError("accountant", f"{accountant!r} is not one of {', '.join(ACCOUNTANTS)}")
    m_ks = [level_m_k(n, d, s, e, delta, accountant) for e in levels]
    lo, hi = _m_range(m_ks, shares)
    if m is None:
        m_val = _search_m(n, d, s, levels, shares, delta, lo, hi, accountant=accountant)
    else:
        m_val = float(m)
        if not (math.isfinite(m_val) and m_val >= 0):
            raise AccountantDomainError("m", f"{m!r} must be a finite number >= 0")
    res, lambdas, feasible, mse = _evaluate(n, d, s, levels, shares, delta, m_val, accountant)
    eps_ach, delta_ach = [], []
    for r, e in zip(res, levels, strict=True):
        if not r.feasible:
            eps_ach.append(math.inf)
            delta_ach.append(math.inf)
            continue
        delta_ach.append(r.delta_user)
        eps_ach.append(achieved_eps(r.lam, n, m_val, d, s, e, delta, accountant=accountant)
                       if r.lam >= 1.0 else e)
    return {
        "m": m_val,
        "lambdas": lambdas,
        "m_k": m_ks,
        "mse_bound": mse,
        "feasible": feasible,
        "level_feasible": [bool(r.feasible) for r in res],
        "eps_achieved": eps_ach,
        "delta_achieved": delta_ach,
        "m_range": [lo, hi],
        "regime": _regime(m_val, lo, hi),
        "active": [x > 0 for x in shares],
        "accountant": accountant,
    }


def segmented_table(n: int, d: int, s: int, levels, shares, delta: float, m_grid,
                    *, include_optimum: bool = True, accountants=("sound", "paper"),
                    progress=None, padding: int = 0) -> pd.DataFrame:
    """One row per (accountant, m, level) over ``m_grid`` (plus the optimum ``m*`` rows,
    ``source="optimum"``): columns :data:`TABLE_COLUMNS`. Deterministic (no timings, stable row
    order: accountants in the given order, then grid m ascending, then the optimum). ``progress``:
    an optional wrapper of the list of (accountant, m) evaluations (the CLI's progress bar).

    ``padding``: the size of the padding domain the protocol sends from (``s`` when users may hold
    fewer than ``s`` items, 0 when every user holds exactly ``s``): every accountant is evaluated
    over ``d + padding`` items (the blankets' domain); the ``d`` column keeps the real domain."""
    n, d, s, levels, shares, delta = check_segmented_inputs(n, d, s, levels, shares, delta)
    padding = int(padding)
    if padding not in (0, s):
        raise AccountantDomainError("padding", f"{padding!r} must be 0 (no padding) or s = {s} (the padding domain)")
    grid = [float(x) for x in m_grid]
    if any(not (math.isfinite(x) and x >= 0) for x in grid):
        raise AccountantDomainError("m-grid", f"{grid} must be finite numbers >= 0")
    accountants = list(accountants)
    for acc in accountants:
        if acc not in ACCOUNTANTS:
            raise AccountantDomainError("accountants", f"{acc!r} is not one of {', '.join(ACCOUNTANTS)}")
    runs = [(m, "grid") for m in sorted(set(grid))]
    if include_optimum:
        runs.append((None, "optimum"))
    rows = []
    evaluations = [(a, r) for a in accountants for r in runs]
    for acc, (m, source) in progress(evaluations) if progress is not None else evaluations:
        out = optimize_segmented(n, d + padding, s, levels, shares, delta, m=m, accountant=acc)
        for k, e in enumerate(levels):
            rows.append({
                "accountant": acc, "n": n, "d": d, "s": s, "padding": padding, "delta": delta, "m": out["m"],
                "level": k + 1, "eps": e,
                "share": shares[k], "lambda": out["lambdas"][k], "eps_achieved": out["eps_achieved"][k],
                "delta_achieved": out["delta_achieved"][k], "m_k": out["m_k"][k],
                "mse_bound": out["mse_bound"], "feasible": out["level_feasible"][k],
                "active": bool(out["active"][k]), "regime": out["regime"], "source": source,
            })
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)
