"""Independent oracle for the blanket-decomposition accountant of ANY finite-output randomizer.

Written for the tests only, independent of ``shuffledp`` (numpy, scipy.special, itertools, math):

* :func:`exact_shuffle_delta` -- the exact hockey-stick divergence of the shuffled output
  histogram of ``n`` users when the victim holds ``x0`` (P) vs ``x1`` (Q) and the other users
  hold the inputs listed in ``others``. The histogram law is the convolution of the users'
  output distributions over the count vectors (every vector of sum m, m = 0..n, one user added
  at a time). Output columns that are proportional (same likelihood ratio between every two
  inputs) are merged first: given the merged counts, how a merged count splits between the
  columns does not depend on anyone's input, so the merged histogram is a sufficient
  statistic and the divergence is unchanged (checked against the unmerged computation in the
  tests).
* :func:`exact_decomposed_delta` -- the exact divergence of the *decomposed pair* of one
  victim pair given by its group masses: the victim's report falls in group ``g`` with
  probability ``p_g`` (P) or ``q_g`` (Q); ``M ~ Bin(n - 1, gamma)`` blanket reports fall in
  group ``g`` with probability ``w_g``; the adversary sees ``M`` and the group counts. Every
  ``M`` and every count vector is enumerated, and the pmf is taken from its definition
  ``P(h | M) = sum_g p_g Mult_M(h - e_g; w)`` (no closed-form shortcut).
* :func:`blanket`, :func:`pair_groups`, :func:`decomposed_worst` -- the blanket of a matrix, a
  victim pair reduced to its likelihood-ratio groups, and the largest exact decomposed
  divergence over the ordered pairs of a matrix.
* :func:`subset_exp_matrix`, :func:`oue_matrix`, :func:`olh_matrix` -- the three randomizers'
  output matrices written from their definitions.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln, xlogy


# ----------------------------------------------------------------------------- matrices
def check_matrix(matrix) -> np.ndarray:
    mat = np.asarray(matrix, dtype=np.float64)
    assert mat.ndim == 2 and mat.shape[0] >= 2 and mat.shape[1] >= 1
    assert np.all(mat >= 0) and np.allclose(mat.sum(axis=1), 1.0, atol=1e-12)
    return mat


def local_eps(matrix) -> float:
    """The randomizer's own eps0: the largest log-ratio of two entries of a column."""
    mat = check_matrix(matrix)
    with np.errstate(divide="ignore"):
        logm = np.log(mat)
    return float(np.max(logm.max(axis=0) - logm.min(axis=0)))


def merge_columns(matrix, *, decimals: int = 12) -> np.ndarray:
    """Sum the columns of ``matrix`` that are proportional to each other (all-zero columns are
    dropped). The result has the same rows' divergences for any shuffled histogram."""
    mat = check_matrix(matrix)
    keys: dict[tuple, int] = {}
    cols: list[np.ndarray] = []
    for j in range(mat.shape[1]):
        col = mat[:, j]
        tot = col.sum()
        if tot == 0:
            continue
        key = tuple(np.round(col / tot, decimals))
        if key in keys:
            cols[keys[key]] = cols[keys[key]] + col
        else:
            keys[key] = len(cols)
            cols.append(col.copy())
    return np.stack(cols, axis=1)


def blanket(matrix) -> tuple[np.ndarray, float]:
    """``(omega, gamma)``: column minima over the inputs and their sum."""
    mat = check_matrix(matrix)
    omega = mat.min(axis=0)
    return omega, float(omega.sum())


def subset_exp_matrix(d: int, s: int, k: int, eps0: float, inputs=None) -> np.ndarray:
    """PrivSet's subset exponential mechanism. Items ``0..d+s-1`` (the last ``s`` are the padding
    dummies); an input is an ``s``-subset ``x`` (default: every ``s``-subset of the ``d + s``
    items, in ``itertools.combinations`` order); the output is a ``k``-subset ``z`` (same order)
    with weight ``e^eps0`` if ``z`` meets ``x`` and 1 otherwise."""
    items = range(d + s)
    xs = list(itertools.combinations(items, s)) if inputs is None else [tuple(x) for x in inputs]
    zs = list(itertools.combinations(items, k))
    e = math.exp(eps0)
    mat = np.array([[e if set(x) & set(z) else 1.0 for z in zs] for x in xs])
    return mat / mat.sum(axis=1, keepdims=True)


def oue_matrix(d: int, eps0: float) -> np.ndarray:
    """Optimized unary encoding: input ``x`` in ``0..d-1``, output a bit vector in ``{0,1}^d``
    (``itertools.product`` order); bit ``x`` is 1 w.p. 1/2, every other bit w.p. ``1/(e^eps0+1)``."""
    f = 1.0 / (math.exp(eps0) + 1.0)
    outs = list(itertools.product((0, 1), repeat=d))
    mat = np.ones((d, len(outs)))
    for x in range(d):
        for c, bits in enumerate(outs):
            for j, b in enumerate(bits):
                pj = 0.5 if j == x else f
                mat[x, c] *= pj if b else 1.0 - pj
    return mat


def olh_matrix(k: int, g: int, eps0: float) -> np.ndarray:
    """Local hashing over the family of ALL functions ``h: [k] -> [g]`` (uniform), then g-ary
    randomized response on ``h(x)``; output ``(h, y)`` (h in ``itertools.product`` order, y inner)."""
    e = math.exp(eps0)
    hi, lo = e / (e + g - 1.0), 1.0 / (e + g - 1.0)
    hs = list(itertools.product(range(g), repeat=k))
    mat = np.array([[(hi if h[x] == y else lo) for h in hs for y in range(g)] for x in range(k)])
    return mat / len(hs)


# ----------------------------------------------------------------------------- grouping
def pair_groups(matrix, x0: int, x1: int, *, decimals: int = 12):
    """The victim pair ``(x0, x1)`` reduced to its likelihood-ratio groups:
    ``(w, p, q, gamma)`` with ``w_g`` the blanket mass of group g over ``gamma`` and ``p_g``,
    ``q_g`` the rows' masses on it; groups sorted by ``(w, p, q)``. Outputs outside the
    blanket's support must have probability 0 under both rows."""
    mat = check_matrix(matrix)
    omega, gamma = blanket(mat)
    assert gamma > 0
    keep = omega > 0
    assert np.all(mat[[x0, x1]][:, ~keep] == 0)
    u = mat[x0, keep] / omega[keep]
    v = mat[x1, keep] / omega[keep]
    groups: dict[tuple, list[int]] = {}
    for j, key in enumerate(zip(np.round(u, decimals), np.round(v, decimals), strict=True)):
        groups.setdefault(key, []).append(j)
    rows = []
    for cols in groups.values():
        rows.append((omega[keep][cols].sum() / gamma, mat[x0, keep][cols].sum(), mat[x1, keep][cols].sum()))
    rows.sort()
    w, p, q = (tuple(float(r[i]) for r in rows) for i in range(3))
    return w, p, q, gamma


def canonical(w, p, q, decimals: int = 12) -> tuple:
    """A grouped pair up to the order of its groups, empty groups (all three masses 0) dropped
    (for comparing two groupings)."""
    rows = zip(np.round(w, decimals), np.round(p, decimals), np.round(q, decimals), strict=True)
    return tuple(sorted(r for r in rows if any(r)))


# ----------------------------------------------------------------------------- real shuffle
class Simplex:
    """Every count vector of ``K`` outputs with sum ``m`` for ``m = 0..n`` (rows of
    :func:`compositions`) and, per ``m`` and output ``j``, the row of ``h + e_j`` among the
    vectors of sum ``m + 1``: one user more is then a scatter of ``K`` scaled copies."""

    def __init__(self, K: int, n: int):
        self.K, self.n = K, n
        radix = (n + 1) ** np.arange(K, dtype=np.int64)
        self.comps = [compositions(m, K) for m in range(n + 1)]
        codes = [c @ radix for c in self.comps]
        orders = [np.argsort(c) for c in codes]
        self.up = []
        for m in range(n):
            nxt_sorted = codes[m + 1][orders[m + 1]]
            per_j = []
            for j in range(K):
                pos = np.searchsorted(nxt_sorted, codes[m] + radix[j])
                per_j.append(orders[m + 1][pos])
            self.up.append(per_j)

    def add_user(self, vec: np.ndarray, m: int, row: np.ndarray) -> np.ndarray:
        """Law over vectors of sum ``m + 1`` from the law ``vec`` over sum ``m`` and one more user."""
        out = np.zeros(self.comps[m + 1].shape[0])
        for j, pj in enumerate(row):
            if pj > 0:
                out[self.up[m][j]] += pj * vec
        return out


@lru_cache(maxsize=64)
def _simplex(K: int, n: int) -> Simplex:
    return Simplex(K, n)


def histogram_law(matrix, users, n: int | None = None) -> np.ndarray:
    """pmf of the output histogram of independent users holding ``users`` (input indices), as a
    vector over the count vectors of sum ``len(users)`` (order of :func:`compositions`)."""
    mat = check_matrix(matrix)
    n = len(users) + 1 if n is None else n
    sx = _simplex(mat.shape[1], n)
    vec = np.ones(1)
    for m, x in enumerate(users):
        vec = sx.add_user(vec, m, mat[x])
    return vec


def _add_user(matrix: np.ndarray, vec: np.ndarray, m: int, x: int, n: int) -> np.ndarray:
    return _simplex(matrix.shape[1], n).add_user(vec, m, matrix[x])


def hockey(P: np.ndarray, Q: np.ndarray, eps: float) -> float:
    return float(np.maximum(P - math.exp(eps) * Q, 0.0).sum())


def _sparse_law(mat: np.ndarray, users) -> dict:
    """The histogram law as a dict {count vector: probability} (no merging, any output count)."""
    law = {(0,) * mat.shape[1]: 1.0}
    for x in users:
        nxt: dict = {}
        for h, pr in law.items():
            for y, py in enumerate(mat[x]):
                if py > 0:
                    hh = h[:y] + (h[y] + 1,) + h[y + 1:]
                    nxt[hh] = nxt.get(hh, 0.0) + pr * py
        law = nxt
    return law


def exact_shuffle_delta(matrix, x0: int, x1: int, others, eps: float, *, merge: bool = True) -> float:
    """Exact ``D_{e^eps}(P || Q)`` of the shuffled output histogram, victim at ``x0`` (P) vs ``x1``
    (Q), the other users at the inputs listed in ``others``. ``merge=False``: every output kept
    apart, histograms enumerated sparsely (a check of the merging; small n only)."""
    if merge:
        mat = merge_columns(matrix)
        m, n = len(others), len(others) + 1
        base = histogram_law(mat, list(others), n)
        return hockey(_add_user(mat, base, m, x0, n), _add_user(mat, base, m, x1, n), eps)
    mat = check_matrix(matrix)
    P = _sparse_law(mat, [*others, x0])
    Q = _sparse_law(mat, [*others, x1])
    ee = math.exp(eps)
    return float(sum(max(pr - ee * Q.get(h, 0.0), 0.0) for h, pr in P.items()))


def worst_shuffle_delta(matrix, n: int, eps_list) -> list[tuple[float, tuple]]:
    """For each eps: the largest exact shuffled divergence over every ordered victim pair and
    EVERY multiset of the other ``n - 1`` users' inputs, and its ``(x0, x1, others)``."""
    mat = merge_columns(matrix)
    rows = mat.shape[0]
    best = [(-1.0, ()) for _ in eps_list]
    for others in itertools.combinations_with_replacement(range(rows), n - 1):
        base = histogram_law(mat, list(others), n)
        laws = [_add_user(mat, base, n - 1, x, n) for x in range(rows)]
        for x0, x1 in itertools.permutations(range(rows), 2):
            for i, eps in enumerate(eps_list):
                d = hockey(laws[x0], laws[x1], eps)
                if d > best[i][0]:
                    best[i] = (d, (x0, x1, others))
    return best


# ----------------------------------------------------------------------------- decomposed pair
@lru_cache(maxsize=256)
def compositions(total: int, parts: int) -> np.ndarray:
    """Every vector of ``parts`` non-negative integers summing to ``total`` (rows)."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    blocks = []
    for first in range(total + 1):
        rest = compositions(total - first, parts - 1)
        blocks.append(np.hstack([np.full((rest.shape[0], 1), first, dtype=np.int64), rest]))
    return np.vstack(blocks)


def _log_mult(h: np.ndarray, logw_terms) -> np.ndarray:
    """log Mult(h; w) for rows h (entries >= 0), given w; -inf where impossible."""
    m = h.sum(axis=1)
    return gammaln(m + 1.0) - gammaln(h + 1.0).sum(axis=1) + logw_terms(h)


def exact_decomposed_delta(w, p, q, gamma: float, n: int, eps: float) -> float:
    """Exact ``sum_M Bin(M; n-1, gamma) D_{e^eps}(P_M || Q_M)``: victim's group drawn from ``p``
    (``q``) plus ``M`` blanket draws from ``w``, all group counts seen (one direction)."""
    w = np.asarray(w, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    G = w.size
    assert p.size == G and q.size == G and 0 < gamma <= 1 + 1e-12 and n >= 2
    assert abs(w.sum() - 1.0) < 1e-9 and abs(p.sum() - 1.0) < 1e-9 and abs(q.sum() - 1.0) < 1e-9
    gamma = min(gamma, 1.0)
    ee = math.exp(eps)

    def logw_terms(h):
        return xlogy(h, w[None, :]).sum(axis=1)

    total = 0.0
    for M in range(n):
        logb = (gammaln(n) - gammaln(M + 1.0) - gammaln(n - M) + xlogy(M, gamma) + xlogy(n - 1 - M, 1.0 - gamma))
        wm = math.exp(logb) if np.isfinite(logb) else 0.0
        if wm == 0.0:
            continue
        h = compositions(M + 1, G)
        P = np.zeros(h.shape[0])
        Q = np.zeros(h.shape[0])
        for g in range(G):
            ok = h[:, g] >= 1
            hg = h[ok].copy()
            hg[:, g] -= 1
            base = np.exp(_log_mult(hg, logw_terms))
            P[ok] += p[g] * base
            Q[ok] += q[g] * base
        total += wm * float(np.maximum(P - ee * Q, 0.0).sum())
    return total


def atoms_expectation(w, z, gamma: float, n: int) -> float:
    """``sum_M Bin(M; n-1, gamma) E[(Z_1 + ... + Z_{M+1})_+] / (M + 1)`` with ``Z_i`` i.i.d.,
    ``Z = z_g`` with probability ``w_g`` (enumerating every count vector). With
    ``z_g = (p_g - e^eps q_g) / w_g`` this is the decomposed divergence (the representation the
    accountant spreads); any ``z`` is accepted, e.g. a spread of it."""
    w = np.asarray(w, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    gamma = min(gamma, 1.0)
    total = 0.0
    for M in range(n):
        wm = math.comb(n - 1, M) * gamma**M * (1.0 - gamma) ** (n - 1 - M)
        h = compositions(M + 1, w.size)
        mult = np.exp(gammaln(M + 2.0) - gammaln(h + 1.0).sum(axis=1) + xlogy(h, w[None, :]).sum(axis=1))
        total += wm * float(np.dot(mult, np.maximum(h @ z, 0.0))) / (M + 1)
    return total


def decomposed_worst(matrix, n: int, eps: float, *, grouped: bool = True) -> tuple[float, tuple]:
    """Largest exact decomposed divergence over the ordered victim pairs of ``matrix`` and the
    pair. ``grouped=False`` keeps every output as its own group (no grouping at all)."""
    mat = check_matrix(matrix)
    omega, gamma = blanket(mat)
    best = (-1.0, ())
    for x0, x1 in itertools.permutations(range(mat.shape[0]), 2):
        if grouped:
            w, p, q, _ = pair_groups(mat, x0, x1)
        else:
            keep = omega > 0
            w, p, q = omega[keep] / gamma, mat[x0, keep], mat[x1, keep]
        d = exact_decomposed_delta(w, p, q, gamma, n, eps)
        if d > best[0]:
            best = (d, (x0, x1))
    return best


def random_matrix(rng: np.random.Generator, inputs: int, outputs: int, floor: float = 0.05) -> np.ndarray:
    """A row-stochastic matrix with every entry >= ``floor`` (bounded away from 0)."""
    raw = rng.uniform(0.0, 1.0, size=(inputs, outputs)) ** 2
    raw = raw / raw.sum(axis=1, keepdims=True)
    return floor + (1.0 - outputs * floor) * raw
