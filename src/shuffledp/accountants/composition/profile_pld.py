"""A dominating privacy-loss distribution built from one round's whole privacy profile
(connect-the-dots), and the exact profile of shuffled binary randomized response at small n.

Why: the dominating pair of :mod:`~shuffledp.accountants.composition.pair_pld` (the "stronger
clone" pair) is loose at small ``n`` (it reveals which reports are clones), and a handful of
profile points (:mod:`~shuffledp.accountants.composition.profile`) loses more with every round.
Here the round's profile ``delta(eps)`` -- an upper bound at every ``eps`` for both directions of
every neighbouring pair: the accountant's own :func:`shuffledp.accountants.best.round_delta`, or at
small ``n`` for binary randomized response the exact one (:func:`binary_profile`) -- is evaluated at
:data:`PROFILE_EVALS` points and turned into one PLD:

1. **A convex curve above the profile.** As a function of ``x = e^eps`` every hockey-stick curve
   ``H(x) = E_P[(1 - x e^-L)_+]`` is convex and decreasing, with ``H(0) = 1``. For ``eps < 0`` the
   identity ``H_{e^-e}(P||Q) = 1 - e^-e + e^-e H_{e^e}(Q||P)`` turns the bound at ``e`` (it holds
   in both directions) into one at ``-e``; an eps0-LDP round has ``H = 0`` at ``x = e^eps0``. The
   lower convex hull of these points lies above the true curve everywhere: at each hull vertex
   the true curve is below the point, and between two vertices a convex function is below its
   chord.
2. **Connect the dots** (Doroshenko, Ghazi, Kamath, Kumar and Manurangsi, PETS 2022; dp_accounting's
   ``create_pmf_pessimistic_connect_dots_fixed_gap``): the hull is read at every multiple of
   ``interval`` on ``[-eps0, eps0]`` and the PLD whose curve is the chord through those values is
   built; its curve is above the hull (a chord of a convex function), hence above the round's
   profile at every eps in both directions: a dominating pair (Zhu, Dong and Wang, AISTATS 2022),
   and dominating pairs compose over adaptive rounds (their Thm. 10). Unlike rounding losses up,
   connect-the-dots does not shift the loss by a grid step per round: the composed eps hardly
   moves between ``interval`` = 1e-3 and 1e-4 (measured: at most 3e-5 relative, T up to 10,000).

Floating point: every profile value is raised by :data:`DELTA_RTOL` before the hull, and the PLD's
infinite mass carries :data:`MASS_ALLOWANCE` per grid point for the masses' rounding.

Exact binary profile: shuffled binary randomized response (k-RR with k = 2) has only the
neighbouring pairs "victim at x or x', ``m`` others at x and ``n - 1 - m`` at x'" for ``m = 0 ..
n - 1``; the count of x-reports is sufficient. :func:`binary_profile` enumerates every ``m``
exactly and takes the largest divergence at each eps (``m`` and ``n - 1 - m`` are each other's
reverse direction, so every direction is covered).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["PROFILE_EVALS", "BINARY_N_MAX", "hull_curve", "profile_points", "pld_from_profile",
           "binary_profile"]

PROFILE_EVALS = 64       # evaluations of the round's profile (one call of the bound each)
BINARY_N_MAX = 1_000     # binary_profile enumerates all n pairs up to here (O(n^2) per eps point)
DELTA_RTOL = 1e-9        # every profile value raised by this relative amount (rounding of the bounds)
MASS_ALLOWANCE = 1e-17   # per grid point: the connect-the-dots masses' rounding, charged as infinite loss
TOP_DELTA = 1e-30        # the profile's points span [0, the eps where it falls below this]


def hull_curve(eps_points, deltas, eps0: float) -> tuple[np.ndarray, np.ndarray]:
    """``(x, H)``: vertices of the lower convex hull, in ``x = e^eps``, of the points the profile
    bounds give (module docstring, step 1): ``(0, 1)``, ``(e^e, delta(e))``, ``(e^-e, 1 - e^-e +
    e^-e delta(e))`` for every given ``e >= 0``, and ``(e^eps0, 0)``. Linear interpolation between
    the vertices is above the true curve of any pair whose profile the points bound."""
    e = np.asarray(eps_points, float)
    d = np.clip(np.asarray(deltas, float) * (1.0 + DELTA_RTOL), 0.0, 1.0)
    if np.any(e < 0) or e.shape != d.shape:
        raise ValueError("eps_points must be >= 0 and match deltas")
    xs = np.concatenate([[0.0], np.exp(-e), np.exp(e), [math.exp(eps0)]])
    ys = np.concatenate([[1.0], -np.expm1(-e) + np.exp(-e) * d, d, [0.0]])
    order = np.lexsort((ys, xs))
    hx: list[float] = []
    hy: list[float] = []
    for x, y in zip(xs[order], ys[order], strict=True):
        if hx and x == hx[-1]:
            continue   # equal x: the smaller H came first
        while len(hx) >= 2 and (hy[-1] - hy[-2]) * (x - hx[-2]) >= (y - hy[-2]) * (hx[-1] - hx[-2]):
            hx.pop()
            hy.pop()
        hx.append(float(x))
        hy.append(float(y))
    return np.array(hx), np.array(hy)


def profile_points(delta_at: Callable[[float], float], eps0: float, count: int = PROFILE_EVALS,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``count`` evaluations of the profile ``delta_at``: evenly spaced on ``[0, top]``, ``top``
    the eps where it falls below :data:`TOP_DELTA` (bisection, its evaluations kept as points)."""
    seen: dict[float, float] = {}

    def at(e: float) -> float:
        if e not in seen:
            seen[e] = float(delta_at(e))
        return seen[e]

    lo, hi = 0.0, float(eps0)
    if at(lo) > TOP_DELTA:
        for _ in range(12):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if at(mid) > TOP_DELTA else (lo, mid)
    for e in np.linspace(0.0, hi, max(2, count - len(seen))):
        at(float(e))
    pts = sorted(seen.items())
    return np.array([p for p, _ in pts]), np.array([v for _, v in pts])


def pld_from_profile(eps_points, deltas, eps0: float, interval: float):
    """dp_accounting's ``PrivacyLossDistribution`` (pessimistic, symmetric) dominating every round
    whose profile, in both directions, is at most ``deltas`` at ``eps_points`` and which is
    eps0-DP (module docstring: hull, then connect-the-dots on the grid ``interval``)."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if not interval > 0.0:
        raise ValueError(f"interval: {interval!r} must be > 0")
    hx, hy = hull_curve(eps_points, deltas, eps0)
    i0, i1 = math.floor(-eps0 / interval), math.ceil(eps0 / interval)
    grid = np.arange(i0, i1 + 1) * interval
    on_grid = np.minimum.accumulate(np.clip(np.interp(np.exp(grid), hx, hy), 0.0, 1.0))
    on_grid = np.minimum(on_grid + MASS_ALLOWANCE * grid.size, 1.0)   # all raised: still monotone
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(interval, i0, i1, on_grid)
    return pld_lib.PrivacyLossDistribution(pmf)


def binary_profile(eps0: float, n: int) -> Callable[[float], float]:
    """``eps -> `` the exact largest delta at ``eps`` of shuffled binary randomized response
    (k-RR, k = 2) over every neighbouring pair (module docstring), ``n <=`` :data:`BINARY_N_MAX`."""
    from scipy import stats

    if not 1 <= n <= BINARY_N_MAX:
        raise ValueError(f"n: {n} outside 1..{BINARY_N_MAX} for the exact binary profile")
    hi = 1.0 / (1.0 + math.exp(-eps0))
    lo = 1.0 - hi
    rows_p, rows_q = [], []
    for m in range(n):   # others: m at x, n - 1 - m at x'; the count of x-reports
        # direct convolution of positive terms: every entry to a few ulps (an FFT would leave
        # absolute errors of 1e-16 on the tiny entries the small deltas are made of)
        others = np.convolve(stats.binom.pmf(np.arange(m + 1), m, hi),
                             stats.binom.pmf(np.arange(n - m), n - 1 - m, lo))
        up, stay = np.append(0.0, others), np.append(others, 0.0)   # victim's report at x / not
        rows_p.append(hi * up + lo * stay)
        rows_q.append(lo * up + hi * stay)
    P, Q = np.array(rows_p), np.array(rows_q)

    def delta_at(eps: float) -> float:
        return float(np.maximum(P - math.exp(eps) * Q, 0.0).sum(axis=1).max())

    return delta_at
