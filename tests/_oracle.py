"""Soundness oracle for shuffled k-ary randomized response, written for the tests only.

Independent of ``shuffledp.accountants`` (numpy/scipy only), so that every accountant can be held
against it:

* :func:`exact_krr_eps` -- the exact worst-case eps(delta) of shuffled k-RR with ``n`` users: the
  victim holds 0 on one dataset and 1 on the other; the other ``n - 1`` users take *every*
  configuration of values (multiset of counts; values 2..k-1 are exchangeable for k-RR, so one
  representative per partition); the adversary sees the output histogram. The histogram law is
  built by convolving users one at a time on a k-dimensional array of log-probabilities
  (log space: nothing underflows). eps(delta) of a pair is solved in closed form on the sorted
  privacy losses, both directions of the hockey-stick divergence.
* :func:`pair_count_eps` -- at large n (up to 1e5 and beyond), the exact eps(delta) of ONE
  neighbouring pair seen through ONE statistic: the number of reports equal to 1 when ``m``
  others hold 1 and the rest hold another value. Any statistic is a post-processing of the
  shuffled output, so this is a LOWER bound on the true eps of shuffled k-RR.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
from scipy import stats


def krr_row(k: int, eps0: float, x: int) -> np.ndarray:
    """Log-probabilities of k-RR's output on input x."""
    logz = np.logaddexp(eps0, math.log(k - 1))
    row = np.full(k, -logz)
    row[x] = eps0 - logz
    return row


def _add_user(logdist: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Histogram law after one more user with output log-probabilities ``row``."""
    k = logdist.ndim
    out = np.full(logdist.shape, -np.inf)
    for j in range(k):
        shifted = np.full(logdist.shape, -np.inf)
        src = [slice(None)] * k
        dst = [slice(None)] * k
        src[j] = slice(0, -1)
        dst[j] = slice(1, None)
        shifted[tuple(dst)] = logdist[tuple(src)] + row[j]
        out = np.logaddexp(out, shifted)
    return out


def pair_logpmfs(k: int, eps0: float, others: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(log P, log Q) over histograms of n = sum(others) + 1 users; victim 0 (P) vs 1 (Q);
    ``others[v]`` users hold value v."""
    n = sum(others) + 1
    dist = np.full((n + 1,) * k, -np.inf)
    dist[(0,) * k] = 0.0
    for v, cnt in enumerate(others):
        row = krr_row(k, eps0, v)
        for _ in range(cnt):
            dist = _add_user(dist, row)
    P = _add_user(dist, krr_row(k, eps0, 0))
    Q = _add_user(dist, krr_row(k, eps0, 1))
    keep = np.isfinite(P) | np.isfinite(Q)
    return P[keep], Q[keep]


def eps_one_direction(logP: np.ndarray, logQ: np.ndarray, delta: float) -> float:
    """Smallest eps >= 0 with sum max(0, P - e^eps Q) <= delta, exactly (closed form per segment
    of the sorted privacy losses)."""
    P, Q = np.exp(logP), np.exp(logQ)
    with np.errstate(invalid="ignore"):
        L = np.where(np.isfinite(logQ), logP - logQ, np.inf)
    L = np.where(np.isfinite(logP), L, -np.inf)
    if P[L == np.inf].sum() > delta:
        return math.inf
    order = np.argsort(-L, kind="stable")
    L, P, Q = L[order], P[order], Q[order]
    A = np.cumsum(P)   # mass of the first i+1 outcomes
    B = np.cumsum(Q)

    def count_above(eps):  # number of outcomes with L > eps
        return np.searchsorted(-L, -np.asarray(eps, float), side="left")

    def D(eps):
        i = count_above(eps)
        return np.where(i > 0, A[np.maximum(i - 1, 0)] - np.exp(eps) * B[np.maximum(i - 1, 0)], 0.0)

    if D(0.0) <= delta:
        return 0.0
    # D is continuous and non-increasing; on each interval between consecutive distinct privacy
    # losses it is a - e^eps b with fixed sums (a, b) of the outcomes above the interval
    bps = np.unique(L[np.isfinite(L) & (L > 0)])
    vals = D(bps)
    above = bps[vals > delta]
    lo = float(above.max()) if above.size else 0.0
    i = int(count_above(lo))
    a, b = A[i - 1], B[i - 1]
    return max(lo, math.log((a - delta) / b)) if b > 0 else lo


def pair_eps(logP, logQ, delta: float) -> float:
    return max(eps_one_direction(logP, logQ, delta), eps_one_direction(logQ, logP, delta))


def configurations(k: int, n_others: int):
    """Counts (m0, m1, m2, ...) of the others' values, values 2..k-1 up to permutation."""
    for m0 in range(n_others + 1):
        for m1 in range(n_others - m0 + 1):
            rest = n_others - m0 - m1
            for part in _partitions(rest, k - 2):
                yield (m0, m1, *part)


def _partitions(total: int, parts: int):
    if parts == 0:
        if total == 0:
            yield ()
        return
    seen = set()
    for combo in itertools.product(range(total + 1), repeat=parts):
        if sum(combo) == total:
            key = tuple(sorted(combo, reverse=True))
            if key not in seen:
                seen.add(key)
                yield key


@cache
def _all_pairs(k: int, eps0: float, n: int):
    return [(cfg, pair_logpmfs(k, eps0, cfg)) for cfg in configurations(k, n - 1)]


def exact_krr_eps(k: int, eps0: float, n: int, delta: float) -> tuple[float, tuple[int, ...]]:
    """Exact worst-case eps(delta) of shuffled k-RR with n users and the worst configuration."""
    best, arg = -1.0, None
    for cfg, (P, Q) in _all_pairs(k, eps0, n):
        e = pair_eps(P, Q, delta)
        if e > best:
            best, arg = e, cfg
    return best, arg


def exact_krr_delta(k: int, eps0: float, n: int, eps: float) -> float:
    """Exact worst-case delta at eps (both directions, every configuration)."""
    ee = math.exp(eps)
    out = 0.0
    for _, (lp, lq) in _all_pairs(k, eps0, n):
        P, Q = np.exp(lp), np.exp(lq)
        out = max(out, float(np.maximum(P - ee * Q, 0).sum()), float(np.maximum(Q - ee * P, 0).sum()))
    return out


# ----------------------------------------------------------------------------- large n
def _log_conv(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log of the convolution of two pmfs given as logs (exact sums, max-shifted)."""
    ma, mb = la.max(), lb.max()
    c = np.convolve(np.exp(la - ma), np.exp(lb - mb))
    with np.errstate(divide="ignore"):
        return np.log(c) + ma + mb


def pair_count_eps(k: int, eps0: float, n: int, delta: float, m: int) -> float:
    """Exact eps(delta) of the count of reports equal to 1: victim 0 vs 1, ``m`` others hold 1
    and ``n - 1 - m`` hold 0 (for the count of 1s, holding 0 or 2 is the same). A lower bound on
    shuffled k-RR's eps. Cost O(n) when one group is empty, O(m (n-m)) otherwise."""
    hi = eps0 - float(np.logaddexp(eps0, math.log(k - 1)))   # log P(report 1 | holds 1)
    lo = -float(np.logaddexp(eps0, math.log(k - 1)))          # log P(report 1 | holds other)
    parts = []
    for cnt, lp in ((m, hi), (n - 1 - m, lo)):
        if cnt:
            parts.append(stats.binom.logpmf(np.arange(cnt + 1), cnt, math.exp(lp)))
    others = parts[0] if len(parts) == 1 else _log_conv(*parts)
    # victim: report 1 w.p. e^lo (holds 0) or e^hi (holds 1)
    logz = float(np.logaddexp(eps0, math.log(k - 1)))
    l1m = float(np.logaddexp(eps0, math.log(k - 2))) - logz if k > 2 else eps0 - logz   # not 1 | holds 0
    h1m = math.log(k - 1) - logz                                                      # not 1 | holds 1
    pad = np.concatenate([[-np.inf], others])
    base = np.concatenate([others, [-np.inf]])
    logP = np.logaddexp(lo + pad, l1m + base)
    logQ = np.logaddexp(hi + pad, h1m + base)
    return pair_eps(logP, logQ, delta)
