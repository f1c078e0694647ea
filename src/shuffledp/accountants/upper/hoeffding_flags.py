"""Negatively dependent flags bounded through Hoeffding's theorem: cheap where the exact sums are not.

:mod:`~shuffledp.accountants.upper.dependent_flags` evaluates the four groups of a pair with negatively
dependent flags exactly, summing over the reports fixed at ``(1, 0)``; that costs a window of them
times a window of the other flag per blanket count, which at tiny delta (wide windows) and
thousands of reports no longer fits the time budget. There the three-atom spread answered, up to
1.6% above the exact value in eps. This module gives an upper bound at the cost of one flag pair
(:mod:`~shuffledp.accountants.upper.flags`).

Given ``N`` blanket draws with flag masses ``w = (w10, w01, w11, w00)``, condition on the count
``B`` of draws with ``b = 1`` (``B ~ Bin(N, w01 + w11)``). Given ``B = b`` the draws are
independent: each of the ``b`` has ``a = 1`` with probability ``a1 = w11 / (w11 + w01)``, each of
the other ``N - b`` with ``a0 = w10 / (w10 + w00)``, so ``A`` is a sum of independent Bernoulli
variables with mean probability ``p_b = a0 + (a1 - a0) b / N``. Hoeffding's theorem (1956, Thm. 3:
for convex ``f``, ``E f(S) <= E f(Bin(N, p))`` with ``p`` the mean probability) applied to
``f(A) = ((u1 - u0) A - K(b))_+`` (convex, and non-decreasing, so any probability above ``p_b``
bounds it too: ``p_b`` is rounded up) gives

    D_M <= gamma / N * sum_b Pr[B = b] E[((u1 - u0) Bin(N, p_b) - K(b))_+],

each term :mod:`flags`' closed form (:func:`flags._phi`) with its own ``alpha = p_b``. The bound
adds ``(u1 - u0)^2 (a0 - a1)^2 b (N - b) / N`` to the variance of the sum given ``b``: small where
the dependence is weak (:func:`added_variance`, compared with the spread's by the caller).

Errors charged, as in :mod:`flags`: ``B`` outside a window holding all but ``tail`` (there the
integrand is at most ``N u1``: at most ``gamma u1`` times that mass), the binomial pmf's tolerance
(:func:`lower_bounds.binom_rtol`) and ``phi``'s own allowances.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accountants.numerics.grouped import ROUNDING_RTOL, bernstein_half_width, t_window
from shuffledp.accountants.numerics.lattice_sums import UNIT
from shuffledp.accountants.numerics.tolerances import binom_rtol
from shuffledp.accountants.upper.flags import _phi

__all__ = ["hoeffding_divergence", "jensen_lower", "added_variance", "hoeffding_cells"]

CHUNK_CELLS = 1 << 16  # cells evaluated at once (memory)


def _rates(w) -> tuple[float, float, float]:
    """``(wb, a1, a0)``: the mass of ``b = 1`` and ``Pr[a = 1]`` given ``b = 1`` and given ``b = 0``."""
    w10, w01, w11, w00 = w
    return w01 + w11, w11 / (w11 + w01), w10 / (w10 + w00)


def added_variance(w, u, gamma: float) -> float:
    """Variance the bound adds per report to a report's contribution ``gamma (u - e^eps v)`` (in
    the units of :func:`~shuffledp.accountants.upper.decomposition.spread_to_three`'s): ``gamma^2 (u1 -
    u0)^2 (a0 - a1)^2 wb (1 - wb)`` (the expectation of ``b (N - b) / N`` is ``(N - 1) wb (1 - wb)``)."""
    wb, a1, a0 = _rates(w)
    return (gamma * (u[1] - u[0]) * (a0 - a1)) ** 2 * wb * (1.0 - wb)


def hoeffding_cells(w, n_top: float, tail: float) -> float:
    """Cells of one blanket count: the width of ``B``'s window at ``n_top`` reports."""
    return 2.0 * float(bernstein_half_width(n_top, _rates(w)[0], tail)) + 3.0


def _b_chunks(Ns: np.ndarray, wb: float, window, *, up: bool):
    """``(slice, N, B, Pr[B])`` over chunks of the counts ``Ns`` (about :data:`CHUNK_CELLS` cells
    each): ``B ~ Bin(N, wb)`` on its ``window`` (``(lo, hi, ...)`` of :func:`t_window`; entries past
    a row's window carry mass 0), the pmf rounded up (``up``) or down by
    :func:`lower_bounds.binom_rtol`."""
    from scipy import stats

    lo, hi = window[0], window[1]
    width = int(np.max(hi - lo)) + 1
    j = np.arange(width, dtype=np.float64)[None, :]
    step = max(1, CHUNK_CELLS // width)
    for a in range(0, Ns.size, step):
        sl = slice(a, a + step)
        N = Ns[sl][:, None]
        B = lo[sl][:, None] + j
        valid = B <= hi[sl][:, None]
        B = np.where(valid, B, lo[sl][:, None])
        pB = np.where(valid, stats.binom.pmf(B, N, wb), 0.0) * (1.0 + (1.0 if up else -1.0) * binom_rtol(N, wb))
        yield sl, N, B, pB


def hoeffding_divergence(ms, gamma: float, w, u, v, ee: float, tail: float) -> np.ndarray:
    """Upper bound on ``D_M`` (module docstring) for every blanket count ``M`` in ``ms``, one
    direction (``P`` with ``u`` and flag ``a``, ``Q`` with ``v`` and flag ``b``; ``w = (w10, w01,
    w11, w00)``, ``u1 > u0``)."""
    if not u[1] > u[0]:
        raise ValueError(f"the first flag must raise the ratio (u1 > u0), got {u!r}")
    wb, a1, a0 = _rates(w)
    Ns = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    # p_b rounded up: a1, a0 and the interpolation are each within a few units of their size
    slack = 8.0 * UNIT * (a0 + abs(a1 - a0))
    window = t_window(Ns, wb, tail)
    res = np.empty_like(Ns)
    for sl, N, B, pB in _b_chunks(Ns, wb, window, up=True):
        alpha = np.minimum(a0 + (a1 - a0) * (B / N) + slack, 1.0)
        res[sl] = np.sum(pB * _phi(N, B, alpha, u, v, ee, True), axis=1)
    return gamma / Ns * res * (1.0 + ROUNDING_RTOL) + gamma * u[1] * window[2]


def jensen_lower(ms, gamma: float, w, u, v, ee: float, tail: float) -> np.ndarray:
    """A lower bound on ``D_M`` (one direction) to pair with :func:`hoeffding_divergence`: given
    ``B = b``, Jensen's inequality (``x -> x_+`` convex) puts ``E[((u1 - u0) A - K(b))_+]`` above
    ``((u1 - u0) E[A | b] - K(b))_+`` with ``E[A | b] = b a1 + (N - b) a0``; ``B`` outside its window
    is dropped and the rounding allowances subtracted (each term is non-negative). Loose, but below
    the decomposed value, so the lower side never passes the upper one."""
    wb, a1, a0 = _rates(w)
    cu, cv = float(u[1] - u[0]), float(v[1] - v[0])
    Ns = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    res = np.empty_like(Ns)
    for sl, N, B, pB in _b_chunks(Ns, wb, t_window(Ns, wb, tail), up=False):
        mean = cu * (B * a1 + (N - B) * a0)
        shift = N * (u[0] - ee * v[0])
        val = mean + shift - ee * cv * B
        mag = np.abs(mean) + np.abs(shift) + ee * abs(cv) * B
        res[sl] = np.sum(pB * np.maximum(val - 1e-12 * mag, 0.0), axis=1)
    return gamma / Ns * res * (1.0 - ROUNDING_RTOL)
