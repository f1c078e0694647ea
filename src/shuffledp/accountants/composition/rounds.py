"""Composition of T shuffle rounds (a fresh shuffle each round, adaptive): the tightest sound
answer of several, and the composed privacy-loss distribution for dp_accounting users.

Candidates, each an upper bound on the eps at ``delta`` of T adaptive rounds:

* ``pld`` -- the privacy-loss distribution of one round's dominating pair
  (:mod:`~shuffledp.accountants.composition.pair_pld`: exact per cell, losses rounded up), self-composed T
  times by dp_accounting (FFT; the truncated tails added to the infinite mass);
* ``curve`` -- one round's whole privacy profile (the exact one for binary randomized response
  at small n, or at tiny n and domain the exact largest over every neighbouring pair
  (:mod:`~shuffledp.accountants.composition.enumerated`), else the accountant's
  :func:`shuffledp.accountants.best.round_delta`), turned into a
  dominating PLD by connect-the-dots (:mod:`~shuffledp.accountants.composition.profile_pld`) and
  self-composed T times: the tight candidate at small n;
* ``profile`` -- one round's privacy profile from the decomposition (tighter than the pair for
  many randomizers at one round), turned into one dominating pair and composed
  (:func:`shuffledp.accountants.composition.profile.composed_profile`); evaluated for ``T <=``
  :data:`PROFILE_ROUNDS_MAX` only, where it can win;
* ``advanced`` -- the advanced composition theorem (Dwork, Rothblum and Vadhan; Kairouz, Oh and
  Viswanath's statement) applied to the project's own one-round guarantee ``eps1`` of
  :func:`shuffledp.accountants.best.best_eps` at ``delta1 = delta / (2T)``:
  ``sqrt(2 T log(2/delta)) eps1 + T eps1 (e^eps1 - 1)`` at ``T delta1 + delta/2 = delta``;
* ``basic`` -- ``T eps1`` (the same ``eps1``, total delta ``delta/2``), and ``T eps0`` (pure).

The answer is their minimum (every one sound, so the minimum is), with the name of the candidate
that gave it (``by``); at one round it is the forward answer of ``best_eps`` itself, or the curve
where the round's profile is exact (it can only be lower there). It is never
above the advanced or basic composition of the project's own one-round eps, by construction.

Grid of the PLD: the losses are rounded up to multiples of ``interval``; each round then adds at
most ``interval`` to the composed loss (on average half of it), so ``interval`` is chosen to keep
``T * interval`` below :data:`SHIFT_RTOL` of an estimate of the answer (the normal approximation
from the loss's mean and spread), unless that would make the composed distribution longer than
:data:`BINS_MAX` points (then the shift is larger, still sound).
"""

from __future__ import annotations

import math
import time

import numpy as np

from shuffledp.accountants.validation import check_delta, check_int

__all__ = ["ROUNDS_MAX", "round_loss", "round_pld", "composed_pld", "mixed_pld", "advanced_eps", "composed_eps",
           "round_curve", "composed_curve_eps"]

ROUNDS_MAX = 10_000
PROFILE_ROUNDS_MAX = 100  # the profile pair is evaluated up to this T (above, the pair's PLD wins)
BINS_MAX = 2_000_000      # the composed PLD is kept this short (FFT time)
SHIFT_RTOL = 2e-3         # T * interval is kept below this fraction of the estimated answer
INTERVAL_MAX = 1e-4       # and the interval no coarser than dp_accounting's default
CURVE_INTERVAL_MAX = 1e-2  # the curve's connect-the-dots grid (no per-round shift: coarser is fine)
CURVE_RTOL = 1e-3          # its step about this fraction of the answer per sqrt(round)
CURVE_POINTS_MAX = 200_000  # its one-round grid at most 2x this many points
# where every neighbouring pair is enumerated, the pair's PLD and the profile pair are not evaluated:
# each dominates the exact profile the curve is built from (measured 1.2-2x above the curve at
# T = 10 to 10,000, OUE d = 2, 3, OLH g = 3, k-RR k = 3, n = 12), and they cost twice the rest
EXACT_SKIP = "not evaluated: a dominating pair of the exact one-round profile the curve composes"
# above this n the curve is not evaluated: 64 evenly spaced profile points lose against the pair's
# own PLD there (OUE d = 100, n = 1e5, T = 1,000: 2.12 against 1.35) and cost seconds
CURVE_N_MAX = 5_000


def _checked(mechanism: str, eps0, n, delta, params: dict) -> tuple[float, int, float, dict]:
    """The domain of ``account best`` (its flags, eps0 up to ``BEST_EPS0_MAX``), checked before any
    work; returns the randomizer's parameters with defaults filled in."""
    from shuffledp.accountants import best
    from shuffledp.accountants import params as query
    from shuffledp.accountants.validation import check_choice, check_eps0, check_n

    check_choice(mechanism, "mechanism", best.MECHANISMS)
    eps0 = check_eps0(eps0, upper=query.BEST_EPS0_MAX)
    n, delta = check_n(n), check_delta(delta)
    return eps0, n, delta, best.mechanism_params(mechanism, eps0, **params)


def _tail(delta: float, rounds: int) -> float:
    """The windows' left-out mass per round: far below ``delta / rounds``."""
    return min(1e-16, max(1e-250, 1e-6 * delta / rounds))


def round_loss(eps0: float, n: int, *, delta: float = 1e-6, rounds: int = 1):
    """One round's dominating pair as exact losses and masses (:func:`pair_pld.pair_loss`), its
    windows sized for ``rounds`` rounds at ``delta``."""
    from shuffledp.accountants.composition.pair_pld import pair_loss

    return pair_loss(eps0, n, tail=_tail(delta, rounds))


def _interval(loss, rounds: int, delta: float) -> float:
    mean, sd = loss.moments()
    z = math.sqrt(2.0 * math.log(1.0 / delta))
    estimate = max(rounds * mean + z * math.sqrt(rounds) * sd, 1e-12)
    spread = max(float(loss.losses.max() - loss.losses.min()), 1e-12)
    width = min(rounds * spread, rounds * mean + 2.0 * (z + 8.0) * math.sqrt(rounds) * sd + spread)
    return min(INTERVAL_MAX, max(SHIFT_RTOL * estimate / rounds, width / BINS_MAX))


def round_pld(mechanism: str, eps0: float, n: int, *, interval: float = 1e-4, k: int | None = None,
              d: int | None = None, s: int | None = None, g: int | None = None, tail: float = 1e-16):
    """dp_accounting's ``PrivacyLossDistribution`` of one shuffle round of ``mechanism``
    (pessimistic, both directions): compose it with other mechanisms' PLDs of the same
    ``interval`` (``pld.compose(other)``), or ``self_compose(T)``. Every randomizer of the
    accountant is dominated by the same pair (:mod:`~shuffledp.accountants.composition.pair_pld`); its flags
    are checked."""
    from shuffledp.accountants.composition.pair_pld import pair_loss, pair_pld

    eps0, n, _, _ = _checked(mechanism, eps0, n, 1e-6, {"k": k, "d": d, "s": s, "g": g})
    return pair_pld(pair_loss(eps0, n, tail=tail), interval)


def composed_pld(mechanism: str, eps0: float, n: int, rounds: int, *, delta: float = 1e-6,
                 interval: float | None = None, k: int | None = None, d: int | None = None,
                 s: int | None = None, g: int | None = None):
    """dp_accounting's ``PrivacyLossDistribution`` of ``rounds`` adaptive shuffle rounds (one
    round's pair self-composed; pessimistic). ``delta``: the smallest delta the caller will query
    (the windows and truncations are sized for it); ``interval``: the grid (default: chosen for
    ``rounds`` and ``delta`` as :func:`composed_eps` does). Returns ``(pld, interval)``."""
    from shuffledp.accountants.composition.pair_pld import pair_pld

    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    eps0, n, delta, _ = _checked(mechanism, eps0, n, delta, {"k": k, "d": d, "s": s, "g": g})
    loss = round_loss(eps0, n, delta=delta, rounds=rounds)
    step = _interval(loss, rounds, delta) if interval is None else float(interval)
    one = pair_pld(loss, step)
    if rounds == 1:
        return one, step
    return one.self_compose(rounds, tail_mass_truncation=min(1e-15, 1e-4 * delta)), step


def mixed_pld(rounds_of: list, *, delta: float = 1e-6):
    """dp_accounting's ``PrivacyLossDistribution`` of several kinds of shuffle rounds:
    ``rounds_of`` lists ``(mechanism, eps0, n, count, flags)``; each kind's pair self-composed
    ``count`` times, all composed together on one grid (chosen as :func:`composed_pld` does, for the
    total number of rounds)."""
    from shuffledp.accountants.composition.pair_pld import pair_pld

    total = sum(int(c) for *_, c, _ in rounds_of)
    total = check_int(total, "rounds", 1, ROUNDS_MAX)
    losses = []
    for mechanism, eps0, n, count, flags in rounds_of:
        check_int(count, "count", 1, ROUNDS_MAX)
        eps0, n, delta, _ = _checked(mechanism, eps0, n, delta, flags)
        losses.append((round_loss(eps0, n, delta=delta, rounds=total), count))
    step = min(_interval(loss, total, delta) for loss, _ in losses)
    out = None
    for loss, count in losses:
        one = pair_pld(loss, step)
        one = one if count == 1 else one.self_compose(count, tail_mass_truncation=min(1e-15, 1e-4 * delta))
        out = one if out is None else out.compose(one, tail_mass_truncation=min(1e-15, 1e-4 * delta))
    return out


def _exact_binary(mechanism: str, n: int, params: dict) -> bool:
    """Binary randomized response at small n: its exact profile is enumerated."""
    from shuffledp.accountants.composition.profile_pld import BINARY_N_MAX

    return mechanism == "krr" and params.get("k") == 2 and n <= BINARY_N_MAX


def _enumerated(mechanism: str, eps0: float, n: int, params: dict, domain) -> bool:
    """Every neighbouring pair is enumerated at this tiny n (:mod:`.enumerated`): the exact profile."""
    from shuffledp.accountants.composition import enumerated

    known = {**params, "domain": domain} if mechanism == "olh" and domain is not None else params
    return enumerated.applies(mechanism, eps0, n, known)


def _curve_applies(mechanism: str, eps0: float, n: int, kw: dict, domain) -> bool:
    """The curve candidate is evaluated where it can beat the pair's PLD: where the round's profile
    is exact (binary, or every pair enumerated) or includes the decomposition (``best.evaluated_at``)."""
    from shuffledp.accountants import best

    if _exact_binary(mechanism, n, kw) or _enumerated(mechanism, eps0, n, kw, domain):
        return True
    return mechanism != "general" and n <= CURVE_N_MAX and best.evaluated_at(mechanism, "decomposition", n)


def round_curve(mechanism: str, eps0: float, n: int, *, delta: float = 1e-6, rounds: int = 1, domain=None,
                **kw) -> tuple[np.ndarray, np.ndarray]:
    """One round's profile as ``(eps points, deltas)``, every delta an upper bound at its eps for
    both directions of every neighbouring pair: the exact binary profile (k-RR, k = 2, small n), the
    exact profile of every enumerated pair (:func:`.enumerated.exact_profile`, tiny n and domain;
    :func:`.enumerated.profile_on_grid` where the laws are too many to keep) or
    :func:`shuffledp.accountants.best.round_delta` (:mod:`~shuffledp.accountants.composition.profile_pld`)."""
    from shuffledp.accountants import best
    from shuffledp.accountants.composition import enumerated, profile_pld

    filled = best.mechanism_params(mechanism, eps0, **kw)
    if _exact_binary(mechanism, n, filled):
        fn = profile_pld.binary_profile(eps0, n)
    elif _enumerated(mechanism, eps0, n, filled, domain):
        known = {**filled, "domain": domain} if mechanism == "olh" and domain is not None else filled
        if not enumerated.stored(mechanism, eps0, n, known):   # too many laws to keep: on a fixed grid
            return enumerated.profile_on_grid(mechanism, eps0, n, known)
        fn = enumerated.exact_profile(mechanism, eps0, n, known)
    else:
        fn = best.round_delta(mechanism, eps0, n, _tail(delta, rounds), domain=domain, **kw)
    return profile_pld.profile_points(fn, eps0)


def composed_curve_eps(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *,
                       estimate: float | None = None, domain=None, **kw) -> tuple[float, float]:
    """``(eps, interval)``: the connect-the-dots PLD of one round's whole profile
    (:func:`round_curve`, :func:`profile_pld.pld_from_profile`) self-composed ``rounds`` times. Its
    grid: :data:`INTERVAL_MAX` or finer, about :data:`CURVE_RTOL` of the answer per sqrt(round)
    (``estimate``: an upper bound on the answer already known), at least ``eps0`` /
    :data:`CURVE_POINTS_MAX`."""
    from shuffledp.accountants.composition import profile_pld

    eps_pts, deltas = round_curve(mechanism, eps0, n, delta=delta, rounds=rounds, domain=domain, **kw)
    est = estimate if estimate is not None and math.isfinite(estimate) else rounds * eps0
    step = min(CURVE_INTERVAL_MAX, max(eps0 / CURVE_POINTS_MAX, CURVE_RTOL * est / math.sqrt(rounds)))
    one = profile_pld.pld_from_profile(eps_pts, deltas, eps0, step)
    many = one if rounds == 1 else one.self_compose(rounds, tail_mass_truncation=min(1e-15, 1e-4 * delta))
    return float(many.get_epsilon_for_delta(delta)), step


def advanced_eps(eps1: float, rounds: int, delta_slack: float) -> float:
    """The advanced composition theorem: ``rounds`` adaptive ``(eps1, delta1)``-DP mechanisms are
    ``(this, rounds * delta1 + delta_slack)``-DP."""
    return math.sqrt(2.0 * rounds * math.log(1.0 / delta_slack)) * eps1 + rounds * eps1 * math.expm1(eps1)


def composed_eps(mechanism: str, eps0: float, n: int, delta: float, rounds: int, *, k=None, d=None,
                 s=None, g=None, domain=None, rtol: float = 1e-5, forward: dict | None = None,
                 candidates: tuple[str, ...] = ("pld", "curve", "profile", "advanced")) -> dict:
    """Upper bound on the eps at ``delta`` of ``rounds`` fresh shuffles of ``n`` reports (module
    docstring): ``{"eps", "by", "rounds", "candidates": {name: eps}, "eps1": the one-round eps at
    delta/(2T) or None, "interval", "profile", "seconds"}``. ``forward``: :func:`best.best_eps`'s
    answer at ``delta`` when the caller has it (one round: the answer itself). ``candidates``:
    which of ``pld``, ``curve``, ``profile``, ``advanced`` (with basic) to evaluate. ``domain``: the
    size of the input domain where known (passed to the one-round bounds; unknown: the bounds that
    need a third input refuse)."""
    from shuffledp.accountants import best
    from shuffledp.accountants import params as query
    from shuffledp.accountants.composition import profile as profile_mod
    from shuffledp.accountants.composition.pair_pld import N_MAX

    start = time.perf_counter()
    rounds = check_int(rounds, "rounds", 1, ROUNDS_MAX)
    delta = check_delta(delta)
    kw = {"k": k, "d": d, "s": s, "g": g}
    eps0, n, delta, filled = _checked(mechanism, eps0, n, delta, kw)
    out = {"rounds": rounds, "candidates": {}, "eps1": None, "interval": None, "profile": None, "skipped": {}}
    if rounds == 1:
        one = forward or best.best_eps(mechanism, eps0, n, delta, rtol=rtol, parallel=False, domain=domain, **kw)
        out["candidates"]["one-round"] = float(one["eps"])
        if "curve" in candidates and (_exact_binary(mechanism, n, filled)    # an exact profile can win here
                                      or _enumerated(mechanism, eps0, n, filled, domain)):
            out["candidates"]["curve"], out["curve_interval"] = composed_curve_eps(
                mechanism, eps0, n, delta, 1, estimate=float(one["eps"]), domain=domain, **kw)
        by = min(out["candidates"], key=lambda name: (out["candidates"][name], name))
        out.update(eps=out["candidates"][by], by=by, seconds=time.perf_counter() - start)
        return out
    cand = out["candidates"]
    cand["pure"] = rounds * float(eps0)
    if _enumerated(mechanism, eps0, n, filled, domain):   # the curve of the exact profile: the others lose
        out["skipped"] = {name: EXACT_SKIP for name in ("pld", "profile") if name in candidates}
        candidates = tuple(name for name in candidates if name not in ("pld", "profile"))
    if "pld" in candidates and n <= N_MAX:
        pld, step = composed_pld(mechanism, eps0, n, rounds, delta=delta, **kw)
        cand["pld"] = float(pld.get_epsilon_for_delta(delta))
        out["interval"] = step
    if "profile" in candidates and rounds <= PROFILE_ROUNDS_MAX:
        prof = profile_mod.composed_eps(mechanism, eps0, n, delta, rounds, rtol=rtol, forward=forward, **kw)
        cand["profile"] = float(prof["eps"])
        out["profile"] = prof["profile"]
    if "curve" in candidates and _curve_applies(mechanism, eps0, n, filled, domain):
        est = min(cand.values())
        cand["curve"], out["curve_interval"] = composed_curve_eps(mechanism, eps0, n, delta, rounds, estimate=est,
                                                                  domain=domain, **kw)
    if "advanced" in candidates and delta / (2 * rounds) >= query.BEST_DELTA_MIN:
        # the one-round eps at delta/(2T) is at least the true one there, which is at least the true
        # one at delta, which is at least the forward answer's lower bound: where the answer is
        # already below both compositions of that lower bound, they cannot win (not evaluated)
        low = float(forward["eps_lower"]) if forward and forward.get("eps_lower") else 0.0
        floor = min(advanced_eps(low, rounds, delta / 2), rounds * low)
        if low > 0.0 and min(cand.values()) <= floor:
            out["skipped"] |= {"advanced": "not evaluated: at least " + repr(advanced_eps(low, rounds, delta / 2)),
                              "basic": "not evaluated: at least " + repr(rounds * low)}
        else:
            one = best.best_eps(mechanism, eps0, n, delta / (2 * rounds), rtol=rtol, parallel=False,
                                domain=domain, **kw)
            eps1 = out["eps1"] = float(one["eps"])
            cand["advanced"] = advanced_eps(eps1, rounds, delta / 2)
            cand["basic"] = rounds * eps1
    by = min(cand, key=lambda name: (cand[name], name))
    out.update(eps=cand[by], by=by, seconds=time.perf_counter() - start)
    return out
