"""Lower bounds on the shuffled epsilon of k-ary randomized response: exact divergences of
concrete neighbouring pairs, and the worst pair found by a search over the others' values.

Pair family (victim holds 0 on one dataset, 1 on the other; k-RR reports ``x`` with probability
``e^eps0/(e^eps0+k-1)`` and any other value with ``1/(e^eps0+k-1)``): ``m`` of the other
``n - 1`` users hold 1, the rest hold 0 (holding 0 or any value other than 1 is the same for the
statistic below). The adversary looks at one statistic of the shuffled output, the number of
reports equal to 1::

    X = Bin(m, ph) + Bin(n-1-m, pl) + Bern(a),   a = pl (victim holds 0) or ph (victim holds 1)

A statistic is a post-processing of the shuffled histogram, so the exact divergence of the pair
of laws of ``X`` is at most the true shuffled divergence: every eps returned here is a LOWER
bound on the true eps of shuffled k-RR (and, since k-RR is eps0-LDP, on any accountant valid
for all eps0-LDP randomizers).

* ``m = 0`` or ``m = n - 1`` (one binomial): closed form. The likelihood ratio of ``X`` is
  monotone in the count, so the positive part of ``P - e^eps Q`` is one tail, a binomial
  survival function plus one point mass: O(1) for any ``n`` (scipy's binomial).
* ``0 < m < n - 1``: the two binomials are convolved on windows of 13 standard deviations
  (the mass outside is computed exactly) (``n <= MIX_N_MAX``); the dropped mass is charged against the divergence.

Every divergence is reduced by a floating-point allowance (``1e-9`` of the summed magnitudes),
so it stays a lower bound; the eps searches return the lower end of the final bracket.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import bisect_eps
from shuffledp.accountants.numerics.tolerances import (  # noqa: F401 (re-exported)
    RTOL_BASE,
    RTOL_PER_SD,
    SUBNORMAL_GUARD,
    TAIL_MIN,
    binom_rtol,
)
from shuffledp.accountants.validation import check_delta, check_eps, check_eps0, check_int, check_n

__all__ = [
    "count_pair_delta",
    "krr_pair_delta",
    "krr_pair_eps",
    "krr_worst_pair",
    "krr_eps_lower",
    "MIX_N_MAX",
    "EXACT_N_MAX",
    "binary_rr_exact_delta",
    "binary_rr_exact_eps",
    "binom_rtol",
]

ALLOWANCE = 1e-9          # relative floating-point allowance subtracted from every divergence
MIX_N_MAX = 200_000       # mixed configurations (two binomials) are convolved up to this n
EXACT_N_MAX = 2**52       # beyond, counts are not exact doubles: the lower bound is 0 (not computed)


def _krr_probs(k: int, eps0: float) -> tuple[float, float, float, float]:
    """(ph, pl, 1 - ph, 1 - pl): probability that k-RR reports a given value when the input is /
    is not it, and the complements, each computed without cancellation (ph is close to 1 at
    large eps0, where ``1 - ph`` in floating point would lose all its digits)."""
    z = 1.0 + (k - 1) * math.exp(-eps0)        # (e^eps0 + k - 1) / e^eps0
    pl = math.exp(-eps0) / z
    ph = 1.0 / z
    return ph, pl, (k - 1) * pl, ph + (k - 2) * pl


@functools.lru_cache(maxsize=4096)
def _binom_pmf_sf(t: int, N: int, b: float, b_bar: float) -> tuple[float, float]:
    """``P(Bin(N, b) = t - 1)`` and ``P(Bin(N, b) >= t)``, evaluated with the smaller of ``b``
    and its complement ``b_bar`` as success probability (accurate when ``b`` is near 1). Kept per
    arguments: an eps search asks the same few thresholds ``t`` at eps after eps (scalar scipy
    calls cost more in their wrappers than in the numbers)."""
    from scipy import stats

    if t < 1:
        return 0.0, 1.0
    if b <= 0.5:
        return float(stats.binom.pmf(t - 1, N, b)), float(stats.binom.sf(t - 1, N, b))
    # Bin(N, b) = N - Bin(N, b_bar)
    return float(stats.binom.pmf(N - t + 1, N, b_bar)), float(stats.binom.cdf(N - t, N, b_bar))


def _tail_direction(a1: float, a0: float, c1: float, c0: float, b: float, b_bar: float, N: int,
                    ee: float) -> float:
    """``sum_t max(0, P1(t) - ee P0(t))`` for ``X = Bin(N, b) + Bern(a)`` (``c = 1 - a``,
    ``b_bar = 1 - b`` given separately), ``a1 > a0``: the positive region is ``t >= T``;
    ``sum_{t >= T} P_a(t) = a P(B = T-1) + P(B >= T)``. Lower-bounded closed form."""
    lead = a1 - ee * a0
    if lead <= 0.0:
        return 0.0
    # P1(t) > ee P0(t)  <=>  rho_t = B(t-1)/B(t) = t b_bar / ((N-t+1) b) > K,  K = (ee c0 - c1) / lead
    K = (ee * c0 - c1) / lead
    t_star = K * (N + 1.0) * b / (b_bar + K * b)
    T0 = math.floor(t_star) + 1
    best = 0.0
    for T in {max(0, min(N + 1, T0 + j)) for j in (-1, 0, 1)}:
        pm, sf = _binom_pmf_sf(T, N, b, b_bar)
        val = lead * pm + (1.0 - ee) * sf
        mag = abs(lead) * pm + (ee - 1.0) * sf
        best = max(best, val - (ALLOWANCE + 2.0 * float(binom_rtol(N, b))) * mag)
    return best


def count_pair_delta(a1: float, a0: float, b: float, N: int, eps: float, *, c1: float | None = None,
                     c0: float | None = None, b_bar: float | None = None) -> float:
    """Lower bound on ``max(D(P1||P0), D(P0||P1))`` at ``e^eps`` (exact up to the allowance) for
    ``P_i = Bin(N, b) + Bern(a_i)``: the divergence of a count statistic. ``N < 2^52``.
    ``c1, c0, b_bar`` are ``1 - a1, 1 - a0, 1 - b`` (pass them when a probability is near 1).
    The reverse direction is the forward one for the complementary count ``N + 1 - X``."""
    c1 = 1.0 - a1 if c1 is None else c1
    c0 = 1.0 - a0 if c0 is None else c0
    b_bar = 1.0 - b if b_bar is None else b_bar
    if a1 < a0:
        a1, a0, c1, c0 = a0, a1, c0, c1
    if a1 == a0 or N < 0:
        return 0.0
    ee = math.exp(min(eps, 700.0))
    if N == 0 or b <= 0.0 or b_bar <= 0.0:
        return max(0.0, a1 - ee * a0, c0 - ee * c1)
    # D(P0||P1) for X is D(P0'||P1') for Y = N + 1 - X = Bin(N, b_bar) + Bern(c): there c0 > c1
    return max(_tail_direction(a1, a0, c1, c0, b, b_bar, N, ee),
               _tail_direction(c0, c1, a0, a1, b_bar, b, N, ee))


def _window_pmf(N: int, p: float) -> tuple[int, np.ndarray, float]:
    """(start, pmf on a window of Bin(N, p), exact mass outside the window)."""
    from scipy import stats

    if N == 0:
        return 0, np.ones(1), 0.0
    # 13 standard deviations (plus a margin for skewed small-N laws); the mass left out is
    # computed exactly and charged by the caller
    mean, sd = N * p, math.sqrt(N * p * (1.0 - p))
    lo = max(0, int(math.floor(mean - 13.0 * sd)) - 30)
    hi = min(N, int(math.ceil(mean + 13.0 * sd)) + 30)
    ks = np.arange(lo, hi + 1, dtype=float)
    pmf = stats.binom.pmf(ks, N, p)
    dropped = (float(stats.binom.cdf(lo - 1, N, p)) if lo > 0 else 0.0) + (
        float(stats.binom.sf(hi, N, p)) if hi < N else 0.0)
    return lo, pmf, dropped


class _MixedPair:
    """Laws of X under the two datasets for a mixed configuration (windowed convolution). The
    group holding 1 is counted by its reports *other* than 1 (probability ``1 - ph``, accurate),
    so the statistic is ``(#ones among the rest) - (#non-ones among the holders of 1)``, a
    bijection of X."""

    def __init__(self, m: int, N: int, ph: float, pl: float, qh: float, ql: float):
        s1, f1, d1 = _window_pmf(m, qh)          # non-ones among the m holders of 1
        s2, f2, d2 = _window_pmf(N - m, pl)      # ones among the others
        others = np.convolve(f1[::-1], f2)       # index increases with X
        self.dropped = d1 + d2
        pad = np.concatenate([[0.0], others])
        base = np.concatenate([others, [0.0]])
        self.P = pl * pad + ql * base     # victim holds 0
        self.Q = ph * pad + qh * base     # victim holds 1

    def delta(self, eps: float) -> float:
        ee = math.exp(min(eps, 700.0))
        out = 0.0
        for A, B in ((self.P, self.Q), (self.Q, self.P)):
            diff = A - ee * B
            pos = diff > 0
            val = float(diff[pos].sum())
            mag = float((A[pos] + ee * B[pos]).sum())
            out = max(out, val - ALLOWANCE * mag - ee * self.dropped)
        return max(out, 0.0)


def _check_krr(k, eps0, n):
    return check_int(k, "k", 2, 10**9), check_eps0(eps0), check_n(n)


def krr_pair_delta(k: int, eps0: float, n: int, eps: float, others: int) -> float:
    """Lower bound on shuffled k-RR's delta at ``eps``: the pair where ``others`` of the other
    ``n - 1`` users hold the victim's second value (1) and the rest hold its first (0)."""
    k, eps0, n = _check_krr(k, eps0, n)
    eps = check_eps(eps)
    N = n - 1
    m = check_int(others, "others", 0, N)
    if N >= EXACT_N_MAX:
        return 0.0
    ph, pl, qh, ql = _krr_probs(k, eps0)
    if m in (0, N):
        b, b_bar = (ph, qh) if m == N else (pl, ql)
        return count_pair_delta(ph, pl, b, N, eps, c1=qh, c0=ql, b_bar=b_bar)
    if n > MIX_N_MAX:
        return 0.0
    return _MixedPair(m, N, ph, pl, qh, ql).delta(eps)


def _eps_of(delta_fn, delta: float, eps0: float, rtol: float) -> float:
    lo, hi = bisect_eps(delta_fn, delta, eps0, rtol)
    return lo


def krr_pair_eps(k: int, eps0: float, n: int, delta: float, others: int, *, rtol: float = 1e-6) -> float:
    """Lower bound on shuffled k-RR's eps at ``delta`` from one pair (see :func:`krr_pair_delta`);
    the largest eps (rounded down) at which the pair's divergence still exceeds ``delta``."""
    k, eps0, n = _check_krr(k, eps0, n)
    delta = check_delta(delta)
    N = n - 1
    m = check_int(others, "others", 0, N)
    if N >= EXACT_N_MAX or (0 < m < N and n > MIX_N_MAX):
        return 0.0
    ph, pl, qh, ql = _krr_probs(k, eps0)
    if m in (0, N):
        b, b_bar = (ph, qh) if m == N else (pl, ql)

        def fn(e):
            return count_pair_delta(ph, pl, b, N, e, c1=qh, c0=ql, b_bar=b_bar)
    else:
        fn = _MixedPair(m, N, ph, pl, qh, ql).delta
    return _eps_of(fn, delta, eps0, rtol)


def split_candidates(N: int) -> list[int]:
    """Configurations searched: all others on 0, all on 1, and a grid of splits."""
    out = {0, N}
    if 0 < N and N + 1 <= MIX_N_MAX:
        for f in (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98):
            out.add(min(N, max(0, round(f * N))))
        if N <= 40:
            out.update(range(N + 1))
    return sorted(out)


def krr_worst_pair(k: int, eps0: float, n: int, delta: float, *, rtol: float = 1e-6) -> tuple[float, int]:
    """``(eps_lower, others)``: the largest pair lower bound over the searched configurations
    (all others on 0, all on 1, splits at 2-98% and every split when n <= 41), with the number of
    others holding 1 in the worst pair found."""
    k, eps0, n = _check_krr(k, eps0, n)
    delta = check_delta(delta)
    best, arg = 0.0, 0
    for m in split_candidates(n - 1):
        e = krr_pair_eps(k, eps0, n, delta, m, rtol=rtol)
        if e > best:
            best, arg = e, m
    return best, arg


def krr_eps_lower(k: int, eps0: float, n: int, delta: float, *, rtol: float = 1e-6) -> float:
    """Lower bound on the eps of shuffled k-RR at ``delta``: worst pair found (rounded down)."""
    return krr_worst_pair(k, eps0, n, delta, rtol=rtol)[0]


# ----------------------------------------------------------------------------- exact binary RR
@functools.lru_cache(maxsize=4)
def _binary_rr_laws(eps0: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Laws of the count of ones of shuffled binary RR (``n`` users) for every configuration ``j``
    of the others (``j`` of them holding 1): rows of ``P`` (victim holds 1) and ``Q`` (holds 0).
    The count of ones is sufficient for the shuffled output of binary RR.

    Row ``j`` of the others' law is ``Bin(j, p) * Bin(N - j, q)`` (``N = n - 1``): every row's
    convolution has ``N + 1`` points, so all are taken at once with one real FFT length (the one
    ``scipy.signal.fftconvolve`` picks for each row alone: the same numbers, bit for bit; tested).
    Cached (read-only arrays) for the several deltas and eps of one (eps0, n)."""
    from scipy import fft as sfft
    from scipy import stats

    e = math.exp(eps0)
    p, q = e / (e + 1.0), 1.0 / (e + 1.0)
    N = n - 1
    counts = np.arange(N + 1)
    a = stats.binom.pmf(counts[None, :], counts[:, None], p)        # row j: Bin(j, p), 0 past j
    b = stats.binom.pmf(counts[None, :], (N - counts)[:, None], q)  # row j: Bin(N - j, q)
    others = np.empty((N + 1, N + 1))
    others[0], others[N] = b[0], a[N]
    if N >= 2:
        size = sfft.next_fast_len(N + 1, True)
        conv = sfft.irfft(sfft.rfft(a[1:N], size, axis=-1) * sfft.rfft(b[1:N], size, axis=-1), size, axis=-1)
        others[1:N] = np.clip(conv[:, :N + 1], 0.0, None)
    shifted = np.pad(others, ((0, 0), (1, 0)))
    base = np.pad(others, ((0, 0), (0, 1)))
    P, Q = p * shifted + q * base, q * shifted + p * base
    P.flags.writeable = Q.flags.writeable = False
    return P, Q


def binary_rr_exact_delta(eps0: float, n: int, eps: float) -> float:
    """Exact worst-case shuffled delta of binary randomized response at ``eps``: the largest
    ``D_{e^eps}`` of the count of ones over every configuration of the others, both directions.
    It enumerates every configuration (O(n^2) memory): for small ``n`` only."""
    P, Q = _binary_rr_laws(check_eps0(eps0), check_n(n))
    ee = math.exp(check_eps(eps))
    return float(max(np.maximum(P - ee * Q, 0).sum(axis=1).max(), np.maximum(Q - ee * P, 0).sum(axis=1).max()))


def binary_rr_exact_eps(eps0: float, n: int, delta: float, *, rtol: float = 1e-6) -> float:
    """Exact worst-case shuffled eps of binary randomized response (``n`` users), as
    :func:`binary_rr_exact_delta`; the returned eps is the upper end of a bracket of relative
    width ``rtol`` (a verified point where every configuration meets ``delta``)."""
    P, Q = _binary_rr_laws(check_eps0(eps0), check_n(n))

    def fn(x: float) -> float:
        ee = math.exp(x)
        return float(max(np.maximum(P - ee * Q, 0).sum(axis=1).max(),
                         np.maximum(Q - ee * P, 0).sum(axis=1).max()))

    return bisect_eps(fn, check_delta(delta), eps0, rtol)[1]
