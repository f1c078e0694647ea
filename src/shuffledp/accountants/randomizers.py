"""Finite-output local randomizers for the blanket-decomposition accountant.

Each randomizer comes twice: as an explicit output matrix (rows: inputs, columns: outputs) for
small instances, which :func:`~shuffledp.accountants.decomposition.grouped_pairs` reduces
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
  "bit at 0" row). Four groups by the victim's two bits.
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

from shuffledp.accountants.decomposition import GroupedPair, _check_eps0, _check_int

__all__ = [
    "subset_exp_matrix",
    "subset_exp_pairs",
    "oue_matrix",
    "oue_pairs",
    "olh_matrix",
    "olh_pairs",
    "olh_default_g",
    "coarse_configs",
]

MATRIX_MAX_CELLS = 4_000_000


def _guard(rows: int, cols: int) -> None:
    if rows * cols > MATRIX_MAX_CELLS:
        raise ValueError(f"the output matrix would have {rows} x {cols} cells; use the *_pairs form")


def _groups(w, p, q, gamma) -> GroupedPair:
    return GroupedPair(tuple(float(x) for x in w), tuple(float(x) for x in p),
                       tuple(float(x) for x in q), float(gamma))


# --------------------------------------------------------------------------- subset exponential
def _check_subset(d: int, s: int, k: int) -> tuple[int, int, int]:
    d = _check_int(d, "d", 2)
    s = _check_int(s, "s", 1)
    k = _check_int(k, "k", 1)
    if k >= d:
        raise ValueError(f"k must be smaller than d (every output must miss some input), got k={k}, d={d}")
    return d, s, k


def subset_exp_matrix(d: int, s: int, k: int, eps0: float) -> np.ndarray:
    """Output matrix over every ``s``-subset (rows, lexicographic) and ``k``-subset (columns)."""
    d, s, k = _check_subset(d, s, k)
    eps0 = _check_eps0(eps0)
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
    eps0 = _check_eps0(eps0)
    big = d + s
    e = math.exp(eps0)
    total = math.comb(big, k)
    miss_one = math.comb(d, k)  # k-subsets missing a given s-set
    omega = miss_one + (total - miss_one) * e
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
        p = [u[i] * counts[i] / omega for i in keep]
        q = [v[i] * counts[i] / omega for i in keep]
        out.append(_groups(w, p, q, total / omega))
    return out


# --------------------------------------------------------------------------- unary encoding
def _oue_rates(eps0: float) -> tuple[float, float]:
    return 0.5, 1.0 / (math.exp(eps0) + 1.0)


def oue_matrix(d: int, eps0: float) -> np.ndarray:
    """Output matrix of OUE: rows the ``d`` inputs, columns the ``2^d`` bit vectors (bit j of the
    column index is bit j of the vector)."""
    d = _check_int(d, "d", 2)
    eps0 = _check_eps0(eps0)
    _guard(d, 2 ** d)
    p, q = _oue_rates(eps0)
    bits = (np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1
    mat = np.empty((d, 2 ** d))
    for x in range(d):
        prob = np.where(bits == 1, q, 1.0 - q)
        prob[:, x] = np.where(bits[:, x] == 1, p, 1.0 - p)
        mat[x] = prob.prod(axis=1)
    return mat


def oue_pairs(d: int, eps0: float) -> list[GroupedPair]:
    """Grouped pair of OUE (every pair of inputs is equivalent by symmetry)."""
    d = _check_int(d, "d", 2)
    eps0 = _check_eps0(eps0)
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
    return max(2, int(round(math.exp(_check_eps0(eps0)) + 1.0)))


def olh_matrix(k: int, g: int, eps0: float) -> np.ndarray:
    """Output matrix of OLH over all ``g^k`` functions ``[k] -> [g]``: rows the ``k`` inputs,
    columns ``(h, y)`` in the order ``h * g + y`` (``h`` indexes the functions lexicographically)."""
    k = _check_int(k, "k", 2)
    g = _check_int(g, "g", 2)
    eps0 = _check_eps0(eps0)
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
    """
    g = _check_int(g, "g", 2)
    eps0 = _check_eps0(eps0)
    e = math.exp(eps0)
    lo = 1.0 / (e + g - 1.0)
    # absolute blanket masses of the groups, per uniform (h, y): h(x), h(x') independent uniform
    both = lo / g  # the g^(k-1) outputs with h(x) = h(x') = y, each lo / g^k
    all_hit = 0.0
    if k is not None:
        k = _check_int(k, "k", 2)
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
def coarse_configs(mechanism: str, eps0: float, *, d: int | None = None, s: int | None = None,
                   k: int | None = None, g: int | None = None):
    """Three coarse output groups of a real neighbouring pair, for exact lower bounds.

    Groups: outputs favouring the victim's first input only (group 1), its second only (group 2),
    the rest (group 3). Returns ``(victim_p, victim_q, {config: others})``: the victim's group
    probabilities under its two inputs and, per configuration of the other users (all at the
    victim's first input, all at its second, all at a third input disjoint from both), one other
    user's group probabilities. Each user's group is an independent draw with these laws, so the
    coarse counts' exact divergence (:func:`decomposition.pair_delta`) is that of a post-processing
    of the real shuffled output: a lower bound on the mechanism's privacy loss.
    """
    eps0 = _check_eps0(eps0)
    e = math.exp(eps0)
    configs: dict[str, tuple[float, float, float]] = {}
    if mechanism == "subset-exp":
        d, s, k = _check_subset(d, s, k)
        big = d + s
        total = math.comb(big, k)
        omega = math.comb(d, k) + (total - math.comb(d, k)) * e
        miss1, miss2, miss3 = (math.comb(big - j * s, k) if big - j * s >= 0 else 0 for j in (1, 2, 3))
        only = miss1 - miss2  # k-subsets meeting x, missing x' (x, x' disjoint)
        p1, p2 = e * only / omega, only / omega
        vic_p = (p1, p2, max(0.0, 1.0 - p1 - p2))
        vic_q = (p2, p1, vic_p[2])
        configs["others_at_x"] = vic_p
        configs["others_at_x'"] = vic_q
        if big >= 3 * s:
            # third input x'' disjoint from both: meets x, misses x', meets / misses x''
            miss_both = miss2 - miss3
            meet3 = only - miss_both
            o = (e * meet3 + miss_both) / omega
            configs["others_at_third"] = (o, o, max(0.0, 1.0 - 2.0 * o))
    elif mechanism == "oue":
        d = _check_int(d, "d", 2)
        p, q = _oue_rates(eps0)
        vic_p = (p * (1.0 - q), (1.0 - p) * q, 0.0)
        vic_p = (vic_p[0], vic_p[1], 1.0 - vic_p[0] - vic_p[1])
        vic_q = (vic_p[1], vic_p[0], vic_p[2])
        configs["others_at_x"] = vic_p
        configs["others_at_x'"] = vic_q
        if d >= 3:
            o = q * (1.0 - q)
            configs["others_at_third"] = (o, o, 1.0 - 2.0 * o)
    elif mechanism == "olh":
        g = _check_int(g, "g", 2)
        hi, lo = e / (e + g - 1.0), 1.0 / (e + g - 1.0)
        apart = (g - 1.0) / g  # Pr[h(x) != h(x')]
        vic_p = (hi * apart, lo * apart, 1.0 - (hi + lo) * apart)
        vic_q = (vic_p[1], vic_p[0], vic_p[2])
        configs["others_at_x"] = vic_p
        configs["others_at_x'"] = vic_q
        o = (g - 1.0) / g ** 2
        configs["others_at_third"] = (o, o, 1.0 - 2.0 * o)
    else:
        raise ValueError(f"mechanism must be subset-exp, oue or olh, got {mechanism!r}")
    return vic_p, vic_q, configs
