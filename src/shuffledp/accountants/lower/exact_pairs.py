"""Lower bounds from exact real pairs seen through group counts: the victim at ``x`` or ``x'``,
every other user at one value (``x``, ``x'`` or a third one). The counts of three groups are a
post-processing of the shuffled output, so their exact divergence (truncated windows and the
rounding allowance only lower it) is a lower bound on the real pair's, and on the mechanism's
delta at that eps. Built on :mod:`shuffledp.accountants.numerics.grouped`."""

from __future__ import annotations

import math
from functools import lru_cache

from shuffledp.accountants.numerics.grouped import (
    EPS_CAP,
    CountTable,
    GroupedPair,
    divergence_given_count,
    pair_is_mirror,
    swapped_pair,
    valid_delta,
    valid_eps,
    valid_eps0,
    valid_int,
)
from shuffledp.accountants.numerics.secant import asymptotic_guess, secant_eps
from shuffledp.accountants.numerics.tolerances import TAIL_MIN

__all__ = ["pair_delta", "krr_pair_lower_delta", "krr_pair_lower_eps", "pair_lower_eps"]


def pair_delta(eps: float, n: int, victim_p, victim_q, others, *, tail: float = 1e-60) -> float:
    """Lower bound on ``D_{e^eps}`` of a real neighbouring pair whose ``n - 1`` other users all
    hold one value: the exact divergence of the group counts ``(H_1, H_2, H_3)``.

    ``victim_p`` / ``victim_q``: the victim's probabilities of groups 1, 2, 3 under its two
    inputs; ``others``: one other user's group probabilities. The counts are a post-processing
    of the shuffled output, so their divergence lower-bounds the real pair's; when the outputs
    within each group are exchangeable for everyone (k-RR with the others all at ``x`` or
    ``x'``, or k = 3) it *is* the real pair's divergence. Truncated t-windows only lower it, and
    the rounding allowance is subtracted: a lower bound.
    """
    n = valid_int(n, "n", 2)
    eps = valid_eps(eps)
    g = GroupedPair(tuple(others), tuple(victim_p), tuple(victim_q), 1.0)
    ee = math.exp(min(eps, EPS_CAP))
    s = others[0] + others[1]
    table = _pair_table(n - 1, float(s), float(tail))
    best = 0.0
    # the mirror image (groups 1 and 2 relabelled) of the swapped pair is the pair itself
    for h in ((g,) if pair_is_mirror(g) else (g, swapped_pair(g))):
        best = max(best, float(divergence_given_count(table, h, others[0] / s, ee, upper=False)[0]))
    return best


@lru_cache(maxsize=16)
def _pair_table(N: int, s: float, tail: float) -> CountTable:
    return CountTable([N], s, tail)


def _krr_configs(k: int, eps0: float):
    e = math.exp(eps0)
    p = e / (e + k - 1.0)
    q = 1.0 / (e + k - 1.0)
    rest = max(0.0, 1.0 - p - q)
    vic_p, vic_q = (p, q, rest), (q, p, rest)
    configs = {"others_at_x": (p, q, rest), "others_at_x'": (q, p, rest)}
    if k >= 3:
        configs["others_at_third"] = (q, q, max(0.0, 1.0 - 2.0 * q))
    return vic_p, vic_q, configs


def krr_pair_lower_delta(k: int, eps0: float, n: int, eps: float) -> tuple[float, str]:
    """Largest exact-pair divergence over the searched configurations of the other users
    (all at the victim's ``x``, all at ``x'``, all at a third value); returns ``(delta, config)``.

    The others-at-a-third-value pair is the one the worst-pair split search
    (:func:`shuffledp.accountants.lower.lower_bounds.krr_worst_pair`, which sees the count of one
    value only) does not cover; :mod:`shuffledp.accountants.best` takes the larger of the two.
    """
    k = valid_int(k, "k", 2)
    eps0 = valid_eps0(eps0)
    vic_p, vic_q, configs = _krr_configs(k, eps0)
    best, which = 0.0, next(iter(configs))
    for name, oth in configs.items():
        d = pair_delta(eps, n, vic_p, vic_q, oth)
        if d > best:
            best, which = d, name
    return best, which


@lru_cache(maxsize=64)
def krr_pair_lower_eps(k: int, eps0: float, n: int, delta: float, *, rtol: float = 1e-5
                       ) -> tuple[float, str]:
    """Largest eps found (rounded down, a verified point) at which a searched real pair has
    divergence above ``delta``: the mechanism is not (eps, delta)-DP for any smaller eps.

    Others at a third value are searched first; another configuration is searched only if it
    exceeds ``delta`` at the eps found so far (any configuration gives a valid lower bound).
    Truncated t-windows only lower the value. Kept per arguments (the decomposition's starting
    point and the third-value lower bound ask the same search at every point of a comparison).
    """
    k = valid_int(k, "k", 2)
    eps0 = valid_eps0(eps0)
    n = valid_int(n, "n", 2)
    delta = valid_delta(delta)
    vic_p, vic_q, configs = _krr_configs(k, eps0)
    guess = min(eps0 / 2, asymptotic_guess(k, eps0, n, delta))
    order = sorted(configs, key=lambda nm: nm != "others_at_third")
    return pair_lower_eps(vic_p, vic_q, {nm: configs[nm] for nm in order}, n, delta, eps0,
                          rtol=rtol, guess=guess)


def pair_lower_eps(vic_p, vic_q, configs: dict, n: int, delta: float, top: float, *,
                   rtol: float = 1e-5, guess: float | None = None) -> tuple[float, str]:
    """Largest eps found (a verified point, rounded down) at which one of the real pairs
    ``configs`` (name -> one other user's probabilities of three groups, the victim's being
    ``vic_p`` / ``vic_q``) has a group-count divergence above ``delta`` (:func:`pair_delta`);
    ``(0, name)`` if none does at any eps > 0 searched. ``top``: the randomizer's eps0 (no pair
    exceeds it). Configurations are searched in the given order; a later one is searched only if
    it exceeds ``delta`` at the eps found so far (any configuration gives a valid lower bound)."""
    n = valid_int(n, "n", 2)
    delta = valid_delta(delta)
    tail = max(TAIL_MIN, 1e-3 * rtol * delta)
    best, which = 0.0, next(iter(configs))
    start = guess if guess is not None and 0 < guess < top else top / 2
    for name, oth in configs.items():
        def fn(e, oth=oth):
            return 0.0 if e >= top else pair_delta(e, n, vic_p, vic_q, oth, tail=tail)
        if best > 0 and fn(best) <= delta:
            continue
        e = secant_eps(fn, delta, best, top, max(start, best) if best == 0 else best, rtol, side="lower")
        if e > best:
            best, which = e, name
    return best, which
