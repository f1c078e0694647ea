"""Exact lower bound from the pair "victim at x or x', every other user at a third input x''",
seen through three flags per report: for OUE the bits at x, x' and x''; for local hashing
``y = h(x)``, ``y = h(x')``, ``y = h(x'')``.

This is the class of neighbouring pairs Su, Cheng and Wang (arXiv 2504.07414) use for their lower
bound on OUE; the code here is our own. Both randomizers share one structure: with ``r`` the
chance that a flag of an input the user does not hold is set, and ``s`` that the user's own is,

* every other user (at ``x''``): ``a, b ~ Bern(r)``, ``c ~ Bern(s)``, independent;
* the victim at ``x``: ``a ~ Bern(s)``, ``b ~ Bern(r)``, ``c ~ Bern(r)`` (at ``x'``: ``a`` and
  ``b`` swapped), independent

(OUE: ``r = 1/(e^eps0 + 1)``, ``s = 1/2``; OLH over all functions ``[k] -> [g]``: ``r = 1/g``,
``s = e^eps0 / (e^eps0 + g - 1)``: ``h(x), h(x'), h(x'')`` are independent uniform). The other
coordinates of a report are i.i.d. noise for everyone, so the histogram of the eight flag
patterns is a sufficient statistic and its divergence is the pair's exact divergence.

With ``f(1) = s/r``, ``f(0) = (1-s)/(1-r)`` (the victim's likelihood ratio to another user's in
one flag; the ratio in ``c`` is ``1/f(c)``), the pmf of the histogram under the victim at ``x``
is the reference multinomial (all ``n`` users at ``x''``) times ``sum_i f(a_i) / f(c_i) / n``, so

    D = 1/n * E_ref[(df (X - e^eps Y) - kappa_C)_+],
    X = A_1 / f(1) + A_0 / f(0),  Y = B_1 / f(1) + B_0 / f(0),
    kappa_C = (e^eps - 1) f(0) (C / f(1) + (n - C) / f(0)),   df = f(1) - f(0) > 0,

with ``C ~ Bin(n, s)`` the reports with ``c = 1`` and, given ``C``, ``A_1, B_1 ~ Bin(C, r)`` and
``A_0, B_0 ~ Bin(n - C, r)`` independent (the ``a`` / ``b`` flags among the reports with
``c = 1`` / ``c = 0``). Per ``C`` the law of ``X`` (= that of ``Y``) is tabulated on windows,
sorted, and ``E[(X - t)_+]`` read off cumulative sums at every ``t = e^eps y + kappa / df``.
The two directions are equal (swap ``a`` and ``b``).

A lower bound: only outcomes inside the windows are summed (each term is non-negative), and a
relative allowance ``ALLOWANCE`` of the summed magnitudes is subtracted from every tail sum.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.numerics.binomial_blocks import lower_quantile, lower_quantiles
from shuffledp.accountants.numerics.grouped import valid_delta, valid_eps, valid_int
from shuffledp.accountants.numerics.secant import secant_eps
from shuffledp.accountants.numerics.tolerances import TAIL_MIN

__all__ = ["third_flag_rates", "third_flag_delta", "third_flag_lower_eps", "third_flag_cells", "CELL_BUDGET",
           "ALLOWANCE", "AFFORDABLE_CELLS", "CAPPED_CELLS_MAX"]

ALLOWANCE = 1e-9
CELL_BUDGET = 40_000_000   # sum over C of the tabulated (A_1, A_0) cells; beyond, C is narrowed
AFFORDABLE_CELLS = 2_000_000  # best.py runs this bound in full only below this many cells per evaluation
CAPPED_CELLS_MAX = 2 * AFFORDABLE_CELLS  # up to here it runs with its C window cut to AFFORDABLE_CELLS (the
# least likely C values dropped: a lower bound still, at the cost of the largest full evaluation)


def third_flag_cells(n: int, r: float, s: float, delta: float = 1e-6) -> float:
    """Cells one evaluation tabulates (about): C values times the (A_1, A_0) windows per C; the
    cost of :meth:`ThirdFlagPair.delta` is proportional (a sort of the cells per C)."""
    z = math.sqrt(2.0 * math.log(2.0 / (1e-3 * delta)))
    c_width = 2.0 * z * math.sqrt(n * s * (1.0 - s)) + 3.0
    w1 = 2.0 * z * math.sqrt(n * s * r * (1.0 - r)) + 3.0
    w0 = 2.0 * z * math.sqrt(n * (1.0 - s) * r * (1.0 - r)) + 3.0
    return c_width * w1 * w0


def third_flag_rates(mechanism: str, eps0: float, *, g: int | None = None) -> tuple[float, float]:
    """``(r, s)`` of the module docstring for ``oue`` or ``olh`` (hash range ``g``)."""
    e = math.exp(eps0)
    if mechanism == "oue":
        return 1.0 / (e + 1.0), 0.5
    if mechanism == "olh":
        g = valid_int(g, "g", 2)
        return 1.0 / g, e / (e + g - 1.0)
    raise ValueError(f"mechanism must be oue or olh, got {mechanism!r}")


def _window(N: int, p: float, tail: float) -> tuple[int, np.ndarray]:
    """(start, pmf) of ``Bin(N, p)`` on a window holding all but about ``tail`` of its mass."""
    from scipy import stats

    if N == 0:
        return 0, np.ones(1)
    lo = int(max(lower_quantile(tail / 2, N, p) - 1, 0))
    hi = int(min(N - lower_quantile(tail / 2, N, 1.0 - p) + 1, N))
    ks = np.arange(lo, hi + 1, dtype=np.float64)
    return lo, stats.binom.pmf(ks, N, p)


def _windows(Ns, p: float, tail: float) -> list[tuple[int, np.ndarray]]:
    """:func:`_window` of ``Bin(N, p)`` for every count of ``Ns``, each kind of scipy call made once
    for all of them (elementwise: the same numbers as one call per count)."""
    from scipy import stats

    Ns = np.asarray(Ns, dtype=np.int64)
    q_lo = lower_quantiles(tail / 2, Ns, p)
    q_hi = lower_quantiles(tail / 2, Ns, 1.0 - p)
    bounds = []
    for N, a, b in zip(Ns.tolist(), q_lo.tolist(), q_hi.tolist(), strict=True):
        bounds.append((0, 0) if N == 0 else (int(max(a - 1, 0)), int(min(N - b + 1, N))))
    sizes = [hi - lo + 1 for lo, hi in bounds]
    ks = np.concatenate([np.arange(lo, hi + 1, dtype=np.float64) for lo, hi in bounds])
    pmf = np.split(stats.binom.pmf(ks, np.repeat(Ns.astype(np.float64), sizes), p), np.cumsum(sizes)[:-1])
    return [(0, np.ones(1)) if N == 0 else (lo, pm) for N, (lo, _), pm in zip(Ns.tolist(), bounds, pmf, strict=True)]


class ThirdFlagPair:
    """The pair at ``n`` users; :meth:`delta` is a lower bound on its exact divergence."""

    def __init__(self, n: int, r: float, s: float, *, tail: float = 1e-12, budget: int = CELL_BUDGET):
        self.n = valid_int(n, "n", 2)
        if not (0.0 < r < s < 1.0):
            raise ValueError(f"need 0 < r < s < 1, got r={r!r}, s={s!r}")
        self.r, self.s = float(r), float(s)
        self.f1, self.f0 = s / r, (1.0 - s) / (1.0 - r)
        self.df = self.f1 - self.f0
        c_lo, c_pmf = _window(self.n, s, tail)
        cs = np.arange(c_lo, c_lo + c_pmf.size)
        # per C the cells are (window of Bin(C, r)) x (window of Bin(n - C, r)); keep the most
        # likely C values within the budget (dropping outcomes only lowers a lower bound)
        sd = math.sqrt(self.n * r * (1.0 - r))
        z = math.sqrt(2.0 * math.log(2.0 / tail)) + 1.0
        per_c = (2.0 * z * sd + 3.0) ** 2 / 2.0
        keep = max(1, int(budget // per_c))
        if cs.size > keep:
            order = np.argsort(-c_pmf, kind="stable")[:keep]
            order.sort()
            cs, c_pmf = cs[order], c_pmf[order]
        self.cs, self.c_pmf, self.tail = cs, c_pmf, tail
        self.kept_mass = float(c_pmf.sum())
        # eps-independent: the windows of A_1 (= B_1) and A_0 (= B_0) per C
        self._tables = []
        for (lo1, p1), (lo0, p0) in zip(_windows(cs, r, tail), _windows(self.n - cs, r, tail), strict=True):
            self._tables.append((np.arange(lo1, lo1 + p1.size) / self.f1, p1,
                                 np.arange(lo0, lo0 + p0.size) / self.f0, p0))
        self._sorted: dict[int, tuple] = {}

    def _sorted_cells(self, i: int, table) -> tuple:
        """eps-independent, per ``C``: the cells' values ``x`` and masses (row-major), ``x``
        sorted (stable) with its masses, their suffix sums (of ``p`` and ``p x``, summed from the
        largest ``x`` down, as :meth:`_per_c` needs them) and each cell's rank in the sorted order.
        The cells above any threshold are a suffix of the sorted order, and a suffix sum read at
        an index is the same sum of the same terms in the same order as the sum over that suffix
        alone: the numbers are those of sorting and summing the suffix at every eps."""
        got = self._sorted.get(i)
        if got is None:
            v1, p1, v0, p0 = table
            x = v1[:, None] + v0[None, :]
            pp = p1[:, None] * p0[None, :]
            order = np.argsort(x, axis=None, kind="stable")
            xs, ps = x.ravel()[order], pp.ravel()[order]
            t0 = np.concatenate([np.cumsum(ps[::-1])[::-1], [0.0]])
            t1 = np.concatenate([np.cumsum((ps * xs)[::-1])[::-1], [0.0]])
            rank = np.empty(order.size, dtype=np.intp)
            rank[order] = np.arange(order.size)
            got = self._sorted[i] = (x, pp, xs, t0, t1, rank)
        return got

    def _per_c(self, C: int, table, ee: float, i: int | None = None) -> float:
        """``E[(X - e^eps Y - kappa)_+]`` given ``C`` (``kappa`` scaled by ``1/df``). Only the upper
        tail of X (above the smallest threshold) and the lower tail of Y (thresholds below the
        largest x) can contribute: the rest of the cells are skipped (their terms are 0). ``i``:
        the index of ``table`` in this pair's tables (its sorted cells are kept across eps)."""
        v1, p1, v0, p0 = table
        kappa = (ee - 1.0) * self.f0 * (C / self.f1 + (self.n - C) / self.f0) / self.df
        xmin, xmax = v1[0] + v0[0], v1[-1] + v0[-1]
        t_min = ee * xmin + kappa
        if t_min >= xmax:
            return 0.0
        if i is None:
            x = v1[:, None] + v0[None, :]
            pp = p1[:, None] * p0[None, :]
            order = np.argsort(x, axis=None, kind="stable")
            xs = x.ravel()[order]
            ps = pp.ravel()[order]
            t0 = np.concatenate([np.cumsum(ps[::-1])[::-1], [0.0]])
            t1 = np.concatenate([np.cumsum((ps * xs)[::-1])[::-1], [0.0]])
            rank = np.empty(order.size, dtype=np.intp)
            rank[order] = np.arange(order.size)
        else:
            x, pp, xs, t0, t1, rank = self._sorted_cells(i, table)
        # every threshold is at least t_min (x >= xmin, the same rounding), so the cells a
        # threshold reads (x above it) are among the X cells above t_min: suffix sums of the
        # sorted cells. Thresholds computed in sorted order (ee x + kappa is increasing in x) are
        # searched as one sorted array, then read back per cell in row-major order; only those
        # below xmax are read (a prefix of the sorted order).
        thr_sorted = ee * xs + kappa
        m = int(np.searchsorted(thr_sorted, xmax, side="left"))
        idx_sorted = np.searchsorted(xs, thr_sorted[:m], side="right")
        thr_all = ee * x + kappa
        low = thr_all < xmax
        thr = thr_all[low]
        py = pp[low]
        idx = idx_sorted[rank.reshape(x.shape)[low]]
        val = t1[idx] - thr * t0[idx]
        mag = t1[idx] + np.abs(thr) * t0[idx]
        cell = np.maximum(val - ALLOWANCE * mag, 0.0)
        return float(np.dot(py, cell))

    def delta(self, eps: float) -> float:
        """Lower bound on ``D_{e^eps}`` of the pair (exact up to the windows and the allowance)."""
        eps = valid_eps(eps)
        ee = math.exp(min(eps, 700.0))
        total = 0.0
        for i, (C, wc, table) in enumerate(zip(self.cs, self.c_pmf, self._tables, strict=True)):
            total += wc * self._per_c(int(C), table, ee, i)
        return max(total * self.df * (1.0 - ALLOWANCE), 0.0) / self.n


def third_flag_delta(n: int, r: float, s: float, eps: float, **kw) -> float:
    """Lower bound on the shuffled delta at ``eps`` from the third-input pair (module docstring)."""
    return ThirdFlagPair(n, r, s, **kw).delta(eps)


def third_flag_lower_eps(n: int, r: float, s: float, delta: float, top: float, *, rtol: float = 1e-4,
                         guess: float | None = None, **kw) -> float:
    """Largest eps found (a verified point, rounded down) at which the pair's divergence exceeds
    ``delta``: the mechanism is not (eps, delta)-DP for any smaller eps; 0 if none is found.
    ``top``: the randomizer's eps0."""
    delta = valid_delta(delta)
    # windows holding all but 1e-3 delta: what they leave out can only lower the bound (by far
    # less than its eps precision), and the cells grow with the window's width cubed
    kw.setdefault("tail", max(TAIL_MIN, 1e-3 * delta))
    pair = ThirdFlagPair(n, r, s, **kw)

    def fn(e: float) -> float:
        return 0.0 if e >= top else pair.delta(e)

    start = guess if guess is not None and 0 < guess < top else top / 2
    return secant_eps(fn, delta, 0.0, top, start, rtol, side="lower")
