"""Independent oracle for MHM's all-attributes-differ victim pair (tests and the gap benchmark).

Written from the randomizer's definition, without ``shuffledp``: a user's ``d`` hashed values are
i.i.d. uniform on ``[g]`` (the all-functions family), so the number ``l`` of distinct values has
``Pr[l] = C(g, l) S(d, l) l! / g^d`` (``S`` the Stirling numbers of the second kind); the blanket
output ``y`` is uniform and independent, a hit (``y`` among the values) with probability ``l / g``.
A row's ratio to the blanket ``1 / (d e^eps0 + g - d)`` is ``e^eps0`` at a hit and
``((d - l) e^eps0 + g - d) / (g - l)`` at a miss. For the pair whose ``d`` attributes all differ
the two inputs' hashes are independent, so their ratios ``u``, ``v`` are independent under the
blanket, and the decomposed divergence is

    sum_M Bin(M; n - 1, gamma) gamma / (M + 1) E[(U - e^eps V)_+],

``U``, ``V`` independent sums of ``M + 1`` i.i.d. ratios: here every count vector over the ``d + 1``
ratio levels is enumerated (multinomial weights), no lattice and no spread.
"""

from __future__ import annotations

import math

import numpy as np
from _oracle_decomposition import compositions
from scipy.special import gammaln, xlogy


def stirling2(d: int, ell: int) -> int:
    """Stirling number of the second kind (integer recursion)."""
    row = [1] + [0] * ell
    for i in range(1, d + 1):
        new = [0] * (ell + 1)
        for k in range(1, min(i, ell) + 1):
            new[k] = k * row[k] + row[k - 1]
        row = new
    return row[ell]


def ratio_law(d: int, g: int, eps0: float) -> tuple[np.ndarray, np.ndarray, float]:
    """``(levels, probs, gamma)``: one report's ratio to the blanket under the blanket."""
    e = math.exp(eps0)
    hit = 0.0
    levels, probs = [e], [0.0]
    for ell in range(1, d + 1):
        pr = math.comb(g, ell) * stirling2(d, ell) * math.factorial(ell) / g ** d
        hit += pr * ell / g
        levels.append(((d - ell) * e + g - d) / (g - ell))
        probs.append(pr * (g - ell) / g)
    probs[0] = hit
    return np.array(levels), np.array(probs), g / (d * e + g - d)


def _sum_law(levels: np.ndarray, probs: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of the sum of ``N`` i.i.d. draws (every count vector)."""
    h = compositions(N, levels.size)
    logp = gammaln(N + 1.0) - gammaln(h + 1.0).sum(axis=1) + xlogy(h, probs[None, :]).sum(axis=1)
    return h @ levels, np.exp(logp)


def plus_expectation(u_vals, u_p, v_vals, v_p, ee: float) -> float:
    """``E[(U - ee V)_+]`` for independent discrete ``U``, ``V`` (sorted cumulative sums in ``V``)."""
    order = np.argsort(v_vals)
    vs, vp = v_vals[order], v_p[order]
    cp, cpv = np.cumsum(vp), np.cumsum(vp * vs)
    k = np.searchsorted(vs, u_vals / ee, side="left")  # V < U / ee
    below = np.where(k > 0, cp[np.maximum(k - 1, 0)], 0.0)
    below_v = np.where(k > 0, cpv[np.maximum(k - 1, 0)], 0.0)
    return float(np.dot(u_p, np.maximum(u_vals * below - ee * below_v, 0.0)))


def all_differ_delta(d: int, g: int, eps0: float, n: int, eps: float) -> float:
    """The exact decomposed divergence of the all-attributes-differ pair at ``n`` users."""
    levels, probs, gamma = ratio_law(d, g, eps0)
    ee = math.exp(eps)
    total = 0.0
    for M in range(n):
        wm = math.comb(n - 1, M) * gamma ** M * (1.0 - gamma) ** (n - 1 - M)
        vals, p = _sum_law(levels, probs, M + 1)
        total += wm * gamma / (M + 1) * plus_expectation(vals, p, vals, p, ee)
    return total
