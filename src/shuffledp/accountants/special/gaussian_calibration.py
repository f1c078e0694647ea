"""The analytic Gaussian calibration's bisection (Balle and Wang 2018) for many (eps, delta) pairs at
once, with the privacy profile evaluated only where its comparison with delta is in question.

:func:`analytic_sigmas` returns, bit for bit, what the plain vectorised bisection returns (every
element's bracket ``[1e-6, hi]``, ``hi`` doubled from 1 while ``prof(hi) > delta``, then geometric
midpoints until no bracket changes): the same points in the same order, each step's outcome
``prof(point) > delta`` the same. The profile ``prof(s) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)``
is decreasing in ``s`` (its derivative is ``-phi(1/(2s) - eps s) / s^2``). Newton steps on
``log prof`` find each element's root ``r`` first; the points ``a = r (1 - m)`` and ``b = r (1 + m)``
are evaluated and *certified* (``prof(a) > delta >= prof(b)``, as computed), and a step whose point
lies at or below ``a`` is decided "above delta", one at or above ``b`` "not above", without
evaluating the profile there. ``m`` is :data:`SAFETY` times the error of the evaluated profile,
expressed as a relative error of ``s``: its two terms' rounding (a few units in the last place,
times ``1 + v^2`` for the argument's), amplified by their cancellation (their size over delta) and
divided by the profile's slope (``phi(v) / (s delta)`` relative), at least :data:`MARGIN_MIN`. A point
that far from the root compares as the root's side says. An element whose root or certification
fails is evaluated at every step, as in the plain bisection. Elements are independent: a subset's
profile is the same arithmetic on the same doubles (``special.ndtr`` and IEEE operations, elementwise).
"""

from __future__ import annotations

import math

import numpy as np

MARGIN_MIN = 1e-12   # least relative distance from the root at which a point's side is taken as known
SAFETY = 1e4         # the margin over the profile's estimated rounding error (relative, in s)
_ULP = 2.0 ** -52
_NEWTON_STEPS = 40


def profile(s, eps, e_eps, out: tuple | None = None):
    """``Phi(0.5/s - eps s) - e^eps Phi(-0.5/s - eps s)`` elementwise (the operations and order of the
    plain bisection: the same doubles), in the three buffers ``out`` if given (fresh arrays of this
    size cost more in page faults than the arithmetic)."""
    from scipy import special

    t, u, v = out if out is not None else (np.empty(s.shape), np.empty(s.shape), np.empty(s.shape))
    np.multiply(eps, s, out=u)
    np.subtract(np.divide(0.5, s, out=t), u, out=v)
    special.ndtr(v, out=v)
    np.subtract(np.divide(-0.5, s, out=t), u, out=t)
    special.ndtr(t, out=t)
    return np.subtract(v, np.multiply(e_eps, t, out=t), out=v)


def analytic_sigmas(eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """``hi`` of the plain bisection for each element of the 1-d arrays ``eps`` and ``delta`` (the
    smallest sigma found with ``prof(sigma) <= delta``)."""
    e_eps = np.exp(eps)   # the same doubles at every step
    a, b = certified_sides(eps, e_eps, delta)
    n = eps.size
    bufs = (np.empty(n), np.empty(n), np.empty(n))
    flags = (np.empty(n, dtype=bool), np.empty(n, dtype=bool), np.empty(n, dtype=bool))
    lo, hi = np.full(n, 1e-6), np.full(n, 1.0)
    for _ in range(60):
        bad = _above(hi, a, b, eps, e_eps, delta, bufs, flags)
        if not bad.any():
            break
        hi = np.where(bad, hi * 2, hi)
    mid = np.empty(n)
    for _ in range(80):
        np.sqrt(np.multiply(lo, hi, out=mid), out=mid)
        over = _above(mid, a, b, eps, e_eps, delta, bufs, flags)
        if not _moves(over, mid, lo, hi, flags[1], flags[2]):
            break   # every bracket at a fixed point: later steps change nothing
        np.copyto(lo, mid, where=over)            # lo, hi = where(over, mid, lo), where(over, hi, mid)
        np.copyto(hi, mid, where=np.logical_not(over, out=flags[2]))
    return hi


def _moves(over, mid, lo, hi, buf, tmp) -> bool:
    """Whether ``where(over, mid, lo)`` differs from ``lo`` or ``where(over, hi, mid)`` from ``hi``
    anywhere (the plain bisection's ``array_equal`` test; no NaN in the arrays)."""
    if np.logical_and(np.not_equal(mid, lo, out=buf), over, out=buf).any():
        return True
    np.logical_and(np.not_equal(mid, hi, out=buf), np.logical_not(over, out=tmp), out=buf)
    return bool(buf.any())


def _above(s, a, b, eps, e_eps, delta, bufs, flags) -> np.ndarray:
    """``profile(s) > delta`` where ``s`` lies strictly between ``a`` and ``b`` (evaluated on that
    subset only), the certified side elsewhere (in ``flags[0]``)."""
    over, ask = np.less_equal(s, a, out=flags[0]), flags[1]
    np.logical_and(np.greater(s, a, out=ask), np.less(s, b, out=flags[2]), out=ask)
    if ask.all():
        return np.greater(profile(s, eps, e_eps, bufs), delta, out=over)
    idx = np.flatnonzero(ask)
    if idx.size:
        over[idx] = profile(s[idx], eps[idx], e_eps[idx]) > delta[idx]
    return over


def certified_sides(eps, e_eps, delta) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)``: points below and above each element's root with ``profile(a) > delta`` and
    ``profile(b) <= delta`` as evaluated, at the relative distance the module's docstring states;
    ``(0, inf)`` (no step decided without evaluation) where the root search or that check fails."""
    from scipy import special

    r = _roots(eps, e_eps, delta)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        v = 0.5 / r - eps * r
        terms = special.ndtr(v) + e_eps * special.ndtr(-0.5 / r - eps * r)
        phi = np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
        m = np.maximum(MARGIN_MIN, SAFETY * _ULP * (1.0 + v * v) * terms * r / phi)
        a, b = r * (1.0 - m), r * (1.0 + m)
        ok = np.isfinite(r) & (m < 1e-3) & (profile(a, eps, e_eps) > delta) & (profile(b, eps, e_eps) <= delta)
    return np.where(ok, a, 0.0), np.where(ok, b, np.inf)


def _roots(eps, e_eps, delta) -> np.ndarray:
    """Root of ``log profile(e^x) = log delta`` (``x = log s``) for each element: Newton steps
    (``d log prof / dx = -phi(v) / (s prof)``) of at most 1 in ``x``, from the Dwork-Roth sigma;
    NaN where the steps did not settle (to ``MARGIN_MIN / 10``)."""
    x = np.log(np.sqrt(2 * np.log(1.25 / delta)) / eps)
    log_delta = np.log(delta)
    active = np.arange(eps.size)
    out = np.full(eps.size, np.nan)
    for _ in range(_NEWTON_STEPS):
        if not active.size:
            break
        s, e = np.exp(x), eps[active]
        p = profile(s, e, e_eps[active])
        v = 0.5 / s - e * s
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            step = (np.log(p) - log_delta[active]) * s * p / (np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi))
        # a profile at or below 0 (s far above the root) or a step that is not a number: leftwards
        step = np.where(np.isfinite(step) & (p > 0), np.clip(step, -1.0, 1.0), -1.0)
        x = x + step
        done = np.abs(step) <= 0.1 * MARGIN_MIN
        out[active[done]] = np.exp(x[done])
        active, x = active[~done], x[~done]
    return out
