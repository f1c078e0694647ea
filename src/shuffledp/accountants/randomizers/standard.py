"""Finite-output local randomizers for the blanket-decomposition accountant.

Each randomizer comes twice: as an explicit output matrix (rows: inputs, columns: outputs) for
small instances, which :func:`~shuffledp.accountants.upper.decomposition.grouped_pairs` reduces
mechanically, and as its grouped victim pairs computed in closed form (``*_pairs``) for sizes whose
matrix would not fit in memory. The tests check that the two agree.

* **k-subset exponential mechanism** (PrivSet, Wang et al. 2018; the Subexp baselines of the
  segmented paper): inputs are ``s``-item sets of ``D = d + s`` items, the output is a ``k``-subset
  ``z`` with probability ``e^eps0 / Omega`` if ``z`` meets the input, ``1 / Omega`` otherwise,
  ``Omega = C(d, k) + (C(D, k) - C(d, k)) e^eps0``. The accountant takes *every* ``s``-subset of the
  ``D`` items as a possible input, a superset of PrivSet's padded sets (a user's items padded with
  dummy items), so its bound covers them. Blanket ``1 / Omega`` on every output (each ``k``-subset
  misses some input when ``k <= d``); a victim pair with overlap ``c = |x ∩ x'|`` has four groups
  (``z`` meets both, only ``x``, only ``x'``, neither); every ``c`` in ``0..s-1`` is a pair.
* **Optimized unary encoding** (OUE, Wang et al. 2017): input ``x`` in ``[d]``, output a bit vector,
  bit ``x`` is 1 with probability 1/2, every other bit with ``1 / (e^eps0 + 1)``. Blanket: the
  smallest row at each output (the all-ones vector is the one output where it is not the
  "bit at 0" row). Four groups by the victim's two bits; :func:`oue_pairs` evaluates them exactly
  under a slightly smaller blanket whose bits are independent (:mod:`~shuffledp.accountants.upper.flags`).
* **Local hashing** (OLH, Wang et al. 2017) over the family of *all* functions ``[k] -> [g]``:
  output ``(h, y)``, ``y`` is ``h(x)`` with probability ``e^eps0 / (e^eps0 + g - 1)``, any other
  value with ``1 / (e^eps0 + g - 1)``. For that family ``h(x)`` and ``h(x')`` are independent and
  uniform, so the groups do not depend on ``k`` (a smaller family with other collision rates is a
  different randomizer and is not covered).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from shuffledp.accountants.numerics.grouped import GroupedPair, valid_eps0, valid_int
from shuffledp.accountants.upper.dependent_flags import DependentFlagPair
from shuffledp.accountants.upper.flags import flag_pair

__all__ = [
    "subset_exp_matrix",
    "subset_exp_pairs",
    "oue_matrix",
    "oue_pairs",
    "oue_optimal_pairs",
    "olh_matrix",
    "olh_pairs",
    "olh_default_g",
    "real_pair_configs",
    "coarse_three",
]

MATRIX_MAX_CELLS = 4_000_000


def _guard(rows: int, cols: int) -> None:
    if rows * cols > MATRIX_MAX_CELLS:
        raise ValueError(f"the output matrix would have {rows} x {cols} cells; use the *_pairs form")


def _groups(w, p, q, gamma) -> GroupedPair:
    """A grouped pair; fewer than three groups are padded with empty ones (as grouped_pairs does)."""
    w, p, q = list(w), list(p), list(q)
    while len(w) < 3:
        w.append(0.0)
        p.append(0.0)
        q.append(0.0)
    return GroupedPair(tuple(float(x) for x in w), tuple(float(x) for x in p),
                       tuple(float(x) for x in q), float(gamma))


# --------------------------------------------------------------------------- subset exponential
def _check_subset(d: int, s: int, k: int) -> tuple[int, int, int]:
    d = valid_int(d, "d", 2)
    s = valid_int(s, "s", 1)
    k = valid_int(k, "k", 1)
    if k >= d:
        raise ValueError(f"k must be smaller than d (every output must miss some input), got k={k}, d={d}")
    return d, s, k


def subset_exp_matrix(d: int, s: int, k: int, eps0: float) -> np.ndarray:
    """Output matrix over every ``s``-subset (rows, lexicographic) and ``k``-subset (columns)."""
    d, s, k = _check_subset(d, s, k)
    eps0 = valid_eps0(eps0)
    big = d + s
    ins = list(itertools.combinations(range(big), s))
    outs = list(itertools.combinations(range(big), k))
    _guard(len(ins), len(outs))
    e = math.exp(eps0)
    omega = math.comb(d, k) + (math.comb(big, k) - math.comb(d, k)) * e
    mat = np.empty((len(ins), len(outs)))
    for i, x in enumerate(ins):
        xs = set(x)
        mat[i] = [(e if xs.intersection(z) else 1.0) / omega for z in outs]
    return mat


def subset_exp_pairs(d: int, s: int, k: int, eps0: float) -> list[GroupedPair]:
    """Grouped pairs of the k-subset exponential mechanism, one per overlap ``c`` of the victim's
    two sets (both directions are the same pair by symmetry of the counts)."""
    d, s, k = _check_subset(d, s, k)
    eps0 = valid_eps0(eps0)
    big = d + s
    e = math.exp(eps0)
    total = math.comb(big, k)
    miss_one = math.comb(d, k)  # k-subsets missing a given s-set
    # every ratio below is an exact integer division (correctly rounded, no overflow for huge counts)
    omega = miss_one / total + (total - miss_one) / total * e  # Omega / C(D, k)
    out = []
    for c in range(0, s):
        union = 2 * s - c
        if union > big:
            continue
        n00 = math.comb(big - union, k)           # misses both
        n01 = miss_one - n00                      # misses x, meets x'
        n10 = miss_one - n00                      # meets x, misses x'
        n11 = total - 2 * miss_one + n00          # meets both
        counts = (n10, n01, n11, n00)
        u = (e, 1.0, e, 1.0)
        v = (1.0, e, e, 1.0)
        keep = [i for i, cnt in enumerate(counts) if cnt > 0]
        w = [counts[i] / total for i in keep]
        p = [u[i] * w[j] / omega for j, i in enumerate(keep)]
        q = [v[i] * w[j] / omega for j, i in enumerate(keep)]
        if len(keep) == 4 and n10 * n01 > n11 * n00:
            # the two flags (meets x's set, meets x''s) are negatively dependent (exact integers):
            # the four groups are evaluated without a spread where that is affordable
            out.append(DependentFlagPair(tuple(w), tuple(p), tuple(q), 1.0 / omega, (1.0, e), (1.0, e)))
        else:
            out.append(_groups(w, p, q, 1.0 / omega))
    return out


# --------------------------------------------------------------------------- unary encoding
def _oue_rates(eps0: float) -> tuple[float, float]:
    return 0.5, 1.0 / (math.exp(eps0) + 1.0)


def oue_matrix(d: int, eps0: float) -> np.ndarray:
    """Output matrix of OUE: rows the ``d`` inputs, columns the ``2^d`` bit vectors (bit j of the
    column index is bit j of the vector)."""
    d = valid_int(d, "d", 2)
    eps0 = valid_eps0(eps0)
    _guard(d, 2 ** d)
    p, q = _oue_rates(eps0)
    bits = (np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1
    mat = np.empty((d, 2 ** d))
    for x in range(d):
        prob = np.where(bits == 1, q, 1.0 - q)
        prob[:, x] = np.where(bits[:, x] == 1, p, 1.0 - p)
        mat[x] = prob.prod(axis=1)
    return mat


OUE_ALT_GAIN = 1e-6  # the optimal blanket is evaluated too when it is this much heavier (relative)


def oue_pairs(d: int, eps0: float) -> list[GroupedPair]:
    """Victim pair of OUE (every pair of inputs is equivalent by symmetry), evaluated exactly: the
    blanket ``base(y) (1 - p) / (1 - q)`` has independent flags (:mod:`~shuffledp.accountants.upper.flags`);
    when the optimal blanket (:func:`oue_optimal_pairs`, heavier at the all-ones vector by
    ``(e^eps0 - 1) q^d``) is more than ``OUE_ALT_GAIN`` heavier, its three-atom spread is
    evaluated too and the smaller value kept."""
    d = valid_int(d, "d", 2)
    eps0 = valid_eps0(eps0)
    p, q = _oue_rates(eps0)
    full = oue_optimal_pairs(d, eps0)[0]
    sub = (1.0 - p) / (1.0 - q)
    e = (1.0 - q) / q  # = e^eps0: p / q over (1 - p) / (1 - q)
    alt = full if full.gamma > sub * (1.0 + OUE_ALT_GAIN) else None
    return [flag_pair(sub, q, q, (1.0, e), (1.0, e), alt=alt)]


def oue_optimal_pairs(d: int, eps0: float) -> list[GroupedPair]:
    """Grouped pair of OUE under its optimal blanket (four groups, flags not independent)."""
    d = valid_int(d, "d", 2)
    eps0 = valid_eps0(eps0)
    p, q = _oue_rates(eps0)
    r1, r0 = p / q, (1.0 - p) / (1.0 - q)  # row / base ratio with the row's own bit at 1 / 0
    # blanket = base(y) * r0 when y has a zero bit, base(y) * r1 for the all-ones vector
    m11 = r0 * q * q * (1.0 - q ** (d - 2))   # victim bits (1, 1), some other bit 0: (u, v) = (e, e)
    m_all = r1 * q ** d                       # all ones: (u, v) = (1, 1)
    m10 = r0 * q * (1.0 - q)                  # (1, 0): (e, 1)
    m01 = m10                                 # (0, 1): (1, e)
    m00 = r0 * (1.0 - q) ** 2                 # (0, 0): (1, 1)
    e = r1 / r0
    gamma = m11 + m_all + m10 + m01 + m00
    masses = (m10, m01, m11, m00 + m_all)
    u = (e, 1.0, e, 1.0)
    v = (1.0, e, e, 1.0)
    keep = [i for i, m in enumerate(masses) if m > 0]
    w = [masses[i] / gamma for i in keep]
    pp = [u[i] * masses[i] for i in keep]
    qq = [v[i] * masses[i] for i in keep]
    return [_groups(w, pp, qq, gamma)]


# --------------------------------------------------------------------------- local hashing
def olh_default_g(eps0: float) -> int:
    """OLH's variance-optimal hash range ``round(e^eps0 + 1)`` (at least 2)."""
    return max(2, int(round(math.exp(valid_eps0(eps0)) + 1.0)))


def olh_matrix(k: int, g: int, eps0: float) -> np.ndarray:
    """Output matrix of OLH over all ``g^k`` functions ``[k] -> [g]``: rows the ``k`` inputs,
    columns ``(h, y)`` in the order ``h * g + y`` (``h`` indexes the functions lexicographically)."""
    k = valid_int(k, "k", 2)
    g = valid_int(g, "g", 2)
    eps0 = valid_eps0(eps0)
    nfun = g ** k
    _guard(k, nfun * g)
    e = math.exp(eps0)
    hi, lo = e / (e + g - 1.0), 1.0 / (e + g - 1.0)
    funcs = np.array(list(itertools.product(range(g), repeat=k)))  # (nfun, k): h(x) = funcs[h, x]
    mat = np.empty((k, nfun * g))
    ys = np.arange(g)
    for x in range(k):
        hit = funcs[:, x][:, None] == ys[None, :]
        mat[x] = (np.where(hit, hi, lo) / nfun).ravel()
    return mat


def olh_pairs(g: int, eps0: float, k: int | None = None) -> list[GroupedPair]:
    """Grouped pair of OLH over all functions ``[k] -> [g]``.

    ``k=None``: the blanket ``1 / (e^eps0 + g - 1)`` per output, valid for every input domain
    (it is at most every row). With ``k`` given, the exact blanket of the matrix: the ``g`` outputs
    ``(h, y)`` with ``h`` constant at ``y`` have every row at its larger value, which the blanket
    then takes (their share, ``g^-(k-1)`` of the outputs, vanishes with ``k``).
    ``k=None`` gives a :class:`~shuffledp.accountants.upper.flags.FlagPair` (independent flags: exact
    sums, no spread); with ``k`` the four groups go through the spread.
    """
    g = valid_int(g, "g", 2)
    eps0 = valid_eps0(eps0)
    e = math.exp(eps0)
    lo = 1.0 / (e + g - 1.0)
    if k is None:
        # h(x), h(x') and y independent uniform under the blanket: independent flags, exact sums
        return [flag_pair(g * lo, 1.0 / g, 1.0 / g, (1.0, e), (1.0, e))]
    # absolute blanket masses of the groups, per uniform (h, y): h(x), h(x') independent uniform
    both = lo / g  # the g^(k-1) outputs with h(x) = h(x') = y, each lo / g^k
    all_hit = 0.0
    if k is not None:
        k = valid_int(k, "k", 2)
        share = float(g) ** (2 - k)  # of those, the g with h constant at y
        all_hit = e * both * share   # their blanket is e * lo
        both = both * (1.0 - share)
    x_only = (g - 1.0) * lo / g
    neither = (g - 1.0) ** 2 * lo / g
    masses = (x_only, x_only, both, neither + all_hit)
    u = (e, 1.0, e, 1.0)
    v = (1.0, e, e, 1.0)
    gamma = sum(masses)
    keep = [i for i, m in enumerate(masses) if m > 0]
    w = [masses[i] / gamma for i in keep]
    p = [u[i] * masses[i] for i in keep]
    q = [v[i] * masses[i] for i in keep]
    return [_groups(w, p, q, gamma)]


# --------------------------------------------------------------------------- real pairs (lower bounds)
def _subset_exp_groups(e: float, d, s, k) -> tuple[tuple[float, ...], tuple[float, ...] | None]:
    """``(victim_p, third)`` of :func:`real_pair_configs` for subset-exp (``e = e^eps0``):
    ``third`` is None when the domain leaves no third set disjoint from both inputs."""
    third = None
    d, s, k = _check_subset(d, s, k)
    big = d + s
    if big < 2 * s:
        raise ValueError(f"d: {d} items leave no two disjoint sets of s = {s}")
    total = math.comb(big, k)
    # counts relative to C(D, k): exact integer divisions (no overflow for huge counts)
    omega = math.comb(d, k) / total + (total - math.comb(d, k)) / total * e
    miss1, miss2, miss3 = (math.comb(big - j * s, k) if big - j * s >= 0 else 0 for j in (1, 2, 3))
    only = miss1 - miss2              # meets x, misses x'
    both = total - 2 * miss1 + miss2  # meets both
    vic_p = (e * (only / total) / omega, (only / total) / omega, e * (both / total) / omega,
             (miss2 / total) / omega)
    if big >= 3 * s:
        # a third set x'' disjoint from both: split each group by meeting x'' (weight e) or not
        only_miss3 = miss2 - miss3                   # meets x, misses x' and x''
        only_meet3 = only - only_miss3
        both_miss3 = miss1 - 2 * miss2 + miss3       # meets x and x', misses x''
        both_meet3 = both - both_miss3
        neither_meet3 = miss2 - miss3
        o_only = (e * (only_meet3 / total) + only_miss3 / total) / omega
        third = (o_only, o_only, (e * (both_meet3 / total) + both_miss3 / total) / omega,
                 (e * (neither_meet3 / total) + miss3 / total) / omega)
    return vic_p, third


def real_pair_configs(mechanism: str, eps0: float, *, d: int | None = None, s: int | None = None,
                      k: int | None = None, g: int | None = None):
    """Four output groups of a real neighbouring pair, for exact lower bounds.

    The victim holds ``x`` or ``x'`` (disjoint sets for subset-exp). Groups: outputs favouring
    ``x`` only (1), ``x'`` only (2), both (3), neither (4) -- for subset-exp: the output meets
    ``x`` only, ``x'`` only, both, neither; OUE: the bits at ``x`` and ``x'`` are (1, 0), (0, 1),
    (1, 1), (0, 0); OLH: ``y`` equals ``h(x)`` only, ``h(x')`` only, both, neither. Returns
    ``(victim_p, victim_q, {config: others})``: the victim's group probabilities under its two
    inputs and, per configuration of the other users (all at ``x``, all at ``x'``, all at a third
    input disjoint from both), one other user's. Each user's group is an independent draw with
    these laws, so the counts' exact divergence is that of a post-processing of the real shuffled
    output: a lower bound on the mechanism's privacy loss. :func:`coarse_three` merges groups 3
    and 4 (both have likelihood ratio 1 for the victim) for :func:`exact_pairs.pair_delta`; an
    exact four-count version was measured to move the lower eps by less than 1e-5 relative (OUE,
    OLH, subset-exp at n = 1000, eps0 in {1, 3}) at 100 times the cost, so it is not kept.
    """
    eps0 = valid_eps0(eps0)
    e = math.exp(eps0)
    configs: dict[str, tuple[float, ...]] = {}
    third = None
    if mechanism == "subset-exp":
        vic_p, third = _subset_exp_groups(e, d, s, k)
    elif mechanism == "oue":
        d = valid_int(d, "d", 2)
        p, q = _oue_rates(eps0)
        vic_p = (p * (1.0 - q), (1.0 - p) * q, p * q, (1.0 - p) * (1.0 - q))
        if d >= 3:
            third = (q * (1.0 - q), q * (1.0 - q), q * q, (1.0 - q) ** 2)
    elif mechanism == "olh":
        g = valid_int(g, "g", 2)
        hi, lo = e / (e + g - 1.0), 1.0 / (e + g - 1.0)
        apart = (g - 1.0) / g  # Pr[h(x) != h(x')]
        vic_p = (hi * apart, lo * apart, hi / g, 1.0 - (hi + lo) * apart - hi / g)
        third = ((g - 1.0) / g ** 2, (g - 1.0) / g ** 2, 1.0 / g ** 2, (g - 1.0) ** 2 / g ** 2)
    else:
        raise ValueError(f"mechanism must be subset-exp, oue or olh, got {mechanism!r}")
    vic_q = (vic_p[1], vic_p[0], vic_p[2], vic_p[3])
    configs["others_at_x"] = vic_p
    configs["others_at_x'"] = vic_q
    if third is not None:
        configs["others_at_third"] = third
    return vic_p, vic_q, configs


def coarse_three(probs) -> tuple[float, float, float]:
    """Groups 3 and 4 of :func:`real_pair_configs` merged: ``(g1, g2, g3 + g4)``."""
    return (float(probs[0]), float(probs[1]), float(probs[2]) + float(probs[3]))
