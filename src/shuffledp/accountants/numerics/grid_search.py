"""Canonical search of a switch point on a fixed grid.

A monotone predicate on the grid ``y = k h`` (``k = 0, 1, 2, ...``) -- false below a switch, true
from it on -- has one *switch*: the ``k`` with ``pass(k)`` and not ``pass(k - 1)``. Searching for it
on the grid instead of on the real line makes the answer independent of the bracket the search
starts from: a wide bracket and a narrow one (say, the answer of a neighbouring problem) end on the
same ``k`` whenever the evaluated predicate is monotone along the grid.

* :func:`grid_switch` -- from an evaluated bracket ``(lo, hi)`` (``lo`` fails, ``hi`` passes) to
  an adjacent pair ``(k - 1, k)``, both evaluated: fails, passes. Probes are regula-falsi steps on a
  smooth proxy (e.g. ``log delta``), rounded up to the grid, with bisection steps when the proxy
  stalls; every probe narrows the bracket, so the search ends only on an evaluated adjacent pair.
* :func:`warm_bracket` -- a verified bracket grown geometrically around a hint ``(lo, hi)``.

If the evaluated predicate is not monotone along the grid (floating-point noise larger than one
grid step's change), several adjacent (fail, pass) pairs exist and the one found may depend on the
bracket; the result is still an evaluated passing point whose predecessor is evaluated and fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["grid_switch", "warm_bracket"]


def _inside(r: float, lo: int, hi: int) -> int | None:
    """``ceil(r)`` kept strictly inside ``(lo, hi)``; None when ``r`` is not finite or outside."""
    if not (math.isfinite(r) and lo < r < hi + 1):
        return None
    return min(max(math.ceil(r), lo + 1), hi - 1)


def _probe(lo: int, g_lo: float, hi: int, g_hi: float, last: tuple, stalls: int) -> int:
    """Next grid point strictly inside ``(lo, hi)``: a secant step through the last two evaluated
    points (rounded up), else regula falsi on the bracket's ends, else (no usable proxy, or two
    probes that did not halve the bracket) the midpoint."""
    mid = (lo + hi) // 2
    if stalls >= 2:
        return mid
    (x1, g1), (x2, g2) = last
    if g1 != g2 and math.isfinite(g1) and math.isfinite(g2):
        k = _inside(x2 - g2 * (x2 - x1) / (g2 - g1), lo, hi)
        if k is not None:
            return k
    if math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo > 0 > g_hi:
        return _inside(lo + g_lo * (hi - lo) / (g_lo - g_hi), lo, hi) or mid
    return mid


def _brent_narrow(passes, lo: int, g_lo: float, hi: int, g_hi: float) -> tuple[int, float, int, float]:
    """Brent's method (scipy's ``brentq``) on the proxy read at grid points (``x`` rounded up to
    the grid), stopped at half a grid step: returns the tightest bracket its evaluations verify."""
    from scipy.optimize import brentq

    seen: dict[int, tuple[bool, float]] = {lo: (False, g_lo), hi: (True, g_hi)}

    def g(x: float) -> float:
        k = min(max(math.ceil(x), lo), hi)
        if k not in seen:
            seen[k] = passes(k)
        return seen[k][1]

    try:
        brentq(g, float(lo), float(hi), xtol=0.5, rtol=4 * 2.0**-52, maxiter=100)
    except (ValueError, RuntimeError):
        pass
    for k, (ok, gk) in seen.items():
        if ok and k < hi:
            hi, g_hi = k, gk
    for k, (ok, gk) in seen.items():
        if not ok and lo < k < hi:
            lo, g_lo = k, gk
    return lo, g_lo, hi, g_hi


def grid_switch(passes: Callable[[int], tuple[bool, float]], lo: int, g_lo: float, hi: int, g_hi: float,
                max_iter: int = 200) -> tuple[int, int]:
    """Adjacent evaluated pair ``(k - 1, k)``: ``passes(k - 1)`` false, ``passes(k)`` true.

    ``passes(k) -> (ok, g)``: the predicate at grid point ``k`` and a proxy ``g`` (roughly linear
    in ``k``, positive where the predicate fails and negative where it holds; used only to choose
    probes). The caller has evaluated ``lo`` (fails, proxy ``g_lo``) and ``hi`` (passes, ``g_hi``),
    ``lo < hi``. Every probe lies strictly inside the bracket and replaces one end, so the search
    ends only on an evaluated adjacent pair: a probe of the predecessor of a passing point that
    passes too becomes the new upper end, and the search goes on below it."""
    lo, hi = int(lo), int(hi)
    if not lo < hi:
        raise ValueError(f"grid_switch: need lo < hi, got {lo}, {hi}")
    if hi - lo > 2 and g_lo > 0 > g_hi:
        lo, g_lo, hi, g_hi = _brent_narrow(passes, lo, g_lo, hi, g_hi)
    stalls, last = 0, ((lo, g_lo), (hi, g_hi))
    for _ in range(max_iter):
        if hi - lo <= 1:
            break
        width = hi - lo
        k = _probe(lo, g_lo, hi, g_hi, last, stalls)
        ok, g = passes(k)
        if ok:
            hi, g_hi = k, g
        else:
            lo, g_lo = k, g
        last = (last[1], (k, g))
        stalls = 0 if 2 * (hi - lo) <= width else stalls + 1
    return lo, hi


def warm_bracket(passes: Callable[[int], tuple[bool, float]], lo: int | None, hi: int | None,
                 k_min: int, k_max: int) -> tuple[int, float, int, float]:
    """A verified bracket around the hint ``lo < hi`` (``lo`` expected to fail, ``hi`` to pass; a
    missing side, None, is its limit): each end is evaluated; an end on the wrong side becomes the
    other end and is moved outwards by a width that grows by 4 each time (from the hint's width),
    up to the limits ``k_min`` (fails) and ``k_max`` (passes), which the caller has evaluated
    (``passes`` should be memoised: they cost nothing again). Returns ``(lo, g_lo, hi, g_hi)``:
    ``lo`` evaluated failing, ``hi`` evaluated passing."""
    lo = k_min if lo is None else min(max(int(lo), k_min), k_max - 1)
    hi = k_max if hi is None else max(min(int(hi), k_max), lo + 1)
    step = max(4, hi - lo)
    ok, g_hi = passes(hi)
    while not ok and hi < k_max:          # the upper end fails: it is a verified lower end
        lo, hi = hi, min(k_max, hi + step)
        step *= 4
        ok, g_hi = passes(hi)
    ok, g_lo = passes(lo)
    while ok and lo > k_min:              # the lower end passes: it is a verified upper end
        lo, hi, g_hi = max(k_min, lo - step), lo, g_lo
        step *= 4
        ok, g_lo = passes(lo)
    return lo, g_lo, hi, g_hi
