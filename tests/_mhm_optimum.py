"""MHM's optimal decomposition value at small n, shared by the lattice tests and
benchmarks/accountants_mhm_gap.py: the all-differ pair from the independent oracle
(:mod:`_oracle_mhm`, no ``shuffledp``) and the shared-attribute pairs' exact atoms from
``mhm_randomizer.mhm_pair`` through :func:`_oracle_decomposition.atoms_expectation`."""

from __future__ import annotations

import math

import _oracle_decomposition as O
import _oracle_mhm as OM
import numpy as np

from shuffledp.accountants import mhm_randomizer as M


def optimum_delta(d: int, g: int, eps0: float, n: int, eps: float, full: bool = True) -> float:
    """Largest exact decomposed divergence over the victim pairs (each is its own mirror image):
    every m = 1..d, or only the m = d pair unless ``full``."""
    best = OM.all_differ_delta(d, g, eps0, n, eps)
    for m in range(1, d if full else 1):
        pr = M.mhm_pair(d, g, eps0, m)
        keep = [i for i, w in enumerate(pr.w) if w > 0]
        w = np.array([pr.w[i] for i in keep])
        z = (np.array([pr.p[i] for i in keep]) - math.exp(eps) * np.array([pr.q[i] for i in keep])) / w
        best = max(best, O.atoms_expectation(w, z, pr.gamma, n))
    return best
