"""Composition of ``account best`` over T rounds, a fresh shuffle each round.

Each round is the shuffled mechanism whose delta at any eps :func:`best.round_delta` bounds from
above with the bounds of :func:`shuffledp.accountants.best.best_eps` that carry most of its weight
(the blanket decomposition where ``best_eps`` evaluates it, and the variation ratio). Every
evaluated ``(eps_i, round_delta(eps_i))`` is therefore a valid ``(eps_i, delta_i)``-DP guarantee
(both directions of every neighbouring pair): :func:`round_profile` places about one point per
decade of delta (:func:`profile_deltas`) at one evaluation each, plus the pure point
``(eps0, 0)`` (shuffling eps0-LDP reports is eps0-DP). :func:`tradeoff_pair` turns these points
into one discrete dominating pair (the trade-off function they imply together, in the f-DP view of
Dong, Roth and Su), exported as a privacy-loss distribution to dp_accounting (pessimistic:
losses rounded up, both directions) and self-composed T times by its FFT (the truncated tail
added to the infinite mass). The composed eps at ``delta`` is an upper bound for T adaptive
rounds; it is never reported above ``T eps0``.

Floating point: the trade-off lines are ``1 - delta - e^eps alpha``; for delta below
:data:`PROFILE_DELTA_MIN` the double ``1 - delta`` would lose delta's digits (at 1e-20 it is 1,
which would make the round look pure eps-DP: optimistic), so such points are refused, and every
line is rounded against us (intercept down, slope up by two ulps).

Looseness: the pair is the least private one with the computed profile points, so between the
points it is more pessimistic than the round's real profile; more points tighten it.
:func:`composed_from_point` (one point, the (eps, delta) randomized-response pair) is kept as a
reference that the profile pair must not exceed.
"""

from __future__ import annotations

import math
import time

import numpy as np

from shuffledp.accountants.validation import check_delta, check_int

__all__ = ["ROUNDS_MAX", "composed_from_point", "tradeoff_pair", "composed_profile", "composed_eps",
           "profile_deltas", "round_profile"]

ROUNDS_MAX = 10_000
PROFILE_DELTA_MIN = 1e-10  # smaller profile deltas are not used: 1 - delta keeps >= 6 of their digits
PROFILE_POINTS = 16      # at most this many deltas of the round's profile (one forward call each)
SUPPORT_MAX = 2_000_000  # discretisation coarsened so that the composed PLD stays this short
# the profile's decomposition evaluates at most this many blocks of the blanket count (each charged
# at its smallest count: looser points, still guarantees) instead of its cell budget's 100-400: a
# profile point costs a third to a half (subset-exp d = 20, n = 1e4: 0.59 -> 0.24 s for the profile),
# and the composed eps moved by -0.1% to +0.15% (k-RR, OUE, OLH, subset-exp at n = 1e4, T = 10, 100),
# about what the interpolated placements of the points move it by anyway
PROFILE_BLOCKS = 64
TV_EPS = 1e-9  # the total variation is bounded from the delta at this eps (see round_profile)


def composed_from_point(eps1: float, delta1: float, rounds: int, delta: float) -> float:
    """Upper bound on the eps at ``delta`` of ``rounds`` adaptive rounds, each ``(eps1, delta1)``-DP
    (dp_accounting's pessimistic PLD of the randomized-response pair, self-composed); ``inf``
    when the composed infinite mass alone exceeds ``delta``."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    if eps1 <= 0.0:
        eps1 = 0.0
    disc = max(1e-4, 2.0 * rounds * max(eps1, 1e-12) / SUPPORT_MAX)
    one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps1, delta1),
                                      value_discretization_interval=disc)
    if rounds > 1:
        one = one.self_compose(rounds, tail_mass_truncation=min(1e-15, 1e-3 * delta))
    many = one
    return float(many.get_epsilon_for_delta(delta))


def _down(x: float) -> float:
    return math.nextafter(math.nextafter(x, -math.inf), -math.inf)


def _up(x: float) -> float:
    return math.nextafter(math.nextafter(x, math.inf), math.inf)


def tradeoff_pair(points) -> tuple[np.ndarray, np.ndarray]:
    """A dominating pair ``(P, Q)`` of every mechanism that is ``(eps_i, delta_i)``-DP for all the
    given points (both directions).

    Each point means the trade-off function (type II error at type I error ``alpha``) is at least
    ``max(0, 1 - delta_i - e^eps_i alpha, e^-eps_i (1 - delta_i - alpha))`` (Wasserman and Zhou;
    Dong, Roth and Su, Prop. 2.5); all of them together, at least their upper envelope ``f``,
    convex, piecewise linear and symmetric. ``f`` is the trade-off function of a discrete pair:
    one atom per linear piece of slope ``-s`` over a stretch of length ``l`` of ``alpha`` (mass ``l``
    under P, ``s l`` under Q), plus an atom of Q-mass ``1 - f(0)`` that P never outputs. Every
    mechanism with trade-off at least ``f`` is dominated by that pair, and dominance composes
    (Dong, Roth and Su, Thm. 3.2)."""
    lines = []  # (intercept, slope) of f >= intercept - slope * alpha
    for eps, dlt in points:
        if 0.0 < dlt < PROFILE_DELTA_MIN:
            raise ValueError(f"delta {dlt!r} below {PROFILE_DELTA_MIN:g}: 1 - delta would lose its digits")
        ee = math.exp(min(eps, 700.0))
        # every line rounded against us (intercept down, slope up): the envelope only gets lower,
        # i.e. the pair less private
        lines.append((_down(1.0 - dlt), _up(ee)))
        lines.append((_down((1.0 - dlt) / ee), _up(1.0 / ee)))
    lines.append((0.0, 0.0))
    cands = {0.0, 1.0}
    for i, (a1, s1) in enumerate(lines):
        for a2, s2 in lines[i + 1:]:
            if s1 != s2:
                x = (a1 - a2) / (s1 - s2)
                if 0.0 < x < 1.0:
                    cands.add(x)
    xs = np.array(sorted(cands))
    inter = np.array([a for a, _ in lines])
    slope = np.array([sl for _, sl in lines])
    fx = np.max(inter[None, :] - slope[None, :] * xs[:, None], axis=1)
    length = np.diff(xs)
    drop = np.maximum(fx[:-1] - fx[1:], 0.0)
    keep = length > 0
    p = np.append(length[keep], 0.0)
    q = np.append(drop[keep], max(1.0 - fx[0], 0.0))
    return p / p.sum(), q / q.sum()


def composed_profile(points, rounds: int, delta: float, *, discretization: float = 1e-4) -> float:
    """Upper bound on the eps at ``delta`` of ``rounds`` adaptive rounds, each ``(eps_i, delta_i)``-DP
    for every point: the :func:`tradeoff_pair` composed with dp_accounting (pessimistic PLD of the
    pair, both directions; FFT self-composition, truncated tail added to the infinite mass)."""
    from shuffledp.accountants.numerics.hockey_stick import pld_from_pmfs

    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    p, q = tradeoff_pair(points)
    top = max(eps for eps, _ in points)
    disc = max(discretization, 2.0 * rounds * max(top, 1e-12) / SUPPORT_MAX)
    pld = pld_from_pmfs(p, q, discretization=disc, pessimistic=True)
    if rounds > 1:
        pld = pld.self_compose(rounds, tail_mass_truncation=min(1e-15, 1e-3 * delta))
    return float(pld.get_epsilon_for_delta(delta))


def composed_eps(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *, k=None, d=None,
                 s=None, g=None, rtol: float = 1e-5, forward: dict | None = None) -> dict:
    """Upper bound on the eps at ``delta`` of ``rounds`` fresh shuffles of ``n`` reports: one round's
    privacy profile (:func:`round_profile`, and ``(eps0, 0)``), its dominating pair
    (:func:`tradeoff_pair`) composed with dp_accounting; never above ``T eps0``. One round
    (``rounds = 1``) is the forward answer of :func:`best.best_eps` itself. ``forward``: that
    answer when the caller already has it (same mechanism, parameters, eps0, n, delta): at one
    round it is not computed again."""
    from shuffledp.accountants import best
    from shuffledp.accountants import params as query

    start = time.perf_counter()
    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    delta = check_delta(delta)
    kw = {"k": k, "d": d, "s": s, "g": g}
    if rounds == 1:
        one = forward or best.best_eps(mechanism, eps0, n, delta, rtol=rtol, parallel=False, **kw)
        return {"eps": one["eps"], "rounds": 1, "profile": [(one["eps"], delta)],
                "seconds": time.perf_counter() - start}
    eps0, n, delta, _ = query.check_query(mechanism, eps0, n, delta, k)  # the domain, before any work
    # the forward answer is a guarantee at delta: (its eps, delta) is a profile point for free; kept
    # when a bound of the round's own (best.round_delta) gave it, so that the profile's placements,
    # interpolated between known points, follow the function they then evaluate
    own = forward is not None and forward.get("upper_by") in ("decomposition", "variation-ratio")
    known = [(float(forward["eps"]), delta)] if own and 0.0 < forward["eps"] < eps0 else []
    points = [(float(eps0), 0.0), *round_profile(mechanism, eps0, n, delta, rounds, known=known, **kw)]
    eps_t = min(composed_profile(points, rounds, delta), rounds * float(eps0))
    return {"eps": eps_t, "rounds": rounds, "profile": points, "seconds": time.perf_counter() - start}


def round_profile(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *, known=(),
                  **params) -> list:
    """One round's privacy profile as ``(eps, delta_i)`` points, each ``delta_i`` an upper bound at
    ``eps`` (:func:`best.round_delta`: one evaluation per point, no eps search per point), so every point
    is a valid guarantee wherever it lands. ``known``: points the caller has already certified (the
    forward answer ``(eps, delta)`` of :func:`best.best_eps`), kept as they are. The eps at ``delta``
    is located first, unless a known point lies at ``delta`` (a coarse secant search, every
    evaluation kept as a point); then one point near each delta of
    :func:`profile_deltas`, placed by interpolating eps linearly in ``sqrt(log(1/delta))`` between
    the two nearest points already known. A ``delta_i`` below :data:`PROFILE_DELTA_MIN` is raised
    to it (a larger delta is still a guarantee); points with ``delta_i >= 1`` say nothing and are
    left out.

    The decomposition evaluates at most :data:`PROFILE_BLOCKS` blocks of the blanket count here.
    The point at eps = 0 (the total variation) is evaluated at ``TV_EPS`` instead: the
    decomposition at exactly eps = 0, where its spreads tie, costs two to three times as much
    (measured), and ``D_1 <= D_{e^t} + (e^t - 1)`` for any pair (``P(S) - Q(S) <= P(S) - e^t Q(S)
    + (e^t - 1) Q(S)``), so ``delta(TV_EPS) + expm1(TV_EPS)``, rounded up, bounds it."""
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import decomposition as dec
    from shuffledp.accountants.upper import variation_ratio as vr

    tail = max(1e-300, 1e-6 * PROFILE_DELTA_MIN)
    fn = best.round_delta(mechanism, eps0, n, tail, block_cap=PROFILE_BLOCKS, **params)
    seen: dict[float, float] = {float(e): float(v) for e, v in known}

    def at(e: float) -> float:
        if e not in seen:
            seen[e] = fn(e) if e > 0.0 else min(_up(fn(TV_EPS) + math.expm1(TV_EPS)), 1.0)
        return seen[e]

    if at(0.0) > delta and not any(v == delta for v in seen.values()):  # else: TV meets delta, or known
        guess = min(vr.eps_guess(vr.vr_params("general", eps0), n, delta), 0.5 * eps0)
        dec.secant_eps(at, delta, 0.0, float(eps0), guess, 1e-2)
    targets = sorted(profile_deltas(delta, rounds), key=lambda x: abs(math.log(x / delta)))
    for dlt in targets:
        at(_interpolated_eps(seen, dlt, float(eps0)))
    return sorted((e, max(v, PROFILE_DELTA_MIN)) for e, v in seen.items() if v < 1.0)


def _interpolated_eps(seen: dict[float, float], dlt: float, top: float) -> float:
    """The eps where the profile is expected to reach ``dlt``: linear in ``sqrt(log(1/delta))``
    through the two known points nearest to it (a placement only: the point is then evaluated)."""
    def u(x: float) -> float:
        return math.sqrt(math.log(1.0 / x))

    known = sorted(((u(v), e) for e, v in seen.items() if 0.0 < v < 1.0), key=lambda p: abs(p[0] - u(dlt)))
    if len(known) < 2 or known[0][0] == known[1][0]:
        return top if not known else min(top, known[0][1] * u(dlt) / max(known[0][0], 1e-9))
    (u0, e0), (u1, e1) = known[:2]
    e = e0 + (e1 - e0) * (u(dlt) - u0) / (u1 - u0)
    return min(max(e, 0.0), top)


def profile_deltas(delta: float, rounds: int) -> list[float]:
    """The deltas at which one round's eps is computed: powers of ten from 0.1 down to
    ``1e-3 delta / rounds`` (at least :data:`PROFILE_DELTA_MIN`), every decade (or evenly spaced
    decades, at most :data:`PROFILE_POINTS`), and that lowest delta. Below the smallest point the
    pair keeps only the pure point ``(eps0, 0)``: for targets far below it, the composition
    tends to ``T eps0``."""
    low = max(1e-3 * delta / rounds, PROFILE_DELTA_MIN)
    decades = int(math.floor(-math.log10(low)))
    step = max(1, math.ceil(decades / PROFILE_POINTS))
    out = [10.0 ** -j for j in range(1, decades + 1, step)]
    if not out or out[-1] > low:
        out.append(low)
    return out

