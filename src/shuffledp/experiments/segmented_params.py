"""Privacy parameters of the five baselines, as thin inversions of the accountants.

Nothing here computes a privacy bound itself: every guarantee comes from
``shuffledp.accountants.best`` (``delta_upper``: the blanket decomposition and the variation ratio),
``shuffledp.accountants.upper.variation_ratio`` (``vr_params``, ``vr_eps``) and
``shuffledp.accountants.special.poisson`` (``min_blanket_rate``); this module only searches over their
inputs (Subexp-shuffle's ``eps0``, an inverse the accountants do not provide).

* Subexp-local: ``eps0`` = the liberal level (2), pure LDP, no accountant needed.
* Subexp-shuffle: the largest ``eps0`` whose shuffled guarantee for ``n`` users is
  ``(eps_target, delta)`` by the tightest sound accountant we have for the subset exponential
  mechanism (``best.delta_upper``: the blanket decomposition of its grouped pairs, or the
  variation-ratio bound with the general parameters, whichever is smaller), with PrivSet's best
  subset size for that ``eps0``, over the padded domain of ``d + s`` items. The table's
  ``certified_by`` names the bound that was needed, ``eps0_vr`` keeps the variation-ratio eps0
  (the accountant used before) for comparison.
* Balls-into-bins (MM-shuffle, SepMM): the smallest blanket rate ``m`` at which the Poisson
  randomizer with ``lambda = 1`` (every item sent as is) meets ``(eps, delta)`` for a user with ``s``
  items (group privacy as in Theorem 3), among the ``n_g`` users of the instance
  (``certified_by = poisson-<accountant>``). The Poisson randomizer sends several messages, so the
  single-message decomposition does not apply to it. With ``padding = s`` (a dataset whose users
  may hold fewer than ``s`` items) the protocol sends padding items and draws blankets over
  ``d + s`` items, so the accountant is evaluated over ``d + s`` items (the ``padding`` column).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from shuffledp.accountants.numerics.hockey_stick import bisect_switch
from shuffledp.mechanisms import subset_exp as se


def _bisect_max(ok: Callable[[float], bool], lo: float, hi: float, rtol: float = 1e-4) -> float:
    """Largest x in [lo, hi] with ok(x) (ok monotone: True then False); lo must satisfy ok."""
    if ok(hi):
        return hi
    return bisect_switch(ok, lo, hi, rtol)[0]


@dataclass(frozen=True)
class SubexpShuffle:
    """Subexp-shuffle's certified local parameters.

    ``eps0``: the local eps; ``k``: PrivSet's best subset size for it; ``certified_by``: the bound
    whose evaluation at ``eps0`` met the target (``decomposition`` or ``variation-ratio``);
    ``delta_achieved``: that bound's delta at ``eps_target`` (``<= delta``); ``eps0_vr``: the
    variation-ratio eps0 (the previous accountant), kept for comparison; ``evaluations``: how many
    decomposition deltas the search evaluated."""

    eps0: float
    k: int
    certified_by: str
    delta_achieved: float
    eps0_vr: float
    evaluations: int


def subexp_shuffle_eps0_vr(n: int, d: int, s: int, eps_target: float, delta: float,
                           variant: str = "sound") -> tuple[float, int, float]:
    """``(eps0, k, eps_achieved)``: the largest eps0 whose variation-ratio bound amplifies to
    ``(eps_target, delta)``: with ``variant="sound"`` the general eps0-LDP parameters (the sound ones
    for subset-exp), with ``"published"`` the subset-exp row of the variation-ratio table as
    published (the segmented paper's own accountant for Subexp-shuffle, Sec. 6; can be optimistic,
    see ``vr_params``)."""
    from shuffledp.accountants.upper.variation_ratio import vr_eps, vr_params

    def amplified(eps0: float) -> float:
        k = se.best_subset_size(d, s, eps0)
        return vr_eps(vr_params("subset-exp", eps0, k=k, d=d + s, s=s, variant=variant), n, delta)

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


SUBEXP_RTOL = 1e-4  # the precision of Subexp-shuffle's eps0 in the parameter tables


def subexp_shuffle_eps0(n: int, d: int, s: int, eps_target: float, delta: float, *,
                        rtol: float = SUBEXP_RTOL) -> SubexpShuffle:
    """Subexp-shuffle's local eps0 by the tightest sound accountant we have.

    The largest eps0 (relative precision ``rtol``) with
    ``best.delta_upper("subset-exp", eps0, n, eps_target, d=d, s=s, k=k(eps0)) <= delta``, ``k(eps0)``
    PrivSet's best subset size. ``delta_upper`` is the smaller of the blanket decomposition of the
    mechanism's grouped pairs and the variation-ratio bound with the general parameters, so the
    variation-ratio eps0 (:func:`subexp_shuffle_eps0_vr`) is feasible and the search starts there and
    goes up only: steps of 25% until a point fails, then Brent's method (``scipy.optimize.brentq``)
    on ``log delta_upper - log delta`` inside that bracket. Every point is evaluated and the
    returned one is the largest evaluated point that met the target, so it is certified whether or
    not the bound is monotone in eps0 (``k`` changes with eps0)."""
    from scipy.optimize import brentq

    from shuffledp.accountants.best import delta_upper

    e_vr, k_vr, _ = subexp_shuffle_eps0_vr(n, d, s, eps_target, delta)
    evaluated: dict[float, tuple[float, int]] = {}

    def gap(e: float) -> float:
        e = float(e)
        if e not in evaluated:
            k = se.best_subset_size(d, s, e)
            evaluated[e] = (delta_upper("subset-exp", e, n, eps_target, d=d, s=s, k=k), k)
        return math.log(max(evaluated[e][0], 1e-300)) - math.log(delta)

    top = 30.0  # the decomposition's numerics are checked up to eps0 = 50; no use beyond
    lo = e_vr
    if gap(lo) <= 0:
        hi = min(top, lo * 1.25)
        while gap(hi) <= 0 and hi < top:
            lo, hi = hi, min(top, hi * 1.25)
        if gap(hi) > 0:
            brentq(gap, lo, hi, xtol=rtol * lo / 4, rtol=rtol / 4)
    feasible = [e for e, (dl, _) in evaluated.items() if dl <= delta]
    if not feasible:
        # delta_upper includes the variation ratio, whose own search certified e_vr: a bug somewhere
        raise RuntimeError(f"best.delta_upper at the variation-ratio eps0 {e_vr!r} is "
                           f"{evaluated[e_vr][0]!r} > delta = {delta!r}: the bounds disagree")
    e0 = max(feasible)
    dl, k = evaluated[e0]
    from shuffledp.accountants.upper.variation_ratio import vr_delta, vr_params

    # which bound was needed: the variation ratio alone, or the decomposition
    by = "variation-ratio" if vr_delta(vr_params("general", e0), n, eps_target) <= delta else "decomposition"
    return SubexpShuffle(e0, k, by, dl, e_vr, len(evaluated))


def mm_blanket_rate(n_g: int, d: int, s: int, eps: float, delta: float, m_max: float = 1e4,
                    accountant: str = "sound") -> float:
    """Smallest ``m`` at which ``lambda = 1`` is feasible (balls-into-bins at ``(eps, delta)``), from
    the accountant's ``min_blanket_rate`` (an evaluated feasible point)."""
    from shuffledp.accountants.special.poisson import min_blanket_rate

    m = min_blanket_rate(n_g, d, s, eps, delta, lam=1.0, m_max=m_max, accountant=accountant)
    if not math.isfinite(m):
        raise ValueError(
            f"no blanket rate up to {m_max} makes lambda = 1 feasible (n = {n_g}, eps = {eps})")
    return float(m)


def baseline_params(n: int, d: int, s: int, levels, settings: dict, delta: float,
                    uniform_eps: float, level_counts_fn, accountant: str = "sound", padding: int = 0) -> pd.DataFrame:
    """One table of every baseline parameter for a (dataset, n); the balls-into-bins rates over
    ``d + padding`` items (Subexp-shuffle always over its padded domain)."""
    rows = []
    sub = subexp_shuffle_eps0(n, d, s, uniform_eps, delta)
    rows.append(dict(baseline="subexp_shuffle", setting="none", level=0, n_group=n, eps=uniform_eps,
                     delta=delta, eps0=sub.eps0, k=sub.k, m=float("nan"), delta_achieved=sub.delta_achieved,
                     certified_by=sub.certified_by, eps0_vr=sub.eps0_vr))
    cache: dict[tuple[int, float], float] = {}

    def rate(ng: int, e: float) -> float:
        if (ng, e) not in cache:
            cache[(ng, e)] = mm_blanket_rate(ng, d + padding, s, e, delta, accountant=accountant)
        return cache[(ng, e)]

    poisson = f"poisson-{accountant}"  # the balls-into-bins rates: the Poisson accountant
    rows.append(dict(baseline="mm_shuffle", setting="none", level=0, n_group=n, eps=uniform_eps, delta=delta,
                     eps0=float("nan"), k=0, m=rate(n, float(uniform_eps)), delta_achieved=float("nan"),
                     certified_by=poisson, eps0_vr=float("nan")))
    for name in sorted(settings):
        counts = level_counts_fn(n, settings[name])
        for j, (ng, e) in enumerate(zip(counts, levels, strict=True)):
            rows.append(dict(baseline="sepmm", setting=name, level=j + 1, n_group=int(ng), eps=float(e),
                             delta=delta, eps0=float("nan"), k=0, m=rate(int(ng), float(e)),
                             delta_achieved=float("nan"), certified_by=poisson, eps0_vr=float("nan")))
    out = pd.DataFrame(rows)
    out["accountant"] = accountant
    out["padding"] = int(padding)
    return out


# ------------------------------------------------------------------ the paper's calibration (variant)
def _paper_row(baseline: str, setting: str, level: int, n_group: int, eps: float, delta: float, **kw) -> dict:
    row = dict(baseline=baseline, setting=setting, level=level, n_group=n_group, eps=eps, delta=delta,
               eps0=float("nan"), k=0, m=float("nan"), delta_achieved=float("nan"), certified_by="",
               eps0_vr=float("nan"), delta_sound=float("nan"), m_closed=float("nan"))
    row.update(kw)
    return row


def paper_baseline_params(n: int, d: int, s: int, levels, settings: dict, delta: float,
                          uniform_eps: float, level_counts_fn, padding: int = 0) -> pd.DataFrame:
    """The baselines' parameters as the segmented paper calibrated them (Sec. 6), for the labelled
    variant ``segmented.baseline_accounting: paper``; the columns of :func:`baseline_params` plus two.

    * Subexp-shuffle: the largest eps0 whose variation-ratio bound with the published subset-exp
      parameters amplifies to ``(uniform_eps, delta)`` (:func:`subexp_shuffle_eps0_vr`,
      ``variant="published"``; ``certified_by = variation-ratio-published``).
    * Balls-into-bins (MM-shuffle, SepMM, Weighted SepMM): Luo et al.'s analysis, its numeric form
      (:func:`shuffledp.accountants.special.luo.luo_blanket_rate`; ``certified_by = luo-numeric``);
      ``m_closed`` is the closed form of their theorem, for comparison.

    ``delta_achieved``: the paper's accountant's delta at the chosen parameter (``<= delta``);
    ``delta_sound``: what our sound accountants certify there (``best.delta_upper`` for
    Subexp-shuffle, the Poisson accountant with ``lambda = 1`` for balls-into-bins): above ``delta``
    where the paper's calibration is optimistic. Balls-into-bins over ``d + padding`` bins (the
    protocol sends padding items, module doc)."""
    from shuffledp.accountants.best import delta_upper
    from shuffledp.accountants.special import luo
    from shuffledp.accountants.upper.variation_ratio import vr_delta, vr_params

    e0, k, _ = subexp_shuffle_eps0_vr(n, d, s, uniform_eps, delta, variant="published")
    rows = [_paper_row("subexp_shuffle", "none", 0, n, uniform_eps, delta, eps0=e0, k=k,
                       certified_by="variation-ratio-published",
                       delta_achieved=vr_delta(vr_params("subset-exp", e0, k=k, d=d + s, s=s, variant="published"),
                                               n, uniform_eps),
                       delta_sound=delta_upper("subset-exp", e0, n, uniform_eps, d=d, s=s, k=k))]
    cache: dict[tuple[int, float], dict] = {}

    def mm(ng: int, e: float) -> dict:
        if (ng, e) not in cache:
            dd = d + padding  # the bins balls-into-bins draws blankets over
            m = luo.luo_blanket_rate(ng, dd, s, e, delta)
            if not math.isfinite(m):
                raise ValueError(f"Luo et al.'s analysis finds no blanket rate for n = {ng}, eps = {e}")
            cache[(ng, e)] = dict(m=m, certified_by="luo-numeric", delta_achieved=luo.luo_user_delta(ng, dd, s, e, m),
                                  delta_sound=luo.sound_user_delta(ng, dd, s, e, m),
                                  m_closed=luo.luo_blanket_rate(ng, dd, s, e, delta, form="closed"))
        return cache[(ng, e)]

    rows.append(_paper_row("mm_shuffle", "none", 0, n, float(uniform_eps), delta, **mm(n, float(uniform_eps))))
    for name in sorted(settings):
        for j, (ng, e) in enumerate(zip(level_counts_fn(n, settings[name]), levels, strict=True)):
            rows.append(_paper_row("sepmm", name, j + 1, int(ng), float(e), delta, **mm(int(ng), float(e))))
    out = pd.DataFrame(rows)
    out["accountant"] = "paper"
    out["padding"] = int(padding)
    return out
