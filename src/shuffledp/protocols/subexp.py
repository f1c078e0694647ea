"""Baselines "Subexp, local" and "Subexp, shuffle": PrivSet's subset exponential mechanism, one
message per user, every user at the same local budget ``eps0``.

Subexp-local uses ``eps0 = 2`` (the liberal level, a utility upper bound for personalized LDP);
Subexp-shuffle uses the largest ``eps0`` whose variation-ratio amplified guarantee after shuffling
is ``(0.5, delta)`` -- that ``eps0`` is an input here, computed by the accountant step.
"""

from __future__ import annotations

import numpy as np

from shuffledp.mechanisms import subset_exp as se


def run_subexp(sets: np.ndarray, d: int, s: int, eps0: float, rng: np.random.Generator,
               k: int | None = None) -> tuple[np.ndarray, int]:
    """Estimates of items ``0..d-1`` and the subset size used."""
    if k is None:
        k = se.best_subset_size(d, s, eps0)
    rates = se.subset_exp_rates(d, s, eps0, k)
    padded = se.pad_sets(sets, d)
    out = se.randomize(padded, rates, rng)
    return se.estimate(se.hits(out, d, s), padded.shape[0], rates), k
