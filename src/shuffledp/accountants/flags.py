"""Exact blanket decomposition of four-group pairs whose two flags are independent.

Many randomizers' victim pairs ``(x, x')`` split the outputs by two flags: ``a`` (the output
"favours" ``x``: OLH's ``y = h(x)``, OUE's bit at ``x``) and ``b`` (the same for ``x'``). The
ratio of a row to the blanket is then ``u = u0 + (u1 - u0) a`` under ``x`` and ``v = v0 +
(v1 - v0) b`` under ``x'``. When the blanket draws' two flags are *independent*
(``a ~ Bern(alpha)``, ``b ~ Bern(beta)``), the four groups need no spread
(:func:`~shuffledp.accountants.decomposition.spread_to_three`): given ``N = M + 1`` reports
(``M`` blanket draws and the victim's), the histogram's pmf is the blanket's multinomial times
``gamma (N u0 + (u1 - u0) A) / N`` (resp. ``v`` and ``B``), ``A`` and ``B`` the numbers of reports
with ``a = 1`` and ``b = 1`` (module docstring of :mod:`~shuffledp.accountants.decomposition`).
Under the multinomial ``A ~ Bin(N, alpha)`` and ``B ~ Bin(N, beta)`` are independent, so

    D_M = gamma / N * E[(N (u0 - e^eps v0) + (u1 - u0) A - e^eps (v1 - v0) B)_+],

a sum over ``B`` of closed-form binomial tails in ``A``
(``E[(c A - K)_+] = c N alpha Pr[Bin(N-1, alpha) >= t-1] - K Pr[Bin(N, alpha) >= t]`` with
``t`` the first integer above ``K / c``).

Which randomizers have independent flags:

* local hashing over all functions ``[k] -> [g]`` with the blanket ``1 / (e^eps0 + g - 1)``
  per output (valid for every ``k``): ``h(x)`` and ``h(x')`` independent uniform, so
  ``alpha = beta = 1/g`` -- every ``g``, including binary local hashing (``g = 2``);
* OUE with the blanket ``omega'(y) = Pr[y | all bits Bern(q)] * (1 - p) / (1 - q)``, every row's
  value at ``y`` with its own bit read as 0: at most every row (``p > q``), so a valid blanket
  (Balle et al.'s argument needs only ``omega' <= min_x P[x, .]``), a hair smaller than the
  optimal one (they differ at the all-ones vector only, mass ``(e^eps0 - 1) q^d`` of it), with
  ``alpha = beta = q``.

Errors charged to the upper bound (as in :mod:`decomposition`): the ``M`` window and blocks (the
caller's), ``B`` outside a window holding all but ``tail`` of ``Bin(N, beta)`` (the integrand is at
most the ``P``-likelihood, so at most that mass), and ``ROUNDING_RTOL`` of the summed magnitudes of
every tail sum (a threshold misjudged by floating point moves a term of size at most ``1e-15``
of those magnitudes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from shuffledp.accountants.decomposition import ROUNDING_RTOL, GroupedPair, _t_window

__all__ = ["FlagPair", "flag_pair", "flag_divergence"]


@dataclass(frozen=True)
class FlagPair(GroupedPair):
    """A four-group pair (groups: ``a=1,b=0``; ``a=0,b=1``; ``a=b=1``; ``a=b=0``) with independent
    flags under the blanket. ``u = (u0, u1)``, ``v = (v0, v1)``: the rows' ratios to the blanket.
    ``alt``: another valid decomposition of the same victim pair (e.g. the optimal blanket through
    the three-atom spread); :class:`~shuffledp.accountants.decomposition.DecomposedPair` keeps the
    smaller of the two values (both are upper bounds)."""

    alpha: float = 0.5
    beta: float = 0.5
    u: tuple[float, float] = (1.0, 1.0)
    v: tuple[float, float] = (1.0, 1.0)
    alt: GroupedPair | None = None

    def block_value(self, ms, block_w, ee: float, tail: float, *, upper: bool) -> float:
        """Block-weighted divergence (both directions, the larger) for blanket counts ``ms``."""
        fwd = flag_divergence(ms, self.gamma, self.alpha, self.beta, self.u, self.v, ee, tail, upper=upper)
        best = float(np.dot(block_w, fwd))
        if not (self.alpha == self.beta and self.u == self.v):
            rev = flag_divergence(ms, self.gamma, self.beta, self.alpha, self.v, self.u, ee, tail, upper=upper)
            best = max(best, float(np.dot(block_w, rev)))
        return best


def flag_pair(gamma: float, alpha: float, beta: float, u: tuple[float, float], v: tuple[float, float],
              alt: GroupedPair | None = None) -> FlagPair:
    """The :class:`FlagPair` with its four groups' ``w, p, q`` filled in (``p_g = gamma u_g w_g``)."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"flag probabilities must lie in (0, 1), got {alpha!r}, {beta!r}")
    if not (0.0 < gamma <= 1.0):
        raise ValueError(f"blanket mass must lie in (0, 1], got {gamma!r}")
    flags = ((1, 0), (0, 1), (1, 1), (0, 0))
    w = tuple((alpha if a else 1.0 - alpha) * (beta if b else 1.0 - beta) for a, b in flags)
    p = tuple(gamma * u[a] * wg for (a, _), wg in zip(flags, w, strict=True))
    q = tuple(gamma * v[b] * wg for (_, b), wg in zip(flags, w, strict=True))
    return FlagPair(w, p, q, float(gamma), float(alpha), float(beta), tuple(map(float, u)),
                    tuple(map(float, v)), alt)


def _tail_terms(N, t, alpha):
    """``(Pr[Bin(N, alpha) >= t], N alpha Pr[Bin(N-1, alpha) >= t-1])``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mid = (t >= 1.0) & (t <= N)
        sf = np.where(t <= 0.0, 1.0, np.where(t > N, 0.0, special.betainc(
            np.where(mid, t, 1.0), np.where(mid, N - t + 1.0, 1.0), alpha)))
        mid1 = (t >= 2.0) & (t <= N)
        sf1 = np.where(t <= 1.0, 1.0, np.where(t > N, 0.0, special.betainc(
            np.where(mid1, t - 1.0, 1.0), np.where(mid1, N - t + 1.0, 1.0), alpha)))
    return sf, N * alpha * sf1


def flag_divergence(ms, gamma: float, alpha: float, beta: float, u, v, ee: float, tail: float, *,
                    upper: bool) -> np.ndarray:
    """``D_M`` (module docstring) for every blanket count ``M`` in ``ms``, one direction (``P``
    with ``u`` and ``A``, ``Q`` with ``v`` and ``B``). ``upper``: plus the ``B``-window mass and
    the rounding allowance (an upper bound); else minus the allowance, window only (a lower
    bound of the decomposed value, to show the blocking error)."""
    N = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    cu = float(u[1] - u[0])
    cv = float(v[1] - v[0])
    if cu <= 0.0:
        # the P-likelihood does not grow with A: the positive part needs B small; mirror the flags
        # (a -> 1 - a turns u0 + cu a into u1 - cu a); the formula below needs cu > 0
        if cu == 0.0:
            raise ValueError("the pair's first flag carries no information")
        return flag_divergence(ms, gamma, 1.0 - alpha, 1.0 - beta, (u[1], u[0]), (v[1], v[0]), ee, tail,
                               upper=upper)
    lo, hi, outside = _t_window(N, beta, tail)
    width = int(np.max(hi - lo)) + 1
    B = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
    valid = B <= hi[:, None]
    B = np.where(valid, B, 0.0)
    Nc = N[:, None]
    wB = np.where(valid, stats.binom.pmf(B, Nc, beta), 0.0)
    # (cu A - K)_+ with K = e^eps cv B - N (u0 - e^eps v0)
    K = ee * cv * B - Nc * (u[0] - ee * v[0])
    t = np.floor(K / cu) + 1.0
    t = np.clip(t, 0.0, Nc + 1.0)
    sf, first = _tail_terms(Nc, t, alpha)
    val = cu * first - K * sf
    mag = np.abs(cu * first) + np.abs(K * sf)
    if upper:
        cell = np.maximum(val, 0.0) + ROUNDING_RTOL * mag
    else:
        cell = np.maximum(val - ROUNDING_RTOL * mag, 0.0)
    res = gamma / N * np.sum(wB * cell, axis=1)
    if upper:
        res = res * (1.0 + ROUNDING_RTOL) + outside
    return res
