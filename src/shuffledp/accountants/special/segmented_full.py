"""The segmented protocol's per-level rates on its FULL output (every user's data and blanket
messages): the worst case over the other users' sets is SEARCHED over a family, not proven; the
evaluation is exact (dense law arrays), so it is for small sizes only. Labelled ``full``; the
workflow's accountant stays ``sound``.

The model is Algorithm 2 with padding sent: every user holds exactly ``s`` items of the ``D`` items
the blankets are drawn over (``D = d + s`` when short sets are padded, ``d`` when every user holds
``s`` real items) and sends each with the rate of its level; every user makes ``ceil(m)`` blanket
trials, each a message to a uniform item of ``D`` with probability ``m / ceil(m)`` (any ``m``,
integer or not). The step evaluated is the paper's: the victim's item ``a`` replaced by ``b``, its
level fixed; a user-level pair of sets (of any sizes, padded to ``s`` items) is at most ``s`` such
steps, and group privacy (:func:`~shuffledp.accountants.special.poisson.single_item_target`) covers
it as for ``sound``.

Proven reductions, for any fixed sets and levels of the others:

1. The victim's other ``s - 1`` messages are independent of the rest and have the same law under
   both datasets: the output with them is the output without them passed through one randomized
   map (add an independent draw of them), so by data processing the divergence without them is at
   least the divergence with them. Dropping them gives an upper bound.
2. An item other than ``a``, ``b`` that no other user holds receives blankets only, after 1;
   given the number of such messages, their split over those items is uniform under both
   datasets. So ``(C_a, C_b, C_c for every item c held by
   another user, N)`` (``N`` the number of messages) is sufficient: its divergence is the full
   output's.
3. The full output is Lemma 2's output plus the others' messages, drawn independently: by data
   processing every configuration's delta is at most ``sound``'s, which is therefore the start
   and the fallback of the rates.
4. The delta is convex in the victim's rate and 0 at rate 0 (joint convexity), hence increasing:
   bisection on the rate is valid.

Searched, not proven: that the worst configuration of the others lies in the family evaluated here,
every other user holding ONE SAME set (containing ``a``, ``b``, both, or neither, its other items
outside ``{a, b}``, each seen on its own count), the others' levels split in every way over the
levels (or, with a fixed level histogram, as it says). The tests hold the family against the exact
enumeration of the full output (tests/_oracle_segmented.py: every set of the others, every level,
every pair) at ``s = 1, 2``, integer and non-integer ``m``: never below it. Summarising the others'
messages outside ``{a, b}`` by their number only is NOT an upper bound at ``s = 2`` (the tests show
it); seeing them item by item, as here, matters.

Condition for a gain: the others' messages blur the count only if each other user sends something
at a rate in ``(0, 1)``. With padding sent every user holds ``s`` items, so this holds whenever the
levels' rates lie in ``(0, 1)``; a level at rate 1 (or 0) may hold every other user, whose count is
then fixed, and the search finds ``sound`` again. If padding were never sent, the others could hold
nothing and send nothing; the family assumes ``s`` sent items per user and would be optimistic
(the tests' mutant).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.special.poisson import single_item_target, solve_poisson_lambda
from shuffledp.accountants.validation import AccountantDomainError, check_int

__all__ = ["CELL_BUDGET", "POSITIONS", "FullRates", "full_cells", "full_delta", "full_rates", "level_splits"]

CELL_BUDGET = 2_000_000     # largest law array (cells) evaluated
POSITIONS = ("a", "b", "ab", "")   # what the others' common set holds of {a, b}
_ALLOWANCE = 1e-12          # relative: floating-point sums of convex combinations (error ~1e-15)


def _trials(m: float) -> tuple[int, float]:
    m = float(m)
    if not (math.isfinite(m) and m >= 0):
        raise AccountantDomainError("m", f"{m!r} must be a finite number >= 0")
    if m == 0:
        return 0, 0.0
    c = math.ceil(m)
    return c, m / c


def _shape(n: int, m: float, s: int, position: str) -> tuple[int, ...]:
    """Axes: a, b, the ``s - |position|`` items c_i, then N."""
    k = 2 + s - len(position)
    t = n * _trials(m)[0]
    return (t + n + 1,) * k + (t + n * s + 1,)


def full_cells(n: int, m: float, s: int) -> int:
    """Cells of the largest law array :func:`full_delta` builds at these sizes."""
    return max(math.prod(_shape(n, m, s, p)) for p in POSITIONS if len(p) <= s)


def _shift(law: np.ndarray, axes) -> np.ndarray:
    """The law of the count vector plus one message on ``axes`` (an item's axis and N)."""
    out = np.zeros_like(law)
    to = [slice(None)] * law.ndim
    fr = [slice(None)] * law.ndim
    for ax in axes:
        to[ax], fr[ax] = slice(1, None), slice(None, -1)
    out[tuple(to)] = law[tuple(fr)]
    return out


def _blanket_law(n: int, m: float, D: int, shape: tuple[int, ...]) -> np.ndarray:
    """Exact law of every user's blanket messages on the axes ``shape`` (the observed items, then N)."""
    k = len(shape) - 1
    trials, g = _trials(m)
    law = np.zeros(shape)
    law[(0,) * len(shape)] = 1.0
    for _ in range(n * trials):
        new = (1 - g) * law + (g * (D - k) / D) * _shift(law, (k,))
        for j in range(k):
            new += (g / D) * _shift(law, (j, k))
        law = new
    return law


def _others_law(n: int, m: float, D: int, s: int, position: str, rates: tuple[float, ...],
                blankets: dict | None = None) -> np.ndarray:
    """Exact law of ``(C_a, C_b, C_c..., N)`` without the victim's message: every user's blanket
    trials, and the others (``rates``, one per other user) each holding ``position`` of ``{a, b}``
    and the same ``s - |position|`` items c_i outside."""
    shape = _shape(n, m, s, position)
    k = len(shape) - 1
    if math.prod(shape) > CELL_BUDGET:
        raise AccountantDomainError("n", f"the full-output law at n = {n}, m = {m}, s = {s} needs "
                                    f"{math.prod(shape):,} cells (budget {CELL_BUDGET:,}): small sizes only")
    blankets = {} if blankets is None else blankets
    if shape not in blankets:
        blankets[shape] = _blanket_law(n, m, D, shape)
    law = blankets[shape]
    held = ([0] if "a" in position else []) + ([1] if "b" in position else []) + list(range(2, k))
    for r in rates:
        for j in held:
            law = (1 - r) * law + r * _shift(law, (j, k))
    return law


def _pair_delta(law: np.ndarray, lam: float, eps: float) -> float:
    """max of both directions of the hockey-stick divergence at ``eps`` between the victim sending
    ``a`` and sending ``b`` with probability ``lam``, the rest of the output ``law``."""
    k = law.ndim - 1
    p = (1 - lam) * law + lam * _shift(law, (0, k))
    q = (1 - lam) * law + lam * _shift(law, (1, k))
    ee = math.exp(eps)
    d1 = float(np.maximum(p - ee * q, 0.0).sum())
    d2 = float(np.maximum(q - ee * p, 0.0).sum())
    return min(1.0, max(d1, d2) + _ALLOWANCE * (1 + ee))


def level_splits(n_others: int, n_levels: int):
    """Every split of ``n_others`` users over ``n_levels`` levels (counts per level)."""
    for cut in itertools.combinations(range(n_others + n_levels - 1), n_levels - 1):
        edges = (-1, *cut, n_others + n_levels - 1)
        yield tuple(edges[i + 1] - edges[i] - 1 for i in range(n_levels))


class _Laws:
    """Cache of the others' laws by (position, sorted rates)."""

    def __init__(self, n, m, D, s):
        self.n, self.m, self.D, self.s = n, m, D, s
        self.cache: dict = {}
        self.blankets: dict = {}

    def get(self, position, rates):
        key = (position, tuple(sorted(float(r) for r in rates)))
        if key not in self.cache and sum(a.size for a in self.cache.values()) > 10 * CELL_BUDGET:
            self.cache.clear()      # memory: at most about ten of the largest arrays kept
        if key not in self.cache:
            self.cache[key] = _others_law(self.n, self.m, self.D, self.s, position, key[1], self.blankets)
        return self.cache[key]


def _configurations(n: int, D: int, s: int, rates, victim_level: int, level_counts):
    """(position, the others' rates) of the family: every position, every split of the others over
    the levels (or the fixed histogram ``level_counts``, the victim's level counted there)."""
    K = len(rates)
    if level_counts is None:
        splits = list(level_splits(n - 1, K))
    else:
        counts = list(level_counts)
        counts[victim_level] -= 1
        splits = [tuple(counts)]
    for position in POSITIONS:
        if len(position) > s or s - len(position) > D - 2:
            continue
        for split in splits:
            yield position, tuple(r for r, c in zip(rates, split, strict=True) for _ in range(c))


def _check(n, m, D, s, rates, level_counts):
    n = check_int(n, "n", 2)
    D = check_int(D, "D", max(2, s))
    s = check_int(s, "s", 1)
    rates = [float(r) for r in rates]
    if any(not (0.0 <= r <= 1.0) for r in rates):
        raise AccountantDomainError("rates", f"{rates} must lie in [0, 1]")
    if level_counts is not None and (len(level_counts) != len(rates) or sum(level_counts) != n):
        raise AccountantDomainError("level_counts", f"{level_counts} must give one count per level, summing to n")
    _trials(m)
    return n, D, s, rates


def full_delta(lam: float, n: int, m: float, D: int, s: int, eps_single: float, rates, victim_level: int = 0,
               *, level_counts=None, _laws=None) -> float:
    """Single-item delta at ``eps_single`` of the victim at ``victim_level`` sending its item with
    probability ``lam``: the largest exact full-output delta over the searched family (every other
    user holding one same set; levels at ``rates``, split in every way, or as ``level_counts``)."""
    n, D, s, rates = _check(n, m, D, s, rates, level_counts)
    if lam <= 0:
        return 0.0
    laws = _laws or _Laws(n, m, D, s)
    return max(_pair_delta(laws.get(pos, rs), float(lam), eps_single)
               for pos, rs in _configurations(n, D, s, rates, victim_level, level_counts))


@dataclass(frozen=True)
class FullRates:
    lambdas: list       # per level: verified against the family at these rates
    sound: list         # the sound accountant's rates (start and fallback)
    improved: list      # per level: above its sound rate
    delta_single: list  # per level: the family's single-item delta at the returned rates


def _largest(fn, target: float, lo: float, rtol: float, hi: float = 1.0) -> float:
    """Largest evaluated x in [lo, hi] with fn(x) <= target (fn increasing; lo is returned when
    nothing above it is found, so fn(lo) <= target is the caller's to know)."""
    if fn(hi) <= target:
        return hi
    if lo <= 0:
        return lo
    a, b = math.log(lo), math.log(hi)
    while b - a > rtol:
        mid = 0.5 * (a + b)
        if fn(math.exp(mid)) <= target:
            a = mid
        else:
            b = mid
    return math.exp(a)


def full_rates(n: int, m: float, D: int, s: int, levels, delta: float, *, level_counts=None, rounds: int = 3,
               rtol: float = 1e-3, passes: int = 5) -> FullRates:
    """Per-level rates meeting user-level ``(E_k, delta)`` on the full output (searched worst case,
    see the module). The levels' rates are coupled (the others' rates are the levels'), so they are
    solved together: start from ``sound`` (sound whatever the others do); each of ``rounds`` rounds
    raises every level's rate to the largest meeting its per-item target against the family with
    the others at the current rates. Then the result is VERIFIED at its own rates (the victim and
    the others of its level at the same rate): a level that fails is lowered to the largest rate
    that passes (at most ``passes`` passes), then falls back to its ``sound`` rate, until every
    level passes or is at its ``sound`` rate."""
    levels = [float(e) for e in levels]
    n, D, s, _ = _check(n, m, D, s, [0.0] * len(levels), level_counts)
    K = len(levels)
    sound = [solve_poisson_lambda(n, m, D, s, e, delta).lam for e in levels]
    targets = [single_item_target(e, delta, s) for e in levels]
    laws = _Laws(n, m, D, s)

    def dv(v, x, rates, own=True):
        """The family's delta of a victim at level v and rate x, the others at ``rates`` (their
        level v at x too when ``own``)."""
        r = list(rates)
        if own:
            r[v] = x
        return full_delta(x, n, m, D, s, targets[v][0], r, v, level_counts=level_counts, _laws=laws)

    def fails(v, lam):
        return lam[v] > sound[v] and dv(v, lam[v], lam) > targets[v][1]

    lam = list(sound)
    for _ in range(rounds):
        new = [_largest(lambda x, v=v, cur=tuple(lam): dv(v, x, cur, own=False), targets[v][1], sound[v], rtol)
               for v in range(K)]
        if new == lam:
            break
        lam = new
    for _ in range(passes):
        bad = [v for v in range(K) if fails(v, lam)]
        if not bad:
            break
        for v in bad:
            lam[v] = _largest(lambda x, v=v: dv(v, x, lam), targets[v][1], sound[v], rtol, hi=lam[v])
    changed = True
    while changed:      # the guarantee: every level verified at the final rates, or at its sound rate
        changed = False
        for v in range(K):
            if fails(v, lam):
                lam[v], changed = sound[v], True
    return FullRates(lam, sound, [a > b for a, b in zip(lam, sound, strict=True)],
                     [dv(v, lam[v], lam) for v in range(K)])
