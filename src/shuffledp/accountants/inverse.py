"""Inverse queries of ``account best``: the smallest n, or the largest eps0, whose best upper bound
meets a target eps at delta. A cheap first stage proposes a bracket from one-delta evaluations
and the asymptotic shape of the bound; forward calls of :func:`~shuffledp.accountants.best.best_eps`
verify the answer and the failing point beside it."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from shuffledp.accountants.best import (
    best_eps,
    round_delta,
)
from shuffledp.accountants.params import BEST_EPS0_MAX, check_query, mechanism_params
from shuffledp.accountants.validation import AccountantDomainError, check_delta, check_eps0, check_n

__all__ = ["solve_eps0", "solve_n", "SOLVE_RTOL"]

# --------------------------------------------------------------------------- inverse queries
SOLVE_RTOL = 1e-3  # relative width of the final bracket of an inverse query (eps0 or n)
SOLVE_PROBE_ROUNDS = 4  # interpolation rounds of the fallback search before plain bisection
SOLVE_SURROGATE_EVALS = 16  # most one-delta evaluations of an inverse query's first stage


def _gap_log(res: dict, target: float) -> float:
    """``log(eps / target)`` of a forward answer (eps = 0 counted as 1e-300)."""
    return math.log(max(res["eps"], 1e-300)) - math.log(target)


def _crossing(a: float, b: float, ga: float, gb: float) -> float:
    """Where the line through ``(a, ga)`` and ``(b, gb)`` crosses 0 (log-log interpolation of the
    forward eps), kept inside ``[a, b]`` away from its ends; only a proposal: the inverse queries
    evaluate both sides of it and keep what the forward calls verify."""
    x = 0.5 * (a + b) if gb == ga else a - ga * (b - a) / (gb - ga)
    margin = 1e-3 * (b - a)
    return min(max(x, a + margin), b - margin)


def _forward(mechanism: str, eps0: float, n: int, delta: float, kw: dict, rtol: float) -> dict:
    return best_eps(mechanism, eps0, n, delta, rtol=rtol, parallel=False, **kw)


def _answer(kind: str, value, res: dict, target: float, bad, bad_res: dict | None, tol: float,
            calls: int, start: float) -> dict:
    """An inverse query's answer: the solved value, its forward call, the bracket's other end."""
    out = {kind: value, "target_eps": target, "eps": res["eps"], "eps_lower": res["eps_lower"],
           "ratio": res["ratio"], "upper_by": res["upper_by"], "lower_by": res["lower_by"],
           "fails_at": bad, "eps_at_fail": None if bad_res is None else bad_res["eps"],
           # the true eps at ``fails_at`` provably exceeds the target (its lower bound does)
           "fail_certified": bool(bad_res is not None and bad_res["eps_lower"] > target),
           "tolerance": tol, "forward_calls": calls, "seconds": time.perf_counter() - start}
    return out


def _exponent_gap(value: float, delta: float) -> float:
    """``log(-log D) - log(-log delta)``: ``>= 0`` exactly when ``D <= delta`` (``+inf`` at D = 0,
    ``-inf`` at D >= 1); nearly linear in ``log n`` (D decays like ``exp(-c n)``)."""
    if value <= 0.0:
        return math.inf
    if value >= 1.0:
        return -math.inf
    return math.log(-math.log(value)) - math.log(-math.log(delta))


def _surrogate_root(G: Callable[[float], float], lo: float, hi: float, start: float, slope: float,
                    done: Callable[[float, float], bool], nudge: Callable[[float], float]) -> tuple[float, float]:
    """A bracket ``(bad, good)`` of the crossing of a non-decreasing ``G`` (``>= 0``: good) in
    ``[lo, hi]`` (``lo`` taken as bad, ``hi`` as good, neither evaluated). A Newton step with the
    expected ``slope`` from ``start``, then secant steps, each pushed by ``nudge(u)`` past the
    estimated crossing so that the two sides are reached; bisection when a step leaves the bracket.
    At most :data:`SOLVE_SURROGATE_EVALS` evaluations: the bracket returned is a proposal, which
    the forward calls then verify."""
    pts: list[tuple[float, float]] = []
    u = min(max(start, lo), hi)
    for _ in range(SOLVE_SURROGATE_EVALS):
        if done(lo, hi):
            break
        gu = G(u)
        if gu >= 0:
            hi = u
        else:
            lo = u
        if math.isfinite(gu):
            pts.append((u, gu))
        prop = None
        if len(pts) >= 2 and pts[-1][1] != pts[-2][1]:
            (u0, g0), (u1, g1) = pts[-2], pts[-1]
            prop = u1 - g1 * (u1 - u0) / (g1 - g0)
        elif len(pts) == 1 and math.isfinite(gu):
            prop = u - gu / slope
        if prop is not None:
            prop += nudge(prop) if gu < 0 else -nudge(prop)
        u = prop if prop is not None and lo < prop < hi else 0.5 * (lo + hi)
    return lo, hi


def _vr_asymptotic_eps(eps0: float, n: float, delta: float) -> float:
    """The order of magnitude of the shuffled eps (the variation ratio's asymptotic form with the
    general parameters): only a starting point of the searches."""
    p = math.exp(min(eps0, 700.0))
    beta = (p - 1.0) / (p + 1.0)
    return math.sqrt(beta * (p - 1.0) * math.log(1.0 / delta) / max(n - 1.0, 1.0))


def _one_delta(mechanism: str, eps0: float, n: int, eps: float, delta: float, kw: dict, rtol: float) -> float:
    """One round's upper delta at ``eps`` (:func:`round_delta`, the decomposition where
    :func:`best_eps` evaluates it and the variation ratio): one evaluation, no eps search."""
    return round_delta(mechanism, eps0, n, max(1e-300, 1e-3 * rtol * delta), **kw)(eps)


def _n_candidates(mechanism: str, target: float, eps0: float, delta: float, kw: dict, rtol: float,
                  tol: float) -> tuple[int, int]:
    """``(good, bad)``: the smallest n where one round's delta at ``target / (1 + 4 rtol)`` meets
    ``delta`` (so that the forward eps, rounded up by at most ``rtol``, should meet the target) and
    a point ``0.9 tol`` below it (which should fail), from :func:`_surrogate_root` on ``log n``."""
    from shuffledp.accountants.validation import N_MAX

    eps_s = target / (1.0 + 4.0 * rtol)

    def n_of(u: float) -> int:
        return int(min(N_MAX, max(2, math.ceil(math.exp(u) - 1e-9))))

    seen: dict[int, float] = {}

    def G(u: float) -> float:
        m = n_of(u)
        if m not in seen:
            seen[m] = _exponent_gap(_one_delta(mechanism, eps0, m, eps_s, delta, kw, rtol), delta)
        return seen[m]

    def done(lo: float, hi: float) -> bool:
        return n_of(hi) - n_of(lo) <= max(1, tol / 4 * n_of(lo))

    # start: the asymptotic form; log(-log delta) grows about like log n (slope 1)
    guess = 1.0 + _vr_asymptotic_eps(eps0, 2.0, delta) ** 2 / target ** 2 / 2.0
    lo, hi = _surrogate_root(G, math.log(2.0), math.log(N_MAX), math.log(max(guess, 3.0)), 1.0, done,
                             lambda u: max(tol / 24, 1.0 / math.exp(u)))
    good = n_of(hi)   # the failing point: 0.9 tol below, and at least as far as the surrogate's bad end
    return good, max(2, min(good - 1, n_of(lo), math.floor(good * (1.0 - 0.9 * tol))))


def _eps0_candidates(mechanism: str, target: float, n: int, delta: float, kw: dict, rtol: float,
                     tol: float) -> tuple[float, float]:
    """``(good, bad)``: the largest eps0 in ``[target, BEST_EPS0_MAX]`` where one round's delta at
    ``target / (1 + 4 rtol)`` meets ``delta``, and a point ``0.9 tol`` above it (which should
    fail), from :func:`_surrogate_root` on ``-log eps0``."""
    eps_s = target / (1.0 + 4.0 * rtol)

    def G(u: float) -> float:
        return _exponent_gap(_one_delta(mechanism, math.exp(-u), n, eps_s, delta, kw, rtol), delta)

    def done(lo: float, hi: float) -> bool:
        return hi - lo <= tol / 4

    lo_e, hi_e = target, BEST_EPS0_MAX   # start where the asymptotic form meets the target
    for _ in range(60):
        mid = 0.5 * (lo_e + hi_e)
        lo_e, hi_e = (mid, hi_e) if _vr_asymptotic_eps(mid, n, delta) <= target else (lo_e, mid)
    # log(-log delta) falls about twice as fast as log eps0 grows (measured on k-RR): the first step
    lo, hi = _surrogate_root(G, -math.log(BEST_EPS0_MAX), -math.log(target), -math.log(lo_e), 2.0, done,
                             lambda u: tol / 24)
    good = max(target, math.exp(-hi))
    return good, min(BEST_EPS0_MAX, good * (1.0 + 0.9 * tol))


def _refine_eps0(f, lo: float, lo_res: dict, hi: float, hi_res: dict, target: float, tol: float):
    """The forward-call search of ``solve_eps0`` inside a verified bracket (``lo`` meets the target,
    ``hi`` does not): probes both sides of the log-log interpolated crossing for a few rounds, then
    bisects on ``log eps0`` until the bracket is narrower than ``tol`` (relative)."""
    for _ in range(SOLVE_PROBE_ROUNDS):
        if hi - lo <= tol * lo:
            break
        x = _crossing(math.log(lo), math.log(hi), _gap_log(lo_res, target), _gap_log(hi_res, target))
        for probe in (math.exp(x) * (1.0 - 0.3 * tol), math.exp(x) * (1.0 + 0.3 * tol)):
            if not (lo < probe < hi):
                continue
            res = f(probe)
            if res["eps"] <= target:
                lo, lo_res = probe, res
            else:
                hi, hi_res = probe, res
    while hi - lo > tol * lo:
        mid = math.sqrt(lo * hi)
        res = f(mid)
        if res["eps"] <= target:
            lo, lo_res = mid, res
        else:
            hi, hi_res = mid, res
    return lo, lo_res, hi, hi_res


def solve_eps0(mechanism: str, target_eps: float, n: int, delta: float, *, k=None, d=None, s=None,
               g=None, domain=None, rtol: float = 1e-5, tol: float = SOLVE_RTOL) -> dict:
    """Largest local eps0 (in ``(0, BEST_EPS0_MAX]``) whose shuffled eps at ``n`` users and ``delta``
    is at most ``target_eps`` by :func:`best_eps`'s upper bound.

    Sound in direction: the returned ``eps0`` is a point where the forward call was made and gave
    ``eps <= target_eps`` (returned beside it); ``fails_at``, within ``tol`` (relative) above it, is
    a point where the forward call gave more (None when ``BEST_EPS0_MAX`` itself qualifies and is
    the answer). ``eps0 = target_eps`` always qualifies (shuffling eps-LDP reports is eps-DP).
    First stage: the crossing located with one round's delta at the target (one evaluation per
    step, :func:`_eps0_candidates`), then two forward calls verify the answer and the failing
    point. Only if either disagrees (or the verified bracket is wider than ``tol``), the
    forward-call search (:func:`_refine_eps0`) continues from the verified points. The bound is
    not proven monotone in eps0: the answer is the edge of the bracket kept, each end verified.
    ``fail_certified``: the lower bound at ``fails_at`` also exceeds the target (no accountant
    could certify it there)."""
    start = time.perf_counter()
    target = check_eps0(target_eps, "target-eps", upper=math.inf)
    n, delta = check_n(n), check_delta(delta)
    if not (1e-9 <= tol <= 0.1):
        raise AccountantDomainError("tolerance", f"{tol!r} must lie in [1e-9, 0.1]")
    kw = {"k": k, "d": d, "s": s, "g": g, "domain": domain}
    calls = 0

    def f(e: float) -> dict:
        nonlocal calls
        calls += 1
        return _forward(mechanism, e, n, delta, kw, rtol)

    if target >= BEST_EPS0_MAX:
        res = f(BEST_EPS0_MAX)
        return _answer("eps0", BEST_EPS0_MAX, res, target, None, None, tol, calls, start)
    check_query(mechanism, target, n, delta, k)
    mechanism_params(mechanism, target, **kw)   # flags checked before the search
    ok, fail = _verify(f, *_eps0_candidates(mechanism, target, n, delta, kw, rtol, tol), target)
    (lo, lo_res), (hi, hi_res) = ok or (target, None), fail or (BEST_EPS0_MAX, None)
    if lo >= BEST_EPS0_MAX:
        return _answer("eps0", lo, lo_res, target, None, None, tol, calls, start)
    lo_res, hi_res = lo_res or f(lo), hi_res or f(hi)
    if hi_res["eps"] <= target:   # BEST_EPS0_MAX qualifies
        return _answer("eps0", hi, hi_res, target, None, None, tol, calls, start)
    lo, lo_res, hi, hi_res = _refine_eps0(f, lo, lo_res, hi, hi_res, target, tol)
    return _answer("eps0", lo, lo_res, target, hi, hi_res, tol, calls, start)


def _verify(f, good, bad, target: float) -> tuple[tuple | None, tuple | None]:
    """Forward calls at the surrogate's answer ``good`` and failing point ``bad``: ``(ok, fail)``,
    the point verified to meet the target nearest to the boundary and the one verified to miss
    it, each ``(value, forward result)`` or None."""
    res = f(good)
    if res["eps"] > target:
        return None, (good, res)
    bad_res = f(bad)
    return ((good, res), (bad, bad_res)) if bad_res["eps"] > target else ((bad, bad_res), None)


def _refine_n(f, lo: int, lo_res: dict, hi: int, hi_res: dict, target: float, tol: float):
    """The forward-call search of ``solve_n`` inside a verified bracket (``lo`` fails the target,
    ``hi`` meets it): steps from the failing end by eps ~ 1/sqrt(n), probes both sides of the
    log-log interpolated crossing for a few rounds, then bisects on ``log n`` until the bracket is
    within ``tol`` (relative, at least one user)."""
    for _ in range(3):
        guess = int(min(max(lo * (lo_res["eps"] / target) ** 2 * 1.02, lo + 1), hi - 1))
        if hi - lo <= max(1, tol * lo) or not lo < guess < hi:
            break
        res = f(guess)
        if res["eps"] <= target:
            hi, hi_res = guess, res
            break
        lo, lo_res = guess, res
    for _ in range(SOLVE_PROBE_ROUNDS):
        if hi - lo <= max(1, tol * lo):
            break
        x = math.exp(_crossing(math.log(lo), math.log(hi), _gap_log(lo_res, target), _gap_log(hi_res, target)))
        for probe in sorted({math.floor(x * (1.0 - 0.3 * tol)), math.ceil(x * (1.0 + 0.3 * tol))}):
            if not (lo < probe < hi):
                continue
            res = f(probe)
            if res["eps"] <= target:
                hi, hi_res = probe, res
            else:
                lo, lo_res = probe, res
    while hi - lo > max(1, tol * lo):
        mid = max(lo + 1, min(hi - 1, int(math.sqrt(lo * hi))))
        res = f(mid)
        if res["eps"] <= target:
            hi, hi_res = mid, res
        else:
            lo, lo_res = mid, res
    return lo, lo_res, hi, hi_res


def solve_n(mechanism: str, target_eps: float, eps0: float, delta: float, *, k=None, d=None, s=None,
            g=None, domain=None, rtol: float = 1e-5, tol: float = SOLVE_RTOL) -> dict:
    """Smallest number of users ``n`` (in ``[2, N_MAX]``) whose shuffled eps at ``eps0`` and ``delta``
    is at most ``target_eps`` by :func:`best_eps`'s upper bound.

    Sound in direction: the returned ``n`` is a point where the forward call gave ``eps <=
    target_eps``. It also holds at every larger n: the true worst-case eps does not increase with
    n (the shuffled output of n + 1 users is a post-processing of that of n users: add one more
    independent report), so it stays below the certified value. ``fails_at`` (a verified failing
    n) is within ``tol`` (relative, at least one user) below the answer. n = 2 is tried first;
    then the crossing is located with one round's delta at the target (one evaluation per step,
    :func:`_n_candidates`) and two forward calls verify the answer and the failing point; only if
    either disagrees (or the verified bracket is wider than ``tol``), the forward-call search
    (:func:`_refine_n`) continues from the verified points. A target not met at ``N_MAX`` users
    raises :class:`AccountantDomainError` naming ``--target-eps``."""
    from shuffledp.accountants.validation import N_MAX

    start = time.perf_counter()
    target = check_eps0(target_eps, "target-eps", upper=math.inf)
    eps0, delta = check_eps0(eps0, upper=BEST_EPS0_MAX), check_delta(delta)
    if not (1e-9 <= tol <= 0.1):
        raise AccountantDomainError("tolerance", f"{tol!r} must lie in [1e-9, 0.1]")
    kw = {"k": k, "d": d, "s": s, "g": g, "domain": domain}
    calls = 0

    def f(m: int) -> dict:
        nonlocal calls
        calls += 1
        return _forward(mechanism, eps0, m, delta, kw, rtol)

    lo, lo_res = 2, f(2)
    if lo_res["eps"] <= target:
        return _answer("n", 2, lo_res, target, None, None, tol, calls, start)
    good, bad = _n_candidates(mechanism, target, eps0, delta, kw, rtol, tol)
    ok, fail = _verify(f, good, bad, target)
    (lo, lo_res), (hi, hi_res) = fail or (lo, lo_res), ok or (N_MAX, None)
    if hi_res is None:
        hi_res = fail[1] if good >= N_MAX else f(N_MAX)
        if hi_res["eps"] > target:
            raise AccountantDomainError("target-eps", f"{target!r} is not met at n <= {N_MAX:.0e} users "
                                                      f"(eps there: {hi_res['eps']:.6g})")
    lo, lo_res, hi, hi_res = _refine_n(f, lo, lo_res, hi, hi_res, target, tol)
    return _answer("n", hi, hi_res, target, lo, lo_res, tol, calls, start)
