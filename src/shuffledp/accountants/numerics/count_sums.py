"""The per-count sums of :func:`shuffledp.accountants.numerics.grouped.divergence_given_count` in
fewer passes over the count table, for the common case: the threshold's slope in ``a`` has one
sign over the whole table (its sign is that of ``k1``, a scalar: the table's binomial weights are
never negative), so every cell's region points the same way.

Every array here is the same function of the same arguments as in the general code of
:mod:`~shuffledp.accountants.numerics.grouped` (``_per_t``, ``_masses_of_terms``), element by
element, evaluated in the same order: the same numbers, bit for bit. What changes is the work
around them: no ``np.where`` over both branches where one direction is empty, results written in
place instead of into new arrays (each new array of a wide table is fresh memory to fault in),
and the table's eps-independent quantities (``B(t-1) / max(t, 1)``, ``t + 1``, ``t - 1``, whether
every ``t >= 1``, ``P_3 B(t)``) computed once per table (:func:`table_memo`) instead of once per eps.
"""

from __future__ import annotations

import numpy as np

__all__ = ["table_memo", "thresholds", "uniform_masses", "group_mass", "cell_sums", "near_integer",
           "chernoff_bisect"]


def table_memo(memo: dict, t: np.ndarray, Bt1: np.ndarray) -> dict:
    """The eps-independent arrays of one count table, computed at its first use and kept in
    ``memo`` (the table's own dict): ``ratio = B(t-1) / max(t, 1)``, ``t + 1``, ``t - 1``,
    whether every ``t >= 1`` and whether every ratio is finite."""
    if "ratio" not in memo:
        memo["ratio"] = Bt1 / np.maximum(t, 1.0)
        memo["t_plus"] = t + 1.0
        memo["t_minus"] = t - 1.0
        memo["nonempty"] = bool(np.all(t >= 1))
        memo["finite"] = bool(np.all(np.isfinite(memo["ratio"])))
    return memo


def scaled(memo: dict, key: float, Bt: np.ndarray) -> np.ndarray:
    """``key * B(t)`` (a group's coefficient times the weights), kept per coefficient."""
    got = memo.get(("scaled", key))
    if got is None:
        got = memo[("scaled", key)] = key * Bt
    return got


def thresholds(memo: dict, t, Bt1, Bt, pi: float, k1: float, c2: float, c3: float):
    """``(a0, up, neg, flat, safe, cross, icpt_a, icpt_b)`` of ``_per_t`` for a scalar ``k1`` that
    is finite and non-zero (the caller's condition): the slope ``ratio * k1`` is then ``>= 0``
    everywhere (``k1 > 0``) or ``<= 0`` (``k1 < 0``), zero exactly where the slope is ``flat``.
    ``flat`` is None when no cell is flat."""
    slope = memo["ratio"] * k1
    icpt_a = Bt1 * c2
    icpt_a /= 1.0 - pi
    icpt_b = c3 * Bt
    icpt = icpt_a + icpt_b
    flat = None if slope.all() else slope == 0.0
    if flat is None:
        safe = slope
    else:
        safe = slope.copy()
        safe[flat] = 1.0
    cross = np.negative(icpt)
    cross /= safe
    if flat is not None:
        cross[flat] = 0.0
    if k1 > 0.0:
        a0 = np.floor(cross)
        a0 += 1.0
    else:
        a0 = np.ceil(cross)
        a0 -= 1.0
    if flat is not None:
        a0[flat] = np.where(icpt[flat] > 0, 0.0, memo["t_plus"][flat])
    np.clip(a0, -1.0, memo["t_plus"], out=a0)
    if k1 > 0.0:
        up, neg = np.ones(t.shape, dtype=bool), np.zeros(t.shape, dtype=bool)
    else:
        neg = slope < 0.0
        up = ~neg
    return a0, up, neg, flat, safe, cross, icpt_a, icpt_b


def uniform_masses(memo: dict, t, a0, pi: float, upward: bool, inc, pm):
    """``(T1, T2, T3)`` of ``_masses_of_terms`` when every cell's region is upward (``inc``, ``pm``:
    the terms ``inc_up``, ``pm_lo``) or every one downward (``inc_dn``, ``pm_at``); ``inc`` is
    overwritten."""
    if not inc.flags.writeable:
        inc = inc.copy()
    big = a0 > memo["t_minus"]
    small = a0 < 1.0
    # t_up = where(small, 1, where(big, 0, inc_up)); t_dn = where(small, 0, where(big, 1, inc_dn))
    inc[big] = 0.0 if upward else 1.0
    inc[small] = 1.0 if upward else 0.0
    if upward:
        T2, T1 = inc, inc + pm
    else:
        T1, T2 = inc, inc + pm
    if memo["nonempty"]:
        T3 = pi * T1
        T3 += (1.0 - pi) * T2
        return T1, T2, T3
    nonempty = t >= 1
    T1 = np.where(nonempty, T1, 0.0)
    T2 = np.where(nonempty, T2, 0.0)
    empty_side = (a0 <= 0) if upward else (a0 >= 0)
    T3 = np.where(nonempty, pi * T1 + (1.0 - pi) * T2, empty_side.astype(float))
    return T1, T2, T3


def group_mass(coef: tuple, scaled_bt: np.ndarray, Bt1, T1, T2, T3) -> np.ndarray:
    """``B(t-1) (c_1 T1 + c_2 T2) + c_3 B(t) T3`` (``scaled_bt = c_3 B(t)``)."""
    out = coef[0] * T1
    out += coef[1] * T2
    out *= Bt1
    out += scaled_bt * T3
    return out


def cell_sums(pmass, qmass, ee: float, rtol: float, upper: bool):
    """``(s, allowance)`` or, not ``upper``, the per-row sum of ``(s - allowance)_+``."""
    eq = ee * qmass
    s = pmass - eq
    eq += pmass
    eq *= rtol
    if not upper:
        s -= eq
        np.maximum(s, 0.0, out=s)
        return np.sum(s, axis=-1)
    return s, eq


def near_integer(cross, safe, icpt_a, icpt_b, flat) -> np.ndarray:
    """The cells whose threshold ``cross`` lies within its rounding error of an integer:
    ``|cross - round(cross)| <= 1e-9 ((|icpt_a| + |icpt_b|) / |safe| + |cross| + 1)``, flat ones excepted."""
    err = np.abs(icpt_a)
    err += np.abs(icpt_b)
    err /= np.abs(safe)
    err += np.abs(cross)
    err += 1.0
    err *= 1e-9
    gap = np.round(cross)
    np.subtract(cross, gap, out=gap)
    np.abs(gap, out=gap)
    near = gap <= err
    if flat is not None:
        near &= ~flat
    return near


def chernoff_bisect(N, near_a, far_a, L: float, ls: float, l1s: float):
    """The 60 bisection steps of :func:`~shuffledp.accountants.numerics.grouped.chernoff_ends`
    (rows: the lower and the upper end) where every midpoint lies in ``(1e-300, 1]`` (the caller
    checks ``s 2^-61 > 1e-300``: no midpoint of the lower end falls below it): its ``where(a > 0,
    ..)`` and ``maximum(a, 1e-300)`` change nothing there, ``where(a < 1, ..)`` only at ``a = 1``,
    and ``N kl - L < 0`` is ``N kl < L`` (the rounded difference of two doubles keeps its sign).
    The same steps, in place: the same ends."""
    mid = np.empty_like(near_a)
    for _ in range(60):
        np.add(near_a, far_a, out=mid)
        mid *= 0.5
        kl = np.log(mid)
        kl -= ls
        kl *= mid                      # a (log a - log s)
        rest = np.negative(mid)
        np.log1p(rest, out=rest)
        rest -= l1s
        rest *= 1.0 - mid              # (1 - a) (log(1 - a) - log(1 - s))
        top = mid >= 1.0
        if top.any():
            rest[top] = -l1s
        kl += rest
        kl *= N
        inside = kl < L
        np.copyto(near_a, mid, where=inside)
        np.copyto(far_a, mid, where=~inside)
    return near_a, far_a
