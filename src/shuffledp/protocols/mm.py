"""Baselines built on the balls-into-bins multi-message protocol (Luo, Wang and Yi, CCS 2022).

Small-domain balls-into-bins: every user sends each of its ``s`` items as is, plus blanket
messages that are uniform over the domain (with ``padding``, the default, a user with fewer than
``s`` items sends items of the padding domain ``{d..d+s-1}`` in their place, blankets are uniform
over the ``d + s`` items and the padding bins are dropped after debiasing, as in
:mod:`shuffledp.protocols.segmented`: the blanket rate must then come from an accountant over
``d + s`` items); the server subtracts the expected blanket count
and divides by the number of users. The blanket count per user follows the same scheme as the
segmented protocol (``ceil(m)`` trials with rate ``m / ceil(m)``), so balls-into-bins is the
Poisson randomizer with ``lambda = 1`` and its guarantee comes from the same variation-ratio
accountant, with group privacy over the ``s`` items. Choices where the baseline paper is silent
or differs (documented in docs/segmented.md): no hashing to buckets (the domains here, 17 and 128,
are far below the paper's bucket count ``n / log n``), and the blanket rate is the smallest ``m``
for which ``lambda = 1`` meets ``(eps, delta)`` under that accountant (an input here). The labelled
variant calibrated as the segmented paper did takes it from Luo et al.'s own analysis instead
(:mod:`shuffledp.accountants.special.luo`); the protocol is the same.

* MM-shuffle: all ``n`` users at the most conservative level (0.5).
* SepMM: each level's users run their own instance (own shuffler, own blankets) at their level;
  the per-level estimates are averaged.
* Weighted SepMM: the per-level estimates are combined with weights proportional to
  ``(d s^2 log(1/delta) / (n_k eps_k)^2 + s / n_k)^(-power)`` (the paper uses ``power = 1/2``).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.mechanisms import poisson_set as ps


def run_mm(sets: np.ndarray | None, m: float, d: int, rng: np.random.Generator, *, padding: bool = True,
           held: tuple[int, np.ndarray, int] | None = None) -> np.ndarray:
    """One balls-into-bins instance over all rows of ``sets``; estimates of items ``0..d-1``.

    ``held``: ``(users, item counts, domain)`` of these rows as this function counts them (the
    ``(domain, 1)`` counts of their :func:`~shuffledp.mechanisms.poisson_set.protocol_sets`),
    computed beforehand: SepMM counts every level's instance at once (:func:`run_sepmm`); ``sets``
    is then not read. The same draws and estimate either way."""
    if held is None:
        rows, domain = ps.protocol_sets(sets, d, padding)
        n = rows.shape[0]
        cjk = ps.item_level_counts(rows, np.zeros(n, dtype=np.int64), domain, 1)
    else:
        n, cjk, domain = held
    counts = ps.sample_counts(cjk, [1.0], n, m, domain, rng)
    return ((counts - n * float(m) / domain) / n)[:d]


def wsepmm_weights(group_sizes, eps_levels, d: int, s: int, delta: float, power: float = 0.5) -> np.ndarray:
    """Normalised weights of the per-level estimators (see module docstring)."""
    out = []
    for nk, ek in zip(group_sizes, eps_levels, strict=True):
        mse = d * s**2 * math.log(1.0 / delta) / (nk * ek) ** 2 + s / nk
        out.append(mse ** (-power))
    w = np.asarray(out)
    return w / w.sum()


def run_sepmm(sets: np.ndarray, levels: np.ndarray, m_levels, d: int, rng: np.random.Generator,
              weights=None, *, padding: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-level instances; returns the combined estimate and the ``(K, d)`` per-level estimates.

    ``weights=None`` averages (SepMM); otherwise the given weights (Weighted SepMM).
    """
    levels = np.asarray(levels)
    n_levels = len(m_levels)
    per = []
    if levels.size and (levels.min() < 0 or levels.max() >= n_levels):  # users outside every instance
        for k, mk in enumerate(m_levels):
            per.append(run_mm(np.asarray(sets)[levels == k], mk, d, rng, padding=padding))
    else:
        # level k's instance counts column k of the item-level counts: what run_mm counts on that
        # level's rows (each instance draws as run_mm on them, in level order)
        rows, domain = ps.protocol_sets(sets, d, padding)
        cjk = ps.item_level_counts(rows, levels, domain, n_levels)
        sizes = np.bincount(levels, minlength=n_levels)
        for k, mk in enumerate(m_levels):
            per.append(run_mm(None, mk, d, rng, padding=padding, held=(int(sizes[k]), cjk[:, k:k + 1], domain)))
    per = np.asarray(per)
    w = np.full(len(per), 1.0 / len(per)) if weights is None else np.asarray(weights, dtype=float)
    return w @ per, per
