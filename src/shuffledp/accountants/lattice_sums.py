"""Exact decomposed divergence of a pair whose two ratios are independent and live on a lattice.

Setting (the ``m = d`` victim pair of MHM's hash randomizer, :mod:`mhm_randomizer`): under the
blanket one report's ratio to it is ``u = 1 + h j`` under ``x`` and ``v = 1 + h j'`` under ``x'``,
``j, j'`` integers in ``0..K`` drawn *independently* from the same pmf ``pi`` (a report's hashes
under ``x`` and ``x'`` are independent). Given ``N = M + 1`` reports the decomposed divergence is

    D_M = gamma / N * E[(U - e^eps V)_+],   U = N + h S,  V = N + h S',

``S, S'`` independent sums of ``N`` i.i.d. draws of ``pi``. Their law is computed exactly by
convolving ``pi`` into it one report at a time (:class:`LatticeSums`), and the expectation is a
sum over ``S'`` of closed forms in suffix sums of ``S``'s law: for each ``S'`` the ``S`` above the
threshold ``c = e^eps S' + N (e^eps - 1) / h`` contribute ``h (sum p s - c sum p)``.

Errors, charged to the upper bound (the caller's ``M`` window and blocks aside):

* entries below the caller's ``tail`` are dropped from both ends of the law at every step (at
  most ``tail / 4`` per end over the whole run); the missing mass ``1 - sum`` is computed and
  charged at the integrand's largest value ``N (e^eps0 - e^eps)``, for ``S`` and for ``S'``;
* floating point: every computed entry is a sum of products of non-negative numbers, within a
  relative ``(N (nnz + 2) + 2 W) u`` of the exact truncated law (``u`` the unit roundoff, ``nnz``
  the points of ``pi``, ``W`` the window); ``pi`` itself is within ``tv`` (total variation) of
  the exact spread, so the ``N``-fold law is within ``N tv``, charged like the missing mass;
  suffix sums and the threshold's rounding get ``ROUNDING_RTOL`` of the summed magnitudes, the
  threshold itself a slack of ``1e-9`` lattice steps (points that close below it are included,
  their negative contribution charged back).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accountants.decomposition import ROUNDING_RTOL

__all__ = ["LatticeSums", "lattice_cost", "LATTICE_BUDGET"]

UNIT = 2.0 ** -52  # relative spacing of doubles (twice the unit roundoff: generous)
SLACK = 1e-9  # lattice steps below the threshold that are included (their sign is not trusted)
LATTICE_BUDGET = 6e7  # element operations of the convolutions for one accountant (about 0.3 s)


def _z(tail: float) -> float:
    return math.sqrt(2.0 * math.log(2.0 / tail))


def lattice_cost(pi: np.ndarray, n_max: float, tail: float) -> float:
    """Estimated element operations to convolve ``pi`` up to ``n_max`` reports (window of about
    ``2 z sd sqrt(N)`` per step, ``nnz`` products each)."""
    j = np.arange(pi.size, dtype=np.float64)
    mean = float(np.dot(pi, j))
    sd = math.sqrt(max(float(np.dot(pi, (j - mean) ** 2)), 0.0))
    nnz = int(np.count_nonzero(pi))
    return nnz * (2.0 * _z(tail) * sd * (2.0 / 3.0) * n_max ** 1.5 + pi.size * n_max)


class LatticeSums:
    """The law of ``S_N`` (module docstring) for a sorted set of ``N``, with suffix sums.

    ``pi``: the one-report pmf on ``0..K``; ``tv``: a bound on its total-variation distance to the
    exact pmf it stands for (rounding). ``ns``: the report counts wanted (increasing)."""

    def __init__(self, pi: np.ndarray, tv: float, ns, tail: float):
        pi = np.asarray(pi, dtype=np.float64)
        if pi.ndim != 1 or pi.size < 2 or np.any(pi < 0):
            raise ValueError("pi must be a non-negative pmf on 0..K")
        self.K = pi.size - 1
        self.ns = np.asarray(ns, dtype=np.int64)
        if self.ns.size == 0 or self.ns[0] < 1 or np.any(np.diff(self.ns) <= 0):
            raise ValueError("ns must be increasing report counts >= 1")
        self.tv = float(tv)
        self.snap: list[tuple] = []  # per N: (lo, p, T0, T1c, s0, miss, rel)
        self._run(pi, float(tail))

    def _run(self, pi: np.ndarray, tail: float) -> None:
        support = np.flatnonzero(pi)
        coef = pi[support]
        drop = tail / (4.0 * float(self.ns[-1]))  # per end and step
        cur, lo = np.array([1.0]), 0
        want = iter(self.ns.tolist())
        nxt = next(want)
        for step in range(1, int(self.ns[-1]) + 1):
            new = np.zeros(cur.size + self.K)
            for j, c in zip(support.tolist(), coef.tolist(), strict=True):
                new[j:j + cur.size] += c * cur
            cur, lo = _prune(new, lo, drop)
            if step == nxt:
                self.snap.append(self._snapshot(cur, lo, step, support.size))
                nxt = next(want, -1)

    @staticmethod
    def _snapshot(p: np.ndarray, lo: int, N: int, nnz: int) -> tuple:
        rel = (N * (nnz + 2) + 2 * p.size) * UNIT
        s = lo + np.arange(p.size, dtype=np.float64)
        s0 = float(np.dot(p, s) / max(p.sum(), 1e-300))
        T0 = np.append(np.cumsum(p[::-1])[::-1], 0.0)
        T1c = np.append(np.cumsum((p * (s - s0))[::-1])[::-1], 0.0)
        miss = max(1.0 - math.fsum(p.tolist()), 0.0) + 2.0 * rel
        return lo, p, T0, T1c, s0, miss, rel

    def divergence(self, gamma: float, h: float, hi_ratio: float, ee: float, *, upper: bool) -> np.ndarray:
        """``D_M`` (module docstring) for every wanted ``N = M + 1``; ``hi_ratio``: the largest
        ratio ``1 + h K``. ``upper``: with every charge (an upper bound); else a lower bound of
        the computed value without charges (shows the truncation)."""
        out = np.empty(len(self.snap))
        for i, (N, snap) in enumerate(zip(self.ns.tolist(), self.snap, strict=True)):
            out[i] = self._one(N, snap, gamma, h, hi_ratio, ee, upper)
        return out

    def _one(self, N, snap, gamma, h, hi_ratio, ee, upper) -> float:
        lo, p, T0, T1c, s0, miss, rel = snap
        sv = lo + np.arange(p.size, dtype=np.float64)  # S' values, law p
        c = ee * sv + N * (ee - 1.0) / h  # S > c: U > e^eps V
        idx = np.clip(np.ceil(c - SLACK - lo), 0, p.size).astype(np.int64)
        t0, t1 = T0[idx], T1c[idx]
        val = h * (t1 - (c - s0) * t0)
        mag = h * (np.abs(t1) + np.abs(c - s0) * t0)
        allow = (ROUNDING_RTOL + rel) * mag + h * (SLACK + UNIT * np.abs(c)) * t0
        if upper:
            body = float(np.dot(p, np.maximum(val, 0.0) + allow)) * (1.0 + 3.0 * rel)
            worst = max(hi_ratio - ee, 0.0) * N  # the integrand's largest value
            return gamma / N * body + gamma / N * worst * (2.0 * miss + 2.0 * N * self.tv)
        body = float(np.dot(p, np.maximum(val - allow, 0.0))) * (1.0 - 3.0 * rel)
        return gamma / N * max(body, 0.0)


def _prune(new: np.ndarray, lo: int, drop: float) -> tuple[np.ndarray, int]:
    """Drop leading and trailing entries whose cumulative mass is at most ``drop`` per end."""
    head = int(np.searchsorted(np.cumsum(new), drop, side="right"))
    tail = int(np.searchsorted(np.cumsum(new[::-1]), drop, side="right"))
    head = min(head, new.size - 1)
    end = max(new.size - tail, head + 1)
    return new[head:end], lo + head
