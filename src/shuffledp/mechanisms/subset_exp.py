"""The subset exponential mechanism of PrivSet (Wang et al., INFOCOM 2018) for set-valued data.

Each user's set is padded to exactly ``s`` items with dummy items from a padding domain
``{d, ..., d+s-1}`` (PrivSet's convention), so inputs live in a domain of size ``D = d + s``.
The mechanism outputs a ``k``-subset ``z`` of the ``D`` items with probability
``e^eps / Omega`` if ``z`` meets the user's padded set ``x`` and ``1 / Omega`` otherwise, where
``Omega = C(d, k) + (C(D, k) - C(d, k)) e^eps``; it is ``eps``-LDP for the whole set.

Hit rates (probability that item ``j`` is in ``z``):
``t = C(D-1, k-1) e^eps / Omega`` if ``j`` is in ``x``, and
``f = (C(d-1, k-1) + (C(D-1, k-1) - C(d-1, k-1)) e^eps) / Omega`` otherwise.
The unbiased frequency estimator is ``(hits_j - n f) / (n (t - f))``. The subset size ``k`` is the
one minimising PrivSet's variance bound ``(t(1-t) + (D-1) f(1-f)) / (t-f)^2`` over ``1 <= k < d``
(the paper's "best subset size").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SubsetExpRates:
    d: int
    s: int
    eps: float
    k: int
    t: float  # hit rate of an item the user holds
    f: float  # hit rate of an item the user does not hold
    omega: float


def _check(d: int, s: int, eps: float) -> None:
    if int(d) < 2:
        raise ValueError(f"d: {d!r} must be >= 2")
    if int(s) < 1:
        raise ValueError(f"s: {s!r} must be >= 1")
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"eps: {eps!r} must be a finite number > 0")


def subset_exp_rates(d: int, s: int, eps: float, k: int) -> SubsetExpRates:
    from math import comb  # exact integers (every argument here is >= 0), without scipy's import

    _check(d, s, eps)
    big = d + s
    if not 1 <= int(k) < big:
        raise ValueError(f"k: {k!r} must be in 1..{big - 1}")
    k = int(k)
    e = math.exp(eps)
    n_non = comb(d, k)
    n_all = comb(big, k)
    with_j = comb(big - 1, k - 1)
    with_j_non = comb(d - 1, k - 1)
    try:
        omega = n_non + (n_all - n_non) * e
        t = with_j * e / omega
        f = (with_j_non + (with_j - with_j_non) * e) / omega
    except OverflowError:
        # counts beyond the doubles (d + s in the thousands): the same rates from exact integer
        # ratios (each correctly rounded), omega reported as inf
        om = n_non / n_all + (n_all - n_non) / n_all * e
        t = with_j / n_all * e / om
        f = (with_j_non / n_all + (with_j - with_j_non) / n_all * e) / om
        omega = math.inf
    return SubsetExpRates(int(d), int(s), float(eps), k, float(t), float(f), float(omega))


def error_bound(r: SubsetExpRates) -> float:
    big = r.d + r.s
    if r.t == r.f:  # the rates round to the same double (large k): no information, no finite bound
        return math.inf
    return (r.t * (1 - r.t) + (big - 1) * r.f * (1 - r.f)) / (r.t - r.f) ** 2


def best_subset_size(d: int, s: int, eps: float) -> int:
    """PrivSet's best ``k`` in ``1..d-1`` (smallest variance bound)."""
    _check(d, s, eps)
    bounds = [error_bound(subset_exp_rates(d, s, eps, k)) for k in range(1, d)]
    return int(np.argmin(bounds)) + 1


def expected_mse(r: SubsetExpRates, n: int, mean_items: float | None = None) -> float:
    """Expected squared error of :func:`estimate`, averaged over the ``d`` real items.

    Users report independently and item ``j`` is in a user's output with probability ``t`` if the
    user holds ``j`` and ``f`` otherwise, so ``hits_j`` is a sum of independent Bernoulli draws:
    ``Var(hits_j) = n_j t(1-t) + (n - n_j) f(1-f)`` with ``n_j`` the holders of ``j``. The estimate
    is unbiased for ``w_j = n_j / n`` given the data, so its MSE is
    ``[w_j t(1-t) + (1-w_j) f(1-f)] / (n (t-f)^2)``. Averaged over the real items, only
    ``sum_j w_j`` = the mean number of real items per user (``mean_items``, ``s`` when no set is
    padded) remains: ``[(m/d) t(1-t) + (1 - m/d) f(1-f)] / (n (t-f)^2)``."""
    m = float(r.s if mean_items is None else mean_items)
    if not 0 <= m <= r.s:
        raise ValueError(f"mean_items: {mean_items!r} must lie in [0, s = {r.s}]")
    a = m / r.d
    return (a * r.t * (1 - r.t) + (1 - a) * r.f * (1 - r.f)) / (int(n) * (r.t - r.f) ** 2)


def intersection_pmf(r: SubsetExpRates) -> np.ndarray:
    """``P(|z & x| = i)`` for ``i = 0..min(k, s)``."""
    from math import comb  # 0 <= i <= min(k, s): every argument is >= 0

    e = math.exp(r.eps)
    i = np.arange(min(r.k, r.s) + 1)
    w = np.array([comb(r.s, int(ii)) * comb(r.d, r.k - int(ii)) for ii in i], dtype=float)
    w[1:] *= e
    return w / w.sum()


def pad_sets(sets: np.ndarray, d: int) -> np.ndarray:
    """Replace padding entries (< 0) of an ``(n, s)`` array by distinct dummy items ``d..d+s-1``."""
    sets = np.asarray(sets, dtype=np.int64)
    n, s = sets.shape
    dummy = d + np.arange(s)[None, :]
    return np.where(sets >= 0, sets, np.broadcast_to(dummy, (n, s)))


def randomize(padded: np.ndarray, r: SubsetExpRates, rng: np.random.Generator) -> np.ndarray:
    """Each user's output ``k``-subset as an ``(n, k)`` array of items of ``0..d+s-1``.

    Sampling: draw ``i = |z & x|`` from :func:`intersection_pmf`, then ``i`` items of ``x`` and
    ``k - i`` items of the complement uniformly without replacement (given ``i`` every such ``z``
    has the same probability, so this is exact).
    """
    padded = np.asarray(padded, dtype=np.int64)
    n, s = padded.shape
    if s != r.s:
        raise ValueError(f"padded: {s} columns, expected s = {r.s}")
    big = r.d + r.s
    pmf = intersection_pmf(r)
    inter = rng.choice(pmf.size, size=n, p=pmf)
    if r.k == 1 and (big - s) // 4 >= 1:   # one output item, the complement drawn by rejection
        return _randomize_one(padded, inter, big, rng)
    # items of x in random order; take the first `inter`
    own = np.take_along_axis(padded, np.argsort(rng.random((n, s)), axis=1), axis=1)
    comp = _complement_sample(padded, big, r.k, rng)
    col = np.arange(r.k)[None, :]
    from_own = col < inter[:, None]
    own_part = np.take_along_axis(own, np.minimum(col, s - 1), axis=1)
    comp_part = np.take_along_axis(comp, np.maximum(col - inter[:, None], 0), axis=1)
    return np.where(from_own, own_part, comp_part)


def _randomize_one(padded: np.ndarray, inter: np.ndarray, big: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`randomize`'s output for ``k = 1`` from the same draws: the first item of the row's
    random order (the smallest key: the first column holding it, as argmin; argsort's order where a
    row's smallest key is tied) where ``inter = 1``, else the complement's one uniform draw
    (rejected while in the row's set). Column by column: ``s`` is small, the rows many."""
    n, s = padded.shape
    keys = rng.random((n, s))
    low, first = keys[:, 0].copy(), np.zeros(n, dtype=np.intp)
    for j in range(1, s):
        less = keys[:, j] < low
        first[less] = j
        np.minimum(low, keys[:, j], out=low)
    ties = np.zeros(n, dtype=np.intp)
    for j in range(s):
        ties += keys[:, j] == low
    tied = np.flatnonzero(ties > 1)
    if tied.size:
        first[tied] = np.argsort(keys[tied], axis=1)[:, 0]
    rows = np.arange(n)
    comp = np.empty(n, dtype=np.int64)
    todo = rows
    while todo.size:   # _complement_sample's rejection for one slot: the same draws
        cand = rng.integers(0, big, size=todo.size)
        held = padded[todo]
        bad = held[:, 0] == cand
        for j in range(1, s):
            bad |= held[:, j] == cand
        comp[todo[~bad]] = cand[~bad]
        todo = todo[bad]
    return np.where(inter >= 1, padded[rows, first], comp)[:, None]


def _complement_sample(padded: np.ndarray, big: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``(n, k)``: per row, ``k`` distinct items of ``0..big-1`` outside the row of ``padded``, in
    uniformly random order (a uniform ordered sample without replacement from the complement).

    Small ``k``: slot by slot, uniform draws rejected while they hit the set or an earlier slot
    (rejection keeps each slot uniform over the allowed items, so the result is exact). Large
    ``k``: random keys over the domain with the set's members pushed last, then argsort.
    """
    n, s = padded.shape
    if k > (big - s) // 4:
        keys = rng.random((n, big))
        np.put_along_axis(keys, padded, np.inf, axis=1)
        return np.argsort(keys, axis=1)[:, :k]
    out = np.empty((n, k), dtype=np.int64)
    # taken[row, item]: the item is in the row's set or an earlier slot (a draw of it is rejected)
    taken = np.zeros((n, big), dtype=bool)
    taken[np.arange(n)[:, None], padded] = True
    for j in range(k):
        todo = np.arange(n)
        while todo.size:
            cand = rng.integers(0, big, size=todo.size)
            bad = taken[todo, cand]
            ok_rows, ok_items = todo[~bad], cand[~bad]
            out[ok_rows, j] = ok_items
            taken[ok_rows, ok_items] = True
            todo = todo[bad]
    return out


def hits(outputs: np.ndarray, d: int, s: int) -> np.ndarray:
    """Hit counts of items ``0..d+s-1`` over all users' output subsets."""
    return np.bincount(np.asarray(outputs, dtype=np.int64).ravel(), minlength=d + s)


def estimate(hit_counts: np.ndarray, n: int, r: SubsetExpRates) -> np.ndarray:
    """Unbiased frequency estimates of the real items ``0..d-1``."""
    h = np.asarray(hit_counts, dtype=float)[: r.d]
    return (h - n * r.f) / (n * (r.t - r.f))
