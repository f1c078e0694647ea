"""The planted bugs of the audits: for each audit, one mutation of the
function the experiments call that leaks more than its accountant says. :func:`planted` swaps it in
at the name the experiments (and the audit) call, for the duration of a ``with`` block, and puts
the original back whatever happens. The audits stage runs every audit a second time under its
mutant and reports whether the audit caught it; ``tests/test_audits.py`` asserts that it does.

The mutants wrap the real functions (resolved when the block is entered), so each differs from the
real code by exactly its planted bug.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator

import numpy as np


def _krr_binary_flip():
    """k-RR keeping its value with e^eps / (e^eps + 1) (the binary formula) instead of
    e^eps / (e^eps + k - 1): the real k-RR at eps + log(k - 1)."""
    from shuffledp.protocols import flame

    real = flame.krr

    def krr(x, eps, k, rng):
        return real(x, np.asarray(eps, dtype=float) + np.log(np.maximum(np.asarray(k) - 1, 1)), k, rng)

    return [(flame, "krr", krr)]


def _collision_as_hit(module_name: str):
    """Eq. (1) with every hashed value, duplicates included, reported with probability p: a bucket
    on which two of the user's values collide gets 2p."""
    from shuffledp.mechanisms import collision

    module = importlib.import_module(module_name)
    real = collision.collision_report

    def collision_report(hashed, p, g, rng):
        hashed = np.asarray(hashed, dtype=np.int64)
        n, m = hashed.shape
        out = real(hashed, 0.0, g, rng)  # uniform outside the hashed values
        hit = rng.random(n) < m * p
        col = rng.integers(0, m, size=n)
        out[hit] = hashed[np.flatnonzero(hit), col[hit]]
        return out

    return [(module, "collision_report", collision_report)]


def _subexp_weight():
    """The subset exponential mechanism drawing its overlap with weight e^(2 eps) instead of e^eps."""
    from shuffledp.mechanisms import subset_exp as se

    real = se.intersection_pmf

    def intersection_pmf(r):
        return real(se.SubsetExpRates(**{**r.__dict__, "eps": 2 * r.eps}))

    return [(se, "intersection_pmf", intersection_pmf)]


def _blanket_short():
    """Each user's blanket trials one short: ceil(m) - 1 instead of ceil(m)."""
    from shuffledp.mechanisms import poisson_set as ps

    real = ps.blanket_trials

    def blanket_trials(m):
        c, rate = real(m)
        return max(c - 1, 0), rate

    return [(ps, "blanket_trials", blanket_trials)]


def _count_leak():
    """The segmented protocol's message count carrying the victim's (user 0's) real set size."""
    from shuffledp.protocols import segmented

    real = segmented.run_segmented

    def run_segmented(sets, levels, lambdas, m, d, rng, **kw):
        out = real(sets, levels, lambdas, m, d, rng, **kw)
        out.n_messages += int((np.asarray(sets)[0] >= 0).sum())
        return out

    return [(segmented, "run_segmented", run_segmented)]


def _laplace_small():
    """Algorithm 1's Laplace scale c / (2 eps) instead of 2 c / eps."""
    from shuffledp.protocols import peruser

    return [(peruser, "laplace_scale", lambda eps, c: c / (2 * eps))]


def _data_edges(kind: str):
    """Data-dependent edges back in the public coding (:meth:`shuffledp.datasets.coding.Bins.codes`):
    ``minmax``: equal-width bins (on the attribute's scale) between the data's own minimum and maximum,
    as Adult's old code cut log(fnlwgt) and the capital amounts; ``quantile``: equal-frequency codes of
    the data, as Loan's old code did. Integer attributes (one code per value) keep their codes."""
    from shuffledp.datasets import coding

    real = coding.Bins.codes

    def codes(self, x):
        x = np.asarray(x, dtype=float)
        ok = x[~np.isnan(x)]
        if self.scale == "int" or ok.size == 0 or ok.max() <= ok.min():
            return real(self, x)
        if kind == "minmax":
            lo = max(float(ok.min()), 1e-9) if self.scale == "log" else float(ok.min())
            return real(coding.Bins(self.scale, lo, float(ok.max()), self.bins, self.missing), x)
        k = self.values
        edges = np.unique(np.quantile(ok, np.arange(1, k) / k))
        out = np.searchsorted(edges, np.where(np.isnan(x), ok.min(), x), side="right")
        if self.missing:
            out = np.where(np.isnan(x), 0, out + 1)
        return out.astype(np.int16)

    return [(coding.Bins, "codes", codes)]


#: the raw-record audits (shuffledp.experiments.audits_raw): the fixture's default data-dependent coding
RAW_MUTANT_KIND = {"adult_min": "minmax", "adult_max": "minmax", "loan_low": "minmax", "loan_tie": "quantile",
                   "loan_split": "quantile"}


def _raw_mutant(name: str):
    fixture = name.split("_", 2)[2]
    return _data_edges(RAW_MUTANT_KIND[fixture])


MUTANTS = {
    "krr_shuffle": _krr_binary_flip,
    "flame_local": _krr_binary_flip,
    "calm_flame": _krr_binary_flip,
    "hdg_flame": _krr_binary_flip,
    "mhm_local": lambda: _collision_as_hit("shuffledp.protocols.mhm"),
    "calm_mhm": lambda: _collision_as_hit("shuffledp.protocols.mhm"),
    "hdg_mhm": lambda: _collision_as_hit("shuffledp.protocols.mhm"),
    "tcm_local": lambda: _collision_as_hit("shuffledp.protocols.tcm"),
    "subexp_shuffle": _subexp_weight,
    "segmented_item": _blanket_short,
    "mm_item": _blanket_short,
    "segmented_count": _count_leak,
    "peruser_alg1": _laplace_small,
    **{f"raw_{fw}_{fx}": (lambda nm=f"raw_{fw}_{fx}": _raw_mutant(nm))
       for fw in ("calm", "hdg") for fx in RAW_MUTANT_KIND},
}


@contextlib.contextmanager
def planted(name: str) -> Iterator[None]:
    """Within the block, audit ``name``'s planted bug is in the code the experiments call."""
    patches = MUTANTS[name]()
    saved = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in patches]
    try:
        for mod, attr, fn in patches:
            setattr(mod, attr, fn)
        yield
    finally:
        for mod, attr, fn in reversed(saved):
            setattr(mod, attr, fn)
