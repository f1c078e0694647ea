"""Three-group decomposed pairs at any number of reports, in blocks of one convex count.

Given ``M`` blanket draws, the decomposed pair of a three-group victim pair
(:class:`~shuffledp.accountants.upper.decomposition.GroupedPair`: blanket weights ``w_g``, the victim's
group probabilities ``P_g``, ``Q_g``) has divergence

    D_M = E[(S)_+] / N,   S = sum_g z_g H_g,   z_g = (P_g - e^eps Q_g) / w_g,
    (H_1, H_2, H_3) ~ Mult(N; w),   N = M + 1

(the pmf of the group counts is ``Mult_N(h; w) sum_g P_g h_g / (N w_g)``). Conditioning on
``T = H_1 + H_2`` (as :mod:`~shuffledp.accountants.upper.decomposition` does) leaves a function of ``T``
that is not convex in general: given ``T`` the rest is a random walk whose two steps can have
opposite signs. Condition instead on the count ``J`` of the group ``*`` with the *largest* ``z``:
``J ~ Bin(N, w_*)`` and, given ``J = j``, the ``m = N - j`` other reports fall in groups ``a``,
``b`` (``z_a >= z_b``) with ``K ~ Bin(m, w_a / (w_a + w_b))`` in ``a``:

    F(j) = E[(z_* j + z_b m + (z_a - z_b) K)_+] = E[phi(X_m)],
    X_m = N z_* + sum_{i <= m} Y_i,   Y_i in {z_a - z_*, z_b - z_*}  (both <= 0).

Every step of the walk has the same sign, so for convex ``phi`` the second difference
``E[phi(U + Y + Y') - phi(U + Y) - phi(U + Y') + phi(U)]`` is ``>= 0`` (the increment of a
convex function over an interval of fixed length grows as the interval moves right): ``F`` is
convex in ``m``, hence in ``j``. On a block ``[e_i, e_{i+1}]`` of ``j`` the chord is an upper bound
and the lines extending the neighbouring chords are lower bounds, so with the block's mass ``W``
and mean ``mu``

    W * max(l_prev(mu), l_next(mu))  <=  sum_{j in block} Pr[J = j] F(j)  <=  W * chord(mu).

Blocks cover ``0..N`` (no truncation); they are refined where the two sides differ until the gap
is a small fraction of the value: the cost depends on the shape of ``w(j) F(j)``, not on ``N``.

``F(j)`` in closed form, ``h = -(z_* j + z_b m) / (z_a - z_b)``, ``t = ceil(h)``:

    E[(K - h)_+] = t (1 - pi) Pr[K = t] + (m pi - h) Pr[K >= t]

(``E[(K - m pi) 1{K >= t}] = t (1 - pi) Pr[K = t]``); its terms are of the size of the value
itself in the upper tail (no ``m pi Pr[Bin(m-1) >= t-1]`` against ``h Pr[K >= t]`` cancellation).

Errors, all charged against the bound (upper) or subtracted (lower):

* ``z_g`` is rounded: the walk uses ``z_g + 8u (P_g + e^eps Q_g) / w_g`` (``u`` the unit
  roundoff), at least the exact ``z_g``; ``E[(S)_+]`` is non-decreasing in every ``z_g``.
* scipy's binomial pmf / sf / cdf: relative error :func:`~shuffledp.accountants.lower.lower_bounds.binom_rtol`
  (measured against mpmath up to ``N = 1e15``) on every term's magnitude, twice.
* the threshold ``h`` and ``m pi - h`` in floating point: ``E[(K - h)_+]`` is 1-Lipschitz in ``h``
  with slope ``-Pr[K > h]``; charged at ``Pr[K >= t - 1]``.
* block masses: differences of two tails on their small side (error ``binom_rtol`` times their
  sum); block means: bracketed between two truncated geometric laws (the pmf is log-concave,
  :func:`_geo_mean`), the chord evaluated at the bracket's worse end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.numerics.binomial_blocks import smaller_tails as _tails
from shuffledp.accountants.numerics.tolerances import SUBNORMAL_GUARD, binom_rtol

__all__ = ["Walk", "walk_of", "walk_divergence", "TARGET"]

TARGET = 1e-3        # refinement stops once the blocked upper and lower values differ by this (relative)
MAX_ROUNDS = 40      # refinement rounds at most
STALL_ROUNDS = 4     # a count whose gap has not halved in this many rounds is not refined further
MAX_EDGES = 6000     # per count: no block is split beyond this many edges
SPLIT_MAX = 8        # a block is split into at most this many in one refinement round
FLOOR = 1e-290      # a count whose divergence bound is below this is not refined (deltas >= 1e-300)
UNIT = 2.0 ** -53    # unit roundoff of float64
# initial edges of J, in standard deviations from its mean (the rest of 0..N in wide blocks)
SD_GRID = np.concatenate([-np.geomspace(60.0, 6.0, 6), np.linspace(-5.0, 5.0, 21), np.geomspace(6.0, 60.0, 6)])


@dataclass(frozen=True)
class Walk:
    """A three-group pair at one ``e^eps`` as the walk of the module docstring: ``z_star`` the
    largest coefficient (rounded up), ``w_star`` its group's blanket weight, ``z_a >= z_b`` the
    other two, ``pi`` the chance that a report outside group ``*`` is in group ``a``."""

    z_star: float
    w_star: float
    z_a: float
    z_b: float
    pi: float


def walk_of(w, p, q, ee: float) -> Walk | None:
    """The :class:`Walk` of a pair with blanket weights ``w`` (normalised) and the victim's group
    probabilities ``p``, ``q`` at ``e^eps = ee``; None if the divergence is 0 at every ``N``
    (no coefficient is positive). Groups of zero blanket weight must carry no probability."""
    zs, ws = [], []
    for wg, pg, qg in zip(w, p, q, strict=True):
        if wg > 0:
            zs.append((pg - ee * qg) / wg + 8.0 * UNIT * (pg + ee * qg) / wg)
            ws.append(float(wg))
        elif pg > 0 or qg > 0:
            raise ValueError("a group outside the blanket's support has positive probability")
    if not zs or max(zs) <= 0:
        return None
    order = sorted(range(len(zs)), key=lambda i: -zs[i])
    if len(order) == 2:  # a group of weight 0 (e.g. binary randomized response): never drawn
        zs.append(zs[order[1]])
        ws.append(0.0)
        order.append(2)
    s, a, b = order[:3]
    rest = ws[a] + ws[b]
    pi = ws[a] / rest if rest > 0 else 1.0
    return Walk(zs[s], ws[s] / (ws[s] + rest), zs[a], zs[b], pi)


def _edge_values(j, N, wk: Walk):
    """``(F, err)`` at integer ``j`` (arrays; ``N`` per element): ``F(j)`` of the module docstring
    computed in floating point and a bound on its error."""
    from scipy import stats

    j, N = np.broadcast_arrays(np.asarray(j, dtype=np.float64), np.asarray(N, dtype=np.float64))
    m = N - j
    beta = wk.z_a - wk.z_b
    alpha = wk.z_star * j + wk.z_b * m
    # rounding of alpha and of beta = z_a - z_b (an error of u |beta| K <= u |beta| m in S)
    a_err = 4.0 * UNIT * (abs(wk.z_star) * j + abs(wk.z_b) * m + abs(beta) * m)
    if not (beta > 0 and 0.0 < wk.pi < 1.0):
        top = alpha + (beta * m if wk.pi >= 1.0 else 0.0)  # K = m (pi = 1) or K = 0
        err = a_err + 4.0 * UNIT * abs(beta) * m
        return np.maximum(top, 0.0), np.where(top + err > 0, err, 0.0)  # S <= top + err < 0: exactly 0
    pi = wk.pi
    h = -alpha / beta
    dh = a_err / beta + 2.0 * UNIT * np.abs(h)
    t = np.clip(np.ceil(h), 0.0, m + 1.0)
    inner = (t >= 1.0) & (t <= m)
    ts = np.where(inner, t, 1.0)
    ms = np.where(inner, m, 1.0)
    pmf = np.where(inner, stats.binom.pmf(ts, ms, pi), 0.0)
    tail = np.where(inner, stats.binom.sf(ts - 1.0, ms, pi), np.where(t <= 0.0, 1.0, 0.0))
    first = t * (1.0 - pi) * pmf
    gap = m * pi - h
    second = gap * tail
    val = np.where(t > m, 0.0, first + second)
    # Pr[K > h - dh] <= Pr[K >= t - 1] = Pr[K >= t] + Pr[K = t - 1] (pmf ratio) when dh < 1, and
    # Pr[K >= t - 1 - ceil(dh)] (one more tail) where the threshold is uncertain by 1 or more
    below = pmf * ts * (1.0 - pi) / np.maximum((ms - ts + 1.0) * pi, 1e-300) * (1.0 + 1e-9)
    near = np.minimum(tail + below, 1.0)
    wide = inner & (dh >= 1.0)
    if np.any(wide):
        x, mw = ts[wide] - 2.0 - np.ceil(dh[wide]), ms[wide]
        far = stats.binom.sf(np.maximum(x, 0.0), mw, pi) * (1.0 + 2.0 * binom_rtol(mw, pi))
        near[wide] = np.where(x < 0, 1.0, np.minimum(far, 1.0))
    near = np.where(t > m + 0.5, np.where(h - dh < m, 1.0, 0.0), near)
    rt = binom_rtol(m, pi)
    err = beta * (2.0 * rt * (first + np.abs(second)) + dh * near + 4.0 * UNIT * (m * pi + np.abs(h)) * tail)
    return np.maximum(beta * val, 0.0), err + 4.0 * UNIT * beta * np.abs(val)




def _geo_mean(t, L):
    """Mean of ``i`` under weights ``e^{t i}`` on ``{0, ..., L}`` (a truncated geometric law):
    ``L/2 + ((L+1) coth((L+1) t/2) - coth(t/2)) / 2``, by its series where ``(L+1) t`` is small."""
    t, L = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(L, dtype=np.float64))
    x = 0.5 * (L + 1.0) * t
    small = np.abs(x) < 1e-4
    y = 0.5 * np.where(small, 1.0, t)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        full = 0.5 * L + 0.5 * ((L + 1.0) / np.tanh(np.where(small, 1.0, x)) - 1.0 / np.tanh(y))
    series = 0.5 * L + ((L + 1.0) ** 2 - 1.0) * t / 12.0   # error O(t^3 L^4): below 1e-12 L here
    return np.clip(np.where(small, series, full), 0.0, L)


def _block_stats(first, last, N, p: float, t0, t1):
    """Per block ``[first, last]`` of ``J ~ Bin(N, p)``: (mass, the rounding error of its
    subtraction, mean given the block, a bound on the mean's error). ``t0``, ``t1``: :func:`_tails`
    at ``first - 1`` and at ``last``; the tails' own errors are charged by the caller (once per
    edge, :func:`_block_bounds`). The mean is bracketed between the means of the truncated
    geometric laws with the pmf's ratios at the block's two ends (log-concave pmf:
    likelihood-ratio order)."""
    (l0, u0), (l1, u1) = t0, t1
    both_low = ~np.isnan(l0) & ~np.isnan(l1)
    both_up = ~np.isnan(u0) & ~np.isnan(u1)
    with np.errstate(invalid="ignore"):
        mass = np.where(both_low, l1 - l0, np.where(both_up, u0 - u1, 1.0 - l0 - u1))
        scale = np.where(both_low, l1 + l0, np.where(both_up, u0 + u1, 1.0 + l0 + u1))
    m_err = 4.0 * UNIT * scale + SUBNORMAL_GUARD
    L = last - first
    lr = math.log(p) - math.log1p(-p)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_hi = np.log(np.maximum(N - first, 1e-300)) - np.log(first + 1.0) + lr + 1e-13
        t_lo = np.log(np.maximum(N - last + 1.0, 1e-300)) - np.log(np.maximum(last, 1e-300)) + lr - 1e-13
    g_hi, g_lo = _geo_mean(t_hi, L), _geo_mean(t_lo, L)
    mean = first + 0.5 * (g_hi + g_lo)
    mean_err = np.where(L == 0, 0.0, np.minimum(0.5 * np.abs(g_hi - g_lo) + 1e-12 * L + 1e-15 * first, L))
    return mass, m_err, np.where(L == 0, first, mean), mean_err


def _at_edges(row, e, Nrow, wk: Walk) -> dict:
    """Everything kept per edge ``e`` of the counts ``Nrow[row]``: ``F`` and its error, and the
    tails of ``J`` at ``e - 1`` (the mass below the block starting at ``e``)."""
    N = Nrow[row]
    F, F_err = _edge_values(e, N, wk)
    lo, up = _cached_tails(e, N, wk.w_star)
    return {"row": row, "e": e, "F": F, "F_err": F_err, "lo": lo, "up": up}


_TAILS: dict = {}  # (p, N) -> (sorted edges, tails below, tails above): eps-independent, reused
# across the eps search


def _cached_tails(e, N, p: float):
    """:func:`_tails` at ``e - 1`` of ``Bin(N, p)`` (per element), remembered across calls (the
    edges are midpoints of the same initial grid at every eps); looked up per count of draws with
    sorted arrays (no per-element Python)."""
    if len(_TAILS) > 256:
        _TAILS.clear()
    lo, up = np.empty(e.size), np.empty(e.size)
    for n in np.unique(N):
        sel = np.flatnonzero(N == n)
        x = e[sel]
        known, k_lo, k_up = _TAILS.get((p, float(n)), (np.empty(0), np.empty(0), np.empty(0)))
        pos = np.minimum(np.searchsorted(known, x), max(known.size - 1, 0))
        hit = (known.size > 0) & (known[pos] == x) if known.size else np.zeros(x.size, dtype=bool)
        lo[sel[hit]], up[sel[hit]] = k_lo[pos[hit]], k_up[pos[hit]]
        if not np.all(hit):
            new_x = np.unique(x[~hit])
            n_lo, n_up = _tails(new_x - 1.0, np.full(new_x.size, float(n)), p)
            at = np.searchsorted(new_x, x[~hit])
            lo[sel[~hit]], up[sel[~hit]] = n_lo[at], n_up[at]
            merged = np.concatenate([known, new_x])
            order = np.argsort(merged, kind="stable")
            _TAILS[(p, float(n))] = (merged[order], np.concatenate([k_lo, n_lo])[order],
                                     np.concatenate([k_up, n_up])[order])
    return lo, up


def _merge(a: dict, b: dict) -> dict:
    out = {key: np.concatenate([a[key], b[key]]) for key in a}
    order = np.lexsort((out["e"], out["row"]))
    return {key: v[order] for key, v in out.items()}


def _initial(Nrow, wk: Walk) -> dict:
    """Edges ``0``, ``N`` and points at :data:`SD_GRID` standard deviations of ``J`` (every count
    when ``N`` is small)."""
    p = wk.w_star
    rows, edges = [], []
    for r, N in enumerate(Nrow):
        if N <= SD_GRID.size:
            pts = np.arange(N + 1.0)
        else:
            pts = np.round(N * p + math.sqrt(N * p * (1.0 - p)) * SD_GRID)
            pts = np.unique(np.clip(np.concatenate([pts, [0.0, N]]), 0.0, N))
        rows.append(np.full(pts.size, r))
        edges.append(pts)
    row = np.concatenate(rows)
    return _at_edges(row, np.concatenate(edges), Nrow, wk)


def _block_bounds(st: dict, Nrow, p: float):
    """Per block between consecutive edges of one count: (row, left edge index, upper, lower,
    blocking gap) on ``sum_{j in block} Pr[J = j] F(j)`` (module docstring), every error charged
    in ``upper`` and ``lower``. The blocking gap is the part of ``upper - lower`` that splitting
    the block can remove: the same chord and lines from ``F`` without its rounding charge (which
    stays whatever the blocks; it only steers the refinement).

    A block's mass is a difference of two tails shared with its neighbours, so the tails' errors
    are charged once per edge (summation by parts: ``sum_i (T_{i+1} - T_i) c_i`` moves by at most
    ``sum_j |dT_j| |c_{j-1} - c_j|``), not once per block."""
    row, e = st["row"], st["e"]
    k = np.nonzero(row[:-1] == row[1:])[0]
    br, N = row[k], Nrow[row[k]]
    is_last = (k + 2 >= row.size) | (row[np.minimum(k + 2, row.size - 1)] != br)
    first, right = e[k], e[k + 1]
    last = np.where(is_last, right, right - 1.0)
    t1 = (np.where(is_last, 1.0, st["lo"][k + 1]), np.where(is_last, 0.0, st["up"][k + 1]))
    W, W_err, mu, mu_err = _block_stats(first, last, N, p, (st["lo"][k], st["up"][k]), t1)
    Fu = st["F"] + st["F_err"]
    Fl = np.maximum(st["F"] - st["F_err"], 0.0)
    rise = Fu[k + 1] - Fu[k]
    lam = np.clip((mu + np.where(rise >= 0, mu_err, -mu_err) - first) / (right - first), 0.0, 1.0)
    chord = Fu[k] + lam * rise
    line = _lower_lines(st, k, br, is_last, Fu, Fl, mu, mu_err)
    has_prev = (k >= 1) & (row[np.maximum(k - 1, 0)] == br)
    tail_err = binom_rtol(N, p) * np.where(np.isnan(st["lo"][k]), st["up"][k], st["lo"][k])
    prev = np.maximum(np.arange(k.size) - 1, 0)
    up_abel = np.where(has_prev, tail_err * np.abs(chord[prev] - chord), 0.0)
    lo_abel = np.where(has_prev, tail_err * np.abs(line[prev] - line), 0.0)
    upper = W * chord + W_err * chord + up_abel
    lower = W * line - W_err * line - lo_abel
    F = st["F"]
    bare = F[k] + lam * (F[k + 1] - F[k]) - _lower_lines(st, k, br, is_last, F, F, mu, mu_err)
    return br, k, upper, lower, W * np.maximum(bare, 0.0)


def _lower_lines(st: dict, k, br, is_last, Fu, Fl, mu, mu_err):
    """Per block, a lower bound on ``F`` at its mean: the neighbouring chords extended (``F``
    convex), each with the bracket's worse end of the mean; ``F(first)`` for a single count."""
    row, e = st["row"], st["e"]
    first, right = e[k], e[k + 1]
    has_prev = (k >= 1) & (row[np.maximum(k - 1, 0)] == br)
    kp = np.maximum(k - 1, 0)
    s_prev = (Fl[k] - Fu[kp]) / np.maximum(first - e[kp], 1.0)
    l_prev = np.where(has_prev, Fl[k] + s_prev * (mu - np.where(s_prev >= 0, mu_err, -mu_err) - first), 0.0)
    kn = np.minimum(k + 2, row.size - 1)
    s_next = (Fu[kn] - Fl[k + 1]) / np.maximum(e[kn] - right, 1.0)
    l_next = np.where(~is_last, Fl[k + 1] - s_next * (right - mu + np.where(s_next >= 0, mu_err, -mu_err)), 0.0)
    single = (right - first == 1.0) & ~is_last
    return np.maximum(np.maximum(np.maximum(l_prev, l_next), np.where(single, Fl[k], 0.0)), 0.0)


def _largest(row, value, excess):
    """Per row, the blocks with the largest ``value`` whose sum first reaches the row's ``excess``
    (none where it is not positive): the blocks a refinement round splits."""
    order = np.lexsort((-value, row))
    v = value[order]
    r = row[order]
    cum = np.cumsum(v)
    start = np.searchsorted(r, r)  # first position of each row in the sorted order
    before = cum - v - np.where(start > 0, cum[np.maximum(start - 1, 0)], 0.0)
    out = np.empty(row.size, dtype=bool)
    out[order] = (before < excess[r]) & (v > 0)
    return out


def _split_points(first, right, row, excess, room):
    """New edges inside the blocks ``[first, right)`` being split: ``q - 1`` evenly spaced points,
    ``q`` from 2 to :data:`SPLIT_MAX` growing as the square root of the block's blocking gap over
    its share of the target (``excess``): the chord's excess over a convex function shrinks as
    the block's width squared, so a block far from its share is cut finer at once. A count whose
    new edges would exceed its ``room`` (per count: :data:`MAX_EDGES` less its blocks) is only
    halved, as one split per block always did."""
    q = np.clip(np.ceil(np.sqrt(np.maximum(excess, 0.0))), 2.0, SPLIT_MAX)
    over = np.bincount(row, q - 1.0, minlength=room.size) > room
    q = np.where(over[row], 2.0, q)
    frac = np.arange(1.0, SPLIT_MAX) / 1.0
    pts = first[:, None] + np.floor((right - first)[:, None] * frac[None, :] / q[:, None])
    keep = (frac[None, :] < q[:, None]) & (pts > first[:, None]) & (pts < right[:, None])
    rows = np.broadcast_to(row[:, None], pts.shape)[keep]
    pts = pts[keep]
    order = np.lexsort((pts, rows))
    rows, pts = rows[order], pts[order]
    uniq = np.ones(pts.size, dtype=bool)
    uniq[1:] = (pts[1:] != pts[:-1]) | (rows[1:] != rows[:-1])
    return rows[uniq], pts[uniq]


def walk_divergence(ms, pair, ee: float, *, target: float = TARGET) -> tuple[np.ndarray, np.ndarray]:
    """``(upper, lower)`` bounds on ``D_M`` of the three-group ``pair`` (fields ``w``, ``p``,
    ``q``; ``w`` normalised) for each blanket-draw count in ``ms`` at ``e^eps = ee``, with blocks
    of ``J`` refined until ``upper - lower <= target * upper`` (or :data:`MAX_EDGES` edges).
    Cost independent of ``M`` (about 10^2 to 10^3 closed-form cells per count)."""
    Nrow = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    if np.any(Nrow > 2.0 ** 52) or np.any(Nrow < 1) or np.any(Nrow != np.floor(Nrow)):
        raise ValueError("blanket-draw counts must be integers in [0, 2^52)")
    wk = walk_of(pair.w, pair.p, pair.q, ee)
    if wk is None:
        return np.zeros_like(Nrow), np.zeros_like(Nrow)
    if wk.w_star >= 1.0:  # every report in group *: S = N z_*
        top = np.maximum(wk.z_star * Nrow, 0.0) * (1.0 + 8.0 * UNIT)
        return top / Nrow, top / Nrow * (1.0 - 16.0 * UNIT)
    st = _initial(Nrow, wk)
    active = np.ones(Nrow.size, dtype=bool)
    gaps = [np.full(Nrow.size, np.inf)] * STALL_ROUNDS
    for _ in range(MAX_ROUNDS):
        br, k, upper, lower, bare = _block_bounds(st, Nrow, wk.w_star)
        tot_u = np.bincount(br, upper, minlength=Nrow.size)
        tot_l = np.bincount(br, lower, minlength=Nrow.size)
        n_blk = np.bincount(br, minlength=Nrow.size)
        gap = np.bincount(br, bare, minlength=Nrow.size)
        # a count stops once its blocking gap meets the target (the rounding charges in
        # upper - lower stay whatever the blocks), its value is negligible, or the blocking gap
        # has not halved in STALL_ROUNDS rounds
        active &= (gap > target * tot_u) & (tot_u > FLOOR * Nrow) & (n_blk + 1 < MAX_EDGES) & (gap < 0.5 * gaps[0])
        gaps = gaps[1:] + [gap]
        wide = st["e"][k + 1] - st["e"][k] >= 2.0
        split = active[br] & wide & _largest(br, bare, gap - 0.5 * target * tot_u)
        if not np.any(split):
            break
        rows, new = _split_points(st["e"][k[split]], st["e"][k[split] + 1], br[split],
                                  bare[split] * n_blk[br[split]] / np.maximum(target * tot_u[br[split]], 1e-300),
                                  MAX_EDGES - n_blk)
        st = _merge(st, _at_edges(rows, new, Nrow, wk))
    sum_err = 1.0 + 1e-12
    return tot_u / Nrow * sum_err, np.maximum(tot_l, 0.0) / Nrow / sum_err
