"""Windows of a binomial count of clones (or blanket draws) and the pmfs summed over them: the
numerics of the variation-ratio reduction (:mod:`shuffledp.accountants.upper.variation_ratio`)
shared with the Poisson randomizer's accountant (:mod:`shuffledp.accountants.special.poisson`)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


def binom_pmf_fast(k, n, p):
    """Binomial pmf (Boost, through ``stats.binom.pmf``) as a float array; only called with valid
    arguments (0 <= k <= n, 0 < p < 1)."""
    from scipy import stats

    return np.asarray(stats.binom.pmf(np.asarray(k, dtype=float), np.asarray(n, dtype=float), float(p)))


@lru_cache(maxsize=64)
def clone_window(N: int, pc: float, tail: float):
    """Clone-count window [c_lo, c_hi] of Bin(N, pc), its pmf arrays and the skipped mass."""
    from scipy import stats

    if pc <= 0.0 or N == 0 or pc >= 1.0:
        c_lo = c_hi = 0 if pc <= 0.0 or N == 0 else N
        tail_lo = float(stats.binom.cdf(c_lo, N, pc)) if c_lo > 0 else 0.0
        tail_hi = float(stats.binom.sf(c_hi - 1, N, pc)) if c_hi < N else 0.0
    else:  # the tails outside the window: the last values the loops evaluated (the same calls, made once)
        tail_lo = tail_hi = 0.0
        mean = N * pc
        sd = math.sqrt(N * pc * (1 - pc))
        z = math.sqrt(2 * math.log(1 / tail))      # Gaussian guess, confirmed exactly below
        c_lo = max(0, int(stats.binom.ppf(tail, N, pc)) - 1)
        while c_lo > 0:
            tail_lo = float(stats.binom.cdf(c_lo, N, pc))
            if not tail_lo > tail:
                break
            c_lo = max(0, c_lo - int(sd) - 1)
        else:
            tail_lo = 0.0
        c_hi = min(N, int(math.ceil(mean + z * sd)) + 2)
        while c_hi < N:
            tail_hi = float(stats.binom.sf(c_hi - 1, N, pc))
            if not tail_hi > tail:
                break
            c_hi = min(N, c_hi + int(sd) + 2)
        else:
            tail_hi = 0.0
    t_lo = c_lo + 1 if c_lo > 0 else 0
    t_hi = c_hi if c_hi < N else N + 1
    t = np.arange(t_lo, t_hi + 1, dtype=np.int64)
    # the pmf at t - 1 and t in one call (scipy's binomial is elementwise: the same values)
    both = binom_pmf(np.arange(t_lo - 1, t_hi + 1, dtype=np.int64), N, pc)
    b_prev, b_here = both[:-1].copy(), both[1:].copy()
    for arr in (t, b_prev, b_here):
        arr.setflags(write=False)
    return t, b_prev, b_here, tail_lo + tail_hi


def binom_pmf(k: np.ndarray, N: int, pc: float) -> np.ndarray:
    """pmf of Bin(N, pc) at the counts ``k`` (0 outside ``0..N``; ``pc`` may be 0 or 1)."""
    out = np.zeros(k.shape, dtype=float)
    ok = (k >= 0) & (k <= N)
    if pc <= 0.0:
        out[ok & (k == 0)] = 1.0
    elif pc >= 1.0:
        out[ok & (k == N)] = 1.0
    else:
        out[ok] = binom_pmf_fast(k[ok], np.full(int(ok.sum()), N), pc)
    return out


def half_binom(t: np.ndarray, a: np.ndarray):
    """For c = t-1: ``pm = P(Bin(c,1/2) = a-1)`` and ``S = P(Bin(c,1/2) >= a)`` (0 when c < 0)."""
    from scipy import special

    c = t - 1
    interior = (c >= 0) & (a >= 1) & (a <= c)
    if interior.all():
        af = a.astype(float)
        cf = c.astype(float)
        return binom_pmf_fast(af - 1, cf, 0.5), special.betainc(af, cf - af + 1, 0.5)
    pm = np.zeros(t.shape, dtype=float)
    S = np.zeros(t.shape, dtype=float)
    ok = (c >= 0) & (a - 1 >= 0) & (a - 1 <= c)
    if ok.any():
        pm[ok] = binom_pmf_fast(a[ok] - 1, c[ok], 0.5)
    S[(c >= 0) & (a <= 0)] = 1.0
    if interior.any():
        S[interior] = special.betainc(a[interior].astype(float), (c[interior] - a[interior] + 1).astype(float), 0.5)
    return pm, S


def window_tail(delta: float, rtol: float) -> float:
    """Window tail for an eps(delta) search: its mass moves delta by <= 1e-3 rtol delta."""
    return max(1e-300, min(1e-12, 1e-3 * rtol * delta))
