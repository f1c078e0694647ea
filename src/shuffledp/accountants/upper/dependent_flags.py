"""Exact blanket decomposition of four-group pairs whose two flags are negatively dependent.

The victim pair's outputs split by two flags as in :mod:`~shuffledp.accountants.upper.flags`: ``a`` (the
output favours ``x``), ``b`` (it favours ``x'``); a report's ratios to the blanket are ``u0 +
(u1 - u0) a`` under ``x`` and ``v0 + (v1 - v0) b`` under ``x'``. Under the blanket the flags of the
subset exponential mechanism (``a``: the reported subset meets ``x``'s set, ``b``: it meets
``x'``'s) are *dependent*: for disjoint sets meeting one makes meeting the other less likely. The
three-atom spread (:func:`~shuffledp.accountants.upper.decomposition.spread_to_three`) costs up to 1.4%
in eps there; this module evaluates the four groups without a spread.

The blanket's four group masses ``w_ab`` with ``D = w10 w01 - w11 w00 > 0`` (negative dependence)
are a mixture: with probability ``rho = D / w01`` a draw is the group ``(1, 0)``, otherwise the two
flags are independent, ``a ~ Bern(a1)``, ``b ~ Bern(b1)``, ``a1 = w11 / (w11 + w01)``,
``b1 = w01 / (w01 + w00)`` (each of the four masses is matched exactly). Given ``N = M + 1``
reports (module docstring of :mod:`~shuffledp.accountants.upper.decomposition`) and the number ``L`` of
them drawn from the first component, ``L ~ Bin(N, rho)``, the flag counts are ``A = L + X`` and
``B = Y`` with ``X ~ Bin(N - L, a1)`` and ``Y ~ Bin(N - L, b1)`` independent, so

    D_M = gamma / N * sum_l Pr[L = l] G(l),
    G(l) = E[(N (u0 - e^eps v0) + (u1 - u0) l + (u1 - u0) X - e^eps (v1 - v0) Y)_+],

and ``G(l)`` is :mod:`flags`' sum over ``Y`` of closed-form tails in ``X`` with its threshold
shifted by the ``l`` fixed reports. A ``(1, 0)`` report contributes ``u1 - e^eps v0``, the largest
contribution of any report (``u1 > u0``, ``v1 >= v0``), so ``G`` is non-decreasing in ``l``, and
it is convex in ``l``: ``G(l) = E[phi(N z* + sum_{i <= N - l} (Z_i - z*))]`` with ``phi = (.)_+``
convex and every step ``Z_i - z* <= 0`` (the argument of
:mod:`~shuffledp.accountants.numerics.walk_blocks`). ``L`` is therefore summed in blocks: on a block
between two evaluated points the chord is an upper bound (at the block's mean, from its mass and
the bracket of its mean, :func:`blocked_pairs.block_stats`), and the lines through the
neighbouring chords are lower bounds; blocks are split until the two agree to ``TARGET``.

Errors charged to the upper bound, beyond :mod:`flags`' own in ``G``: ``L`` outside a window of
``Bin(N, rho)`` holding all but ``tail`` (every report's ``x``-ratio is at most ``u1``, so the
integrand there is at most ``N u1`` and the part at most ``gamma u1`` times that mass, computed),
``Y`` outside its window given ``l`` (the same argument: ``N u1`` times its mass, inside ``G``),
and the block masses' and means' error bounds, each taken at the end that raises the chord.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from shuffledp.accountants.numerics.binomial_blocks import block_stats
from shuffledp.accountants.numerics.grouped import (
    ROUNDING_RTOL,
    GroupedPair,
    bernstein_half_width,
    spread_to_three,
    t_window,
)
from shuffledp.accountants.numerics.tolerances import binom_rtol
from shuffledp.accountants.upper.flags import _phi, _tail_terms
from shuffledp.accountants.upper.hoeffding_flags import (
    added_variance,
    hoeffding_cells,
    hoeffding_divergence,
    jensen_lower,
)

__all__ = ["DependentFlagPair", "dependent_flag_pair", "dependent_flag_divergence"]

TARGET = 1e-2        # the chords over L stop once their gap, weighted over the counts, is <= TARGET of the total
L_EXACT = 48         # windows of L up to this many counts are summed at every count ...
L_EXACT_SMALL_N = 256  # ... and up to this many at most SMALL_N reports (cheap there; and then delta
SMALL_N = 400        # for eps and eps for delta agree: the chords' stopping point does not enter)
MAX_POINTS = 129     # at most this many per count (the bound stays valid when it stops early)
STATS_CACHE = 8192   # block statistics of L kept
SPREAD_EXACT = 2e-3  # the spread answers where it adds at most this share of the variance
CELLS_MAX = 2.5e6     # estimated cells per evaluation at most (else the spread answers)
L_POINTS = 80        # chord points of L per blanket count, about (for that estimate)
N_MAX = 5_000        # reports at most (above, the tables and sums cost too much: Hoeffding's bound or the spread)
H_CELLS_MAX = 1.5e6  # Hoeffding's bound: estimated cells per evaluation at most (else the spread answers)
CHUNK_CELLS = 1 << 16  # cells of G's sums evaluated at once
TABLE_CACHE = 8192   # per-count tables kept (a few kB each)
ROW_SPACING = 8.0    # blanket counts merged on a grid of stride sqrt(median count) / ROW_SPACING
M_START = 9          # blanket counts evaluated first (above SMALL_N reports) ...
M_ROWS_MAX = 32      # ... and at most, the cells refined until their gap is TARGET_M of the total
TARGET_M = 3e-3


@dataclass(frozen=True)
class DependentFlagPair(GroupedPair):
    """A four-group pair (groups ``a=1,b=0``; ``a=0,b=1``; ``a=b=1``; ``a=b=0``, blanket masses
    ``w``) whose flags are negatively dependent under the blanket (``w10 w01 > w11 w00``); ``u``,
    ``v`` the rows' ratios to the blanket by flag. Evaluated by :func:`dependent_flag_divergence`
    through its ``block_value`` (both directions, the larger)."""

    u: tuple[float, float] = (1.0, 1.0)
    v: tuple[float, float] = (1.0, 1.0)

    def block_value(self, ms, block_w, ee: float, tail: float, *, upper: bool) -> float | None:
        """Block-weighted divergence (both directions, the larger) for blanket counts ``ms``; None
        (the caller then spreads the pair to three atoms) where the least-variance three-atom
        spread adds at most :data:`SPREAD_EXACT` of the contribution's variance (there the spread
        is as tight, and cheaper). The exact sums answer up to :data:`N_MAX` reports where an
        evaluation takes at most :data:`CELLS_MAX` cells (:func:`_cells`: tiny delta widens every
        window); above :data:`SMALL_N` reports their upper bound evaluates few counts
        (:func:`_adaptive_counts`), else (and for the lower side) the counts are merged on a grid
        (:func:`_grid_blocks`). Elsewhere the upper bound is Hoeffding's
        (:mod:`~shuffledp.accountants.upper.hoeffding_flags`) where it adds less variance than the
        spread and fits :data:`H_CELLS_MAX` cells, and the lower side Jensen's (below the
        decomposed value, so never above the upper side), else None."""
        ms = np.asarray(ms, dtype=np.float64)
        spread = _spread_added(self, ee)
        if spread is None or spread[0] <= SPREAD_EXACT * spread[1]:
            return None
        w10, w01, w11, w00 = self.w
        sides = [((w10, w01, w11, w00), self.u, self.v)]
        if not (w10 == w01 and self.u == self.v):
            sides.append(((w01, w10, w11, w00), self.v, self.u))
        wts = np.asarray(block_w, dtype=np.float64)
        value = self._exact(ms, wts, sides, ee, tail, upper) if float(np.max(ms)) + 1.0 <= N_MAX else None
        if value is None and _hoeffding_answers(self, ms, sides, tail, spread[0]):
            if upper:
                return _hoeffding_value(self, ms, wts, sides, ee, tail)
            # the lower side to match (the spread's lower side may pass Hoeffding's upper one)
            return max(float(np.dot(wts, jensen_lower(ms, self.gamma, w, u, v, ee, tail))) for w, u, v in sides)
        return value

    def _exact(self, ms, wts, sides, ee: float, tail: float, upper: bool) -> float | None:
        """The exact sums of :meth:`block_value`, or None over :data:`CELLS_MAX` cells."""
        per_row = _cells(self.w, float(np.max(ms)) + 1.0, tail)
        if upper and float(ms[0]) + 1.0 > SMALL_N and ms.size > M_START:
            if per_row * M_ROWS_MAX > CELLS_MAX:
                return None
            return max(_adaptive_counts(ms, wts, self._divergence(w, u, v, ee, tail)) for w, u, v in sides)
        wts, ms = _grid_blocks(ms, wts, upper)
        if per_row * ms.size > CELLS_MAX and float(np.max(ms)) + 1.0 > SMALL_N:
            return None  # (at most SMALL_N reports it always runs: there eps and delta agree)
        return max(float(np.dot(wts, dependent_flag_divergence(ms, self.gamma, w, u, v, ee, tail, upper=upper,
                                                               weights=wts)))
                   for w, u, v in sides)

    def _divergence(self, w, u, v, ee: float, tail: float):
        """``(counts, cell masses) -> D`` by the exact sums, upper side (for :func:`_adaptive_counts`)."""
        def div(ms, cell_w):
            return dependent_flag_divergence(ms, self.gamma, w, u, v, ee, tail, upper=True, weights=cell_w)
        return div


def _hoeffding_answers(pair: DependentFlagPair, ms, sides, tail: float, spread_added: float) -> bool:
    """Hoeffding's bound answers where it adds less variance per report than the least-variance
    spread (``spread_added``) and its evaluation fits :data:`H_CELLS_MAX` cells."""
    if max(added_variance(w, u, pair.gamma) for w, u, _ in sides) >= spread_added:
        return False
    rows = min(ms.size, M_ROWS_MAX)
    return rows * max(hoeffding_cells(w, float(np.max(ms)) + 1.0, tail) for w, _, _ in sides) <= H_CELLS_MAX


def _hoeffding_value(pair: DependentFlagPair, ms, wts, sides, ee: float, tail: float) -> float:
    """Hoeffding's upper bound (:mod:`~shuffledp.accountants.upper.hoeffding_flags`), both directions;
    above :data:`M_START` blocks the counts are evaluated adaptively (:func:`_adaptive_counts`)."""

    def side(w, u, v) -> float:
        def div(counts, cell_w):
            return hoeffding_divergence(counts, pair.gamma, w, u, v, ee, tail)
        return _adaptive_counts(ms, wts, div) if ms.size > M_START else float(np.dot(wts, div(ms, wts)))
    return max(side(w, u, v) for w, u, v in sides)


def _adaptive_counts(ms: np.ndarray, wts: np.ndarray, div) -> float:
    """Upper bound on ``sum_i wts[i] D_{ms[i]}`` (``ms`` ascending: the first counts of the
    decomposition's blocks; ``div(counts, cell masses)``: upper bounds on ``D`` at those counts,
    the masses steering refinement only) evaluating ``D`` at few counts: consecutive blocks are merged into
    cells, each charged at its first count (``D_M`` is non-increasing in ``M``), and a cell is
    split while its charge exceeds its mass times ``D`` at the next cell's first count by more
    than its share of :data:`TARGET_M` of the total (at most :data:`M_ROWS_MAX` counts)."""
    csum = np.concatenate([[0.0], np.cumsum(wts)])
    idx = np.unique(np.round(np.linspace(0, ms.size - 1, M_START)).astype(np.int64))
    vals: dict[int, float] = {}

    def evaluate(new: np.ndarray, cell_w: np.ndarray) -> None:
        got = div(ms[new], cell_w)
        vals.update(zip(new.tolist(), got.tolist(), strict=True))

    ends = np.append(idx[1:], ms.size)
    evaluate(idx, csum[ends] - csum[idx])
    while True:
        ends = np.append(idx[1:], ms.size)
        W = csum[ends] - csum[idx]
        D = np.array([vals[i] for i in idx.tolist()])
        up = W * D
        gap = up - W * np.append(D[1:], D[-1])  # the last cell is the last count alone: no gap
        total = float(np.sum(up))
        if float(np.sum(gap)) <= TARGET_M * total or idx.size >= M_ROWS_MAX:
            return total
        pick = np.flatnonzero((ends - idx >= 2) & (gap > 0.5 * TARGET_M * total / idx.size))
        if pick.size == 0:
            return total
        pick = pick[np.argsort(-gap[pick], kind="stable")][: M_ROWS_MAX - idx.size]
        new = (idx[pick] + ends[pick]) // 2
        idx = np.unique(np.concatenate([idx, new]))
        ends = np.append(idx[1:], ms.size)
        pos = np.searchsorted(idx, new)
        evaluate(new, csum[ends[pos]] - csum[new])


def _cells(w, n_top: float, tail: float) -> float:
    """Estimated cells of one blanket count: the counts of ``L`` evaluated (its window, or about
    :data:`L_POINTS` chord points where wider) times the width of ``Y``'s window."""
    rho, _, b1 = _mixture(w)
    width = 2.0 * float(bernstein_half_width(n_top, b1, tail)) + 3.0
    points = min(float(L_POINTS), 2.0 * float(bernstein_half_width(n_top, rho, tail)) + 3.0)
    return points * width


def _grid_blocks(ms: np.ndarray, wts: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """The counts ``ms`` (ascending, weights ``wts``) merged into the cells of a grid whose
    stride is the power of two at most ``sqrt(median) / ROW_SPACING`` (1: no merging), each cell
    charged at its grid start, at most its smallest count (``upper``), or at its largest count
    (``ms`` then holds the blocks' largest counts): ``D_M`` is non-increasing in ``M``. The grid
    depends on the counts' median only, not on the window's tail: two windows of the same law
    merge their common counts alike (delta for eps and eps for delta agree)."""
    med = float(ms[min(int(np.searchsorted(np.cumsum(wts), 0.5 * float(np.sum(wts)))), ms.size - 1)])
    ratio = math.sqrt(max(med, 1.0)) / ROW_SPACING
    stride = 2 ** int(math.floor(math.log2(ratio))) if ratio >= 2.0 else 1
    if stride == 1:
        return wts, ms
    _, start = np.unique(np.floor(ms / stride), return_index=True)
    end = np.append(start[1:], ms.size) - 1
    # upper: each cell at its grid start (at most its smallest count)
    first = np.floor(ms[start] / stride) * stride
    return np.add.reduceat(wts, start), (first if upper else ms[end])


def _spread_added(pair: GroupedPair, ee: float) -> tuple[float, float] | None:
    """``(added, var)``: the variance the least-variance spread of ``pair`` at ``e^eps = ee`` adds
    to a report's contribution, and that contribution's variance; None when the pair contributes
    nothing (every spread is empty)."""
    spreads = spread_to_three(pair, ee)
    if not spreads:
        return None
    w = np.asarray(pair.w, dtype=np.float64)
    z = (np.asarray(pair.p, dtype=np.float64) - ee * np.asarray(pair.q, dtype=np.float64)) / w
    return spreads[0][0], float(np.dot(w, (z - np.dot(w, z)) ** 2))


def dependent_flag_pair(gamma: float, w, u, v) -> DependentFlagPair:
    """The :class:`DependentFlagPair` of blanket group masses ``w = (w10, w01, w11, w00)`` (all
    positive, summing to one, negatively dependent) and flag ratios ``u``, ``v`` (``u1 > u0``,
    ``v1 > v0``), with ``p_g = gamma u_a w_g`` and ``q_g = gamma v_b w_g``."""
    w = tuple(float(x) for x in w)
    if len(w) != 4 or min(w) <= 0.0:
        raise ValueError(f"four positive group masses expected, got {w!r}")
    if not w[0] * w[1] > w[2] * w[3]:
        raise ValueError("the flags are not negatively dependent (w10 w01 <= w11 w00)")
    if not (u[1] > u[0] >= 0.0 and v[1] > v[0] >= 0.0):
        raise ValueError(f"flag ratios must satisfy u1 > u0 >= 0 and v1 > v0 >= 0, got {u!r}, {v!r}")
    flags = ((1, 0), (0, 1), (1, 1), (0, 0))
    p = tuple(gamma * u[a] * wg for (a, _), wg in zip(flags, w, strict=True))
    q = tuple(gamma * v[b] * wg for (_, b), wg in zip(flags, w, strict=True))
    return DependentFlagPair(w, p, q, float(gamma), tuple(map(float, u)), tuple(map(float, v)))


def _mixture(w) -> tuple[float, float, float]:
    """``(rho, a1, b1)`` of the module docstring for ``w = (w10, w01, w11, w00)``."""
    w10, w01, w11, w00 = w
    rho = (w10 * w01 - w11 * w00) / w01
    return min(max(rho, 0.0), 1.0), w11 / (w11 + w01), w01 / (w01 + w00)


_TABLES: dict = {}   # (NA, a1, b1, tail) -> the tables of _tables_for (cleared when TABLE_CACHE is passed)


def _tables_for(keys: np.ndarray, a1: float, b1: float, tail: float) -> list:
    """Per number ``NA`` of product-law reports in ``keys``: ``Y ~ Bin(NA, b1)``'s window
    ``[loB, hiB]``, its pmf there and its mass outside; ``X ~ Bin(NA, a1)``'s window ``[loA, hiA]``,
    ``Pr[X = t]`` and ``Pr[X >= t]`` for ``t`` in ``[loA, hiA + 1]``, and ``Pr[X < loA]`` (rounded
    up). None of it depends on eps: the tables serve every eps a search tries. The counts not yet
    tabulated are built together (one scipy call per kind of value for all of them)."""
    from scipy import stats

    new = np.array([k for k in keys.tolist() if (k, a1, b1, tail) not in _TABLES], dtype=np.float64)
    if new.size and len(_TABLES) + new.size > TABLE_CACHE:
        _TABLES.clear()  # and every key of this call is built again (none may be missing below)
        new = np.unique(np.asarray(keys, dtype=np.float64))
    if new.size:
        loB, hiB, outB = t_window(new, b1, tail)
        loA, hiA, _ = t_window(new, a1, tail)
        nB, nA = (hiB - loB + 1.0).astype(np.int64), (hiA - loA + 2.0).astype(np.int64)
        rowB, rowA = np.repeat(np.arange(new.size), nB), np.repeat(np.arange(new.size), nA)
        jB = np.arange(rowB.size) - np.repeat(np.cumsum(nB) - nB, nB)
        jA = np.arange(rowA.size) - np.repeat(np.cumsum(nA) - nA, nA)
        pmfB = np.split(stats.binom.pmf(loB[rowB] + jB, new[rowB], b1), np.cumsum(nB)[:-1])
        pmfA, sfA = _tail_terms(new[rowA], loA[rowA] + jA, a1)
        pmfA, sfA = np.split(pmfA, np.cumsum(nA)[:-1]), np.split(sfA, np.cumsum(nA)[:-1])
        below = np.where(loA > 0, stats.binom.cdf(loA - 1.0, new, a1), 0.0) * (1.0 + 2.0 * binom_rtol(new, a1))
        for i, k in enumerate(new.tolist()):
            _TABLES[(k, a1, b1, tail)] = (float(loB[i]), pmfB[i], float(outB[i]), float(loA[i]), float(hiA[i]),
                                          pmfA[i], sfA[i], float(below[i]))
    return [_TABLES[(k, a1, b1, tail)] for k in keys.tolist()]


def _flat(tabs: list) -> dict:
    """The tables of :func:`_tables_for` for several counts, concatenated, with per-count offsets."""
    def cat(i):
        arrs = [tb[i] for tb in tabs]
        sizes = np.array([a.size for a in arrs])
        return np.concatenate(arrs), np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes

    flatB, offB, widthB = cat(1)
    pmfA, offA, sizeA = cat(5)
    sfA = np.concatenate([tb[6] for tb in tabs])
    num = {name: np.array([tb[i] for tb in tabs]) for i, name in ((0, "loB"), (2, "outB"), (3, "loA"),
                                                                  (4, "hiA"), (7, "below"))}
    return dict(num, flatB=flatB, offB=offB, widthB=widthB, pmfA=pmfA, sfA=sfA, offA=offA,
                above=sfA[offA + sizeA - 1])


def _lookup(ft: dict, rows: np.ndarray, upper: bool):
    """``tails(t)`` for :func:`flags._phi` on a grid whose row ``i`` uses the tables of count
    ``rows[i]`` in ``ft`` (:func:`_flat`): the tables inside ``[loA, hiA + 1]``; below it
    ``Pr[X = t] <= Pr[X < loA]`` and ``Pr[X >= t]`` in ``[1 - Pr[X < loA], 1]``; above it both at
    most ``Pr[X > hiA] = Pr[X >= hiA + 1]`` (the table's last entry) and ``Pr[X >= t] >= 0``; each
    bound on the side that moves ``phi`` the way asked (there ``N a1 - K / cu`` is positive below
    the window and negative above it)."""
    loA, hiA = ft["loA"][rows][:, None], ft["hiA"][rows][:, None]
    below, above = ft["below"][rows][:, None], ft["above"][rows][:, None]
    off = ft["offA"][rows][:, None]

    def tails(t):
        k = np.clip(t - loA, 0.0, hiA + 1.0 - loA).astype(np.int64) + off
        pmf, sf = ft["pmfA"][k], ft["sfA"][k]
        low, high = t < loA, t > hiA + 1.0
        if upper:
            pmf = np.where(low, below, np.where(high, above, pmf))
            sf = np.where(low, 1.0, np.where(high, 0.0, sf))
        else:
            pmf = np.where(low | high, 0.0, pmf)
            sf = np.where(low, 1.0 - below, np.where(high, above, sf))
        return pmf, sf
    return tails


def _g(N: np.ndarray, ls: np.ndarray, a1: float, b1: float, u, v, ee: float, tail: float,
       upper: bool) -> np.ndarray:
    """``G(l)`` for the counts ``ls`` of fixed ``(1, 0)`` reports among ``N`` (arrays of the same
    shape; module docstring): :mod:`flags`' sum over ``Y`` of closed-form tails in ``X``, with
    ``N - l`` trials and the threshold shifted by ``(u1 - u0) l``, from the cached tables of
    :func:`_tables_for`; plus (upper) ``N u1`` times the mass of ``Y`` outside its window. Evaluated in
    chunks of about :data:`CHUNK_CELLS` cells (memory)."""
    NA = N - ls
    keys, rows = np.unique(NA, return_inverse=True)
    ft = _flat(_tables_for(keys, a1, b1, tail))
    step = max(1, CHUNK_CELLS // int(ft["widthB"].max()))
    out = np.empty_like(NA)
    for a in range(0, NA.size, step):
        sl = slice(a, a + step)
        out[sl] = _g_chunk(N[sl], ls[sl], ft, rows[sl], a1, b1, u, v, ee, upper)
    return out


def _g_chunk(N, ls, ft: dict, rows: np.ndarray, a1: float, b1: float, u, v, ee: float, upper: bool):
    """:func:`_g` on one chunk (entry ``i`` uses the tables of count ``rows[i]`` in ``ft``)."""
    NA = N - ls
    width = ft["widthB"][rows][:, None]
    j = np.arange(int(width.max()), dtype=np.float64)[None, :]
    valid = j < width
    wB = np.where(valid, ft["flatB"][np.where(valid, ft["offB"][rows][:, None] + j, 0).astype(np.int64)], 0.0)
    Nc = NA[:, None]
    if upper:
        wB = wB * (1.0 + binom_rtol(Nc, b1))
    shift = (N * (u[0] - ee * v[0]) + (u[1] - u[0]) * ls)[:, None]
    # the shift's rounding is charged at the scale of its terms (they may cancel)
    mag = (N * (abs(u[0]) + ee * abs(v[0])) + (u[1] - u[0]) * ls)[:, None]
    phi = _phi(Nc, ft["loB"][rows][:, None] + j, a1, u, v, ee, upper, shift, _lookup(ft, rows, upper), mag)
    out = np.sum(wB * phi, axis=1)
    if upper:
        out = out * (1.0 + ROUNDING_RTOL) + N * u[1] * ft["outB"][rows]
    return out


@lru_cache(maxsize=STATS_CACHE)
def _stats(N: float, key: bytes, rho: float) -> tuple:
    """:func:`blocked_pairs.block_stats` of ``L ~ Bin(N, rho)`` on the blocks between the points
    ``key`` (float64 bytes; the last point alone), cached: every eps a search tries starts from
    the same points."""
    pts = np.frombuffer(key, dtype=np.float64)
    return block_stats(np.append(pts, pts[-1] + 1.0), N, rho)


def _blocks(N: float, pts: np.ndarray, G: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Per block ``[pts[i], pts[i+1] - 1]`` (the last point alone): the chord's upper bound and the
    neighbouring chords' lower bound on ``sum_{l in block} Pr[L = l] G(l)``."""
    mass, m_err, mean, mean_err = _stats(float(N), pts.tobytes(), rho)
    span = np.append(np.diff(pts), 1.0)
    nxt = np.append(G[1:], G[-1])
    slope = (nxt - G) / span
    # the chord at the end of the mean's bracket that raises it (G is non-decreasing, but the
    # charges in the evaluated values can tilt a chord down)
    off_hi = np.clip(np.where(slope >= 0.0, mean + mean_err, mean - mean_err) - pts, 0.0, span - 1.0)
    upper = (mass + m_err) * np.maximum(G + slope * off_hi, 0.0)
    # lower: the previous chord extended from its right end pts[i], the next one back from
    # pts[i+1]; both lie below the convex G on the block (taken at the mean's lower end)
    off_lo = np.clip(mean - mean_err - pts, 0.0, span - 1.0)
    prev = np.append(0.0, slope[:-1])  # block 0: G is non-decreasing, so G(pts[0]) is a lower bound
    # the block before the last point has no next chord (infinite slope: no line from that side)
    nxt_slope = np.append(slope[1:-1], [np.inf, np.inf])[: pts.size]
    line_prev = G + prev * off_lo
    with np.errstate(invalid="ignore"):
        line_next = np.where(np.isinf(nxt_slope), -np.inf, nxt - nxt_slope * (span - off_lo))
    lower = np.maximum(mass - m_err, 0.0) * np.maximum(np.maximum(line_prev, line_next), 0.0)
    lower[-1] = np.maximum(mass[-1] - m_err[-1], 0.0) * G[-1]
    return upper, lower


def _start(lo: float, hi: float, N: float, rho: float) -> np.ndarray:
    """First evaluated counts of ``L``: its window's ends and every count with ``N - l`` a multiple
    of the power of two at most half ``L``'s standard deviation (about ``4 z`` points for a window
    of ``z`` deviations either side). Counts ``N - l`` on a common lattice share their tables
    (:func:`_tables_for`) across blanket counts, and the chords' midpoints keep sharing them."""
    sd = math.sqrt(N * rho * (1.0 - rho))
    lattice = 2.0 ** math.floor(math.log2(sd / 2.0)) if sd >= 4.0 else 1.0
    first = lo + (N - lo) % lattice
    return np.unique(np.concatenate([[lo, hi], np.arange(first, hi + 1.0, lattice)]))


def _splits(pts: np.ndarray, gap: np.ndarray, cut: float) -> np.ndarray:
    """Midpoints of the blocks whose (weighted) gap exceeds ``cut``, at most up to
    :data:`MAX_POINTS` points in all."""
    wide = np.append(np.diff(pts) >= 2.0, False)
    pick = np.flatnonzero(wide & (gap > cut))
    pick = pick[np.argsort(-gap[pick], kind="stable")][: max(MAX_POINTS - pts.size, 0)]
    return np.floor(0.5 * (pts[pick] + pts[pick + 1]))


def _rows(Ns: np.ndarray, wts: np.ndarray, rho: float, a1: float, b1: float, u, v, ee: float, tail: float,
          upper: bool):
    """Per count ``N``: the sum over ``L``'s window of ``Pr[L = l] G(l)`` bounded from the side
    asked, and ``L``'s mass outside the window. A window of at most :data:`L_EXACT` counts (or
    :data:`L_EXACT_SMALL_N` at most :data:`SMALL_N` reports) is summed at every count (exact);
    wider ones start from :func:`_start` and the chords of every count are refined together (one
    evaluation of ``G`` per round) until the gap, weighted by ``wts`` (the counts' block masses)
    over the counts, is at most ``TARGET`` of the weighted total. Nothing depends on earlier
    calls: the same arguments give the same value."""
    lo, hi, out_l = t_window(Ns, rho, tail)
    exact = (hi - lo < L_EXACT) | ((hi - lo < L_EXACT_SMALL_N) & (Ns <= SMALL_N))
    pts = [np.arange(lo[i], hi[i] + 1.0) if exact[i] else _start(lo[i], hi[i], Ns[i], rho)
           for i in range(Ns.size)]
    sizes = [p.size for p in pts]
    G = np.split(_g(np.repeat(Ns, sizes), np.concatenate(pts), a1, b1, u, v, ee, tail, upper),
                 np.cumsum(sizes)[:-1])
    w = np.asarray(wts, dtype=np.float64) / Ns
    while True:
        bounds = [_blocks(Ns[i], pts[i], G[i], rho) for i in range(Ns.size)]
        total = np.array([float(np.sum(b[0] if upper else b[1])) for b in bounds])
        gaps = [w[i] * (b[0] - b[1]) for i, b in enumerate(bounds)]
        whole = float(np.dot(w, [float(np.sum(b[0])) for b in bounds]))
        if sum(float(np.sum(g)) for g in gaps) <= TARGET * whole:
            break
        cut = 0.5 * TARGET * whole / sum(p.size for p in pts)
        new = {i: _splits(pts[i], gaps[i], cut) for i in range(Ns.size)}
        todo = [i for i in new if new[i].size]
        if not todo:
            break
        G_new = _g(np.repeat(Ns[todo], [new[i].size for i in todo]), np.concatenate([new[i] for i in todo]),
                   a1, b1, u, v, ee, tail, upper)
        for i, part in zip(todo, np.split(G_new, np.cumsum([new[i].size for i in todo])[:-1]), strict=True):
            pts[i], idx = np.unique(np.concatenate([pts[i], new[i]]), return_index=True)
            G[i] = np.concatenate([G[i], part])[idx]
    return total, out_l


def dependent_flag_divergence(ms, gamma: float, w, u, v, ee: float, tail: float, *, upper: bool,
                              weights=None) -> np.ndarray:
    """``D_M`` (module docstring) for every blanket count ``M`` in ``ms``, one direction (``P`` with
    ``u`` and flag ``a``, ``Q`` with ``v`` and flag ``b``; ``w = (w10, w01, w11, w00)``). ``upper``:
    an upper bound with every allowance; else a lower bound of the decomposed value (to show the
    blocking error; not a bound on the mechanism). ``weights``: the counts' block masses, which
    steer where the chords are refined (not whether the result is a bound)."""
    rho, a1, b1 = _mixture(w)
    Ns = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    wts = np.ones_like(Ns) if weights is None else np.asarray(weights, dtype=np.float64)
    total, out_l = _rows(Ns, wts, rho, a1, b1, u, v, ee, tail, upper)
    res = gamma / Ns * total
    if upper:
        res = res * (1.0 + ROUNDING_RTOL) + gamma * u[1] * out_l
    return res

