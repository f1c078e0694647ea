"""Independent reference for the optimal blanket-decomposition value of a four-group pair at
large n (issue 25), written for the tests and benchmarks/accountants_tight.py without shuffledp
(numpy and scipy.stats only).

A victim pair whose groups are the four patterns of two flags ``(a, b)`` -- the report "favours"
x / x' -- has rows over the blanket ``u = u_a``, ``v = v_b``; the blanket draws fall in group
``(a, b)`` with probability ``w_ab`` (any joint law: OUE's optimal blanket has dependent flags).
Given ``N = M + 1`` reports the histogram's pmf ratio to the blanket multinomial depends only on
``A = #{a = 1}`` and ``B = #{b = 1}``, so

    D_M = gamma / N * sum_{A, B} Pr[A, B] (N (u0 - e^eps v0) + (u1 - u0) A - e^eps (v1 - v0) B)_+

with ``A ~ Bin(N, w10 + w11)`` and, given ``A``, ``B = Bin(A, w11 / (w10 + w11)) + Bin(N - A,
w01 / (w01 + w00))`` (each report's b given its a). The joint pmf is tabulated cell by cell (a
convolution per A; an outer product when the flags are independent) and the positive part summed
directly -- no tail formulas, no spread. ``D_M`` is non-increasing in ``M``; M is cut into blocks
and each block evaluated at both ends, which brackets the decomposed divergence:
``bracket(...) -> (lower, upper)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

Z = 8.0  # windows: +- Z standard deviations (plus a margin); the mass outside goes to the upper end


def _win(N: int, p: float) -> tuple[int, np.ndarray, float]:
    if N <= 0:
        return 0, np.ones(1), 0.0
    sd = math.sqrt(N * p * (1.0 - p))
    lo = max(0, int(N * p - Z * sd) - 5)
    hi = min(N, int(N * p + Z * sd) + 5)
    pmf = stats.binom.pmf(np.arange(lo, hi + 1), N, p)
    return lo, pmf, max(0.0, 1.0 - float(pmf.sum()))


def d_given_m(M: int, w, u, v, gamma: float, ee: float) -> tuple[float, float]:
    """``(D_M summed over the windows, the mass outside them)``; ``w = (w10, w01, w11, w00)``."""
    w10, w01, w11, w00 = w
    N = M + 1
    al = w10 + w11
    b1, b0 = w11 / al, w01 / (w01 + w00)
    a_lo, pa, out_a = _win(N, al)
    A = np.arange(a_lo, a_lo + pa.size)
    base = N * (u[0] - ee * v[0])
    cu, cv = u[1] - u[0], v[1] - v[0]
    total = 0.0
    out = out_a
    if abs(b1 - b0) < 1e-15:
        b_lo, pb, out_b = _win(N, b0)
        B = np.arange(b_lo, b_lo + pb.size)
        f = base + cu * A[:, None] - ee * cv * B[None, :]
        total = float(np.sum(pa[:, None] * pb[None, :] * np.maximum(f, 0.0)))
        out += out_b
    else:
        for a, pr in zip(A, pa, strict=True):
            l1, p1, o1 = _win(int(a), b1)
            l0, p0, o0 = _win(N - int(a), b0)
            pb = np.convolve(p1, p0)
            B = np.arange(l1 + l0, l1 + l0 + pb.size)
            total += pr * float(np.dot(pb, np.maximum(base + cu * a - ee * cv * B, 0.0)))
            out += pr * (o1 + o0)
    return gamma / N * total, out * gamma * max(u)


def bracket(w, u, v, gamma: float, n: int, eps: float, blocks: int = 40) -> tuple[float, float]:
    """``(lower, upper)`` on the decomposed divergence at ``e^eps`` (one direction: P with u)."""
    ee = math.exp(eps)
    N1 = n - 1
    if gamma >= 1.0:
        ms, pm, out_m = np.array([N1]), np.ones(1), 0.0
    else:
        m_lo, pm, out_m = _win(N1, gamma)
        ms = np.arange(m_lo, m_lo + pm.size)
    # blocks of at most 1e-3 of their smallest M (D_M changes by about that fraction across one;
    # every M of its own below M = 1000), at least ``blocks`` of them
    width = max(1, int(1e-3 * ms[0]))
    count = max(min(blocks, ms.size), -(-ms.size // width))
    cuts = np.unique(np.linspace(0, ms.size, count + 1).astype(int))
    low = up = 0.0
    for s, e in zip(cuts[:-1], cuts[1:], strict=True):
        wt = float(pm[s:e].sum())
        d_first, o_first = d_given_m(int(ms[s]), w, u, v, gamma, ee)
        d_last = d_first if e - 1 == s else d_given_m(int(ms[e - 1]), w, u, v, gamma, ee)[0]
        up += wt * (d_first + o_first)
        low += wt * d_last
    return low, up + out_m


def eps_bracket(w, u, v, gamma: float, n: int, delta: float, eps_hint: float, *, rel: float = 2e-4,
                blocks: int = 40, ends: str = "both") -> tuple[float, float | None]:
    """``(eps_lo, eps_hi)``: the optimal decomposition's eps at ``delta`` lies in between (the
    lower end where the bracket's lower divergence still exceeds delta, the upper end where its
    upper one is below it), found by bisection around ``eps_hint`` to relative width ``rel``
    (``ends="lower"``: the lower end only, ``eps_hi`` None). Both directions of the pair are
    taken (the reverse swaps the flags and u/v) unless the pair is its own mirror image."""
    wr = (w[1], w[0], w[2], w[3])
    mirror = w[0] == w[1] and tuple(u) == tuple(v)

    def both(eps, which):
        a = bracket(w, u, v, gamma, n, eps, blocks)[which]
        return a if mirror else max(a, bracket(wr, v, u, gamma, n, eps, blocks)[which])

    def search(which):
        lo, hi = eps_hint * 0.98, eps_hint * 1.02
        while both(lo, which) <= delta and lo > 1e-9:
            lo *= 0.9
        while both(hi, which) > delta:
            hi *= 1.1
        while hi - lo > rel * hi:
            mid = 0.5 * (lo + hi)
            if both(mid, which) > delta:
                lo = mid
            else:
                hi = mid
        return lo if which == 0 else hi

    return search(0), (search(1) if ends == "both" else None)
