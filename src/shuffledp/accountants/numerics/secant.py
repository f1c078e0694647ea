"""Solving ``delta(eps) = delta`` for eps from verified evaluations, rounded to the safe side:
the search of the decomposition accountant and of the exact-pair lower bounds."""

from __future__ import annotations

import math


def _search_gap(value: float, root_t: float) -> float:
    """The search's coordinate of a divergence ``value`` against the target: ``sqrt(log(1/delta))
    - sqrt(log(1/value))``, ``<= 0`` exactly when ``value <= delta``. Divergences decay like
    ``exp(-c eps^2)`` in the tail, so this is nearly linear in eps where ``log value`` is not."""
    return root_t - math.sqrt(max(-math.log(max(value, 1e-300)), 0.0))


def _secant_step(pts: list, lo: float, hi: float, ends: dict, shrink: list) -> float:
    """Next point of :func:`secant_eps` (``pts``: ``(x, gap, value)`` of every evaluation): the
    secant through the last two points whose values occur once (equal values mark a plateau, e.g.
    where the charged truncated mass is all that is left, and say nothing of the slope), a small
    step from the first point. Once the bracket's two ends are both evaluated, a secant leaving
    the bracket gives way to regula falsi on the ends (Illinois: the caller halves the value of
    the end kept twice in a row), and the midpoint is taken when the bracket has not halved over
    the last three steps or its upper end lies on a plateau."""
    values = [v for _, _, v in pts]
    good = [(x, g) for x, g, v in pts if values.count(v) == 1]
    r = None
    if len(good) >= 2 and good[-1][1] != good[-2][1]:
        (x0, g0), (x1, g1) = good[-2], good[-1]
        r = x1 - g1 * (x1 - x0) / (g1 - g0)
    if "lo" not in ends or "hi" not in ends:
        if r is None:
            x, gx, v = pts[-1]
            r = x * (1.002 if gx > 0 else 0.998) if values.count(v) == 1 else 0.5 * (lo + hi)
        return r
    if len(shrink) >= 4 and shrink[-1] > 0.5 * shrink[-4]:
        return 0.5 * (lo + hi)
    if r is not None and lo < r < hi:
        return r
    g_lo, g_hi = ends["lo"], ends["hi"]
    plateau = values.count(ends["hi_value"]) > 1
    return lo - g_lo * (hi - lo) / (g_hi - g_lo) if g_hi < 0 < g_lo and not plateau else 0.5 * (lo + hi)


def secant_eps(fn, delta: float, lo: float, hi: float, guess: float, rtol: float, *,
               side: str = "upper", max_eval: int = 40) -> float:
    """Root of a non-increasing ``fn`` at ``delta`` given ``fn(lo) > delta >= fn(hi)``.

    ``side="upper"``: the smallest eps found with ``fn(eps) <= delta`` (a verified point; for an
    upper bound ``fn`` this eps is certified). ``side="lower"``: the largest eps found with
    ``fn(eps) > delta`` (a verified point; for a lower bound ``fn`` the mechanism is not
    (eps, delta)-DP there). Secant steps on :func:`_search_gap` from ``guess``, each proposal
    nudged by ``rtol/4`` towards the wanted side; the search stops once a proposal lands on the
    wanted side within ``rtol`` of the previous point, or the bracket is narrower than ``rtol``.
    Once both ends of the bracket are evaluated, :func:`_secant_step` safeguards the steps
    (regula falsi, Illinois, bisection when the bracket stops halving): only the number of
    evaluations depends on it, every returned end is an evaluated point.
    """
    if side not in ("upper", "lower"):
        raise ValueError(f"side must be 'upper' or 'lower', got {side!r}")
    root_t = math.sqrt(-math.log(delta))
    pts: list[tuple[float, float]] = []
    ends: dict[str, float] = {}
    shrink: list[float] = []
    last_end = ""
    nudge = 1.0 + rtol / 4.0 if side == "upper" else 1.0 - rtol / 4.0
    x = min(max(guess, lo), hi)
    while len(pts) < max_eval and hi - lo > rtol * hi:
        v = fn(x)
        gx = _search_gap(v, root_t)
        pts.append((x, gx, v))
        end = "hi" if gx <= 0 else "lo"
        if end == "hi":
            hi = min(hi, x)
        else:
            lo = max(lo, x)
        if end == last_end and ("lo" if end == "hi" else "hi") in ends:
            ends["lo" if end == "hi" else "hi"] *= 0.5  # Illinois: the stale end's value halved
        ends[end], ends[end + "_value"], last_end = gx, v, end
        if "lo" in ends and "hi" in ends:
            shrink.append(hi - lo)
        r = _secant_step(pts, lo, hi, ends, shrink)
        on_side = gx <= 0 if side == "upper" else gx > 0
        if on_side and abs(r - x) <= rtol * x / 2:
            break
        cand = r * nudge
        x = cand if lo < cand < hi else 0.5 * (lo + hi)
    return hi if side == "upper" else lo


def asymptotic_guess(k: int, eps0: float, n: int, delta: float) -> float:
    """A starting point only: the leading-order shuffled eps of k-RR,
    ``sqrt(8 (e^eps0 + k - 1) log(2/delta) / (k n))`` scaled by ``(e^eps0 - 1)/(e^eps0 + 1)``."""
    e = math.exp(eps0)
    return max(1e-9, (e - 1.0) / (e + 1.0) * math.sqrt(8.0 * (e + k - 1.0) * math.log(2.0 / delta) / (k * n)))
