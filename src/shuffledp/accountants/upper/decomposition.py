"""Numerical privacy-blanket decomposition accountant, rounded against us.

A finite-output local randomizer is given by its output matrix ``P[x, y]`` (rows: inputs,
columns: outputs). Its *blanket* is ``omega(y) = min_x P[x, y]`` with mass ``gamma = sum omega``;
every report is, with probability ``gamma``, a draw from ``omega / gamma`` whatever the input
(Balle, Bell, Gascon, Nissim 2019). Giving the adversary the identity and the reports of the
other users who did not draw from the blanket is a post-processing argument, so the shuffled
output on neighbouring datasets (victim holding ``x`` or ``x'``) is no further apart than the
*decomposed pair*

    victim's report R(x)  vs  R(x'),   plus  M ~ Bin(n - 1, gamma) i.i.d. blanket draws.

Su, Cheng and Wang (arXiv 2504.07414) show this blanket decomposition is the optimal one among
decomposition-based analyses; this module computes its hockey-stick divergence exactly up to
bounded, explicitly added errors (an upper bound, not an estimate).

Reduction to three counts
-------------------------
Write ``u(y) = P[x, y] / omega(y)`` and ``v(y) = P[x', y] / omega(y)``. Given ``M``, the pmf of
the histogram ``h`` of the ``M + 1`` reports is ``Mult_{M+1}(h; omega/gamma) * gamma *
sum_y u(y) h_y / (M + 1)`` (resp. ``v``), so outputs with the same ``(u, v)`` can be merged:
the counts per group are sufficient. When a pair ``(x, x')`` has at most three groups (k-ary
randomized response: the victim's two values and the rest; any binary randomizer), name them
1, 2, 3 and let ``t = H_1 + H_2``. Given ``(M, t)`` the pmf in ``a = H_1`` is

    P(a, t | M) = B(t-1) [P_1 b(a-1; t-1) + P_2 b(a; t-1)] + P_3 B(t) b(a; t),

with ``B = Bin(.; M, w_1 + w_2)``, ``b = Bin(.; ., w_1/(w_1 + w_2))``, ``w_g`` the blanket mass
of group g and ``P_g`` (``Q_g``) the victim's probability of group g under ``x`` (``x'``). Divided
by ``b(a; t)`` this is *linear* in ``a``, so for every ``(M, t)`` the set where
``P - e^eps Q > 0`` is a half-line in ``a`` and its mass is three binomial tails. The same
function with ``M = n - 1`` fixed and the other users' group probabilities in place of the
blanket's gives the exact divergence of a *real* neighbouring pair whose other users all hold
one value (module :func:`pair_delta`), which is a lower bound on the mechanism's privacy.

More groups
-----------
A pair with more than three groups (OUE, subset selection, local hashing, any matrix) is reduced
per eps to three-group pairs that dominate it in convex order (:func:`spread_to_three`: a
mean-preserving spread of the law of one report's contribution), then evaluated as above.
A pair whose four groups are two independent flags (local hashing; OUE under a blanket with
independent bits) evaluates itself exactly instead (:mod:`shuffledp.accountants.upper.flags`, through
its ``block_value``).

Errors, all charged to the upper bound
--------------------------------------
* ``M`` outside a window of ``Bin(n-1, gamma)`` holding all but ``tail`` of its mass: the
  divergence there is at most that mass, which is computed exactly and added.
* ``M`` grouped into blocks (at most ``max_blocks``), each charged the divergence at its
  *smallest* ``M``: ``D_M`` is non-increasing in ``M`` because one more blanket draw is a
  world-independent Markov kernel (data processing). Charging each block its largest ``M``
  gives a lower bound on the decomposed divergence, reported as ``delta_decomposed_lower`` to
  show the blocking error (not a lower bound on the mechanism).
* ``t`` outside a window of the blanket count in groups 1 and 2 that holds all but ``tail`` of
  its mass: the divergence there is at most that mass, added.
* The half-line threshold is a rounded real number: the two terms beside it are evaluated
  individually and a possible off-by-one is charged (``+max(f(a0-1), 0) + max(-f(a0), 0)``).
* Floating-point rounding of the binomial pmfs and tails (Boost, via scipy): a relative
  allowance of ``ROUNDING_RTOL`` of the summed magnitudes.

The k-RR worst case over pairs is any pair (symmetry); for a general matrix every ordered pair
of distinct rows is evaluated and the largest divergence is kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special, stats

from shuffledp.accountants.lower.lower_bounds import SUBNORMAL_GUARD, TAIL_MIN, binom_rtol
from shuffledp.accountants.numerics.hockey_stick import bisect_eps
from shuffledp.accountants.numerics.walk_blocks import walk_divergence

__all__ = [
    "ROUNDING_RTOL",
    "DEFAULT_TAIL",
    "krr_matrix",
    "blanket_of",
    "GroupedPair",
    "grouped_pairs",
    "krr_pairs",
    "DecomposedPair",
    "decomposition_delta",
    "decomposition_eps",
    "secant_eps",
    "pair_delta",
    "krr_pair_lower_delta",
    "krr_pair_lower_eps",
]

ROUNDING_RTOL = 1e-10
DEFAULT_TAIL = 1e-30
DEFAULT_BLOCKS = None  # adaptive: about BLOCK_BUDGET (M block, t) cells per evaluation
MIN_BLOCKS = 16
BLOCK_BUDGET = 120_000
EPS_CAP = 700.0
WALK_WIDTH = 3000  # t-windows wider than this: the blocked walk (shuffledp.accountants.numerics.walk_blocks)
WALK_M = 10**8     # and counts of blanket draws above this, whatever the window
WALK_ROWS = 64     # counts of blanket draws (blocks of them) evaluated by the walk at most
SPREAD_TIE = 1.1  # spreads adding at most this factor more variance than the least are evaluated too
FINE_TAIL = 1e-40  # windows deeper than this (delta below about 1e-32): the blanket counts are refined
FINE_BLOCKS_MAX = 512  # (DecomposedPair._refined_value) where at most this many blocks (more: narrow already),
FINE_STEP = 16     # FINE_STEP more counts per round, at most FINE_ROWS more (FINE_WALK_ROWS on the walk,
FINE_ROWS = 32     # dearer per count, where D_M varies less per count), until the charges exceed the
FINE_WALK_ROWS = 16  # cells' next values by at most
FINE_TARGET = 0.05  # this share of the total (in eps: under 1e-3 of it, delta being tiny)


# --------------------------------------------------------------------------- validation
def _check_eps0(eps0) -> float:
    eps0 = float(eps0)
    if not (math.isfinite(eps0) and 0.0 < eps0 <= 50.0):
        raise ValueError(f"eps0 must be a number in (0, 50], got {eps0!r}")
    return eps0


def _check_int(value, name: str, low: int) -> int:
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_eps(eps) -> float:
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    return eps


def _check_delta(delta) -> float:
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return delta


# --------------------------------------------------------------------------- randomizers
def krr_matrix(k: int, eps0: float) -> np.ndarray:
    """Output matrix of k-ary randomized response: ``e^eps0 / (e^eps0 + k - 1)`` on the diagonal."""
    k = _check_int(k, "k", 2)
    eps0 = _check_eps0(eps0)
    e = math.exp(eps0)
    mat = np.full((k, k), 1.0 / (e + k - 1.0))
    np.fill_diagonal(mat, e / (e + k - 1.0))
    return mat


def blanket_of(matrix) -> tuple[np.ndarray, float]:
    """``(omega, gamma)``: the blanket ``omega(y) = min_x P[x, y]`` and its mass."""
    mat = np.asarray(matrix, dtype=np.float64)
    if mat.ndim != 2 or mat.shape[0] < 2 or mat.shape[1] < 2:
        raise ValueError("matrix must be 2-D with at least two inputs and two outputs")
    if not np.all(np.isfinite(mat)) or np.any(mat < 0):
        raise ValueError("matrix must hold finite non-negative probabilities")
    if np.any(np.abs(mat.sum(axis=1) - 1.0) > 1e-9):
        raise ValueError("every row of matrix must sum to 1")
    omega = mat.min(axis=0)
    return omega, float(omega.sum())


@dataclass(frozen=True)
class GroupedPair:
    """A victim pair reduced to its likelihood-ratio groups of outputs (``G >= 2`` of them).

    ``w`` blanket masses of the groups (normalised, sum 1), ``p`` / ``q`` the victim's group
    probabilities under the two inputs, ``gamma`` the blanket mass. With three groups (k-RR) groups
    1 and 2 are the two with the most extreme likelihood ratio and the sums are exact; with more,
    :func:`spread_to_three` reduces the pair per eps.
    """

    w: tuple[float, ...]
    p: tuple[float, ...]
    q: tuple[float, ...]
    gamma: float


def krr_pairs(k: int, eps0: float) -> list[GroupedPair]:
    """The single grouped pair of k-RR (every pair of inputs is equivalent by symmetry; groups:
    the victim's two values and the rest), equal to ``grouped_pairs(krr_matrix(k, eps0))``."""
    k = _check_int(k, "k", 2)
    eps0 = _check_eps0(eps0)
    e = math.exp(eps0)
    p, q = e / (e + k - 1.0), 1.0 / (e + k - 1.0)
    rest = (k - 2.0) / (e + k - 1.0)
    w = (1.0 / k, 1.0 / k, (k - 2.0) / k)
    return [GroupedPair(w, (p, q, rest), (q, p, rest), k / (e + k - 1.0))]


def _row_pair_groups(mat: np.ndarray, i: int, j: int, omega: np.ndarray, gamma: float):
    """``(w, p, q)`` of the ordered pair of rows ``(i, j)`` of :func:`grouped_pairs`: the blanket
    weight and the two rows' masses of every likelihood-ratio group (groups 1 and 2 the most
    extreme, at least three groups); None when the rows are identical."""
    keep = omega > 0
    if np.any(~keep & ((mat[i] > 0) | (mat[j] > 0))):
        raise ValueError("an output outside the blanket's support has positive probability; "
                         "the decomposition cannot bound it")
    u = mat[i, keep] / omega[keep]
    v = mat[j, keep] / omega[keep]
    key = np.round(np.stack([u, v]), 12)
    groups: dict[tuple[float, float], list[int]] = {}
    for col, pair in enumerate(map(tuple, key.T)):
        groups.setdefault(pair, []).append(col)
    if len(groups) == 1:
        return None  # identical rows: divergence 0
    om = omega[keep]
    cols = list(groups.values())
    # groups 1 and 2 are the two with the most extreme u/v; the rest is group 3
    cols.sort(key=lambda c: -abs(math.log(u[c[0]] / v[c[0]])) if u[c[0]] > 0 and v[c[0]] > 0
              else -math.inf)
    while len(cols) < 3:
        cols.append([])
    w = tuple(float(om[c].sum()) / gamma for c in cols)
    p = tuple(float(mat[i, keep][c].sum()) for c in cols)
    q = tuple(float(mat[j, keep][c].sum()) for c in cols)
    return w, p, q


def grouped_pairs(matrix) -> list[GroupedPair]:
    """Every ordered pair of distinct rows of ``matrix`` reduced to its likelihood-ratio groups.

    Pairs with at most three groups are evaluated exactly; pairs with more through the
    three-atom spreads of :func:`spread_to_three`. Raises ``ValueError`` if the blanket is empty
    (``gamma = 0``: no amplification) or an output outside its support has positive probability.
    """
    mat = np.asarray(matrix, dtype=np.float64)
    omega, gamma = blanket_of(mat)
    if gamma <= 0:
        raise ValueError("the randomizer has an empty blanket (some output column has a zero); "
                         "the decomposition certifies nothing")
    out = []
    seen = set()
    for i in range(mat.shape[0]):
        for j in range(mat.shape[0]):
            if i == j:
                continue
            grouped = _row_pair_groups(mat, i, j, omega, gamma)
            if grouped is None:
                continue  # identical rows: divergence 0
            w, p, q = grouped
            if len(w) > 3:
                # more groups: the order is immaterial (the spread sorts them per eps)
                sig = tuple(sorted(zip(np.round(w, 14), np.round(p, 14), np.round(q, 14), strict=True)))
                if sig in seen:
                    continue
                seen.add(sig)
                out.append(GroupedPair(w, p, q, gamma))
                continue
            sig = (tuple(np.round(w, 14)), tuple(np.round(p, 14)), tuple(np.round(q, 14)))
            if sig in seen:
                continue
            seen.add(sig)
            # relabelling groups 1 and 2 does not change the divergence
            seen.add(tuple((x[1], x[0], x[2]) for x in sig))
            out.append(GroupedPair(w, p, q, gamma))
    return out


def _spread_keeping(z: np.ndarray, w: np.ndarray, mid: int, ee: float,
                    gamma: float) -> tuple[float, float, GroupedPair]:
    """One spread of :func:`spread_to_three` (atoms ``z`` sorted, weights ``w``): keep atoms 0,
    ``mid`` and the last, split every other between its kept neighbours. Returns
    ``(added variance, scale, pair)``."""
    last = len(z) - 1
    keep = (0, mid, last)
    wk = {i: float(w[i]) for i in keep}
    added = 0.0  # variance the spread adds: sum of w_j (z_j - z_a)(z_b - z_j)
    for j in range(1, last):
        if j == mid:
            continue
        a, b = (0, mid) if j < mid else (mid, last)
        span = z[b] - z[a]
        to_a = 0.0 if span <= 0 else float(w[j] * (z[b] - z[j]) / span)
        to_a = min(max(to_a, 0.0), float(w[j]))
        wk[a] += to_a
        wk[b] += float(w[j]) - to_a
        added += float(w[j] * (z[j] - z[a]) * (z[b] - z[j]))
    total = wk[0] + wk[mid] + wk[last]
    ws = (wk[0] / total, wk[last] / total, wk[mid] / total)
    zs = (float(z[0]), float(z[last]), float(z[mid]))
    c = [wi * zi for wi, zi in zip(ws, zs, strict=True)]
    pp = [max(ci, 0.0) for ci in c]
    qq = [max(-ci, 0.0) / ee for ci in c]
    scale = sum(pp)
    return (added, scale, GroupedPair(ws, tuple(x / scale for x in pp),
                                      tuple(x / scale for x in qq), gamma))


def spread_to_three(g: GroupedPair, ee: float) -> list[tuple[float, float, GroupedPair]]:
    """Three-atom pairs that dominate a many-group pair at ``e^eps = ee``, as ``(scale, pair)``.

    Given ``M`` blanket draws, the pair's divergence is ``E[(Z_1 + ... + Z_{M+1})_+] / (M + 1)``
    with ``Z_i`` i.i.d., ``Z = z_g = (p_g - ee q_g) / w_g`` with probability ``w_g`` (module
    docstring). Keep the smallest and the largest atom and one middle atom ``m``; split every other
    atom ``z_j`` between its kept neighbours ``a < j < b`` in the proportions that keep its mean
    (``w_j (z_b - z_j) / (z_b - z_a)`` to ``a``, the rest to ``b``). The result ``Z'`` is a
    mean-preserving spread of ``Z`` (``E[Z' | Z] = Z``), so ``Z <= Z'`` in convex order, the sums of
    ``M + 1`` independent copies are ordered the same way, and ``x -> x_+`` is convex: the spread's
    divergence is at least the pair's for every ``M``. One spread per choice of ``m`` is returned
    as ``(added variance, scale, pair)``, the one adding the least variance first (their minimum
    is a bound too). Each is a three-group pair for the exact sums with
    ``p'_g - ee q'_g = w'_g z'_g``, scaled so that ``sum p' = 1`` (the window charges assume it);
    ``scale`` multiplies its divergence back. An empty list means every atom is ``<= 0``: the
    divergence is 0 for every ``M``.
    """
    w = np.asarray(g.w, dtype=np.float64)
    z = (np.asarray(g.p, dtype=np.float64) - ee * np.asarray(g.q, dtype=np.float64)) / w
    if not np.max(z) > 0:
        return []
    order = np.argsort(z, kind="stable")
    z, w = z[order], w[order]
    last = len(z) - 1
    out = [_spread_keeping(z, w, mid, ee, g.gamma) for mid in range(1, last)]
    # the spread adding the least variance first
    out.sort(key=lambda item: item[0])
    return [(added, scale, pair) for added, scale, pair in out]


# --------------------------------------------------------------------------- core sums
def _pmf(j, N, pi):
    """Binomial pmf (Boost via scipy), 0 outside the support and for N < 0."""
    ok = (N >= 0) & (j >= 0) & (j <= N)
    return np.where(ok, stats.binom.pmf(np.where(ok, j, 0.0), np.maximum(N, 0.0), pi), 0.0)


def _f_terms(a, t, Bt1, Bt, pi, c1, c2, c3):
    """``P(a,t) - e^eps Q(a,t)`` given the coefficient differences ``c_g = P_g - e^eps Q_g``."""
    return (Bt1 * (c1 * _pmf(a - 1.0, t - 1.0, pi) + c2 * _pmf(a, t - 1.0, pi))
            + c3 * Bt * _pmf(a, t, pi))


def _per_t(t, Bt1, Bt, pi, P, Q, ee, *, upper: bool) -> np.ndarray:
    """Per row (axis 0) sum over ``t`` (axis 1) of ``sum_a (P(a,t) - e^eps Q(a,t))_+``.

    ``upper=True`` adds the rounding allowance and, where the real threshold lies so close to
    an integer that rounding could put it on the wrong side, the off-by-one charge;
    ``upper=False`` returns the sum over the computed half-line minus the allowance (a lower
    bound: any region gives at most the positive part).
    """
    c1, c2, c3 = P[0] - ee * Q[0], P[1] - ee * Q[1], P[2] - ee * Q[2]
    tt = np.maximum(t, 1.0)
    k1 = c1 / pi - c2 / (1.0 - pi)
    slope = Bt1 / tt * k1
    icpt_a = Bt1 * c2 / (1.0 - pi)
    icpt_b = c3 * Bt
    icpt = icpt_a + icpt_b
    pos = slope > 0
    neg = slope < 0
    flat = ~(pos | neg)
    safe = np.where(flat, 1.0, slope)
    cross = np.where(flat, 0.0, -icpt / safe)
    # up (slope > 0 or flat): region a >= a0 ; down (slope < 0): region a <= a0
    a0 = np.where(pos, np.floor(cross) + 1.0, np.ceil(cross) - 1.0)
    a0 = np.where(flat, np.where(icpt > 0, 0.0, t + 1.0), a0)
    a0 = np.clip(a0, -1.0, t + 1.0)
    up = ~neg
    T1, T2, T3 = _region_masses(t, a0, pi, neg, up)
    pmass = Bt1 * (P[0] * T1 + P[1] * T2) + P[2] * Bt * T3
    qmass = Bt1 * (Q[0] * T1 + Q[1] * T2) + Q[2] * Bt * T3
    s = pmass - ee * qmass
    allowance = ROUNDING_RTOL * (pmass + ee * qmass)
    if not upper:
        return np.sum(np.maximum(s - allowance, 0.0), axis=-1)
    # threshold error: relative 1e-9 of the magnitudes entering -icpt/slope (Boost pmfs are
    # accurate to ~1e-14; the margin covers the arithmetic with a factor > 1e3)
    err = 1e-9 * ((np.abs(icpt_a) + np.abs(icpt_b)) / np.abs(safe) + np.abs(cross) + 1.0)
    near = ~flat & (np.abs(cross - np.round(cross)) <= err)
    corr = np.zeros_like(s)
    if np.any(near):
        idx = np.nonzero(near)
        corr[idx] = _off_by_one_charge(t[idx], a0[idx], up[idx], Bt1[idx], Bt[idx], pi, c1, c2, c3)
    return np.sum(np.maximum(s, 0.0) + allowance + corr, axis=-1)


def _on(mask, fn, *args):
    """``fn(*args)`` on the cells of ``mask`` only (elementwise ``fn``), 0 elsewhere: the values
    where it is evaluated are those of the full evaluation, the rest is never read."""
    out = np.zeros(mask.shape)
    if np.any(mask):
        out[mask] = fn(*(a[mask] for a in args))
    return out


def _region_masses(t, a0, pi, neg, up):
    """``(T1, T2, T3)`` of :func:`_per_t`: the masses of the region (``a >= a0`` where ``up``,
    ``a <= a0`` elsewhere) under ``Bin(t-1)`` shifted by one (T1), ``Bin(t-1)`` (T2) and ``Bin(t)`` (T3).
    Each term is evaluated only on the cells whose direction reads it."""
    pis, cpis = np.full(t.shape, pi), np.full(t.shape, 1.0 - pi)
    # up: T2 = Pr[Bin(t-1) >= a0] = I_pi(a0, t - a0) ; down: T1 = Pr[Bin(t-1) <= a0-1]
    mid = (a0 >= 1.0) & (a0 <= t - 1.0)
    inc_up = _on(mid & up, special.betainc, a0, t - a0, pis)
    inc_dn = _on(mid & neg, special.betainc, t - a0, a0, cpis)
    big = a0 > t - 1.0
    small = a0 < 1.0
    t_up = np.where(small, 1.0, np.where(big, 0.0, inc_up))
    t_dn = np.where(small, 0.0, np.where(big, 1.0, inc_dn))
    pm_lo = _on(up, _pmf, a0 - 1.0, t - 1.0, pis)  # Pr[Bin(t-1) = a0 - 1]
    pm_at = _on(neg, _pmf, a0, t - 1.0, pis)
    T2 = np.where(up, t_up, t_dn + pm_at)
    T1 = np.where(up, t_up + pm_lo, t_dn)
    nonempty = t >= 1
    T1 = np.where(nonempty, T1, 0.0)
    T2 = np.where(nonempty, T2, 0.0)
    # Pr[Bin(t) >= a0] = pi T1 + (1-pi) T2 (up); Pr[Bin(t) <= a0] likewise (down); t = 0: the
    # single point a = 0, inside the region iff a0 <= 0 (up) / a0 >= 0 (down)
    T3 = np.where(nonempty, pi * T1 + (1.0 - pi) * T2,
                  np.where(up, (a0 <= 0).astype(float), (a0 >= 0).astype(float)))
    return T1, T2, T3


def _off_by_one_charge(tn, an, upn, b1, b0, pi, c1, c2, c3):
    """Charge of the cells whose threshold ``an`` lies so close to an integer that rounding could
    put it on the wrong side: the positive part of the cell just outside, the negative part of
    the one just inside, and the rounding allowance of both."""
    outside = np.where(upn, an - 1.0, an + 1.0)
    f_out = _f_terms(outside, tn, b1, b0, pi, c1, c2, c3)
    f_in = _f_terms(an, tn, b1, b0, pi, c1, c2, c3)
    f_out = np.where((outside >= 0) & (outside <= tn), f_out, 0.0)
    f_in = np.where((an >= 0) & (an <= tn), f_in, 0.0)
    return (np.maximum(f_out, 0.0) + np.maximum(-f_in, 0.0)
            + ROUNDING_RTOL * (np.abs(f_out) + np.abs(f_in)))


def _bernstein_half_width(N, s: float, tail: float):
    """``t`` with ``Pr[|Bin(N, s) - N s| >= t] <= tail`` by Bernstein's inequality (each side at
    most ``exp(-t^2 / (2 (var + t/3)))``, set to ``tail / 2``): a closed form, no quantile search
    (scipy's ``binom.ppf`` fails to bracket its root at tiny ``s`` and huge ``N``)."""
    L = math.log(2.0 / tail)
    var = np.asarray(N, dtype=np.float64) * s * (1.0 - s)
    return L / 3.0 + np.sqrt(L * L / 9.0 + 2.0 * L * var)


def _chernoff_ends(N, s: float, tail: float):
    """``(lo, hi)`` with ``Pr[Bin(N, s) < lo] <= tail / 2`` and ``Pr[Bin(N, s) > hi] <= tail / 2``
    (up to the bisection's resolution) by the Chernoff bound ``Pr[X >= N a] <= exp(-N KL(a || s))``
    (and its mirror below the mean), solved for ``a`` by bisection. Much narrower than Bernstein's
    where the mean is small against ``log(2/tail)`` (Poisson-like counts at tiny deltas). Only the
    window's width depends on it: callers compute and charge the mass outside."""
    N = np.asarray(N, dtype=np.float64)
    L = math.log(2.0 / tail)
    ls, l1s = math.log(s), math.log1p(-s)

    def excess(a):  # N KL(a || s) - L, for a in (0, 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = (np.where(a > 0, a * (np.log(np.maximum(a, 1e-300)) - ls), 0.0)
                  + np.where(a < 1, (1.0 - a) * (np.log1p(-np.minimum(a, 1.0)) - l1s), -l1s))
        return N * kl - L

    ends = []
    for far in (0.0, 1.0):  # lower end: a in (0, s); upper end: a in (s, 1)
        near_a, far_a = np.full(N.shape, s), np.full(N.shape, far)
        for _ in range(60):
            mid = 0.5 * (near_a + far_a)
            inside = excess(mid) < 0.0
            near_a, far_a = np.where(inside, mid, near_a), np.where(inside, far_a, mid)
        ends.append(far_a * N)
    return np.floor(ends[0]), np.ceil(ends[1])


def _t_window(N, s: float, tail: float, *, chernoff: bool = True):
    """Window ``[lo, hi]`` of ``Bin(N, s)`` (arrays of N) holding all but about ``tail`` of the
    mass (the narrower of :func:`_bernstein_half_width` and, with ``chernoff``,
    :func:`_chernoff_ends` on each side), and the mass outside, computed (binomial cdf / sf) and
    rounded up by the tolerance of :func:`lower_bounds.binom_rtol`: only the window's tightness
    depends on the inequalities, the charge is the computed mass."""
    N = np.asarray(N, dtype=np.float64)
    if s >= 1.0:
        return N.copy(), N.copy(), np.zeros_like(N)
    half = _bernstein_half_width(N, s, tail)
    c_lo, c_hi = _chernoff_ends(N, s, tail) if chernoff else (-np.inf, np.inf)
    lo = np.clip(np.maximum(np.floor(N * s - half), c_lo), 0.0, N)
    hi = np.clip(np.minimum(np.ceil(N * s + half), c_hi), lo, N)
    out = np.where(lo > 0, stats.binom.cdf(lo - 1.0, N, s), 0.0) + np.where(hi < N, stats.binom.sf(hi, N, s), 0.0)
    return lo, hi, out * (1.0 + 2.0 * binom_rtol(N, s)) + SUBNORMAL_GUARD * ((lo > 0) | (hi < N))


class _CountTable:
    """eps-independent part for a set of other-draw counts ``N``: the t-grid and the weights
    ``B(t)``, ``B(t-1)`` of the others' count in groups 1 and 2 (``Bin(N, s)``)."""

    def __init__(self, N, s: float, tail: float):
        N = np.atleast_1d(np.asarray(N, dtype=np.float64))
        s = min(float(s), 1.0)
        if not s > 0:
            raise ValueError("groups 1 and 2 carry no mass of the other draws")
        lo, hi, outside = _t_window(N, s, tail)
        width = int(np.max(hi - lo)) + 2  # t = t' or t' + 1
        t = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
        valid = t <= (N[:, None] + 1.0)
        # one pmf per count: B(t - 1) is B(t) one column to the left (t = lo - 1 .. lo + width - 1)
        pmf = _pmf(lo[:, None] + np.arange(-1.0, width)[None, :], N[:, None], s)
        self.t = np.where(valid, t, 0.0)
        self.Bt = np.where(valid, pmf[:, 1:], 0.0)
        self.Bt1 = np.where(valid, pmf[:, :-1], 0.0)
        self.outside = outside


def _divergence_given_count(table: _CountTable, g: GroupedPair, pi: float, ee: float, *,
                            upper: bool) -> np.ndarray:
    """Divergence ``D_{e^eps}(P||Q)`` for each count of other draws in ``table``.

    Every evaluated t gets its exact terms; t outside [lo, hi + 1] implies the others' count
    t' outside [lo, hi], whose mass (``table.outside``) bounds the rest (upper bound only).
    """
    if not (0.0 < pi < 1.0):
        raise ValueError("degenerate group split (pi in {0, 1}) is not supported")
    res = _per_t(table.t, table.Bt1, table.Bt, pi, g.p, g.q, ee, upper=upper)
    return res + table.outside if upper else res


def _pair_is_mirror(g: GroupedPair) -> bool:
    """True when relabelling groups 1 and 2 turns (p, q) into (q, p): D(P||Q) = D(Q||P)."""
    return g.w[0] == g.w[1] and g.p[0] == g.q[1] and g.p[1] == g.q[0] and g.p[2] == g.q[2]


def _swap(g: GroupedPair) -> GroupedPair:
    return GroupedPair(g.w, g.q, g.p, g.gamma)


# --------------------------------------------------------------------------- decomposition
def _count_blocks(ms: np.ndarray, wts: np.ndarray, max_blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(block_w, m_upper, m_lower)`` of :class:`DecomposedPair`: the blanket counts ``ms``
    (weights ``wts``) as they are, or grouped into at most ``max_blocks`` consecutive blocks
    (half evenly spaced, half at quantiles) with each block's first and last count."""
    if ms.size > max_blocks:
        half = max_blocks // 2
        even = np.linspace(0, ms.size, max(half, 1), endpoint=False).astype(int)
        cdf = np.cumsum(wts) / wts.sum()
        quant = np.searchsorted(cdf, np.linspace(0.0, 1.0, max_blocks - half, endpoint=False))
        starts = np.unique(np.concatenate([even, np.minimum(quant, ms.size - 1)]))
        ends = np.append(starts[1:], ms.size) - 1
        return np.add.reduceat(wts, starts), ms[starts], ms[ends]
    return wts, ms, ms


M_ENUM_MAX = 200_000  # blanket-count windows up to this width are enumerated; wider ones in blocks
M_BLOCKS_WIDE = 256  # wider windows: at most this many blocks (see _m_law)
# a pair evaluated through count tables beside a cheaper exact one (MHM's spreads, OUE's alt) is
# charged at min(M, THREE_M_CAP) draws: D_M is non-increasing in M, so an upper bound, and its
# table's width stops growing with n
THREE_M_CAP = 200_000
ALT_CELLS_MAX = 20_000  # an ``alt`` pair's count table per M block above this width: skipped


def three_group_cells(m_top: float, s: float, tail: float) -> float:
    """Cells per ``M`` block of a three-group pair's count table (groups 1 and 2 of blanket mass
    ``s``) at up to ``m_top`` draws: the width of its ``t`` window."""
    return 2.0 * float(_bernstein_half_width(m_top, min(s, 1.0), tail)) + 3.0


def _auto_blocks(m_top: float, tail: float, pairs) -> int:
    """As many ``M`` blocks as the cell budget allows (fewer blocks: looser, never unsound). A
    many-group pair's spread changes its group-1+2 mass with eps: budget for the widest; a pair
    that evaluates itself (``block_value``) states its own cells per ``M`` (``cells_per_m``)."""
    s_max = max((g.w[0] + g.w[1]) if len(g.w) <= 3 else 0.5 for g in pairs)
    z = math.sqrt(2.0 * math.log(2.0 / tail))
    width = 2.0 * z * math.sqrt(max(m_top * s_max * (1.0 - min(s_max, 1.0)), 0.0)) + 3.0
    own = [g.cells_per_m(m_top, tail) for g in pairs if hasattr(g, "cells_per_m")]
    if own and len(own) == len(pairs):
        width = max(own)
    return max(MIN_BLOCKS, int(BLOCK_BUDGET // width))


def _m_law(N: int, gam: float, tail: float, max_blocks: int | None, pairs, block_cap: int | None = None):
    """``(block_w, m_upper, m_lower, m_outside)`` of :class:`DecomposedPair` for ``M ~ Bin(N, gam)``.

    A window holding all but about ``tail`` (:func:`_t_window`; the mass outside computed and
    charged). Up to ``M_ENUM_MAX`` counts wide it is enumerated (pmfs) and grouped by
    :func:`_count_blocks`; wider, it is cut into ``max_blocks`` even blocks whose masses are
    binomial cdf / sf differences on the small side (never an enumeration: any ``N``). Every mass
    is rounded up by its error bound (:func:`lower_bounds.binom_rtol`)."""
    if gam >= 1.0:
        ones = np.array([float(N)])
        return np.array([1.0 + ROUNDING_RTOL]), ones, ones, 0.0
    # Bernstein's window alone: the M law's blocks (and their charged masses) as before; the
    # Chernoff ends narrow the t windows, where small means at tiny tails made them 5x too wide
    lo, hi, outside = (float(x[0]) for x in _t_window(np.array([float(N)]), gam, tail, chernoff=False))
    rtol = max(ROUNDING_RTOL, float(binom_rtol(N, gam)))
    if max_blocks is None:
        max_blocks = _auto_blocks(hi, tail, pairs)
        max_blocks = max_blocks if block_cap is None else min(max_blocks, block_cap)
    if hi - lo + 1.0 <= M_ENUM_MAX:
        ms = np.arange(lo, hi + 1.0)
        wts = stats.binom.pmf(ms, N, gam)
        block_w, m_upper, m_lower = _count_blocks(ms, wts, max_blocks)
        return block_w * (1.0 + rtol), m_upper, m_lower, outside
    # a window this wide holds over (M_ENUM_MAX / 24)^2 draws on average: M_BLOCKS_WIDE blocks each
    # span under 1e-4 of M relative, so charging each at its smallest M costs nothing visible, while
    # every block's mass costs four binomial cdfs (about 20 us each at N = 1e15)
    edges = np.unique(np.round(np.linspace(lo, hi + 1.0, min(max_blocks, M_BLOCKS_WIDE) + 1)))
    return _block_masses(edges, float(N), gam) * (1.0 + ROUNDING_RTOL), edges[:-1], edges[1:] - 1.0, outside


def _block_masses(edges, N: float, p: float) -> np.ndarray:
    """Upper bounds on the masses of the blocks ``[edges[i], edges[i+1] - 1]`` of ``Bin(N, p)``:
    each a difference of two cdfs (below the mean) or two sfs (above), or one minus both for the
    block holding the mean, plus :func:`lower_bounds.binom_rtol` of the terms differenced."""
    first, last = edges[:-1], edges[1:] - 1.0
    mean = N * p
    below = stats.binom.cdf(first - 1.0, N, p)   # Pr[X < first]
    upto = stats.binom.cdf(last, N, p)           # Pr[X <= last]
    above = stats.binom.sf(last, N, p)           # Pr[X > last]
    beyond = stats.binom.sf(first - 1.0, N, p)   # Pr[X >= first]
    low, high = last < mean, first > mean
    mass = np.where(low, upto - below, np.where(high, beyond - above, 1.0 - below - above))
    terms = np.where(low, upto + below, np.where(high, beyond + above, 1.0 + below + above))
    return np.maximum(mass, 0.0) + binom_rtol(N, p) * terms + SUBNORMAL_GUARD


class DecomposedPair:
    """The blanket-decomposed pair of one randomizer at ``n`` users; ``delta(eps)`` is an upper
    bound on its hockey-stick divergence (worst ordered pair of inputs, both directions)."""

    def __init__(self, matrix, n: int, *, tail: float = DEFAULT_TAIL,
                 max_blocks: int | None = DEFAULT_BLOCKS, pairs: list[GroupedPair] | None = None,
                 all_spreads: bool = False, block_cap: int | None = None):
        """``matrix``: the randomizer's output matrix (every ordered pair of rows is reduced);
        or ``matrix=None`` and ``pairs`` given directly (e.g. :func:`krr_pairs`). ``block_cap``:
        at most this many ``M`` blocks where their number is chosen by the cell budget (fewer
        blocks: a looser bound at a lower cost, never an unsound one)."""
        self.n = _check_int(n, "n", 2)
        self.all_spreads = bool(all_spreads)  # many-group pairs: min over every spread (slower)
        self.tail = float(tail)
        if not (0 < self.tail < 1e-3):
            raise ValueError(f"tail must lie in (0, 1e-3), got {tail!r}")
        if max_blocks is not None:
            max_blocks = _check_int(max_blocks, "max_blocks", 1)
        if pairs is None:
            pairs = grouped_pairs(matrix)
        if not pairs:
            raise ValueError("no pair of inputs to account for")
        self.pairs = list(pairs)
        self.gamma = self.pairs[0].gamma
        self.directed = self.pairs  # ordered pairs: both directions are listed
        self.block_w, self.m_upper, self.m_lower, self.m_outside = _m_law(
            self.n - 1, min(self.gamma, 1.0), self.tail, max_blocks, self.pairs, block_cap)
        self._tables: dict = {}
        self._alt: dict = {}
        self._memo: dict = {}

    def _table(self, upper: bool, s: float) -> _CountTable:
        key = (upper, round(s, 15))
        if key not in self._tables:
            ms = self.m_upper if upper else self.m_lower
            self._tables[key] = _CountTable(ms, s, self.tail)
        return self._tables[key]

    def _walks(self, ms, s: float) -> bool:
        """True when the t-window of the widest count is wider than :data:`WALK_WIDTH`: the pair is
        then evaluated in blocks of a convex count (:mod:`shuffledp.accountants.numerics.walk_blocks`),
        at a cost independent of ``M``, instead of every ``t``."""
        if float(ms[-1]) > WALK_M:  # e.g. two groups (s = 1): one t, but its a-split's tails slow at huge t
            return True
        z = math.sqrt(2.0 * math.log(2.0 / self.tail))
        return 2.0 * z * math.sqrt(max(float(ms[-1]) * s * (1.0 - min(s, 1.0)), 0.0)) > WALK_WIDTH

    def _pair_value(self, g: GroupedPair, ee: float, upper: bool, table=None) -> float:
        """Block-weighted divergence of one three-group pair (``table``: an uncached count table)."""
        s = g.w[0] + g.w[1]
        ms = self.m_upper if upper else self.m_lower
        wts = self.block_w if upper else self.block_w / (1.0 + ROUNDING_RTOL)
        if self._walks(ms, s):
            # at most WALK_ROWS counts: consecutive blocks merged, charged at their smallest count
            # (upper) or largest (lower); D_M is non-increasing in M
            wts, first, last = _count_blocks(ms, wts, WALK_ROWS)
            d = walk_divergence(first if upper else last, g, ee)[0 if upper else 1]
        else:
            tab = self._table(upper, s) if table is None else table
            d = _divergence_given_count(tab, g, g.w[0] / s, ee, upper=upper)
        return float(np.dot(wts, d))

    def _spread_value(self, g: GroupedPair, ee: float, upper: bool) -> float:
        """A pair with more than three groups: the smallest of the three-atom mean-preserving
        spreads (:func:`spread_to_three`, one per choice of the kept middle atom), each evaluated
        exactly by the three-group sums. Every one is an upper bound on the pair's divergence given
        each ``M`` (convex order), so their minimum is too."""
        spreads = spread_to_three(g, ee)
        if not spreads:
            return 0.0
        if not self.all_spreads:
            # any one spread is an upper bound; the least-variance one was the smallest of them at
            # every point near a delta target we compared (others won only where delta < 1e-30).
            # Near-ties (symmetric pairs) are all evaluated: there the variance does not decide.
            least = spreads[0][0]
            spreads = [sp for sp in spreads if sp[0] <= SPREAD_TIE * least + 1e-300]
        best = math.inf
        ms = self.m_upper if upper else self.m_lower
        for _, scale, h in spreads:
            s = h.w[0] + h.w[1]
            table = None if self._walks(ms, s) else _CountTable(ms, s, self.tail)
            best = min(best, scale * self._pair_value(h, ee, upper, table))
        return best

    def pair_value(self, g: GroupedPair, ee: float, upper: bool = True) -> float:
        """One directed pair's block-weighted divergence at ``e^eps = ee`` (before the ``M``-window
        charge): exact sums for <= 3 groups, the spreads for more; a pair that evaluates itself
        exactly (``block_value``, e.g. :class:`shuffledp.accountants.upper.flags.FlagPair`) does so
        unless it returns None, and its ``alt`` decomposition, if any, is evaluated too and the
        smaller kept. The values of this instance's own pairs are remembered (an eps search of
        several pairs asks the worst pair again at its starting point)."""
        own = any(g is h for h in self.pairs)
        key = (id(g), ee, upper)
        if own and key in self._memo:
            return self._memo[key]
        value = self._evaluate(g, ee, upper)
        if own:
            self._memo[key] = value
        return value

    def _evaluate(self, g: GroupedPair, ee: float, upper: bool) -> float:
        exact = getattr(g, "block_value", None)
        fine = upper and self.tail < FINE_TAIL and 2 <= self.m_upper.size <= FINE_BLOCKS_MAX
        if exact is None:
            if fine:
                walks = self._walks(self.m_upper, g.w[0] + g.w[1] if len(g.w) <= 3 else 0.5)
                return self._refined_value(lambda ms: self._row_values(g, ms, ee), walks)
            return self._pair_value(g, ee, upper) if len(g.w) <= 3 else self._spread_value(g, ee, upper)
        ms = self.m_upper if upper else self.m_lower
        wts = self.block_w if upper else self.block_w / (1.0 + ROUNDING_RTOL)
        rows = getattr(g, "row_values", None)
        fns = rows(ee, self.tail, ms) if fine and rows is not None else None
        if fns is not None:  # per direction: (counts -> D at each) of a pair evaluated row by row
            value = max(self._refined_value(fn, False) for fn in fns)
        else:
            value = exact(ms, wts, ee, self.tail, upper=upper)
        if value is None:  # the pair declines these counts (its cost): the many-group path
            return self._pair_value(g, ee, upper) if len(g.w) <= 3 else self._spread_value(g, ee, upper)
        alt = getattr(g, "alt", None)
        if alt is None or not upper:
            return value
        alt_value = self._alt_value(alt, ee)
        return value if alt_value is None else min(value, alt_value)

    def _row_values(self, g: GroupedPair, ms: np.ndarray, ee: float) -> np.ndarray:
        """Upper bounds on ``D_M`` at each count in ``ms`` (increasing) of a pair without its own
        evaluation: a three-group pair's exact sums (count tables, or the blocked walk where they
        are wide), a many-group pair's spreads, the smallest per count (each bounds every ``D_M``)."""
        if len(g.w) > 3:
            spreads = spread_to_three(g, ee)
            if not spreads:
                return np.zeros_like(ms)
            least = spreads[0][0]
            keep = spreads if self.all_spreads else [sp for sp in spreads if sp[0] <= SPREAD_TIE * least + 1e-300]
            return np.min([scale * self._row_values(h, ms, ee) for _, scale, h in keep], axis=0)
        s = g.w[0] + g.w[1]
        if self._walks(ms, s):
            return walk_divergence(ms, g, ee)[0]
        return _divergence_given_count(_CountTable(ms, s, self.tail), g, g.w[0] / s, ee, upper=True)

    def _refined_value(self, row_fn, walks: bool) -> float:
        """The upper block-weighted divergence with the blanket counts refined where it lies: at
        deep windows (tiny delta) ``D_M`` falls by orders of magnitude across a block, so charging
        each block at its first count (:func:`_count_blocks`) cost up to 1.2% in eps at delta =
        1e-290. Cells ``[r_i, r_{i+1} - 1]`` between evaluated counts ``r_i`` are charged at their
        first count (``D_M`` is non-increasing in ``M``) with masses from cdf differences
        (:func:`_block_masses`, rounded up). It starts from the blocks' first counts (those the
        walk evaluates, on the walk), so its first total is the unrefined bound, and splits the
        cells whose charge exceeds their mass times the next count's value most, until those
        excesses are at most ``FINE_TARGET`` of the total or ``FINE_ROWS`` more counts are
        evaluated (``FINE_WALK_ROWS`` on the walk). Every total is an upper bound: the least.
        ``row_fn(counts)``: upper bounds on ``D_M`` at those counts (one direction of one pair)."""
        hi = float(self.m_lower[-1])
        N, gam = float(self.n - 1), min(self.gamma, 1.0)
        rows = _count_blocks(self.m_upper, self.block_w, WALK_ROWS)[1] if walks else self.m_upper
        most = rows.size + (FINE_WALK_ROWS if walks else FINE_ROWS)
        vals = dict(zip(rows.tolist(), np.asarray(row_fn(rows)).tolist(), strict=True))
        best = math.inf
        while True:
            edges = np.append(rows, hi + 1.0)
            W = _block_masses(edges, N, gam) * (1.0 + ROUNDING_RTOL)
            d = np.array([vals[r] for r in rows.tolist()])
            gap = W * (d - np.append(d[1:], d[-1]))
            total = float(np.dot(W, d))
            best = min(best, total)
            wide = np.flatnonzero((np.diff(edges) >= 2.0) & (gap > 0.0))
            if float(np.sum(gap)) <= FINE_TARGET * total or rows.size >= most or wide.size == 0:
                return best
            pick = wide[np.argsort(-gap[wide], kind="stable")][: min(FINE_STEP, most - rows.size)]
            new = np.floor(0.5 * (edges[pick] + edges[pick + 1]))
            vals.update(zip(new.tolist(), np.asarray(row_fn(new)).tolist(), strict=True))
            rows = np.unique(np.concatenate([rows, new]))

    def _alt_value(self, alt: GroupedPair, ee: float) -> float | None:
        """A pair's ``alt`` decomposition (another blanket: its own ``M`` law and window charge,
        expressed against this pair's ``M``-window charge so that :meth:`_finish` gives its bound);
        ``None`` when it is skipped: a pair evaluated through count tables whose table would be
        wider than ``ALT_CELLS_MAX`` per ``M`` block (its cost grows with sqrt(n); it is only
        min'd with the main value, so skipping it is sound). A pair that evaluates itself
        (``block_value``, e.g. a blocked three-group pair) is always evaluated."""
        key = id(alt)
        if key not in self._alt:
            s_alt = alt.w[0] + alt.w[1] if len(alt.w) <= 3 else 0.5  # a spread's: as in _auto_blocks
            cells = three_group_cells(self.n * min(alt.gamma, 1.0), s_alt, self.tail)
            cheap = hasattr(alt, "block_value") or cells <= ALT_CELLS_MAX
            self._alt[key] = DecomposedPair(None, self.n, tail=self.tail, pairs=[alt],
                                            all_spreads=self.all_spreads) if cheap else None
        other = self._alt[key]
        if other is None:
            return None
        return other.pair_value(alt, ee, True) + (other.m_outside - self.m_outside) / (1.0 + ROUNDING_RTOL)

    def _finish(self, value: float) -> float:
        """The upper bound from the largest pair value: rounding allowance and the ``M``-window mass."""
        return min(value * (1.0 + ROUNDING_RTOL) + self.m_outside, 1.0)

    def _delta(self, eps: float, upper: bool) -> float:
        eps = _check_eps(eps)
        ee = math.exp(min(eps, EPS_CAP))
        best = max(self.pair_value(g, ee, upper) for g in self.directed)
        return self._finish(best) if upper else min(best, 1.0)

    def delta(self, eps: float) -> float:
        """Upper bound on the decomposed pair's divergence at ``e^eps``."""
        return self._delta(eps, True)

    def delta_lower(self, eps: float) -> float:
        """Lower bound on the decomposed pair's divergence (blocks at their largest M; no
        allowances): shows the blocking error. Not a lower bound on the mechanism."""
        return self._delta(eps, False)


def decomposition_delta(matrix, n: int, eps: float, **kw) -> float:
    """Upper bound on delta(eps) of shuffling n reports of the randomizer ``matrix``."""
    return DecomposedPair(matrix, n, **kw).delta(eps)


def _eps_hi(pairs: list[GroupedPair]) -> float:
    """The randomizer's own eps0 over the listed pairs (largest group log-likelihood ratio)."""
    top = 0.0
    for g in pairs:
        for a, b in zip(g.p, g.q, strict=True):
            if a > 0 and b > 0:
                top = max(top, abs(math.log(a / b)))
    return top


def _search_gap(value: float, root_t: float) -> float:
    """The search's coordinate of a divergence ``value`` against the target: ``sqrt(log(1/delta))
    - sqrt(log(1/value))``, ``<= 0`` exactly when ``value <= delta``. Divergences decay like
    ``exp(-c eps^2)`` in the tail, so this is nearly linear in eps where ``log value`` is not."""
    return root_t - math.sqrt(max(-math.log(max(value, 1e-300)), 0.0))


def _secant_step(pts: list, lo: float, hi: float, ends: dict, shrink: list) -> float:
    """Next point of :func:`secant_eps` (``pts``: ``(x, gap, value)`` of every evaluation): the
    secant through the last two points whose values occur once (equal values mark a plateau, e.g.
    where the charged truncated mass is all that is left, and say nothing of the slope), a small
    step from the first point. Once the bracket's two ends are both evaluated, a secant leaving
    the bracket gives way to regula falsi on the ends (Illinois: the caller halves the value of
    the end kept twice in a row), and the midpoint is taken when the bracket has not halved over
    the last three steps or its upper end lies on a plateau."""
    values = [v for _, _, v in pts]
    good = [(x, g) for x, g, v in pts if values.count(v) == 1]
    r = None
    if len(good) >= 2 and good[-1][1] != good[-2][1]:
        (x0, g0), (x1, g1) = good[-2], good[-1]
        r = x1 - g1 * (x1 - x0) / (g1 - g0)
    if "lo" not in ends or "hi" not in ends:
        if r is None:
            x, gx, v = pts[-1]
            r = x * (1.002 if gx > 0 else 0.998) if values.count(v) == 1 else 0.5 * (lo + hi)
        return r
    if len(shrink) >= 4 and shrink[-1] > 0.5 * shrink[-4]:
        return 0.5 * (lo + hi)
    if r is not None and lo < r < hi:
        return r
    g_lo, g_hi = ends["lo"], ends["hi"]
    plateau = values.count(ends["hi_value"]) > 1
    return lo - g_lo * (hi - lo) / (g_hi - g_lo) if g_hi < 0 < g_lo and not plateau else 0.5 * (lo + hi)


def secant_eps(fn, delta: float, lo: float, hi: float, guess: float, rtol: float, *,
               side: str = "upper", max_eval: int = 40) -> float:
    """Root of a non-increasing ``fn`` at ``delta`` given ``fn(lo) > delta >= fn(hi)``.

    ``side="upper"``: the smallest eps found with ``fn(eps) <= delta`` (a verified point; for an
    upper bound ``fn`` this eps is certified). ``side="lower"``: the largest eps found with
    ``fn(eps) > delta`` (a verified point; for a lower bound ``fn`` the mechanism is not
    (eps, delta)-DP there). Secant steps on :func:`_search_gap` from ``guess``, each proposal
    nudged by ``rtol/4`` towards the wanted side; the search stops once a proposal lands on the
    wanted side within ``rtol`` of the previous point, or the bracket is narrower than ``rtol``.
    Once both ends of the bracket are evaluated, :func:`_secant_step` safeguards the steps
    (regula falsi, Illinois, bisection when the bracket stops halving): only the number of
    evaluations depends on it, every returned end is an evaluated point.
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    root_t = math.sqrt(-math.log(delta))
    pts: list[tuple[float, float]] = []
    ends: dict[str, float] = {}
    shrink: list[float] = []
    last_end = ""
    nudge = 1.0 + rtol / 4.0 if side == "upper" else 1.0 - rtol / 4.0
    x = min(max(guess, lo), hi)
    while len(pts) < max_eval and hi - lo > rtol * hi:
        v = fn(x)
        gx = _search_gap(v, root_t)
        pts.append((x, gx, v))
        end = "hi" if gx <= 0 else "lo"
        if end == "hi":
            hi = min(hi, x)
        else:
            lo = max(lo, x)
        if end == last_end and ("lo" if end == "hi" else "hi") in ends:
            ends["lo" if end == "hi" else "hi"] *= 0.5  # Illinois: the stale end's value halved
        ends[end], ends[end + "_value"], last_end = gx, v, end
        if "lo" in ends and "hi" in ends:
            shrink.append(hi - lo)
        r = _secant_step(pts, lo, hi, ends, shrink)
        on_side = gx <= 0 if side == "upper" else gx > 0
        if on_side and abs(r - x) <= rtol * x / 2:
            break
        cand = r * nudge
        x = cand if lo < cand < hi else 0.5 * (lo + hi)
    return hi if side == "upper" else lo


def decomposition_eps(matrix, n: int, delta: float, *, rtol: float = 1e-5, guess: float | None = None,
                      pairs: list[GroupedPair] | None = None, ceiling: float | None = None, **kw) -> float:
    """Smallest eps (relative precision about ``rtol``, rounded up, a verified point) whose upper
    delta meets ``delta``. Shuffling eps0-LDP reports is eps0-DP, so the answer is at most the
    randomizer's own eps0. ``guess`` (e.g. the lower bound's eps) speeds up the search.
    ``ceiling`` (e.g. another sound bound's eps): evaluated first; where this bound's delta there
    is above ``delta`` it cannot do better, and the randomizer's eps0 is returned at once (e.g. at
    n = 1e15 and tiny delta, where its rounding allowances put a floor under its delta); else the
    search runs below it."""
    delta = _check_delta(delta)
    tail = kw.pop("tail", max(TAIL_MIN, 1e-3 * rtol * delta))
    pair = DecomposedPair(matrix, n, tail=tail, pairs=pairs, **kw)
    top = _eps_hi(pair.pairs)
    if pair.m_outside > delta:
        # every delta(eps) adds the blanket count's mass outside its window: nothing below the
        # randomizer's own eps0 can be certified (delta near 1e-300, where the window's tail
        # cannot be set below delta); the search would end there too, after many evaluations
        return top

    def fn(e: float) -> float:
        return 0.0 if e >= top else pair.delta(e)

    hi = top
    if ceiling is not None and 0.0 < ceiling < top:
        if not (guess is not None and guess > 0) and fn(0.0) <= delta:
            return 0.0  # (the search would test eps = 0 first too; the ceiling would cost one more)
        if fn(ceiling) > delta:
            return top
        hi = ceiling  # a verified point of every pair

    def search() -> float:
        if guess is None or not (0 < guess < hi):
            return bisect_eps(fn, delta, hi, rtol)[1]
        # no need to test eps = 0 first: the returned end is always a verified point
        return secant_eps(fn, delta, 0.0, hi, guess, rtol)

    every = list(pair.directed)
    if len(every) == 1:
        return search()
    # several pairs (e.g. subset-exp's overlaps): search with the pair that is worst at the start,
    # then verify every other pair at the answer and search again with any that exceeds delta;
    # the returned eps is a verified point of the maximum over all pairs
    start = guess if guess is not None and 0 < guess < hi else hi / 2
    ee = math.exp(min(start, EPS_CAP))
    values = [pair.pair_value(g, ee) for g in every]
    active = [every[int(np.argmax(values))]]
    while True:
        pair.directed = active
        eps = search()
        pair.directed = every
        if eps >= hi:
            return eps
        ee = math.exp(min(eps, EPS_CAP))
        over = []
        for g in every:
            if g in active:
                continue
            if pair._finish(pair.pair_value(g, ee)) > delta:
                over.append(g)
        if not over:
            return eps
        active = active + over


# --------------------------------------------------------------------------- exact real pairs
def pair_delta(eps: float, n: int, victim_p, victim_q, others, *, tail: float = 1e-60) -> float:
    """Lower bound on ``D_{e^eps}`` of a real neighbouring pair whose ``n - 1`` other users all
    hold one value: the exact divergence of the group counts ``(H_1, H_2, H_3)``.

    ``victim_p`` / ``victim_q``: the victim's probabilities of groups 1, 2, 3 under its two
    inputs; ``others``: one other user's group probabilities. The counts are a post-processing
    of the shuffled output, so their divergence lower-bounds the real pair's; when the outputs
    within each group are exchangeable for everyone (k-RR with the others all at ``x`` or
    ``x'``, or k = 3) it *is* the real pair's divergence. Truncated t-windows only lower it, and
    the rounding allowance is subtracted: a lower bound.
    """
    n = _check_int(n, "n", 2)
    eps = _check_eps(eps)
    g = GroupedPair(tuple(others), tuple(victim_p), tuple(victim_q), 1.0)
    ee = math.exp(min(eps, EPS_CAP))
    s = others[0] + others[1]
    table = _pair_table(n - 1, float(s), float(tail))
    best = 0.0
    # the mirror image (groups 1 and 2 relabelled) of the swapped pair is the pair itself
    for h in ((g,) if _pair_is_mirror(g) else (g, _swap(g))):
        best = max(best, float(_divergence_given_count(table, h, others[0] / s, ee, upper=False)[0]))
    return best


@lru_cache(maxsize=16)
def _pair_table(N: int, s: float, tail: float) -> _CountTable:
    return _CountTable([N], s, tail)


def _krr_configs(k: int, eps0: float):
    e = math.exp(eps0)
    p = e / (e + k - 1.0)
    q = 1.0 / (e + k - 1.0)
    rest = max(0.0, 1.0 - p - q)
    vic_p, vic_q = (p, q, rest), (q, p, rest)
    configs = {"others_at_x": (p, q, rest), "others_at_x'": (q, p, rest)}
    if k >= 3:
        configs["others_at_third"] = (q, q, max(0.0, 1.0 - 2.0 * q))
    return vic_p, vic_q, configs


def krr_pair_lower_delta(k: int, eps0: float, n: int, eps: float) -> tuple[float, str]:
    """Largest exact-pair divergence over the searched configurations of the other users
    (all at the victim's ``x``, all at ``x'``, all at a third value); returns ``(delta, config)``.

    The others-at-a-third-value pair is the one the worst-pair split search
    (:func:`shuffledp.accountants.lower.lower_bounds.krr_worst_pair`, which sees the count of one
    value only) does not cover; :mod:`shuffledp.accountants.best` takes the larger of the two.
    """
    k = _check_int(k, "k", 2)
    eps0 = _check_eps0(eps0)
    vic_p, vic_q, configs = _krr_configs(k, eps0)
    best, which = 0.0, next(iter(configs))
    for name, oth in configs.items():
        d = pair_delta(eps, n, vic_p, vic_q, oth)
        if d > best:
            best, which = d, name
    return best, which


def krr_pair_lower_eps(k: int, eps0: float, n: int, delta: float, *, rtol: float = 1e-5
                       ) -> tuple[float, str]:
    """Largest eps found (rounded down, a verified point) at which a searched real pair has
    divergence above ``delta``: the mechanism is not (eps, delta)-DP for any smaller eps.

    Others at a third value are searched first; another configuration is searched only if it
    exceeds ``delta`` at the eps found so far (any configuration gives a valid lower bound).
    Truncated t-windows only lower the value.
    """
    k = _check_int(k, "k", 2)
    eps0 = _check_eps0(eps0)
    n = _check_int(n, "n", 2)
    delta = _check_delta(delta)
    vic_p, vic_q, configs = _krr_configs(k, eps0)
    guess = min(eps0 / 2, _asymptotic_guess(k, eps0, n, delta))
    order = sorted(configs, key=lambda nm: nm != "others_at_third")
    return pair_lower_eps(vic_p, vic_q, {nm: configs[nm] for nm in order}, n, delta, eps0,
                          rtol=rtol, guess=guess)


def pair_lower_eps(vic_p, vic_q, configs: dict, n: int, delta: float, top: float, *,
                   rtol: float = 1e-5, guess: float | None = None) -> tuple[float, str]:
    """Largest eps found (a verified point, rounded down) at which one of the real pairs
    ``configs`` (name -> one other user's probabilities of three groups, the victim's being
    ``vic_p`` / ``vic_q``) has a group-count divergence above ``delta`` (:func:`pair_delta`);
    ``(0, name)`` if none does at any eps > 0 searched. ``top``: the randomizer's eps0 (no pair
    exceeds it). Configurations are searched in the given order; a later one is searched only if
    it exceeds ``delta`` at the eps found so far (any configuration gives a valid lower bound)."""
    n = _check_int(n, "n", 2)
    delta = _check_delta(delta)
    tail = max(TAIL_MIN, 1e-3 * rtol * delta)
    best, which = 0.0, next(iter(configs))
    start = guess if guess is not None and 0 < guess < top else top / 2
    for name, oth in configs.items():
        def fn(e, oth=oth):
            return 0.0 if e >= top else pair_delta(e, n, vic_p, vic_q, oth, tail=tail)
        if best > 0 and fn(best) <= delta:
            continue
        e = secant_eps(fn, delta, best, top, max(start, best) if best == 0 else best, rtol, side="lower")
        if e > best:
            best, which = e, name
    return best, which


def _asymptotic_guess(k: int, eps0: float, n: int, delta: float) -> float:
    """A starting point only: the leading-order shuffled eps of k-RR,
    ``sqrt(8 (e^eps0 + k - 1) log(2/delta) / (k n))`` scaled by ``(e^eps0 - 1)/(e^eps0 + 1)``."""
    e = math.exp(eps0)
    return max(1e-9, (e - 1.0) / (e + 1.0) * math.sqrt(8.0 * (e + k - 1.0) * math.log(2.0 / delta) / (k * n)))


__all__ += ["spread_to_three", "pair_lower_eps"]  # the randomizers' pairs: shuffledp.accountants.randomizers.standard
