"""Poisson randomizer with a random number of blanket messages (segmented-shuffle paper, Sec. 5.1).

Algorithm 2 of the paper: a user at level k reports each of its ``s`` items with probability
``lambda`` (the Poisson randomizer); every user also makes ``ceil(m)`` blanket trials, each sending
with probability ``gamma = m / ceil(m)`` one item uniform over the ``d`` items.

* Theorem 2 (random blanket count): Bernoulli(gamma) thinning of the blanket messages is the
  variation-ratio reduction with ratio ``q / gamma``; ``n`` users with ``ceil(m)`` trials each give
  ``n' = n ceil(m)`` in the notation of Theorem 1.
* Lemma 3 (Poisson randomizer): ``p = +inf, beta = lambda, q = d lambda``. So a blanket message is a
  clone of each of the victim's two items with probability ``r = beta / (q / gamma) = gamma / d``
  -- independent of lambda -- and the victim emits a clone of its own item with probability
  ``lambda`` and nothing otherwise.
* Theorem 3 (group privacy over the ``s`` items): if one item is ``(eps', delta')``-protected, the
  user is ``(s eps', s e^{s eps'} delta')``-protected. Conversely a user target ``(eps, delta)``
  needs ``D_{e^{eps/s}}(P || Q) <= delta / (s e^eps)`` -- constraint (7) of the paper.
* Proposition 1 (lower bound): for ``s = 1`` there are neighbouring datasets whose output pair of
  counts is exactly the reduction's pair with ``n' = n ceil(m) + 1`` (``n ceil(m)`` blanket trials
  besides the victim's message). Theorem 3 as printed uses ``n' = n ceil(m)``, i.e. one blanket
  trial fewer than exist: a valid, very slightly conservative bound. Here ``theorem="paper"``
  (default, used for all guarantees) follows the paper; ``theorem="tight"`` uses ``n ceil(m) + 1``,
  which equals the Proposition 1 lower bound: for ``s = 1`` the guarantee is exact.

``m = 0`` (no blanket messages) is handled as its limit: no clones, ``D = lambda``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shuffledp.accountants.hockey_stick import bisect_eps
from shuffledp.accountants.variation_ratio import (
    DEFAULT_TAIL,
    VRParams,
    _check_delta,
    _int_at_least,
    _tail_for,
    _window,
    clone_delta_bounds,
    clone_delta_parts,
)

__all__ = [
    "blanket_geometry",
    "random_blanket_params",
    "poisson_vr_params",
    "group_privacy",
    "single_item_target",
    "poisson_delta_bounds",
    "poisson_delta",
    "poisson_delta_lower",
    "poisson_user_delta",
    "poisson_lambda",
    "PoissonLambda",
    "min_blanket_rate",
    "LAMBDA_RTOL",
]

LAMBDA_RTOL = 1e-6


def _check_m(m) -> float:
    m = float(m)
    if not (math.isfinite(m) and m >= 0):
        raise ValueError(f"m: {m!r} must be a finite number >= 0")
    return m


def _check_lambda(lam) -> float:
    lam = float(lam)
    if not (0.0 <= lam <= 1.0):
        raise ValueError(f"lambda: {lam!r} must lie in [0, 1]")
    return lam


def _check_eps(eps, name="eps") -> float:
    eps = float(eps)
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"{name}: {eps!r} must be a finite number > 0")
    return eps


def blanket_geometry(n: int, m: float, *, theorem: str = "paper") -> tuple[int, float]:
    """``(n_prime, gamma)`` of Theorem 2/3: ``n' = n ceil(m)`` (paper) or ``n ceil(m) + 1``
    (tight, Proposition 1) and ``gamma = m / ceil(m)``. ``m = 0``: ``(1, 0)`` (no blankets)."""
    n = _int_at_least(n, "n", 1)
    m = _check_m(m)
    if theorem not in ("paper", "tight"):
        raise ValueError(f"theorem: {theorem!r} must be 'paper' or 'tight'")
    if m == 0:
        return 1, 0.0
    cm = math.ceil(m)
    return n * cm + (1 if theorem == "tight" else 0), m / cm


def random_blanket_params(params: VRParams, n: int, m: float, *, theorem: str = "paper") -> tuple[VRParams, int]:
    """Theorem 2: a randomizer with ``params`` and ``ceil(m)`` blanket trials per user at rate
    ``gamma`` -> ``(VRParams(p, beta, q / gamma), n')`` for :func:`vr_delta`."""
    n_prime, gamma = blanket_geometry(n, m, theorem=theorem)
    if gamma == 0:
        raise ValueError("m: must be > 0 for the random-blanket reduction")
    return params.with_sampling(gamma), n_prime


def poisson_vr_params(lam: float, d: int) -> tuple[float, float, float]:
    """Lemma 3: ``(p, beta, q) = (inf, lambda, d lambda)`` of the Poisson randomizer (a tuple:
    ``q = d lambda`` may be below 1, outside :class:`VRParams`'s range, and the reduction is still
    valid since only ``r = beta / q = 1/d`` enters)."""
    lam = _check_lambda(lam)
    d = _int_at_least(d, "d", 2)
    return math.inf, lam, d * lam


def group_privacy(eps_single: float, delta_single: float, s: int) -> tuple[float, float]:
    """Lemma 1 / Theorem 3: ``(s eps', s e^{s eps'} delta')``."""
    s = _int_at_least(s, "s", 1)
    eps_single = float(eps_single)
    if not (eps_single >= 0):
        raise ValueError(f"eps_single: {eps_single!r} must be >= 0")
    return s * eps_single, min(1.0, s * math.exp(s * eps_single) * float(delta_single))


def single_item_target(eps: float, delta: float, s: int) -> tuple[float, float]:
    """Per-item target of constraint (7): ``(eps / s, delta / (s e^eps))``."""
    s = _int_at_least(s, "s", 1)
    eps = _check_eps(eps)
    delta = _check_delta(delta)
    return eps / s, delta / (s * math.exp(eps))


def poisson_delta_bounds(lam: float, n: int, m: float, d: int, eps_single: float, *,
                         theorem: str = "paper", tail: float = DEFAULT_TAIL) -> tuple[float, float]:
    """(lower, upper) on ``D_{e^eps'}(P || Q)`` for one item (Lemma 3 with Theorem 2)."""
    lam = _check_lambda(lam)
    d = _int_at_least(d, "d", 2)
    eps_single = float(eps_single)
    if not (eps_single >= 0):
        raise ValueError(f"eps_single: {eps_single!r} must be >= 0")
    n_prime, gamma = blanket_geometry(n, m, theorem=theorem)
    return clone_delta_bounds(lam, 0.0, 1.0 - lam, gamma / d, n_prime - 1, eps_single, tail)


def poisson_delta(lam, n, m, d, eps_single, *, theorem="paper", tail=DEFAULT_TAIL) -> float:
    """Upper bound on the single-item delta at ``eps_single`` (Theorem 3 with ``s = 1``)."""
    return poisson_delta_bounds(lam, n, m, d, eps_single, theorem=theorem, tail=tail)[1]


def poisson_delta_lower(lam, n, m, d, eps_single, *, tail=DEFAULT_TAIL) -> float:
    """Proposition 1: a lower bound on the single-item delta that the protocol really attains
    (``n' = n ceil(m) + 1``; the lower end of the numerical bracket)."""
    return poisson_delta_bounds(lam, n, m, d, eps_single, theorem="tight", tail=tail)[0]


def poisson_user_delta(lam, n, m, d, s, eps, *, theorem="paper") -> float:
    """User-level delta at user-level ``eps`` (Theorem 3): ``s e^eps D_{e^{eps/s}}``."""
    s = _int_at_least(s, "s", 1)
    eps = _check_eps(eps)
    return group_privacy(eps / s, poisson_delta(lam, n, m, d, eps / s, theorem=theorem), s)[1]


@dataclass(frozen=True)
class PoissonLambda:
    """Result of :func:`poisson_lambda`."""

    lam: float              # largest lambda found (verified feasible); 0 when infeasible
    feasible: bool          # a lambda > 0 meets the constraint (verified)
    eps_single: float       # eps / s
    delta_single: float     # achieved single-item delta at lam (upper bound), <= delta_target
    delta_target: float     # delta / (s e^eps)
    delta_user: float       # s e^eps delta_single (<= delta)


def poisson_lambda(n: int, m: float, d: int, s: int, eps: float, delta: float, *,
                   theorem: str = "paper", rtol: float = LAMBDA_RTOL) -> PoissonLambda:
    """Largest ``lambda`` in [0, 1] meeting user-level ``(eps, delta)`` for ``s`` items
    (constraint (7)), to relative precision ``rtol`` and rounded down: the returned lambda is an
    evaluated feasible point. ``D`` grows with lambda (and ``D <= lambda``), so bisection applies;
    ``lambda = delta / (s e^eps)`` is always feasible in exact arithmetic -- ``feasible`` is False
    only when floating point cannot certify any lambda > 0 (targets below ~1e-290)."""
    n = _int_at_least(n, "n", 2)
    m = _check_m(m)
    d = _int_at_least(d, "d", 2)
    eps_single, target = single_item_target(eps, delta, s)
    tail = max(1e-300, 1e-6 * target)   # skipped mass (added to the bound) <= 1e-6 of the target
    n_prime, gamma = blanket_geometry(n, m, theorem=theorem)
    N, r = n_prime - 1, gamma / d

    def parts(lam: float):
        return clone_delta_parts(lam, 0.0, 1.0 - lam, r, N, eps_single, tail)

    def dval(lam: float) -> float:
        t, sl, sk = parts(lam)
        return min(1.0, t + sl + sk)

    if dval(1.0) <= target:
        return PoissonLambda(1.0, True, eps_single, dval(1.0), target, group_privacy(eps_single, dval(1.0), s)[1])
    skipped = _window(N, min(1.0, 2 * r), tail)[3]
    # y = -log(lambda): D(exp(-y)) is non-increasing in y; feasibility at y_hi = -log(target)
    y_hi = min(-math.log(max(target, 1e-300)), 745.0)
    lo, hi = bisect_eps(lambda y: dval(math.exp(-y)), target, y_hi, rtol=1e-15, atol=rtol,
                        search_fn=lambda y: parts(math.exp(-y))[0], search_target=target - skipped)
    if not math.isfinite(hi):
        return PoissonLambda(0.0, False, eps_single, 0.0, target, 0.0)
    lam = math.exp(-hi)
    dv = dval(lam)
    if not dv <= target:  # pragma: no cover - bisect_eps only returns evaluated feasible ends
        return PoissonLambda(0.0, False, eps_single, 0.0, target, 0.0)
    return PoissonLambda(lam, lam > 0, eps_single, dv, target, group_privacy(eps_single, dv, s)[1])


def min_blanket_rate(n: int, d: int, s: int, eps: float, delta: float, *, lam: float = 1.0,
                     m_max: float = 1e4, rtol: float = 1e-4, theorem: str = "paper") -> float:
    """``m_k`` of Section 5.2: the smallest blanket rate ``m`` at which ``lambda`` (default 1)
    meets user-level ``(eps, delta)``; ``inf`` if none up to ``m_max``. Bisection on m to relative
    precision ``rtol``; the returned m is an evaluated feasible point (the divergence is not
    exactly monotone in m at integer m, where ``ceil(m)`` jumps, so "smallest" is up to that).
    Also the blanket rate of the balls-into-bins baselines (``lambda = 1``)."""
    n = _int_at_least(n, "n", 2)
    d = _int_at_least(d, "d", 2)
    lam = _check_lambda(lam)
    eps_single, target = single_item_target(eps, delta, s)
    tail = _tail_for(target, 1e-6)

    def ok(m: float) -> bool:
        return poisson_delta_bounds(lam, n, m, d, eps_single, theorem=theorem, tail=tail)[1] <= target

    if lam == 0 or ok(0.0):
        return 0.0
    hi = 0.01
    while hi < m_max and not ok(hi):
        hi *= 2
    if hi >= m_max:
        if not ok(m_max):
            return math.inf
        hi = m_max
    lo = hi / 2 if hi > 0.01 else 0.0
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi

