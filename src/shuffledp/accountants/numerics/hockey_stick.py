"""Hockey-stick divergence between discrete distributions and the eps <-> delta conversions.

``D_{e^eps}(P || Q) = sum_x max(0, P(x) - e^eps Q(x))``: a mechanism is (eps, delta)-DP on a pair
of neighbouring inputs when this divergence is at most delta in both directions.

* :func:`hockey_stick` -- the divergence of two pmf arrays (exact up to floating point).
* :func:`hockey_stick_symmetric` -- the larger of the two directions.
* :func:`eps_for_delta` -- the generic bisection turning a non-increasing ``delta(eps)`` into the
  smallest eps with ``delta(eps) <= delta``, to a stated relative precision. It returns the upper
  end of the final bracket, so the answer is never optimistic (provided ``delta(eps)`` itself is an
  upper bound); :func:`bisect_eps` returns both ends.
* :func:`composed_delta` / :func:`composed_eps` -- heterogeneous composition through
  dp-accounting's privacy-loss distributions (``from_two_probability_mass_functions`` and
  ``compose``) with pessimistic discretisation, so the composed delta is an upper bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from shuffledp.errors import DomainError

__all__ = [
    "hockey_stick",
    "hockey_stick_symmetric",
    "eps_for_delta",
    "bisect_eps",
    "bracket_eps",
    "bisect_switch",
    "pld_from_pmfs",
    "composed_delta",
    "composed_eps",
]


def _as_pmf(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 0:
        raise ValueError(f"{name}: must be an array of probabilities, got a scalar")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinite entries")
    if np.any(arr < 0):
        raise ValueError(f"{name}: contains negative probabilities")
    total = float(arr.sum())
    if total > 1.0 + 1e-9:
        raise ValueError(f"{name}: total mass {total!r} exceeds 1")
    return arr


def _check_eps(eps: float, name: str = "eps") -> float:
    eps = float(eps)
    if math.isnan(eps) or eps < 0:
        raise ValueError(f"{name}: {eps!r} must be >= 0")
    return eps


def hockey_stick(p, q, eps: float) -> float:
    """``D_{e^eps}(p || q) = sum max(0, p - e^eps q)`` for two pmf arrays of the same shape.

    Arrays may be sub-probability vectors (total mass <= 1), e.g. truncated distributions; the
    result is then the divergence restricted to the listed outcomes. ``eps = inf`` gives the mass
    of ``p`` where ``q`` is zero.
    """
    p = _as_pmf(p, "p")
    q = _as_pmf(q, "q")
    if p.shape != q.shape:
        raise ValueError(f"p, q: shapes {p.shape} and {q.shape} differ")
    eps = _check_eps(eps)
    if math.isinf(eps):
        return float(p[q == 0].sum())
    diff = p - math.exp(eps) * q if eps < 700 else np.where(q == 0, p, 0.0)
    return float(np.maximum(diff, 0.0).sum())


def hockey_stick_symmetric(p, q, eps: float) -> float:
    """``max(D_{e^eps}(p||q), D_{e^eps}(q||p))``: the delta of the pair at ``eps``."""
    return max(hockey_stick(p, q, eps), hockey_stick(q, p, eps))


def smallest_eps(delta_of_eps: Callable[[float], float], delta: float, eps_hi: float,
                 *, rtol: float = 1e-7, atol: float = 1e-12) -> float:
    """Smallest eps in [0, eps_hi] with ``delta_of_eps(eps) <= delta``, rounded up.

    ``delta_of_eps`` should be non-increasing and ``delta_of_eps(eps_hi) <= delta``. The search
    keeps a bracket ``[lo, hi]`` with ``delta_of_eps(lo) > delta >= delta_of_eps(hi)`` and
    returns ``hi`` once ``hi - lo <= max(rtol * hi, atol)``; the returned eps therefore always
    meets the target (rounding never makes the guarantee optimistic). Steps are secant steps on
    ``log delta`` kept inside the bracket, with a bisection step every third iteration.
    """
    if delta_of_eps(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, float(eps_hi)
    d_hi = delta_of_eps(hi)
    if d_hi > delta:
        raise ValueError("delta_of_eps(eps_hi) exceeds the target delta")
    log_t = math.log(delta)
    f_lo = math.log(delta_of_eps(lo)) - log_t
    f_hi = math.log(max(d_hi, 1e-300)) - log_t
    for it in range(500):
        if hi - lo <= max(rtol * hi, atol):
            break
        if it % 3 != 2:
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not math.isfinite(x):
                x = 0.5 * (lo + hi)
            x = min(max(x, lo + 0.02 * (hi - lo)), hi - 0.02 * (hi - lo))
        else:
            x = 0.5 * (lo + hi)
        d = delta_of_eps(x)
        if not d >= 0:  # NaN or negative: a broken delta function must not pass silently
            raise ValueError(f"delta_of_eps({x!r}) returned {d!r}")
        if d <= delta:
            hi, f_hi = x, math.log(max(d, 1e-300)) - log_t
        else:
            lo, f_lo = x, math.log(d) - log_t
    return hi


def bisect_switch(ok: Callable[[float], bool], lo: float, hi: float, rtol: float, *,
                  ok_lo: bool = True, atol: float | None = None, max_iter: int = 10_000) -> tuple[float, float]:
    """Bisection on a monotone predicate: ``ok`` has the value ``ok_lo`` at ``lo`` and the other
    value at ``hi`` (the caller has evaluated both, or knows them); returns the final bracket
    ``(lo, hi)`` with ``hi - lo <= max(rtol * hi, atol)`` (``atol`` default ``1e-12 rtol``), each
    end an evaluated point (or the given end) of its side. Use ``lo`` for "largest x with ok" and
    ``hi`` for "smallest x with ok"."""
    lo, hi = float(lo), float(hi)
    atol = rtol * 1e-12 if atol is None else atol
    for _ in range(max_iter):
        if hi - lo <= max(rtol * hi, atol):
            break
        mid = 0.5 * (lo + hi)
        if bool(ok(mid)) == ok_lo:
            lo = mid
        else:
            hi = mid
    return lo, hi


def smallest_rate(ok: Callable[[float], bool], m_max: float, rtol: float, start: float = 0.01) -> float:
    """Smallest ``m`` in ``(0, m_max]`` with ``ok(m)`` for a predicate monotone in ``m`` (false below,
    true above): doubling from ``start``, then :func:`bisect_switch`; the returned value is an
    evaluated point where ``ok`` holds (``inf`` when even ``m_max`` fails)."""
    hi = start
    while hi < m_max and not ok(hi):
        hi *= 2
    if hi >= m_max:
        if not ok(m_max):
            return math.inf
        hi = m_max
    return bisect_switch(ok, hi / 2 if hi > start else 0.0, hi, rtol, ok_lo=False)[1]


def bisect_eps(
    delta_of_eps: Callable[[float], float],
    delta: float,
    eps_hi: float,
    rtol: float = 1e-6,
    *,
    eps_lo: float = 0.0,
    atol: float = 1e-12,
    max_iter: int = 200,
    search_fn: Callable[[float], float] | None = None,
    search_target: float | None = None,
) -> tuple[float, float]:
    """Bracket ``[lo, hi]`` with ``delta_of_eps(hi) <= delta < delta_of_eps(lo)``.

    ``delta_of_eps`` must be non-increasing. Stops once ``hi - lo <= max(rtol * hi, atol)``.
    If ``delta_of_eps(eps_lo) <= delta`` already, returns ``(eps_lo, eps_lo)``. If
    ``delta_of_eps(eps_hi) > delta``, returns ``(eps_hi, inf)``: no eps in range meets delta.

    Speed: a bracketed Brent step on ``log delta(eps)`` first proposes a root; the two points
    ``root -/+ tol/4`` are then *evaluated*, and only if they bracket the target is the answer
    accepted -- otherwise plain bisection continues on the bracket known so far. Every returned end
    is therefore a verified evaluation: ``delta_of_eps(hi) <= delta`` always holds.
    ``search_fn`` / ``search_target`` (optional) replace ``delta_of_eps`` / ``delta`` in the Brent
    phase only -- a smooth proxy (e.g. the estimate without additive allowances, which would put a
    floor under ``log delta``); verification always uses ``delta_of_eps``.
    """
    if not (0.0 < delta < 1.0):
        raise DomainError(f"delta: {delta!r} must lie in (0, 1)")
    if not (0 < rtol < math.inf):
        raise DomainError(f"rtol: {rtol!r} must be a finite number > 0")
    lo, hi = float(eps_lo), float(eps_hi)
    if not (math.inf > hi >= lo >= 0):
        raise DomainError(f"eps_hi: {eps_hi!r} must be finite and >= eps_lo = {eps_lo!r} >= 0")
    cache: dict[float, float] = {}

    def fn(e: float) -> float:
        if e not in cache:
            value = float(delta_of_eps(e))
            if math.isnan(value):  # NaN compares false both ways: it would pass as a verified point
                raise DomainError(f"delta_of_eps({e!r}) is NaN: the bound cannot be evaluated there")
            cache[e] = value
        return cache[e]

    if fn(lo) <= delta:
        return lo, lo
    if fn(hi) > delta:
        return hi, math.inf

    if hi - lo > max(rtol * hi, atol):
        lo, hi = _brent_narrow(fn, delta, lo, hi, rtol, atol, search_fn, search_target)
    lo, hi = _consistent_bracket(cache, delta, lo, hi)
    return bisect_switch(lambda e: fn(e) > delta, lo, hi, rtol, atol=atol, max_iter=max_iter)


def _brent_narrow(fn, delta, lo, hi, rtol, atol, search_fn, search_target) -> tuple[float, float]:
    """The Brent phase of :func:`bisect_eps`: propose a root of ``log proxy(e) - log goal`` on
    ``[lo, hi]``, evaluate ``fn`` at ``root -/+ tol/4`` and narrow the bracket to what those
    evaluations verify. Returns ``(lo, hi)`` unchanged if Brent's method fails."""

    def tol_at(h: float) -> float:
        return max(rtol * h, atol)

    proxy = fn if search_fn is None else search_fn
    goal = delta if search_target is None else search_target
    log_t = math.log(goal) if goal > 0 else math.log(delta)

    def g(e: float) -> float:
        return math.log(max(proxy(e), 1e-300)) - log_t

    try:
        from scipy.optimize import brentq

        root = brentq(g, lo, hi, xtol=atol / 8, rtol=max(rtol / 8, 1e-15), maxiter=100)
        q = tol_at(root) / 4
        a, b = max(lo, root - q), min(hi, root + q)
        if fn(b) <= delta:
            hi = b
        else:
            lo = max(lo, b)
        if fn(a) > delta:
            lo = max(lo, a)
        else:
            hi = min(hi, a)
    except (ValueError, RuntimeError):
        pass
    return lo, hi


def _consistent_bracket(cache: dict[float, float], delta: float, lo: float, hi: float) -> tuple[float, float]:
    """Narrow ``(lo, hi)`` to every evaluation in ``cache`` (``e -> delta(e)``) that lies inside it."""
    for e, v in cache.items():
        if v > delta and e > lo and e < hi:
            lo = e
        if v <= delta and e < hi and e > lo:
            hi = e
    return lo, hi


def bracket_eps(
    delta_of_eps: Callable[[float], float],
    delta: float,
    guess: float,
    eps_max: float,
    factor: float = 4.0,
) -> tuple[float, float]:
    """A bracket ``(lo, hi)`` around the eps meeting ``delta``, grown geometrically from ``guess``:
    ``delta_of_eps(lo) > delta`` (or ``lo = 0``) and ``delta_of_eps(hi) <= delta`` (or
    ``hi = eps_max``). Feed it to :func:`bisect_eps` (``eps_lo=lo``) with a cached function."""
    if not (guess > 0 and math.isfinite(guess)):
        return 0.0, eps_max
    lo = min(guess / 2, eps_max)
    hi = min(guess * 2, eps_max)
    while lo > 0 and delta_of_eps(lo) <= delta:
        hi = lo
        lo = lo / factor if lo > 1e-12 else 0.0
    while hi < eps_max and delta_of_eps(hi) > delta:
        lo = hi
        hi = min(eps_max, hi * factor)
    return lo, hi


def eps_for_delta(
    delta_of_eps: Callable[[float], float],
    delta: float,
    eps_hi: float,
    rtol: float = 1e-6,
    *,
    cap_valid: bool = False,
    **kwargs,
) -> float:
    """Smallest eps (to relative precision ``rtol``, rounded up) with ``delta_of_eps(eps) <= delta``.

    The one contract of the package (``personalized.eps_for_delta`` is this function):

    * the returned eps is a verified point, ``delta_of_eps(eps) <= delta`` (never optimistic when
      ``delta_of_eps`` is an upper bound);
    * unreachable target (``delta_of_eps(eps_hi) > delta``): ``inf``, unless the caller states
      with ``cap_valid=True`` that ``eps_hi`` is a valid answer on its own (e.g. ``eps0`` when the
      reports are pure eps0-LDP: shuffling them is eps0-DP); then ``eps_hi``.

    See :func:`bisect_eps` for the search.
    """
    hi = bisect_eps(delta_of_eps, delta, eps_hi, rtol, **kwargs)[1]
    if math.isinf(hi) and cap_valid:
        return float(eps_hi)
    return hi


# ------------------------------------------------------------------ composition (dp-accounting)
def pld_from_pmfs(p, q, *, discretization: float = 1e-4, pessimistic: bool = True):
    """dp-accounting privacy-loss distribution of the pair (p, q).

    ``symmetric=False`` keeps both directions (dp-accounting's "remove" and "add" PLDs); its
    ``get_delta_for_epsilon`` returns the larger of ``D(p||q)`` and ``D(q||p)`` (checked against
    :func:`hockey_stick` in the tests).
    """
    from dp_accounting.pld import privacy_loss_distribution as pld

    p = _as_pmf(p, "p").ravel()
    q = _as_pmf(q, "q").ravel()
    if p.shape != q.shape:
        raise ValueError(f"p, q: shapes {p.shape} and {q.shape} differ")
    with np.errstate(divide="ignore"):
        log_p = {i: float(v) for i, v in enumerate(np.log(p)) if np.isfinite(v)}
        log_q = {i: float(v) for i, v in enumerate(np.log(q)) if np.isfinite(v)}
    return pld.from_two_probability_mass_functions(
        log_p, log_q, pessimistic_estimate=pessimistic,
        value_discretization_interval=discretization, symmetric=False,
    )


def _composed_pld(pairs: Sequence[tuple], discretization: float):
    if len(pairs) == 0:
        raise ValueError("pairs: need at least one (p, q) pair")
    out = None
    for p, q in pairs:
        one = pld_from_pmfs(p, q, discretization=discretization)
        out = one if out is None else out.compose(one)
    return out


def composed_delta(pairs: Sequence[tuple], eps: float, *, discretization: float = 1e-4) -> float:
    """Upper bound on the delta of the product pair at ``eps``: the larger of
    ``D_{e^eps}(p_1 x ... x p_k || q_1 x ... x q_k)`` and the reverse (independent pieces).

    Uses dp-accounting's pessimistic PLD, so the result is never below the exact divergence.
    """
    eps = _check_eps(eps)
    return float(_composed_pld(pairs, discretization).get_delta_for_epsilon(eps))


def composed_eps(pairs: Sequence[tuple], delta: float, *, discretization: float = 1e-4) -> float:
    """Smallest eps with composed delta <= ``delta`` (pessimistic, dp-accounting)."""
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta: {delta!r} must lie in (0, 1)")
    return float(_composed_pld(pairs, discretization).get_epsilon_for_delta(delta))
