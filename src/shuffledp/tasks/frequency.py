"""Frequency components: multidimensional frequency estimation behind one interface.

A *frequency component* takes ``n`` users' records over ``d`` categorical "dimensions" (attributes,
CALM views or HDG grids; dimension ``j`` has domain ``0..domains[j]-1``) and returns an estimate of
each dimension's frequency vector under ``(eps_s, delta_s)`` shuffle DP. The frameworks
(:mod:`shuffledp.tasks.marginals`, :mod:`shuffledp.tasks.range_queries`) only see this interface, so
another component is one more class in :data:`COMPONENTS`.

* ``mhm``: the Multiple Hash Mechanism (:mod:`shuffledp.protocols.mhm`); every user reports all ``d``
  dimensions in one hashed report; local budget from the privacy-blanket accountant
  (:func:`shuffledp.protocols.mhm.mhm_eps_local`, i.e. :func:`shuffledp.accountants.blanket.max_eps_local`
  with ``mechanism="mhm"``) for ``n`` reports and ``d`` dimensions.
* ``flame``: FLAME (:mod:`shuffledp.protocols.flame`); every user samples one dimension; the local
  budget of dimension ``j`` is the seed's formula (Sec. 6.1.2 form by default) with ``k = domains[j]``.
* ``exact``: the true frequencies, **no privacy**; a reference for tests (the frameworks' own error
  with a noise-free component) and never plotted as a mechanism.

The existing protocol code is wrapped, not changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class FrequencyEstimate:
    estimates: list[np.ndarray]  # one unbiased frequency vector per dimension (may be negative)
    eps_l: list[float]  # local budget used for each dimension
    cell_variance: list[float]  # approximate variance of one cell's estimate, per dimension
    info: dict = field(default_factory=dict)


class MHMComponent:
    name = "mhm"

    def __init__(self, *, bound: str = "bennett", family_bits: int = 32):
        self.bound = bound
        self.family_bits = int(family_bits)

    def setting(self, n: int, domains: list[int], eps_s: float, delta_s: float):
        from shuffledp.protocols.mhm import mhm_eps_local

        return mhm_eps_local(float(eps_s), float(delta_s), int(n), len(domains), bound=self.bound)

    def local_budgets(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        return [self.setting(n, domains, eps_s, delta_s).eps_l] * len(domains)

    def cell_variances(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        """Lemma 4 at the average frequency ``1/k`` of each dimension (``k`` its cells): the variance of one
        cell's estimate. Eq. (2) alone drops the ``F (p - q)(1 - p - q)`` term, which is the larger one
        at MHM's amplified ``eps_l`` (the floor of Fig. 3, docs/multidim.md), so it would understate the
        noise and make HDG's guideline choose too fine grids."""
        from shuffledp.protocols.mhm import lemma4_variance

        st = self.setting(n, domains, eps_s, delta_s)
        return [float(lemma4_variance(st.eps_l, len(domains), st.g, n, 1.0 / k)) for k in domains]

    def estimate(self, data: np.ndarray, domains: list[int], eps_s: float, delta_s: float,
                 rng: np.random.Generator) -> FrequencyEstimate:
        from shuffledp.protocols.mhm import run_mhm

        n, d = data.shape
        st = self.setting(n, domains, eps_s, delta_s)
        r = run_mhm(data, domains, eps_s, delta_s, rng, family_size=1 << self.family_bits, setting=st)
        return FrequencyEstimate(r.estimates, [r.eps_l] * d, [r.variance] * d,
                                 {"g": r.g, "amplified": r.amplified})


class FLAMEComponent:
    name = "flame"

    def __init__(self, *, np_fraction: float = 1 / 3, variant: str = "balle"):
        self.np_fraction = float(np_fraction)
        self.variant = variant

    def local_budgets(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        from shuffledp.protocols.flame import flame_eps_local

        st = flame_eps_local(eps_s, delta_s, n, list(domains), np_fraction=self.np_fraction, variant=self.variant)
        return list(st.eps_l)

    def cell_variances(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        """Per dimension: ``(d/n)^2 N_p q(1-q)/(p-q)^2`` (randomisation of the ``N_p`` reports) plus
        ``(d-1)/(n k)`` (sampling, at the average frequency ``1/k``)."""
        from shuffledp.mechanisms.collision import krr_p
        from shuffledp.protocols.flame import flame_eps_local

        d = len(domains)
        st = flame_eps_local(eps_s, delta_s, n, list(domains), np_fraction=self.np_fraction, variant=self.variant)
        var = []
        for e, k in zip(st.eps_l, domains, strict=True):
            p, q = krr_p(e, k)
            var.append((d / n) ** 2 * st.n_p * q * (1 - q) / (p - q) ** 2 + (d - 1) / (n * k))
        return var

    def estimate(self, data: np.ndarray, domains: list[int], eps_s: float, delta_s: float,
                 rng: np.random.Generator) -> FrequencyEstimate:
        from shuffledp.protocols.flame import run_flame

        n, d = data.shape
        r = run_flame(data, list(domains), eps_s, delta_s, rng, np_fraction=self.np_fraction, variant=self.variant)
        var = self.cell_variances(n, list(domains), eps_s, delta_s)
        return FrequencyEstimate(r.estimates, list(r.eps_l), var,
                                 {"n_p": r.n_p, "truncated": r.truncated, "valid_range": r.valid_range})


class ExactComponent:
    """True frequencies (no noise, NOT private): the frameworks' reference and test oracle."""

    name = "exact"

    def local_budgets(self, n, domains, eps_s, delta_s) -> list[float]:
        return [math.inf] * len(domains)

    def cell_variances(self, n, domains, eps_s, delta_s) -> list[float]:
        return [0.0] * len(domains)

    def estimate(self, data, domains, eps_s, delta_s, rng) -> FrequencyEstimate:
        n = data.shape[0]
        est = [np.bincount(data[:, j].astype(np.int64), minlength=c) / n for j, c in enumerate(domains)]
        return FrequencyEstimate(est, [math.inf] * len(domains), [0.0] * len(domains), {})


COMPONENTS = {"mhm": MHMComponent, "flame": FLAMEComponent, "exact": ExactComponent}


def make_component(name: str, **options):
    """A component by name; ``options`` not used by that component are ignored."""
    if name not in COMPONENTS:
        raise ValueError(f"frequency component: unknown {name!r} (known: {', '.join(COMPONENTS)})")
    if name == "mhm":
        return MHMComponent(**{k: options[k] for k in ("bound", "family_bits") if k in options})
    if name == "flame":
        return FLAMEComponent(**{k: options[k] for k in ("np_fraction", "variant") if k in options})
    return ExactComponent()
