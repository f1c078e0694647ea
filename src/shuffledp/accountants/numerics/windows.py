"""The window of a binomial count: the counts ``t`` of ``Bin(N, s)`` a decomposed pair's sums visit
(:func:`t_window`, the narrower of Bernstein's and Chernoff's bounds), and the mass left outside,
computed and charged by the callers. Shared by :mod:`.grouped` (whose names these remain) and the
flag pairs."""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.numerics import count_sums
from shuffledp.accountants.numerics.tolerances import SUBNORMAL_GUARD, binom_rtol

__all__ = ["bernstein_half_width", "chernoff_ends", "t_window"]


def bernstein_half_width(N, s: float, tail: float):
    """``t`` with ``Pr[|Bin(N, s) - N s| >= t] <= tail`` by Bernstein's inequality (each side at
    most ``exp(-t^2 / (2 (var + t/3)))``, set to ``tail / 2``): a closed form, no quantile search
    (scipy's ``binom.ppf`` fails to bracket its root at tiny ``s`` and huge ``N``)."""
    L = math.log(2.0 / tail)
    var = np.asarray(N, dtype=np.float64) * s * (1.0 - s)
    return L / 3.0 + np.sqrt(L * L / 9.0 + 2.0 * L * var)


def chernoff_ends(N, s: float, tail: float):
    """``(lo, hi)`` with ``Pr[Bin(N, s) < lo] <= tail / 2`` and ``Pr[Bin(N, s) > hi] <= tail / 2``
    (up to the bisection's resolution) by the Chernoff bound ``Pr[X >= N a] <= exp(-N KL(a || s))``
    (and its mirror below the mean), solved for ``a`` by bisection. Much narrower than Bernstein's
    where the mean is small against ``log(2/tail)`` (Poisson-like counts at tiny deltas). Only the
    window's width depends on it: callers compute and charge the mass outside."""
    N = np.asarray(N, dtype=np.float64)
    L = math.log(2.0 / tail)
    ls, l1s = math.log(s), math.log1p(-s)

    def excess(a):  # N KL(a || s) - L, for a in (0, 1); called under errstate(divide, invalid ignored)
        kl = (np.where(a > 0, a * (np.log(np.maximum(a, 1e-300)) - ls), 0.0)
              + np.where(a < 1, (1.0 - a) * (np.log1p(-np.minimum(a, 1.0)) - l1s), -l1s))
        return N * kl - L

    # both ends at once (row 0: the lower end, a in (0, s); row 1: the upper end, a in (s, 1)),
    # every element bisected on its own: the same numbers as one end at a time
    with np.errstate(divide="ignore", invalid="ignore"):
        near_a = np.full((2, *N.shape), s)
        far_a = np.stack([np.zeros(N.shape), np.ones(N.shape)])
        if 0.0 < s < 1.0 and s * 2.0**-61 > 1e-300:
            near_a, far_a = count_sums.chernoff_bisect(N, near_a, far_a, L, ls, l1s)
        else:
            for _ in range(60):
                mid = 0.5 * (near_a + far_a)
                inside = excess(mid) < 0.0
                near_a, far_a = np.where(inside, mid, near_a), np.where(inside, far_a, mid)
        ends = far_a * N
    return np.floor(ends[0]), np.ceil(ends[1])


def t_window(N, s: float, tail: float, *, chernoff: bool = True):
    """Window ``[lo, hi]`` of ``Bin(N, s)`` (arrays of N) holding all but about ``tail`` of the
    mass (the narrower of :func:`bernstein_half_width` and, with ``chernoff``,
    :func:`chernoff_ends` on each side), and the mass outside, computed (binomial cdf / sf) and
    rounded up by the tolerance of :func:`lower_bounds.binom_rtol`: only the window's tightness
    depends on the inequalities, the charge is the computed mass."""
    from scipy import stats

    N = np.asarray(N, dtype=np.float64)
    if s >= 1.0:
        return N.copy(), N.copy(), np.zeros_like(N)
    half = bernstein_half_width(N, s, tail)
    c_lo, c_hi = chernoff_ends(N, s, tail) if chernoff else (-np.inf, np.inf)
    lo = np.clip(np.maximum(np.floor(N * s - half), c_lo), 0.0, N)
    hi = np.clip(np.minimum(np.ceil(N * s + half), c_hi), lo, N)
    out = np.where(lo > 0, stats.binom.cdf(lo - 1.0, N, s), 0.0) + np.where(hi < N, stats.binom.sf(hi, N, s), 0.0)
    return lo, hi, out * (1.0 + 2.0 * binom_rtol(N, s)) + SUBNORMAL_GUARD * ((lo > 0) | (hi < N))
