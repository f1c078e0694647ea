"""Blocks of consecutive counts of a binomial law, for evaluating a divergence at huge n with a
fixed cost. Shared by the variation-ratio and clone accountants (each charges every block at its
worst count, so the blocked value stays an upper bound)."""

from __future__ import annotations

import math
import warnings
from functools import lru_cache

import numpy as np

from shuffledp.accountants.numerics.tolerances import SUBNORMAL_GUARD, binom_rtol

N_BLOCKS = 512           # blocks of clone counts in the blocked evaluation (huge n)


@lru_cache(maxsize=16)
def blocks(N: int, pc: float, tail: float, n_blocks: int = N_BLOCKS):
    """Blocks of consecutive clone counts of ``Bin(N, pc)`` covering all but ``tail`` of the mass:
    (first count, last count, mass, rounding scale of each mass: ``1e-14 x scale`` bounds its error,
    mass outside the blocks)."""
    from scipy import special, stats

    Nf = float(N)
    lo = max(0, int(stats.binom.ppf(tail, Nf, pc)) - 1)
    hi = min(N, int(stats.binom.isf(tail, Nf, pc)) + 1)
    # half of the edges evenly spaced, half at quantiles (short blocks where the mass is): the
    # normal law's, a placement only (every block's mass is computed exactly below), where scipy's
    # binomial quantiles cost 255 root searches (0.1-0.2 s at n = 1e14); the windows used here
    # hold over 2e4 counts, so the two differ by a few counts against blocks of hundreds
    even = np.linspace(lo, hi + 1, n_blocks // 2 + 1)
    qs = np.linspace(0.0, 1.0, n_blocks // 2 + 1)[1:-1]
    quant = Nf * pc + math.sqrt(Nf * pc * (1.0 - pc)) * special.ndtri(qs)
    edges = np.unique(np.clip(np.concatenate([even, quant]), lo, hi + 1).round().astype(np.int64))
    first = edges[:-1].astype(float)
    last = (edges[1:] - 1).astype(float)
    median = Nf * pc
    below = last < median
    # one tail per edge, on the side its blocks difference (blocks are consecutive: a block's
    # first - 1 is the previous block's last): the same values as four tails per block
    cuts = edges.astype(float) - 1.0
    need_cdf, need_sf = np.zeros(cuts.size, dtype=bool), np.zeros(cuts.size, dtype=bool)
    for side, blk in ((need_cdf, below), (need_sf, ~below)):
        side[:-1] |= blk
        side[1:] |= blk
    cdf, sf = np.full(cuts.size, np.nan), np.full(cuts.size, np.nan)
    cdf[need_cdf] = stats.binom.cdf(cuts[need_cdf], Nf, pc)
    sf[need_sf] = stats.binom.sf(cuts[need_sf], Nf, pc)
    cdf_hi, cdf_lo, sf_lo, sf_hi = cdf[1:], cdf[:-1], sf[:-1], sf[1:]
    mass = np.where(below, cdf_hi - cdf_lo, sf_lo - sf_hi)
    # callers charge 1e-14 x scale for each mass: scipy's cdf / sf carry a relative error of up to
    # binom_rtol (about 2e-13 per standard deviation, measured against mpmath: 2.4e-7 at n = 1e15),
    # so scale is the two terms differenced, inflated to cover that error as well
    rtol = float(binom_rtol(Nf, pc))
    scale = np.where(below, cdf_hi + cdf_lo, sf_lo + sf_hi) * (1.0 + rtol / 1e-14)
    mass = np.maximum(mass, 0.0)
    outside = ((float(stats.binom.cdf(lo - 1, Nf, pc)) if lo > 0 else 0.0) + (
        float(stats.binom.sf(hi, Nf, pc)) if hi < N else 0.0)) * (1.0 + rtol)
    for arr in (first, last, mass, scale):
        arr.setflags(write=False)
    return first, last, mass, scale, outside


def smaller_tails(x, N, p: float):
    """``(Pr[X <= x], Pr[X > x])`` for ``X ~ Bin(N, p)`` at each ``x`` (``N`` a number or one per
    element), only the smaller side evaluated (NaN on the other: never used in a difference, where
    the larger side would cancel)."""
    from scipy import stats

    x, N = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(N, dtype=np.float64))
    lo, up = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    lo[x < 0], up[x < 0] = 0.0, 1.0
    lo[x >= N], up[x >= N] = 1.0, 0.0
    mid = (x >= 0) & (x < N)
    low = mid & (x < N * p)
    high = mid & ~low
    lo[low] = stats.binom.cdf(x[low], N[low], p)
    up[high] = stats.binom.sf(x[high], N[high], p)
    return lo, up


def lower_quantile(q: float, N: float, p: float) -> float:
    """``binom.ppf(q, N, p)`` for a window's end where only cost and tightness depend on it (what
    lies outside is charged or dropped by the caller): 0 without a search when ``Pr[X = 0] >= q``,
    and 0 (a wider window) where Boost's root search fails at extreme ``q`` -- instead of the
    RuntimeWarning it prints there."""
    from scipy import stats

    if N <= 0 or p <= 0.0:
        return 0.0
    if p < 1.0 and N * math.log1p(-p) >= math.log(q):
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(stats.binom.ppf(q, N, p))
    return value if math.isfinite(value) else 0.0


def lower_quantiles(q: float, N, p: float) -> np.ndarray:
    """:func:`lower_quantile` at every count of the array ``N``, the searches in one scipy call
    (elementwise: the same numbers as one call per count)."""
    from scipy import stats

    N = np.asarray(N, dtype=np.float64)
    out = np.zeros(N.shape)
    if p <= 0.0:
        return out
    need = N > 0
    if p < 1.0:
        need &= ~(N * math.log1p(-p) >= math.log(q))
    if np.any(need):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            values = stats.binom.ppf(q, N[need], p)
        out[need] = np.where(np.isfinite(values), values, 0.0)
    return out


def _masses(edges, N: float, p: float):
    """Masses of the blocks ``[edges[i], edges[i+1] - 1]`` of Bin(N, p) and error bounds: each a
    difference of two tails on the small side (or one minus two tails for the block holding the
    median), every tail's relative error at most :func:`lower_bounds.binom_rtol`."""
    lo, up = smaller_tails(edges - 1.0, N, p)
    return _tail_masses(lo[:-1], lo[1:], up[:-1], up[1:], N, p)


def _tail_masses(l0, l1, u0, u1, N, p: float):
    """:func:`_masses` from the smaller tails below each block's first count (``l0``, ``u0``) and
    below the next block's (``l1``, ``u1``)."""
    both_low = ~np.isnan(l0) & ~np.isnan(l1)
    both_up = ~np.isnan(u0) & ~np.isnan(u1)
    with np.errstate(invalid="ignore"):
        mass = np.where(both_low, l1 - l0, np.where(both_up, u0 - u1, 1.0 - l0 - u1))
        scale = np.where(both_low, l1 + l0, np.where(both_up, u0 + u1, 1.0 + l0 + u1))
    return np.maximum(mass, 0.0), binom_rtol(N, p) * scale + SUBNORMAL_GUARD


def _geo_offset(t, L):
    """Mean of ``i`` under weights ``e^{t i}`` on ``{0, ..., L}`` (a truncated geometric law)."""
    t, L = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(L, dtype=np.float64))
    x = 0.5 * (L + 1.0) * t
    small = np.abs(x) < 1e-4
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        y = 0.5 * t
        coth_y = np.where(np.abs(y) < 1e-8, 1.0 / np.where(y == 0, 1.0, y) + y / 3.0, 1.0 / np.tanh(y))
        full = 0.5 * L + 0.5 * (L + 1.0) / np.tanh(np.where(small, 1.0, x)) - 0.5 * coth_y
        series = 0.5 * L + ((L + 1.0) ** 2 - 1.0) * t / 12.0   # error O(t^3 L^4): below 1e-12 L here
    return np.clip(np.where(small, series, full), 0.0, L)


def block_stats(edges, N: float, p: float):
    """Per block ``[edges[i], edges[i+1] - 1]`` of Bin(N, p): (mass, its error bound, an estimate
    of the mean given the block, a bound on that estimate's error). The binomial pmf is
    log-concave: on a block its ratios ``P(j+1)/P(j)`` lie between those at the block's two ends,
    so (likelihood-ratio order) the block's conditional mean lies between the means of the two
    truncated geometric laws with those ratios; the estimate is the middle of that bracket (no
    difference of tails enters it). Unit blocks are exact points."""
    edges = np.asarray(edges, dtype=np.float64)
    first, last = edges[:-1], edges[1:] - 1.0
    mass, m_err = _masses(edges, N, p)
    return _block_moments(first, last, mass, m_err, N, p)


def block_stats_rows(edges_rows, Ns, p: float) -> list[tuple]:
    """:func:`block_stats` of ``Bin(N_i, p)`` on ``edges_rows[i]`` for every ``i``, each scipy
    function called once over all rows (elementwise, at the same arguments: the same numbers as
    one call per row, without scipy's per-call cost)."""
    if not len(edges_rows):
        return []
    sizes = np.array([len(e) for e in edges_rows])
    edges = np.concatenate([np.asarray(e, dtype=np.float64) for e in edges_rows])
    Ne = np.repeat(np.asarray(Ns, dtype=np.float64), sizes)
    lo, up = smaller_tails(edges - 1.0, Ne, p)
    starts = np.cumsum(sizes) - sizes
    i0 = np.concatenate([s + np.arange(m - 1) for s, m in zip(starts, sizes, strict=True)]).astype(np.int64)
    i1 = i0 + 1
    N = Ne[i0]
    mass, m_err = _tail_masses(lo[i0], lo[i1], up[i0], up[i1], N, p)
    stats = _block_moments(edges[i0], edges[i1] - 1.0, mass, m_err, N, p)
    cuts = np.cumsum(sizes - 1)[:-1]
    return list(zip(*(np.split(a, cuts) for a in stats), strict=True))


def _block_moments(first, last, mass, m_err, N, p: float):
    """:func:`block_stats` given the blocks' masses and their error bounds."""
    from scipy import stats

    L = last - first
    with np.errstate(divide="ignore"):
        lr = math.log(p) - math.log1p(-p)
        t_hi = np.log(np.maximum(N - first, 1e-300)) - np.log(first + 1.0) + lr + 1e-13
        t_lo = np.log(np.maximum(N - last + 1.0, 1e-300)) - np.log(last) + lr - 1e-13
    g_hi, g_lo = _geo_offset(t_hi, L), _geo_offset(t_lo, L)
    mean = first + 0.5 * (g_hi + g_lo)
    mean_err = 0.5 * np.abs(g_hi - g_lo) + 1e-12 * L + 1e-15 * np.abs(first)
    unit = L == 0
    mean_err = np.where(unit, 0.0, np.minimum(mean_err, L))
    pmf = stats.binom.pmf(first, N, p)
    return np.where(unit, pmf, mass), np.where(unit, binom_rtol(N, p) * pmf + SUBNORMAL_GUARD, m_err), mean, mean_err
