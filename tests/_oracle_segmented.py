"""Exact law of the FULL output of the segmented protocol (Algorithm 2 with padding sent) at small
sizes, and the exact delta of every neighbouring pair the protocol's relation allows.

The server sees the shuffled messages of every user (data and blankets) and the level histogram.
Messages are bare items, so the shuffled sequence is equivalent to its histogram (the count of
every item of the domain the messages are drawn from: ``D = d + s`` with padding, ``d`` without);
the level histogram is the same for both datasets of a pair (levels are fixed), so the delta of a
pair is the hockey-stick divergence of the two histograms' laws.

The law is built from the protocol's own code: which items a user holds and sends is
``poisson_set.protocol_sets`` (padding) and ``poisson_set.item_level_counts`` (the count sampler's
input), exactly what :func:`shuffledp.protocols.segmented.run_segmented` calls; the rest is the
law of ``sample_counts`` (every held item a Bernoulli(lambda of its user's level) message to its
own bin; ``n ceil(m)`` blanket trials, each a message to a uniform bin of ``D`` with probability
``m / ceil(m)``), built by exact mixing over an array of count vectors (floating point, convex
combinations only: relative error ~1e-15). ``tests/test_segmented_padding.py`` checks that the
protocol's samplers draw from this law.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from shuffledp.accountants.numerics.hockey_stick import hockey_stick_symmetric
from shuffledp.mechanisms import poisson_set as ps


def _add_trial(law: np.ndarray, probs: dict[int, float]) -> np.ndarray:
    """The law of the count vector after one more trial sending to bin j with probability
    ``probs[j]`` (nothing with the rest)."""
    stay = 1.0 - sum(probs.values())
    out = law * stay
    for j, p in probs.items():
        if p == 0:
            continue
        sl_to = [slice(None)] * law.ndim
        sl_from = [slice(None)] * law.ndim
        sl_to[j], sl_from[j] = slice(1, None), slice(None, -1)
        out[tuple(sl_to)] += p * law[tuple(sl_from)]
    return out


def base_law(n: int, m: float, domain: int, cap: int) -> np.ndarray:
    """The law of the blanket counts of all ``n`` users (data-independent)."""
    law = np.zeros((cap + 1,) * domain)
    law[(0,) * domain] = 1.0
    trials, gamma = ps.blanket_trials(m)
    for _ in range(n * trials):
        law = _add_trial(law, {j: gamma / domain for j in range(domain)})
    return law


def add_users(law: np.ndarray, sets: np.ndarray, levels: np.ndarray, lambdas, d: int, padding: bool) -> np.ndarray:
    """``law`` convolved with the data messages of the users ``sets`` (rows as the experiments hold
    them: items then -1) at ``levels``, through the protocol's own padding and item counts."""
    if len(sets) == 0:
        return law
    held, domain = ps.protocol_sets(np.asarray(sets, dtype=np.int64).reshape(len(sets), -1), d, padding)
    lam = np.asarray(lambdas, dtype=float)
    cjk = ps.item_level_counts(held, np.asarray(levels, dtype=np.int64), domain, lam.size)
    for j in range(domain):
        for k in range(lam.size):
            for _ in range(int(cjk[j, k])):
                law = _add_trial(law, {j: float(lam[k])})
    return law


def universe(d: int, s: int, padding: bool) -> list[tuple[int, ...]]:
    """Every set a user may hold, as a row of ``s`` entries (sorted items, then -1): with padding any
    set of 0..s items of ``[d]``, without exactly ``s`` items."""
    sizes = range(0, s + 1) if padding else (s,)
    return [tuple(c) + (-1,) * (s - len(c)) for k in sizes for c in itertools.combinations(range(d), k)]


def full_law(n: int, m: float, d: int, s: int, lambdas, others, victim: tuple[int, ...], victim_level: int,
             padding: bool) -> np.ndarray:
    """The law of the full output with the victim holding ``victim`` and ``others`` a list of
    (level, set) of the other ``n - 1`` users."""
    domain = d + s if padding else d
    cap = n * (s + ps.blanket_trials(m)[0])
    law = base_law(n, m, domain, cap)
    sets = np.array([st for _, st in others] + [victim], dtype=np.int64).reshape(n, s)
    levels = np.array([lv for lv, _ in others] + [victim_level], dtype=np.int64)
    return add_users(law, sets, levels, lambdas, d, padding)


def differ_in_one_item(x, y, d: int, padding: bool) -> bool:
    """The protocol's held sets of the two rows differ by one substituted item."""
    a, _ = ps.protocol_sets(np.array([x]), d, padding)
    b, _ = ps.protocol_sets(np.array([y]), d, padding)
    return len(set(a[0].tolist()) - set(b[0].tolist())) == 1


def neighbour_deltas(n: int, m: float, d: int, s: int, lambdas, eps_of_level, padding: bool = True,
                     others_levels=None):
    """Yield ``(victim level, others, x, x', one_item, delta)`` for every neighbouring pair the
    relation allows at these sizes: every multiset of the other users' (level, set), every victim
    level, every two distinct sets of the universe; ``delta`` the exact delta of the full output
    at ``eps_of_level(level, one_item)``. The law of the blankets plus the others is shared by the
    victim's sets."""
    K = len(lambdas)
    sets = universe(d, s, padding)
    levels = range(K) if others_levels is None else others_levels
    types = [(lv, st) for lv in levels for st in sets]
    domain = d + s if padding else d
    cap = n * (s + ps.blanket_trials(m)[0])
    base = base_law(n, m, domain, cap)
    for others in itertools.combinations_with_replacement(types, n - 1):
        arr = np.array([st for _, st in others], dtype=np.int64).reshape(n - 1, s)
        law_o = add_users(base, arr, np.array([lv for lv, _ in others]), lambdas, d, padding)
        for vl in range(K):
            laws = {x: add_users(law_o, np.array([x]), np.array([vl]), lambdas, d, padding).ravel() for x in sets}
            for x, y in itertools.combinations(sets, 2):
                one = differ_in_one_item(x, y, d, padding)
                eps = eps_of_level(vl, one)
                yield vl, others, x, y, one, hockey_stick_symmetric(laws[x], laws[y], eps)


def check_total(law: np.ndarray) -> None:
    assert math.isclose(float(law.sum()), 1.0, rel_tol=1e-12)
