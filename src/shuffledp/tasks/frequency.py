"""Frequency components: multidimensional frequency estimation behind one interface.

A *frequency component* takes ``n`` users' records over ``d`` categorical "dimensions" (attributes,
CALM views or HDG grids; dimension ``j`` has domain ``0..domains[j]-1``) and returns an estimate of
each dimension's frequency vector under ``(eps_s, delta_s)`` shuffle DP. The frameworks
(:mod:`shuffledp.tasks.marginals`, :mod:`shuffledp.tasks.range_queries`) only see this interface, so
another component is one more class in :data:`COMPONENTS`.

* ``mhm``: the Multiple Hash Mechanism (:mod:`shuffledp.protocols.mhm`); every user reports all ``d``
  dimensions in one hashed report; local budget from the privacy-blanket accountant
  (:func:`shuffledp.protocols.mhm.mhm_eps_local`, i.e. :func:`shuffledp.accountants.upper.blanket.max_eps_local`
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

    def __init__(self, *, np_fraction: float = 1 / 3, variant: str = "balle", certify: bool = True):
        self.np_fraction = float(np_fraction)
        self.variant = variant
        self.certify = bool(certify)  # cap eps_l where the general bound does not certify a whole record

    def local_budgets(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        from shuffledp.protocols.flame import flame_eps_local

        st = flame_eps_local(eps_s, delta_s, n, list(domains), np_fraction=self.np_fraction, variant=self.variant,
                            certify=self.certify)
        return list(st.eps_l)

    def variance_terms(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> dict[str, list[float]]:
        """The variance of one cell's estimate at the dimension's average frequency ``f = 1/k``, per
        dimension, in its three parts (the estimator of :func:`shuffledp.protocols.flame.run_flame`,
        with ``n/d`` real reports expected per dimension and ``c = (d/n)^2 / (p - q)^2``):

        * ``randomisation``: ``c (n/d) (f p(1-p) + (1-f) q(1-q))``, k-RR on the real reports;
        * ``dummies``: ``c (N_p - n/d) (1/k)(1 - 1/k)``, the shuffler's uniform dummy reports (k-RR of a
          uniform value is uniform, so a dummy adds a full multinomial count whatever ``eps_l``);
        * ``sampling``: ``((d-1)/n) (1/k)(1 - 1/k)``, each user reporting one of ``d`` dimensions.

        Only the first depends on ``eps_s``; at the large ``eps_l`` FLAME reaches on small domains it
        vanishes and the dummies dominate (docs/multidim_frameworks.md, "FLAME's flat curves")."""
        from shuffledp.mechanisms.collision import krr_p
        from shuffledp.protocols.flame import flame_eps_local

        d = len(domains)
        st = flame_eps_local(eps_s, delta_s, n, list(domains), np_fraction=self.np_fraction, variant=self.variant,
                            certify=self.certify)
        out: dict[str, list[float]] = {"randomisation": [], "dummies": [], "sampling": []}
        for e, k in zip(st.eps_l, domains, strict=True):
            p, q = krr_p(e, k)
            c, f = (d / n) ** 2 / (p - q) ** 2, 1.0 / k
            out["randomisation"].append(c * (n / d) * (f * p * (1 - p) + (1 - f) * q * (1 - q)))
            out["dummies"].append(c * max(st.n_p - n / d, 0.0) * f * (1 - f))
            out["sampling"].append((d - 1) / n * f * (1 - f))
        return out

    def cell_variances(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> list[float]:
        """Per dimension: the sum of :meth:`variance_terms` (randomisation, dummies, sampling)."""
        t = self.variance_terms(n, domains, eps_s, delta_s)
        return [float(a + b + c) for a, b, c in zip(t["randomisation"], t["dummies"], t["sampling"], strict=True)]

    def eps_free_share(self, n: int, domains: list[int], eps_s: float, delta_s: float) -> float:
        """The part of the mean cell variance that noise-free local reports (``eps_l -> inf``: ``p = 1``,
        ``q = 0``) would keep: dummies and sampling, which no budget removes (0..1). Near 1, the
        estimate's error cannot fall with ``eps_s``."""
        from shuffledp.protocols.flame import flame_eps_local

        d = len(domains)
        n_p = flame_eps_local(eps_s, delta_s, n, list(domains), np_fraction=self.np_fraction,
                              variant=self.variant, certify=self.certify).n_p
        floor = [((d / n) ** 2 * max(n_p - n / d, 0.0) + (d - 1) / n) * (1 / k) * (1 - 1 / k) for k in domains]
        return float(np.sum(floor) / np.sum(self.cell_variances(n, domains, eps_s, delta_s)))

    def estimate(self, data: np.ndarray, domains: list[int], eps_s: float, delta_s: float,
                 rng: np.random.Generator) -> FrequencyEstimate:
        from shuffledp.protocols.flame import run_flame

        n, d = data.shape
        r = run_flame(data, list(domains), eps_s, delta_s, rng, np_fraction=self.np_fraction, variant=self.variant,
                            certify=self.certify)
        var = self.cell_variances(n, list(domains), eps_s, delta_s)
        return FrequencyEstimate(r.estimates, list(r.eps_l), var,
                                 {"n_p": r.n_p, "truncated": r.truncated, "valid_range": r.valid_range,
                                  "capped": r.capped})


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
        return FLAMEComponent(**{k: options[k] for k in ("np_fraction", "variant", "certify") if k in options})
    return ExactComponent()
