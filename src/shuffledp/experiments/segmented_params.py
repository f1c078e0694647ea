"""Privacy parameters of the five baselines, as thin inversions of the accountants.

Nothing here computes a privacy bound itself: every guarantee comes from
``shuffledp.accountants.variation_ratio`` (``vr_params``, ``vr_eps``) and
``shuffledp.accountants.poisson`` (``min_blanket_rate``); this module only searches over their
inputs (bisection on Subexp-shuffle's ``eps0``, an inverse the accountants do not provide).

* Subexp-local: ``eps0`` = the liberal level (2), pure LDP, no accountant needed.
* Subexp-shuffle: the largest ``eps0`` whose variation-ratio amplified guarantee for ``n`` users is
  ``(eps_target, delta)`` (the subset exponential mechanism with PrivSet's best subset size for that
  ``eps0``, over the padded domain of ``d + s`` items).
* Balls-into-bins (MM-shuffle, SepMM): the smallest blanket rate ``m`` at which the Poisson
  randomizer with ``lambda = 1`` (every item sent as is) meets ``(eps, delta)`` for a user with ``s``
  items (group privacy as in Theorem 3), among the ``n_g`` users of the instance.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from shuffledp.accountants.hockey_stick import bisect_switch
from shuffledp.mechanisms import subset_exp as se


def _bisect_max(ok: Callable[[float], bool], lo: float, hi: float, rtol: float = 1e-4) -> float:
    """Largest x in [lo, hi] with ok(x) (ok monotone: True then False); lo must satisfy ok."""
    if ok(hi):
        return hi
    return bisect_switch(ok, lo, hi, rtol)[0]


def subexp_shuffle_eps0(n: int, d: int, s: int, eps_target: float, delta: float) -> tuple[float, int, float]:
    """``(eps0, k, eps_achieved)`` for Subexp-shuffle."""
    from shuffledp.accountants.variation_ratio import vr_eps, vr_params

    def amplified(eps0: float) -> float:
        k = se.best_subset_size(d, s, eps0)
        return vr_eps(vr_params("subset-exp", eps0, k=k, d=d + s, s=s), n, delta)

    def ok(eps0: float) -> bool:
        return amplified(eps0) <= eps_target

    lo = eps_target  # shuffling does not weaken a local guarantee; verified, not assumed
    if not ok(lo):
        raise ValueError(f"eps_target: even eps0 = {eps_target} does not amplify to {eps_target}")
    while lo < 32 and ok(2 * lo):
        lo *= 2
    eps0 = _bisect_max(ok, lo, 2 * lo)  # returns an evaluated feasible point
    k = se.best_subset_size(d, s, eps0)
    return eps0, k, amplified(eps0)


def mm_blanket_rate(n_g: int, d: int, s: int, eps: float, delta: float, m_max: float = 1e4,
                    accountant: str = "sound") -> float:
    """Smallest ``m`` at which ``lambda = 1`` is feasible (balls-into-bins at ``(eps, delta)``), from
    the accountant's ``min_blanket_rate`` (an evaluated feasible point)."""
    from shuffledp.accountants.poisson import min_blanket_rate

    m = min_blanket_rate(n_g, d, s, eps, delta, lam=1.0, m_max=m_max, accountant=accountant)
    if not math.isfinite(m):
        raise ValueError(
            f"no blanket rate up to {m_max} makes lambda = 1 feasible (n = {n_g}, eps = {eps})")
    return float(m)


def baseline_params(n: int, d: int, s: int, levels, settings: dict, delta: float,
                    uniform_eps: float, level_counts_fn, accountant: str = "sound") -> pd.DataFrame:
    """One table of every baseline parameter for a (dataset, n)."""
    rows = []
    eps0, k, ach = subexp_shuffle_eps0(n, d, s, uniform_eps, delta)
    rows.append(dict(baseline="subexp_shuffle", setting="none", level=0, n_group=n, eps=uniform_eps,
                     delta=delta, eps0=eps0, k=k, m=float("nan"), eps_achieved=ach))
    cache: dict[tuple[int, float], float] = {}

    def rate(ng: int, e: float) -> float:
        if (ng, e) not in cache:
            cache[(ng, e)] = mm_blanket_rate(ng, d, s, e, delta, accountant=accountant)
        return cache[(ng, e)]

    rows.append(dict(baseline="mm_shuffle", setting="none", level=0, n_group=n, eps=uniform_eps, delta=delta,
                     eps0=float("nan"), k=0, m=rate(n, float(uniform_eps)), eps_achieved=float("nan")))
    for name in sorted(settings):
        counts = level_counts_fn(n, settings[name])
        for j, (ng, e) in enumerate(zip(counts, levels, strict=True)):
            rows.append(dict(baseline="sepmm", setting=name, level=j + 1, n_group=int(ng), eps=float(e),
                             delta=delta, eps0=float("nan"), k=0, m=rate(int(ng), float(e)),
                             eps_achieved=float("nan")))
    out = pd.DataFrame(rows)
    out["accountant"] = accountant
    return out
