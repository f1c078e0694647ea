"""MHM's hash randomizer (the multidimensional seed, Sec. 4) for the blanket-decomposition accountant.

The randomizer as :mod:`shuffledp.protocols.mhm` runs it: a user with ``d`` attributes draws a
hash index ``t``, hashes attribute ``j`` with function ``t + j`` into ``[g]``, and reports ``(t, y)``
with ``y`` each of the ``l`` *distinct* hashed values with probability ``p = e^eps0 / (d e^eps0 + g - d)``
and each other value with ``(1 - l p) / (g - l)`` (:func:`shuffledp.mechanisms.collision.collision_report`).
Collisions (``l < d``) give the "miss" outputs more mass: ``d + 1`` probability levels per row.

Hash-family assumption (as for OLH): the ``d`` functions a user applies are independent draws from
the family of *all* functions on the attribute domains, so for inputs ``x, x'`` the hashed values
of distinct attribute values are independent and uniform on ``[g]``. The protocol's family
(:mod:`shuffledp.mechanisms.hashing`: keyed Carter-Wegman functions, consecutive indices) is only
pairwise independent up to a ``g / P`` rounding bias, so it is covered only approximately (as OLH's
is); a smaller family with other collision rates is a different randomizer.

Blanket: ``omega(t, y) = 1 / (|H| (d e^eps0 + g - d))``, the smallest probability of any row
(reached when the ``d`` hashed values are distinct and miss ``y``), valid for every domain; mass
``gamma = g / (d e^eps0 + g - d)``. A row's ratio to it is ``e^eps0`` where ``y`` is one of its hashed
values and ``c_l = ((d - l) e^eps0 + g - d) / (g - l)`` elsewhere, ``l`` its distinct count
(``c_d = 1``). Every ratio lies in ``[1, e^eps0]``: the randomizer is exactly eps0-LDP whatever
the collisions (:func:`mhm_local_eps`; the ratio ``e^eps0`` is attained by some pair when ``g > d``).

Victim pairs: ``x, x'`` differing in ``m`` of the ``d`` attributes (``1 <= m <= d``). Under the blanket
``y`` is uniform and independent of the hashes; :func:`mhm_group_law` gives the exact joint law of
(``y`` among ``x``'s hashes, ``x``'s distinct count, the same for ``x'``) by a dynamic programme over
the ``d + m`` independent hashed values; :func:`mhm_pair` merges it into the likelihood-ratio
groups (up to ``(d + 1)^2``).

What the accountant evaluates (:func:`mhm_pairs`):

* ``m = d``: ``x``'s and ``x'``'s hashes are independent, so ``u`` (``x``'s ratio) and ``v`` are
  independent under the blanket, each of the same ``d + 1``-level law. :func:`mhm_lattice_law`
  spreads each miss level ``c_l`` onto the lattice ``1 + h j`` (``h = (e^eps0 - 1) / K``) between
  its two neighbouring points, keeping its mean (convex order: an upper bound at every ``M`` and
  every eps, adding at most ``h^2 / 4`` of variance per report), and
  :class:`~shuffledp.accountants.numerics.lattice_sums.LatticeSums` evaluates the spread pair (the law of
  the lattice sums by convolution, coarsened by further mean-preserving spreads as it grows, every
  truncation and rounding charged). Where its rounding bound (growing like the count) exceeds
  ``LATTICE_REL_MAX``, or the cost ``LATTICE_BUDGET``, the older, looser spread answers: each ``c_l`` to
  ``e^eps0`` with probability ``(c_l - 1) / (e^eps0 - 1)`` and to 1 otherwise (``E[u' - e^eps v'
  | hashes] = u - e^eps v`` for every eps), the independent-flag pair of
  :mod:`~shuffledp.accountants.upper.flags` with ``alpha = beta = d / g``, ``u, v in {1, e^eps0}``.
* ``m < d``: the exact grouped pair of :func:`mhm_pair`. At each eps the accountant checks that
  its atoms (``z = u - e^eps v`` with the blanket's weights) are below those of the ``m = d``
  spread evaluated (the lattice pair, or the flag pair) in increasing convex order
  (:func:`icx_below`, with a rounding margin); then every sum of i.i.d. copies is too and the
  ``m = d`` value covers the pair. Where the check fails the pair is evaluated through
  :func:`~shuffledp.accountants.upper.decomposition.spread_to_three` (sound, looser).

Lower bound (:func:`mhm_real_pair_configs`): the victim's ``d`` attributes all differ between
``x`` and ``x'``; four output groups (``y`` among ``x``'s hashes only, ``x'``'s only, both,
neither); the other users all at ``x``, all at ``x'`` or all at a third input differing from
both in every attribute (their group law is then the blanket's: their hashes are independent
of the victim's and invariant under relabelling ``[g]``).
"""

from __future__ import annotations

import decimal
import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from shuffledp.accountants.numerics.grouped import GroupedPair, valid_eps0, valid_int
from shuffledp.accountants.numerics.lattice_sums import (
    LATTICE_BUDGET,
    UNIT,
    UNIT_LONG,
    LatticeSums,
    RoundingTooLarge,
    lattice_cost,
)
from shuffledp.accountants.upper.decomposition import THREE_M_CAP, three_group_cells
from shuffledp.accountants.upper.flags import FlagPair, flag_pair

__all__ = ["MHM_D_MAX", "mhm_levels", "mhm_local_eps", "mhm_group_law", "mhm_pair", "mhm_pairs",
           "MHMPair", "LevelPair", "icx_below",
           "mhm_lattice_law", "lattice_level_pair", "mhm_matrix", "mhm_blanket_cell", "mhm_real_pair_configs"]

MHM_D_MAX = 16  # the group-law programme: O(d^3) states per step, about d^2 steps over all m (0.2 s at 16)
MATRIX_MAX_CELLS = 4_000_000


def _check(d, g, eps0) -> tuple[int, int, float]:
    d = valid_int(d, "d", 1)
    if d > MHM_D_MAX:
        raise ValueError(f"d must be at most {MHM_D_MAX} for the MHM accountant, got {d}")
    g = valid_int(g, "g", d + 1)
    return d, g, valid_eps0(eps0)


def mhm_levels(d: int, g: int, eps0: float) -> tuple[float, np.ndarray]:
    """``(e^eps0, c)``: a row's ratio to the blanket at a hit, and ``c[l - 1] = c_l`` at a miss of a
    row with ``l`` distinct hashed values (``l = 1..d``)."""
    d, g, eps0 = _check(d, g, eps0)
    e = math.exp(eps0)
    ell = np.arange(1, d + 1, dtype=np.float64)
    return e, ((d - ell) * e + (g - d)) / (g - ell)


def mhm_blanket_cell(d: int, g: int, eps0: float) -> float:
    """``1 / (d e^eps0 + g - d)``: the blanket's probability of each ``y`` (per hash index)."""
    d, g, eps0 = _check(d, g, eps0)
    return 1.0 / (d * math.exp(eps0) + g - d)


def _step(law: np.ndarray, g: int, to_a: bool, to_b: bool) -> np.ndarray:
    """One more hashed value, uniform on [g], added to ``x``'s set (``to_a``), ``x'``'s (``to_b``)
    or both. ``law[a, b, c, ya, yb]``: ``a`` / ``b`` / ``c`` distinct non-``y`` values in ``x``'s set
    only / ``x'``'s only / both, ``ya`` / ``yb`` whether ``y`` is in the set."""
    D = law.shape[0]
    idx = np.arange(D, dtype=np.float64)
    a, b, c = idx[:, None, None, None, None], idx[None, :, None, None, None], idx[None, None, :, None, None]
    out = np.zeros_like(law)
    hit = law / g  # the value is y
    if to_a and to_b:
        out[:, :, :, 1, 1] += hit.sum(axis=(3, 4))
    elif to_a:
        out[:, :, :, 1, :] += hit.sum(axis=3)
    else:
        out[:, :, :, :, 1] += hit.sum(axis=4)
    fresh = law * (g - 1 - a - b - c) / g  # a new non-y value
    if to_a and to_b:
        out[:, :, 1:] += fresh[:, :, :-1]
    elif to_a:
        out[1:] += fresh[:-1]
    else:
        out[:, 1:] += fresh[:, :-1]
    # an existing value: in both sets already -> unchanged; in the set it joins -> unchanged;
    # in the other set only -> moves to "both"
    same = c + (0.0 if to_b else a) + (0.0 if to_a else b)
    out += law * same / g
    if not to_a or not to_b:
        mover = law * (b if to_a else a) / g
        if to_a:
            out[:, :-1, 1:] += mover[:, 1:, :-1]
        else:
            out[:-1, :, 1:] += mover[1:, :, :-1]
    else:
        out[:-1, :, 1:] += (law * a / g)[1:, :, :-1]
        out[:, :-1, 1:] += (law * b / g)[:, 1:, :-1]
    return out


def mhm_group_law(d: int, m: int, g: int) -> dict[tuple[int, int, int, int], float]:
    """Exact law of ``(y in x's hashes, x's distinct count, y in x''s hashes, x''s distinct count)``
    under the blanket (``y`` uniform, independent of the hashes) for a pair differing in ``m`` of
    ``d`` attributes: the ``d - m`` shared hashed values enter both sets, the ``2 m`` others one each."""
    d = valid_int(d, "d", 1)
    m = valid_int(m, "m", 1)
    g = valid_int(g, "g", d + 1)
    if m > d:
        raise ValueError(f"m must be at most d = {d}, got {m}")
    D = d + 1
    law = np.zeros((D, D, D, 2, 2))
    law[0, 0, 0, 0, 0] = 1.0
    for _ in range(d - m):
        law = _step(law, g, True, True)
    for _ in range(m):
        law = _step(law, g, True, False)
        law = _step(law, g, False, True)
    a, b, c, ya, yb = np.nonzero(law > 0)  # C order, as np.ndenumerate visits them
    la, lb = a + c + ya, b + c + yb
    code = ((ya * D + la) * 2 + yb) * D + lb
    keys, inv = np.unique(code, return_inverse=True)
    sums = np.bincount(inv, weights=law[a, b, c, ya, yb], minlength=keys.size)
    parts = np.stack([keys // (2 * D * D), keys // (2 * D) % D, keys // D % 2, keys % D], axis=1)
    return {tuple(int(x) for x in row): float(v) for row, v in zip(parts.tolist(), sums.tolist(), strict=True)}


def _offset(hit: int, ell: int, d: int, g: int, em1: float) -> float:
    """A row's ratio to the blanket minus 1, computed without cancellation: ``e^eps0 - 1`` at a hit,
    ``c_l - 1 = (d - l) (e^eps0 - 1) / (g - l)`` at a miss."""
    return em1 if hit else (d - ell) * em1 / (g - ell)


@dataclass(frozen=True)
class LevelPair(GroupedPair):
    """A grouped pair that also carries each group's ratios to the blanket minus 1 (``du`` under the
    first input, ``dv`` under the second), accurate where ``1 + du`` rounds (:func:`icx_below`)."""

    du: tuple[float, ...] = ()
    dv: tuple[float, ...] = ()


def mhm_pair(d: int, g: int, eps0: float, m: int) -> LevelPair:
    """The exact grouped pair of a victim whose two inputs differ in ``m`` of the ``d`` attributes:
    groups of equal ``(u, v)`` (ratios of the two rows to the blanket), blanket masses ``w``, the
    rows' masses ``p = gamma u w``, ``q = gamma v w``. Groups 1 and 2 are the extreme ratios
    ``(e^eps0, 1)`` and ``(1, e^eps0)`` (empty if no output has them)."""
    d, g, eps0 = _check(d, g, eps0)
    em1 = math.expm1(eps0)
    gamma = g * mhm_blanket_cell(d, g, eps0)
    merged: dict[tuple[float, float], float] = {}
    for (ha, la, hb, lb), pr in sorted(mhm_group_law(d, m, g).items()):
        key = (_offset(ha, la, d, g, em1), _offset(hb, lb, d, g, em1))
        merged[key] = merged.get(key, 0.0) + pr
    ends = [(em1, 0.0), (0.0, em1)]
    for key in ends:
        merged.setdefault(key, 0.0)
    keys = ends + sorted(k for k in merged if k not in ends)
    w = tuple(merged[k] for k in keys)
    p = tuple(gamma * (1.0 + k[0]) * merged[k] for k in keys)
    q = tuple(gamma * (1.0 + k[1]) * merged[k] for k in keys)
    return LevelPair(w, p, q, gamma, tuple(k[0] for k in keys), tuple(k[1] for k in keys))


def _levels(pair) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(w, du, dv, inner)`` of the non-empty groups of a :class:`LevelPair` or an
    :class:`MHMPair` (flags ``(1,0), (0,1), (1,1), (0,0)``); ``inner``: not one of the first two."""
    w = np.asarray(pair.w, dtype=np.float64)
    if isinstance(pair, MHMPair):
        em1 = pair.em1
        du, dv = np.array([em1, 0.0, em1, 0.0]), np.array([0.0, em1, em1, 0.0])
    else:
        du, dv = np.asarray(pair.du, dtype=np.float64), np.asarray(pair.dv, dtype=np.float64)
    keep = w > 0
    return w[keep], du[keep], dv[keep], (np.arange(w.size) >= 2)[keep]


ICX_MARGIN = 1e-12  # a comparison closer than this (relative to the summed magnitudes, about 4500 ulps:
# the rounding of the offsets, the weights and the sums is a few ulps of them) counts as failed


def _plus_sums(w, du, dv, kdu, kdv, ee: float) -> tuple[np.ndarray, np.ndarray]:
    """Per breakpoint ``k``: ``sum_i w_i (y_i - y_k)_+`` and ``sum_i w_i (y_k - y_i)_+`` with
    ``y = du - e^eps dv`` (the atoms up to the factor gamma and the common shift ``gamma (1 - e^eps)``),
    every difference formed from the offsets (no cancellation of large equal terms)."""
    diff = (du[None, :] - kdu[:, None]) - ee * (dv[None, :] - kdv[:, None])
    return (w[None, :] * np.maximum(diff, 0.0)).sum(axis=1), (w[None, :] * np.maximum(-diff, 0.0)).sum(axis=1)


def _plus_sums_sorted(w, du, dv, kdu, kdv, ee: float):
    """:func:`_plus_sums` in ``O((n + k) log n)`` from sorted suffix sums, with ``err``: a bound on
    either sum's error per breakpoint (each ``y = du - e^eps dv`` within ``2 UNIT`` of its terms,
    the sums 1-Lipschitz in every ``y``, and the cumulative sums' rounding)."""
    y, ky = du - ee * dv, kdu - ee * kdv
    order = np.argsort(y)
    ys, ws = y[order], w[order]
    s0 = np.append(np.cumsum(ws[::-1])[::-1], 0.0)
    s1 = np.append(np.cumsum((ws * ys)[::-1])[::-1], 0.0)
    p0, p1 = np.concatenate([[0.0], np.cumsum(ws)]), np.concatenate([[0.0], np.cumsum(ws * ys)])
    idx = np.searchsorted(ys, ky, side="right")
    total = float(ws.sum())
    err = 2.0 * UNIT * (float(np.dot(w, np.abs(du) + ee * np.abs(dv))) + (np.abs(kdu) + ee * np.abs(kdv)) * total)
    err = err + 4.0 * (ys.size + 2) * UNIT * (float(np.dot(ws, np.abs(ys))) + np.abs(ky) * total)
    return s1[idx] - ky * s0[idx], ky * p0[idx] - p1[idx], err


def _icx_verdict(sums_l, sums_h, margin, each: bool = False):
    """True when ``f < 0`` is certified at every breakpoint (``each``: the verdict per breakpoint)."""
    (up_l, dn_l), (up_h, dn_h) = sums_l, sums_h
    # the two forms differ by the means (equal): take the one with the smaller magnitudes
    use_up = up_l + up_h <= dn_l + dn_h
    diff = np.where(use_up, up_l - up_h, dn_l - dn_h)
    mag = np.where(use_up, up_l + up_h, dn_l + dn_h)
    ok = diff < -(ICX_MARGIN * mag + margin)
    return ok if each else bool(np.all(ok))


def _anchored_sums(w, du, dv, kdu, kdv, ee: float):
    """Per breakpoint ``t = kdu - e^eps kdv``: ``F(t) = E(Y - t)_+ - (-t)_+ = sum_i w_i (max(y_i, t)
    - max(0, t))`` (the law's mass is 1) with ``y = du - e^eps dv``, its magnitude ``sum_i w_i |.|``
    and a bound on its rounding error. ``f = F_lo - F_hi`` is :func:`icx_below`'s ``f`` (the common
    ``(-t)_+`` cancels exactly, not in floating point): no term of the size of ``t`` is formed
    where ``t <= 0`` (``max(y_i, t)``), and ``(y_i - t)_+`` from the offsets where ``t > 0``.
    Errors: each ``y_i`` and ``t`` within ``8 UNIT`` of its terms (the offsets' own rounding
    included); ``F`` moves with ``y_i`` only where ``y_i`` may lie above ``t`` and with ``t``
    (slope ``Pr[Y < t]`` or ``Pr[Y > t]``, at most 1 across 0) only over the atoms on that side."""
    t = kdu - ee * kdv
    dy = 8.0 * UNIT * (np.abs(du) + ee * np.abs(dv))
    dt = 8.0 * UNIT * (np.abs(kdu) + ee * np.abs(kdv))
    diff = (du[None, :] - kdu[:, None]) - ee * (dv[None, :] - kdv[:, None])  # y_i - t, no cancellation
    slack = dy[None, :] + dt[:, None]
    neg = (t <= 0.0)[:, None]
    terms = np.where(neg, np.maximum(du - ee * dv, t[:, None]), np.maximum(diff, 0.0))
    above, below = diff > -slack, diff < slack
    err_terms = np.where(neg, dy[None, :] * above + dt[:, None] * below, slack * above)
    err = (w[None, :] * err_terms).sum(axis=1) + np.where(np.abs(t) <= dt, dt, 0.0)
    return (w[None, :] * terms).sum(axis=1), (w[None, :] * np.abs(terms)).sum(axis=1), err


def icx_below(lo, hi, ee: float) -> bool:
    """True when the atoms ``z = (p - e^eps q) / w`` of ``lo`` (weights ``w``) are below those of
    ``hi`` in increasing convex order, checked with a margin.

    Both are pairs of this randomizer under its blanket whose groups 1 and 2 are the outputs with
    ratios ``(e^eps0, 1)`` and ``(1, e^eps0)`` (:func:`mhm_pair`, :func:`mhm_pairs`): every atom lies
    between those two values, which both pairs have, and both means are ``1 - e^eps`` (each row's
    mean ratio to the blanket is ``1 / gamma``). So ``f(k) = E(Z_lo - k)_+ - E(Z_hi - k)_+`` is 0
    at and beyond the two extremes, and piecewise linear between with breakpoints at the other
    atoms: ``f <= 0`` everywhere iff ``f < 0`` (here: below ``-ICX_MARGIN`` of the magnitudes) at
    every other atom of either pair. Then ``E(Z_lo,1 + ... + Z_lo,N)_+ <= E(Z_hi,1 + ... + Z_hi,N)_+``
    for every ``N``: ``hi``'s decomposed divergence covers ``lo``'s at this eps."""
    wl, ul, vl, il = _levels(lo)
    wh, uh, vh, ih = _levels(hi)
    kdu = np.concatenate([ul[il], uh[ih]])
    kdv = np.concatenate([vl[il], vh[ih]])
    if kdu.size == 0:
        return True
    # first from sorted sums with their error bounds (fast: a lattice pair has many groups); where
    # that cannot decide, every difference formed from the offsets (no cancellation)
    *fl, err_l = _plus_sums_sorted(wl, ul, vl, kdu, kdv, ee)
    *fh, err_h = _plus_sums_sorted(wh, uh, vh, kdu, kdv, ee)
    if _icx_verdict(fl, fh, err_l + err_h):
        return True
    sure = _icx_verdict(_plus_sums(wl, ul, vl, kdu, kdv, ee), _plus_sums(wh, uh, vh, kdu, kdv, ee), 0.0, each=True)
    if np.all(sure):
        return True
    # where both forms lose the difference to one large common term (t near -e^eps times a small
    # offset: the heavy atom at 0 contributes -t to both), the anchored form decides
    kdu, kdv = kdu[~sure], kdv[~sure]
    (fl, ml, el), (fh, mh, eh) = _anchored_sums(wl, ul, vl, kdu, kdv, ee), _anchored_sums(wh, uh, vh, kdu, kdv, ee)
    return bool(np.all(fl - fh < -(ICX_MARGIN * (ml + mh) + el + eh)))


LATTICE_K_MAX = 256  # lattice steps between the ratios 1 and e^eps0 at most (finer: measured no gain, slower at d = 16)
LATTICE_MIN_GAIN = 2e-3  # the lattice is used where the flags' variance exceeds its own by more
LATTICE_REL_MAX = 0.05  # the lattice's rounding bound (it grows like the count) at most this, else the flags
LATTICE_REL_FLAGS = 1e-3  # above this bound the flag pair is evaluated too and the smaller value kept
LATTICE_LONG_FROM = 2e9  # counts above this: the laws in long double (in double their rounding bound,
# about 1.5e-14 per report, would pass 1e-4 by about 6e9)
LATTICE_PER_SD = 8  # blanket counts evaluated on the lattice per standard deviation of the count, at least
# (the others take the value of the evaluated count below them)


def _distinct_counts(d: int, g: int) -> tuple[list[int], list[int]]:
    """Exact integer counts, out of ``g^d`` equally likely hash vectors, of ``x``'s ``d`` hashed values
    against a fixed blanket output ``y``: ``miss[l]`` with ``l`` distinct values none of them ``y``,
    ``hit[l]`` with ``l`` distinct values one of them ``y`` (a programme over the values one at a
    time: ``y`` in one way, a value already drawn in ``l`` ways, a new one in the rest)."""
    miss, hit = [1] + [0] * d, [0] * (d + 1)
    for _ in range(d):
        new_miss, new_hit = [0] * (d + 1), [0] * (d + 1)
        for ell in range(d):
            if miss[ell]:
                new_hit[ell + 1] += miss[ell]  # the value is y
                new_miss[ell] += miss[ell] * ell
                new_miss[ell + 1] += miss[ell] * (g - 1 - ell)
            if hit[ell]:
                new_hit[ell] += hit[ell] * ell  # y or another drawn value
                new_hit[ell + 1] += hit[ell] * (g - ell)
        if hit[d]:
            new_hit[d] += hit[d] * d
        miss, hit = new_miss, new_hit
    return miss, hit


def _to_long(x: Fraction) -> np.longdouble:
    """A rational as the nearest long double (through 30 significant decimal digits)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 30
        return np.longdouble(str(decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)))


def mhm_lattice_law(d: int, g: int, eps0: float, *, long: bool = False) -> tuple[np.ndarray, float, float]:
    """``(pi, rel0, h)``: one report's ratio to the blanket under ``x`` (the ``m = d`` pair's ``u``;
    ``v`` has the same law) spread onto the lattice ``1 + h j``, ``j = 0..K``, ``h = (e^eps0 - 1) / K``:
    the hit ``e^eps0`` is ``j = K``, and each miss level ``c_l`` (offset ``x_l = (c_l - 1) / h =
    (d - l) K / (g - l)``, a fraction of integers) is split between ``floor(x_l)`` and
    ``floor(x_l) + 1`` keeping its mean (a mean-preserving spread: an upper bound in convex order).
    ``K`` the largest multiple ``t (g - 1)`` up to ``LATTICE_K_MAX`` (then ``c_1`` is the point
    ``t (d - 1)``, the other levels sit just above multiples of ``t`` and the spread adds at most
    ``h^2 / 4`` of variance with a step ``t`` times finer: the coarsened sums' cost does not grow
    with ``K``) when ``g - 1 <= LATTICE_K_MAX``, else ``LATTICE_K_MAX``.
    Every entry is an exact rational (:func:`_distinct_counts`, the splits' fractions) rounded once
    to the nearest double: ``rel0`` is the unit roundoff (the sums' rounding bound grows like the
    count times ``rel0``, so this matters at large ``n``). ``long``: in long double instead (for
    :class:`~shuffledp.accountants.numerics.lattice_sums.LatticeSums` in long double, large counts)."""
    d, g, eps0 = _check(d, g, eps0)
    K = (g - 1) * max(LATTICE_K_MAX // (g - 1), 1) if g - 1 <= LATTICE_K_MAX else LATTICE_K_MAX
    miss, hit = _distinct_counts(d, g)
    den_all = g ** d
    exact = [Fraction(0)] * (K + 1)
    exact[K] = Fraction(sum(hit), den_all)
    for la in range(1, d + 1):
        if not miss[la]:
            continue
        pr = Fraction(miss[la], den_all)
        num, den = (d - la) * K, g - la
        j, rem = divmod(num, den)
        exact[j] += pr * Fraction(den - rem, den)
        if rem:
            exact[j + 1] += pr * Fraction(rem, den)
    if long:  # 30 digits, then one rounding: within a unit roundoff and 1e-30
        return np.array([_to_long(x) for x in exact], dtype=np.longdouble), UNIT_LONG, math.expm1(eps0) / K
    pi = np.array([float(x) for x in exact])  # each correctly rounded
    return pi, 0.5 * UNIT, math.expm1(eps0) / K


def lattice_level_pair(pi: np.ndarray, h: float, gamma: float, em1: float) -> LevelPair:
    """The spread ``m = d`` pair as a :class:`LevelPair` (``u``, ``v`` independent, each of law ``pi``
    on ``1 + h j``), groups ``(K, 0)`` and ``(0, K)`` first: the reference of :func:`icx_below`."""
    K = pi.size - 1
    sup = np.flatnonzero(pi).tolist()
    keys = [(K, 0), (0, K)] + [(a, b) for a in sup for b in sup if (a, b) not in ((K, 0), (0, K))]
    w = tuple(float(pi[a] * pi[b]) for a, b in keys)
    du = tuple(h * a if a < K else em1 for a, _ in keys)  # the top exactly e^eps0 - 1 (icx_below's ends)
    dv = tuple(h * b if b < K else em1 for _, b in keys)
    p = tuple(gamma * (1.0 + x) * wi for x, wi in zip(du, w, strict=True))
    q = tuple(gamma * (1.0 + x) * wi for x, wi in zip(dv, w, strict=True))
    return LevelPair(w, p, q, gamma, du, dv)


@dataclass(frozen=True)
class MHMPair(FlagPair):
    """The ``m = d`` pair (it dominates that victim pair at every eps) carrying the exact ``m < d``
    pairs in ``others``: at each eps each is covered when :func:`icx_below` holds against the
    evaluated ``m = d`` spread, else evaluated through the three-atom spreads and the larger kept.

    The ``m = d`` pair is evaluated on the lattice (``lattice``: :func:`mhm_lattice_law`, by
    :class:`~shuffledp.accountants.numerics.lattice_sums.LatticeSums`) when its convolutions fit
    ``LATTICE_BUDGET`` and its rounding bound ``LATTICE_REL_MAX`` (a spread of less variance than
    the flags'; above ``LATTICE_REL_FLAGS`` the flags are evaluated too and the smaller value
    kept), else as the two-level flag pair (this class's own flags)."""

    others: tuple[LevelPair, ...] = ()
    em1: float = 0.0  # e^eps0 - 1 (the flag pair's ratio offsets, for icx_below)
    lattice: tuple | None = field(default=None, compare=False)  # (pi, rel0, h, LevelPair, (pi, rel0) long)
    cache: dict = field(default_factory=dict, compare=False, repr=False)

    def _sums(self, ms, tail: float) -> tuple[LatticeSums | None, np.ndarray]:
        """The lattice laws at the blanket counts ``ms`` picked by :func:`_evaluated_counts` (None
        when over the budget) and those counts' positions in ``ms``."""
        if self.lattice is None:
            return None, np.zeros(0, dtype=np.int64)
        key = (tuple(np.asarray(ms, dtype=np.int64).tolist()), tail)
        if key not in self.cache:
            ms = np.asarray(ms, dtype=np.int64)
            sub = _evaluated_counts(ms, self.gamma)
            pi, rel0 = self.lattice[0], self.lattice[1]
            ns = ms[sub] + 1
            if ns[-1] > LATTICE_LONG_FROM and self.lattice[4] is not None:
                pi, rel0 = self.lattice[4]  # in long double: the rounding bound grows like the count
            sums = None
            low = max(tail / (1.0 + self.em1), 1e-320)  # (not 0: tail near TAIL_MIN, e^eps0 near e^50)
            if lattice_cost(pi, ns, low) <= LATTICE_BUDGET:
                # the dropped mass is charged at up to e^eps0 - e^eps: dropped below tail / e^eps0
                try:  # declined where the rounding charge would swamp the gain
                    sums = LatticeSums(pi, rel0, ns, low, rel_limit=LATTICE_REL_MAX)
                except RoundingTooLarge:
                    sums = None
                if sums is not None and sums.rel_max > LATTICE_REL_MAX:
                    sums = None
            self.cache[key] = (sums, sub)
        return self.cache[key]

    def row_values(self, ee: float, tail: float, ms=None) -> list | None:
        """The flag pair's rows (refined by the decomposition at deep windows) where the flags answer
        at these counts (no lattice) and every ``m < d`` pair is covered at this eps
        (:func:`icx_below`); else None: :meth:`block_value` answers."""
        if ms is None or self._sums(ms, tail)[0] is not None:
            return None
        if not all(icx_below(other, self, ee) for other in self.others):
            return None
        return FlagPair.row_values(self, ee, tail, ms)

    def cells_per_m(self, m_top: float, tail: float) -> float:
        """Cost per ``M`` block: the flag pair's, or a spread's table at up to ``THREE_M_CAP`` draws."""
        return max(FlagPair.cells_per_m(self, m_top, tail), three_group_cells(min(m_top, THREE_M_CAP), 0.5, tail))

    def block_value(self, ms, block_w, ee: float, tail: float, *, upper: bool) -> float:
        sums, sub = self._sums(ms, tail)
        if sums is None:
            best, ref = FlagPair.block_value(self, ms, block_w, ee, tail, upper=upper), self
        else:
            _, _, h, ref, _ = self.lattice
            # D_M is non-increasing in M (data processing): each count takes the value at the
            # nearest evaluated count below it (upper bound) or above it (lower side)
            pos = np.arange(len(block_w))
            pick = np.searchsorted(sub, pos, side="right") - 1 if upper else np.searchsorted(sub, pos, side="left")
            vals = sums.divergence(self.gamma, h, 1.0 + self.em1, ee, upper=upper)[pick]
            best = float(np.dot(block_w, vals))
            if upper and sums.rel_max > LATTICE_REL_FLAGS:  # both are upper bounds: the smaller
                best = min(best, FlagPair.block_value(self, ms, block_w, ee, tail, upper=True))
        for other in self.others:
            if not icx_below(other, ref, ee):
                best = max(best, _spread_value(other, ms, block_w, ee, tail, upper))
        return best


def _evaluated_counts(ms: np.ndarray, gamma: float) -> np.ndarray:
    """Positions in ``ms`` (increasing blanket counts) evaluated on the lattice: the first count in
    each bucket of ``stride`` counts, and the last, with ``stride`` the power of two at most the
    counts' standard deviation over ``LATTICE_PER_SD`` (the buckets do not depend on the window:
    queries with other tails evaluate the same counts)."""
    sd = math.sqrt(max(float(ms[ms.size // 2]), 1.0) * max(1.0 - gamma, 0.0))
    stride = 2 ** max(int(math.floor(math.log2(max(sd / LATTICE_PER_SD, 1.0)))), 0)
    bucket = ms // stride
    first = np.flatnonzero(np.concatenate([[True], bucket[1:] != bucket[:-1]]))
    return np.unique(np.append(first, ms.size - 1))


def _spread_value(pair: GroupedPair, ms, block_w, ee: float, tail: float, upper: bool) -> float:
    """The block-weighted divergence of the three-atom spread adding the least variance
    (:func:`~shuffledp.accountants.upper.decomposition.spread_to_three`: an upper bound on the pair's)."""
    from shuffledp.accountants.numerics.grouped import CountTable, divergence_given_count, spread_to_three

    keep = [i for i, w in enumerate(pair.w) if w > 0]
    pair = GroupedPair(*(tuple(x[i] for i in keep) for x in (pair.w, pair.p, pair.q)), pair.gamma)
    if len(keep) < 3:  # two groups at most: never the case for m < d (three levels at least)
        raise ValueError("an MHM pair with fewer than three non-empty groups")
    spreads = spread_to_three(pair, ee)
    if not spreads:
        return 0.0
    # the spread adding the least variance (any one is an upper bound; near-ties are many here,
    # the weights being tiny at large eps0, and each costs a full evaluation)
    _, scale, h = spreads[0]
    s = h.w[0] + h.w[1]
    if upper:  # D_M is non-increasing in M: charging min(M, cap) draws is an upper bound
        ms = np.minimum(ms, THREE_M_CAP)
    val = divergence_given_count(CountTable(ms, s, tail), h, h.w[0] / s, ee, upper=upper)
    return scale * float(np.dot(block_w, val))


def mhm_pairs(d: int, g: int, eps0: float) -> list[GroupedPair]:
    """The accountant's pairs of MHM (module docstring): one :class:`MHMPair`."""
    d, g, eps0 = _check(d, g, eps0)
    e = math.exp(eps0)
    gamma = g * mhm_blanket_cell(d, g, eps0)
    alpha = d / g
    base = flag_pair(gamma, alpha, alpha, (1.0, e), (1.0, e))
    others = tuple(mhm_pair(d, g, eps0, m) for m in range(1, d))
    lattice = _lattice(d, g, eps0, gamma)
    return [MHMPair(base.w, base.p, base.q, base.gamma, base.alpha, base.beta, base.u, base.v, None, others,
                    math.expm1(eps0), lattice)]


def _lattice(d: int, g: int, eps0: float, gamma: float) -> tuple | None:
    """``MHMPair.lattice``, or None where the flags' spread adds less than ``LATTICE_MIN_GAIN`` of
    variance over the lattice's (large eps0: the collisions are rare, the flags within 0.1%)."""
    pi, rel0, h = mhm_lattice_law(d, g, eps0)
    j = np.arange(pi.size, dtype=np.float64)
    var_lattice = float(np.dot(pi, (j - np.dot(pi, j)) ** 2)) * h * h
    var_flags = math.expm1(eps0) ** 2 * (d / g) * (1.0 - d / g)
    if var_flags <= (1.0 + LATTICE_MIN_GAIN) * var_lattice:
        return None
    longer = mhm_lattice_law(d, g, eps0, long=True)[:2] if UNIT_LONG < UNIT / 4 else None
    return pi, rel0, h, lattice_level_pair(pi, h, gamma, math.expm1(eps0)), longer


def mhm_local_eps(d: int, g: int, eps0: float) -> float:
    """The randomizer's own local eps: the largest log-ratio of two rows at one output over every
    victim pair's groups (equal to eps0: every ratio to the blanket lies in ``[1, e^eps0]``)."""
    d, g, eps0 = _check(d, g, eps0)
    top = 0.0
    for m in range(1, d + 1):
        pair = mhm_pair(d, g, eps0, m)
        for a, b in zip(pair.p, pair.q, strict=True):
            if a > 0 and b > 0:
                top = max(top, abs(math.log(a / b)))
    return top


# --------------------------------------------------------------------------- explicit matrix (tests)
def mhm_matrix(d: int, k: int, g: int, eps0: float) -> np.ndarray:
    """Output matrix of MHM over the family of all functions ``[k] -> [g]`` per attribute: rows the
    ``k^d`` inputs (``itertools.product`` order), columns ``(f_1, ..., f_d, y)`` (functions in
    ``itertools.product`` order, ``y`` innermost), each row from the protocol's selection rule."""
    d, g, eps0 = _check(d, g, eps0)
    k = valid_int(k, "k", 2)
    nfun = g ** k
    rows, cols = k ** d, nfun ** d * g
    if rows * cols > MATRIX_MAX_CELLS:
        raise ValueError(f"the output matrix would have {rows} x {cols} cells")
    e = math.exp(eps0)
    p = e / (d * e + g - d)
    funcs = list(itertools.product(range(g), repeat=k))
    mat = np.empty((rows, cols))
    for i, x in enumerate(itertools.product(range(k), repeat=d)):
        row = []
        for fs in itertools.product(funcs, repeat=d):
            hr = {f[xj] for f, xj in zip(fs, x, strict=True)}
            other = (1.0 - len(hr) * p) / (g - len(hr))
            row.extend(p if y in hr else other for y in range(g))
        mat[i] = np.asarray(row) / nfun ** d
    return mat


# --------------------------------------------------------------------------- real pair (lower bound)
def mhm_real_pair_configs(d: int, g: int, eps0: float):
    """Four output groups of the real pair whose ``d`` attributes all differ (``y`` among ``x``'s
    hashes only, ``x'``'s only, both, neither) in the form of
    :func:`shuffledp.accountants.randomizers.standard.real_pair_configs`: ``(victim_p, victim_q, configs)``,
    the others all at ``x``, at ``x'``, or at a third input differing from both everywhere."""
    d, g, eps0 = _check(d, g, eps0)
    em1 = math.expm1(eps0)
    gamma = g * mhm_blanket_cell(d, g, eps0)
    vic_p, vic_q, third = [0.0] * 4, [0.0] * 4, [0.0] * 4
    slot = {(1, 0): 0, (0, 1): 1, (1, 1): 2, (0, 0): 3}
    for (ha, la, hb, lb), pr in mhm_group_law(d, d, g).items():
        i = slot[(ha, hb)]
        vic_p[i] += gamma * (1.0 + _offset(ha, la, d, g, em1)) * pr
        vic_q[i] += gamma * (1.0 + _offset(hb, lb, d, g, em1)) * pr
        third[i] += pr
    vp, vq = tuple(vic_p), tuple(vic_q)
    return vp, vq, {"others_at_x": vp, "others_at_x'": vq, "others_at_third": tuple(third)}
