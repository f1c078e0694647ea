"""Numerical privacy-blanket decomposition accountant, rounded against us.

A finite-output local randomizer is given by its output matrix ``P[x, y]`` (rows: inputs,
columns: outputs). Its *blanket* is ``omega(y) = min_x P[x, y]`` with mass ``gamma = sum omega``;
every report is, with probability ``gamma``, a draw from ``omega / gamma`` whatever the input
(Balle, Bell, Gascon, Nissim 2019). Giving the adversary the identity and the reports of the
other users who did not draw from the blanket is a post-processing argument, so the shuffled
output on neighbouring datasets (victim holding ``x`` or ``x'``) is no further apart than the
*decomposed pair*

    victim's report R(x)  vs  R(x'),   plus  M ~ Bin(n - 1, gamma) i.i.d. blanket draws.

Su, Cheng and Wang (arXiv 2504.07414) show this blanket decomposition is the optimal one among
decomposition-based analyses; this module computes its hockey-stick divergence exactly up to
bounded, explicitly added errors (an upper bound, not an estimate).

Reduction to three counts
-------------------------
Write ``u(y) = P[x, y] / omega(y)`` and ``v(y) = P[x', y] / omega(y)``. Given ``M``, the pmf of
the histogram ``h`` of the ``M + 1`` reports is ``Mult_{M+1}(h; omega/gamma) * gamma *
sum_y u(y) h_y / (M + 1)`` (resp. ``v``), so outputs with the same ``(u, v)`` can be merged:
the counts per group are sufficient. When a pair ``(x, x')`` has at most three groups (k-ary
randomized response: the victim's two values and the rest; any binary randomizer), name them
1, 2, 3 and let ``t = H_1 + H_2``. Given ``(M, t)`` the pmf in ``a = H_1`` is

    P(a, t | M) = B(t-1) [P_1 b(a-1; t-1) + P_2 b(a; t-1)] + P_3 B(t) b(a; t),

with ``B = Bin(.; M, w_1 + w_2)``, ``b = Bin(.; ., w_1/(w_1 + w_2))``, ``w_g`` the blanket mass
of group g and ``P_g`` (``Q_g``) the victim's probability of group g under ``x`` (``x'``). Divided
by ``b(a; t)`` this is *linear* in ``a``, so for every ``(M, t)`` the set where
``P - e^eps Q > 0`` is a half-line in ``a`` and its mass is three binomial tails. The same
function with ``M = n - 1`` fixed and the other users' group probabilities in place of the
blanket's gives the exact divergence of a *real* neighbouring pair whose other users all hold
one value (module :func:`pair_delta`), which is a lower bound on the mechanism's privacy.

More groups
-----------
A pair with more than three groups (OUE, subset selection, local hashing, any matrix) is reduced
per eps to three-group pairs that dominate it in convex order (:func:`spread_to_three`: a
mean-preserving spread of the law of one report's contribution), then evaluated as above.
A pair whose four groups are two independent flags (local hashing; OUE under a blanket with
independent bits) evaluates itself exactly instead (:mod:`shuffledp.accountants.upper.flags`, through
its ``block_value``).

Errors, all charged to the upper bound
--------------------------------------
* ``M`` outside a window of ``Bin(n-1, gamma)`` holding all but ``tail`` of its mass: the
  divergence there is at most that mass, which is computed exactly and added.
* ``M`` grouped into blocks (at most ``max_blocks``), each charged the divergence at its
  *smallest* ``M``: ``D_M`` is non-increasing in ``M`` because one more blanket draw is a
  world-independent Markov kernel (data processing). Charging each block its largest ``M``
  gives a lower bound on the decomposed divergence, reported as ``delta_decomposed_lower`` to
  show the blocking error (not a lower bound on the mechanism).
* ``t`` outside a window of the blanket count in groups 1 and 2 that holds all but ``tail`` of
  its mass: the divergence there is at most that mass, added.
* The half-line threshold is a rounded real number: the two terms beside it are evaluated
  individually and a possible off-by-one is charged (``+max(f(a0-1), 0) + max(-f(a0), 0)``).
* Floating-point rounding of the binomial pmfs and tails (Boost, via scipy): a relative
  allowance of ``ROUNDING_RTOL`` of the summed magnitudes.

The k-RR worst case over pairs is any pair (symmetry); for a general matrix every ordered pair
of distinct rows is evaluated and the largest divergence is kept.
"""

import math

import numpy as np

from shuffledp.accountants.numerics.grouped import (
    DEFAULT_TAIL,
    EPS_CAP,
    ROUNDING_RTOL,
    CountTable,
    GroupedPair,
    bernstein_half_width,
    blanket_of,
    divergence_given_count,
    grouped_pairs,
    krr_matrix,
    krr_pairs,
    spread_to_three,
    t_window,
    valid_delta,
    valid_eps,
    valid_int,
)
from shuffledp.accountants.numerics.hockey_stick import bisect_eps
from shuffledp.accountants.numerics.secant import secant_eps
from shuffledp.accountants.numerics.tolerances import SUBNORMAL_GUARD, TAIL_MIN, binom_rtol
from shuffledp.accountants.numerics.walk_blocks import walk_divergence

__all__ = [
    "ROUNDING_RTOL",
    "DEFAULT_TAIL",
    "krr_matrix",
    "blanket_of",
    "GroupedPair",
    "grouped_pairs",
    "krr_pairs",
    "spread_to_three",
    "DecomposedPair",
    "decomposition_delta",
    "decomposition_eps",
    "THREE_M_CAP",
    "three_group_cells",
]

DEFAULT_BLOCKS = None  # adaptive: about BLOCK_BUDGET (M block, t) cells per evaluation
MIN_BLOCKS = 16
BLOCK_BUDGET = 120_000
WALK_WIDTH = 3000  # t-windows wider than this: the blocked walk (shuffledp.accountants.numerics.walk_blocks)
WALK_M = 10**8     # and counts of blanket draws above this, whatever the window
WALK_ROWS = 64     # counts of blanket draws (blocks of them) evaluated by the walk at most
SPREAD_TIE = 1.1  # spreads adding at most this factor more variance than the least are evaluated too
FINE_TAIL = 1e-40  # windows deeper than this (delta below about 1e-32): the blanket counts are refined
FINE_BLOCKS_MAX = 512  # (DecomposedPair._refined_value) where at most this many blocks (more: narrow already),
FINE_STEP = 16     # FINE_STEP more counts per round, at most FINE_ROWS more (FINE_WALK_ROWS on the walk,
FINE_ROWS = 32     # dearer per count, where D_M varies less per count), until the charges exceed the
FINE_WALK_ROWS = 16  # cells' next values by at most
FINE_TARGET = 0.05  # this share of the total (in eps: under 1e-3 of it, delta being tiny)


# --------------------------------------------------------------------------- decomposition
def _count_blocks(ms: np.ndarray, wts: np.ndarray, max_blocks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(block_w, m_upper, m_lower)`` of :class:`DecomposedPair`: the blanket counts ``ms``
    (weights ``wts``) as they are, or grouped into at most ``max_blocks`` consecutive blocks
    (half evenly spaced, half at quantiles) with each block's first and last count."""
    if ms.size > max_blocks:
        half = max_blocks // 2
        even = np.linspace(0, ms.size, max(half, 1), endpoint=False).astype(int)
        cdf = np.cumsum(wts) / wts.sum()
        quant = np.searchsorted(cdf, np.linspace(0.0, 1.0, max_blocks - half, endpoint=False))
        starts = np.unique(np.concatenate([even, np.minimum(quant, ms.size - 1)]))
        ends = np.append(starts[1:], ms.size) - 1
        return np.add.reduceat(wts, starts), ms[starts], ms[ends]
    return wts, ms, ms


M_ENUM_MAX = 200_000  # blanket-count windows up to this width are enumerated; wider ones in blocks
M_BLOCKS_WIDE = 256  # wider windows: at most this many blocks (see _m_law)
# a pair evaluated through count tables beside a cheaper exact one (MHM's spreads, OUE's alt) is
# charged at min(M, THREE_M_CAP) draws: D_M is non-increasing in M, so an upper bound, and its
# table's width stops growing with n
THREE_M_CAP = 200_000
ALT_CELLS_MAX = 20_000  # an ``alt`` pair's count table per M block above this width: skipped


def three_group_cells(m_top: float, s: float, tail: float) -> float:
    """Cells per ``M`` block of a three-group pair's count table (groups 1 and 2 of blanket mass
    ``s``) at up to ``m_top`` draws: the width of its ``t`` window."""
    return 2.0 * float(bernstein_half_width(m_top, min(s, 1.0), tail)) + 3.0


def _auto_blocks(m_top: float, tail: float, pairs) -> int:
    """As many ``M`` blocks as the cell budget allows (fewer blocks: looser, never unsound). A
    many-group pair's spread changes its group-1+2 mass with eps: budget for the widest; a pair
    that evaluates itself (``block_value``) states its own cells per ``M`` (``cells_per_m``)."""
    s_max = max((g.w[0] + g.w[1]) if len(g.w) <= 3 else 0.5 for g in pairs)
    z = math.sqrt(2.0 * math.log(2.0 / tail))
    width = 2.0 * z * math.sqrt(max(m_top * s_max * (1.0 - min(s_max, 1.0)), 0.0)) + 3.0
    own = [g.cells_per_m(m_top, tail) for g in pairs if hasattr(g, "cells_per_m")]
    if own and len(own) == len(pairs):
        width = max(own)
    return max(MIN_BLOCKS, int(BLOCK_BUDGET // width))


def _m_law(N: int, gam: float, tail: float, max_blocks: int | None, pairs, block_cap: int | None = None):
    """``(block_w, m_upper, m_lower, m_outside)`` of :class:`DecomposedPair` for ``M ~ Bin(N, gam)``.

    A window holding all but about ``tail`` (:func:`t_window`; the mass outside computed and
    charged). Up to ``M_ENUM_MAX`` counts wide it is enumerated (pmfs) and grouped by
    :func:`_count_blocks`; wider, it is cut into ``max_blocks`` even blocks whose masses are
    binomial cdf / sf differences on the small side (never an enumeration: any ``N``). Every mass
    is rounded up by its error bound (:func:`lower_bounds.binom_rtol`)."""
    from scipy import stats

    if gam >= 1.0:
        ones = np.array([float(N)])
        return np.array([1.0 + ROUNDING_RTOL]), ones, ones, 0.0
    # Bernstein's window alone: the M law's blocks (and their charged masses) as before; the
    # Chernoff ends narrow the t windows, where small means at tiny tails made them 5x too wide
    lo, hi, outside = (float(x[0]) for x in t_window(np.array([float(N)]), gam, tail, chernoff=False))
    rtol = max(ROUNDING_RTOL, float(binom_rtol(N, gam)))
    if max_blocks is None:
        max_blocks = _auto_blocks(hi, tail, pairs)
        max_blocks = max_blocks if block_cap is None else min(max_blocks, block_cap)
    if hi - lo + 1.0 <= M_ENUM_MAX:
        ms = np.arange(lo, hi + 1.0)
        wts = stats.binom.pmf(ms, N, gam)
        block_w, m_upper, m_lower = _count_blocks(ms, wts, max_blocks)
        return block_w * (1.0 + rtol), m_upper, m_lower, outside
    # a window this wide holds over (M_ENUM_MAX / 24)^2 draws on average: M_BLOCKS_WIDE blocks each
    # span under 1e-4 of M relative, so charging each at its smallest M costs nothing visible, while
    # every block's mass costs four binomial cdfs (about 20 us each at N = 1e15)
    edges = np.unique(np.round(np.linspace(lo, hi + 1.0, min(max_blocks, M_BLOCKS_WIDE) + 1)))
    return _block_masses(edges, float(N), gam) * (1.0 + ROUNDING_RTOL), edges[:-1], edges[1:] - 1.0, outside


def _block_masses(edges, N: float, p: float) -> np.ndarray:
    """Upper bounds on the masses of the blocks ``[edges[i], edges[i+1] - 1]`` of ``Bin(N, p)``:
    each a difference of two cdfs (below the mean) or two sfs (above), or one minus both for the
    block holding the mean, plus :func:`lower_bounds.binom_rtol` of the terms differenced."""
    from scipy import stats

    first, last = edges[:-1], edges[1:] - 1.0
    mean = N * p
    below = stats.binom.cdf(first - 1.0, N, p)   # Pr[X < first]
    upto = stats.binom.cdf(last, N, p)           # Pr[X <= last]
    above = stats.binom.sf(last, N, p)           # Pr[X > last]
    beyond = stats.binom.sf(first - 1.0, N, p)   # Pr[X >= first]
    low, high = last < mean, first > mean
    mass = np.where(low, upto - below, np.where(high, beyond - above, 1.0 - below - above))
    terms = np.where(low, upto + below, np.where(high, beyond + above, 1.0 + below + above))
    return np.maximum(mass, 0.0) + binom_rtol(N, p) * terms + SUBNORMAL_GUARD


class DecomposedPair:
    """The blanket-decomposed pair of one randomizer at ``n`` users; ``delta(eps)`` is an upper
    bound on its hockey-stick divergence (worst ordered pair of inputs, both directions)."""

    def __init__(self, matrix, n: int, *, tail: float = DEFAULT_TAIL,
                 max_blocks: int | None = DEFAULT_BLOCKS, pairs: list[GroupedPair] | None = None,
                 all_spreads: bool = False, block_cap: int | None = None):
        """``matrix``: the randomizer's output matrix (every ordered pair of rows is reduced);
        or ``matrix=None`` and ``pairs`` given directly (e.g. :func:`krr_pairs`). ``block_cap``:
        at most this many ``M`` blocks where their number is chosen by the cell budget (fewer
        blocks: a looser bound at a lower cost, never an unsound one)."""
        self.n = valid_int(n, "n", 2)
        self.all_spreads = bool(all_spreads)  # many-group pairs: min over every spread (slower)
        self.tail = float(tail)
        if not (0 < self.tail < 1e-3):
            raise ValueError(f"tail must lie in (0, 1e-3), got {tail!r}")
        if max_blocks is not None:
            max_blocks = valid_int(max_blocks, "max_blocks", 1)
        if pairs is None:
            pairs = grouped_pairs(matrix)
        if not pairs:
            raise ValueError("no pair of inputs to account for")
        self.pairs = list(pairs)
        self.gamma = self.pairs[0].gamma
        self.directed = self.pairs  # ordered pairs: both directions are listed
        self.block_w, self.m_upper, self.m_lower, self.m_outside = _m_law(
            self.n - 1, min(self.gamma, 1.0), self.tail, max_blocks, self.pairs, block_cap)
        self._tables: dict = {}
        self._alt: dict = {}
        self._memo: dict = {}

    def _table(self, upper: bool, s: float) -> CountTable:
        key = (upper, round(s, 15))
        if key not in self._tables:
            ms = self.m_upper if upper else self.m_lower
            self._tables[key] = CountTable(ms, s, self.tail)
        return self._tables[key]

    def _walks(self, ms, s: float) -> bool:
        """True when the t-window of the widest count is wider than :data:`WALK_WIDTH`: the pair is
        then evaluated in blocks of a convex count (:mod:`shuffledp.accountants.numerics.walk_blocks`),
        at a cost independent of ``M``, instead of every ``t``."""
        if float(ms[-1]) > WALK_M:  # e.g. two groups (s = 1): one t, but its a-split's tails slow at huge t
            return True
        z = math.sqrt(2.0 * math.log(2.0 / self.tail))
        return 2.0 * z * math.sqrt(max(float(ms[-1]) * s * (1.0 - min(s, 1.0)), 0.0)) > WALK_WIDTH

    def _pair_value(self, g: GroupedPair, ee: float, upper: bool, table=None) -> float:
        """Block-weighted divergence of one three-group pair (``table``: an uncached count table)."""
        s = g.w[0] + g.w[1]
        ms = self.m_upper if upper else self.m_lower
        wts = self.block_w if upper else self.block_w / (1.0 + ROUNDING_RTOL)
        if self._walks(ms, s):
            # at most WALK_ROWS counts: consecutive blocks merged, charged at their smallest count
            # (upper) or largest (lower); D_M is non-increasing in M
            wts, first, last = _count_blocks(ms, wts, WALK_ROWS)
            d = walk_divergence(first if upper else last, g, ee)[0 if upper else 1]
        else:
            tab = self._table(upper, s) if table is None else table
            d = divergence_given_count(tab, g, g.w[0] / s, ee, upper=upper)
        return float(np.dot(wts, d))

    def _spread_value(self, g: GroupedPair, ee: float, upper: bool) -> float:
        """A pair with more than three groups: the smallest of the three-atom mean-preserving
        spreads (:func:`spread_to_three`, one per choice of the kept middle atom), each evaluated
        exactly by the three-group sums. Every one is an upper bound on the pair's divergence given
        each ``M`` (convex order), so their minimum is too."""
        spreads = spread_to_three(g, ee)
        if not spreads:
            return 0.0
        if not self.all_spreads:
            # any one spread is an upper bound; the least-variance one was the smallest of them at
            # every point near a delta target we compared (others won only where delta < 1e-30).
            # Near-ties (symmetric pairs) are all evaluated: there the variance does not decide.
            least = spreads[0][0]
            spreads = [sp for sp in spreads if sp[0] <= SPREAD_TIE * least + 1e-300]
        best = math.inf
        ms = self.m_upper if upper else self.m_lower
        for _, scale, h in spreads:
            s = h.w[0] + h.w[1]
            table = None if self._walks(ms, s) else CountTable(ms, s, self.tail)
            best = min(best, scale * self._pair_value(h, ee, upper, table))
        return best

    def pair_value(self, g: GroupedPair, ee: float, upper: bool = True) -> float:
        """One directed pair's block-weighted divergence at ``e^eps = ee`` (before the ``M``-window
        charge): exact sums for <= 3 groups, the spreads for more; a pair that evaluates itself
        exactly (``block_value``, e.g. :class:`shuffledp.accountants.upper.flags.FlagPair`) does so
        unless it returns None, and its ``alt`` decomposition, if any, is evaluated too and the
        smaller kept. The values of this instance's own pairs are remembered (an eps search of
        several pairs asks the worst pair again at its starting point)."""
        own = any(g is h for h in self.pairs)
        key = (id(g), ee, upper)
        if own and key in self._memo:
            return self._memo[key]
        value = self._evaluate(g, ee, upper)
        if own:
            self._memo[key] = value
        return value

    def _evaluate(self, g: GroupedPair, ee: float, upper: bool) -> float:
        exact = getattr(g, "block_value", None)
        fine = upper and self.tail < FINE_TAIL and 2 <= self.m_upper.size <= FINE_BLOCKS_MAX
        if exact is None:
            if fine:
                walks = self._walks(self.m_upper, g.w[0] + g.w[1] if len(g.w) <= 3 else 0.5)
                return self._refined_value(lambda ms: self._row_values(g, ms, ee), walks)
            return self._pair_value(g, ee, upper) if len(g.w) <= 3 else self._spread_value(g, ee, upper)
        ms = self.m_upper if upper else self.m_lower
        wts = self.block_w if upper else self.block_w / (1.0 + ROUNDING_RTOL)
        rows = getattr(g, "row_values", None)
        fns = rows(ee, self.tail, ms) if fine and rows is not None else None
        if fns is not None:  # per direction: (counts -> D at each) of a pair evaluated row by row
            value = max(self._refined_value(fn, False) for fn in fns)
        else:
            value = exact(ms, wts, ee, self.tail, upper=upper)
        if value is None:  # the pair declines these counts (its cost): the many-group path
            return self._pair_value(g, ee, upper) if len(g.w) <= 3 else self._spread_value(g, ee, upper)
        alt = getattr(g, "alt", None)
        if alt is None or not upper:
            return value
        alt_value = self._alt_value(alt, ee)
        return value if alt_value is None else min(value, alt_value)

    def _row_values(self, g: GroupedPair, ms: np.ndarray, ee: float) -> np.ndarray:
        """Upper bounds on ``D_M`` at each count in ``ms`` (increasing) of a pair without its own
        evaluation: a three-group pair's exact sums (count tables, or the blocked walk where they
        are wide), a many-group pair's spreads, the smallest per count (each bounds every ``D_M``)."""
        if len(g.w) > 3:
            spreads = spread_to_three(g, ee)
            if not spreads:
                return np.zeros_like(ms)
            least = spreads[0][0]
            keep = spreads if self.all_spreads else [sp for sp in spreads if sp[0] <= SPREAD_TIE * least + 1e-300]
            return np.min([scale * self._row_values(h, ms, ee) for _, scale, h in keep], axis=0)
        s = g.w[0] + g.w[1]
        if self._walks(ms, s):
            return walk_divergence(ms, g, ee)[0]
        return divergence_given_count(CountTable(ms, s, self.tail), g, g.w[0] / s, ee, upper=True)

    def _refined_value(self, row_fn, walks: bool) -> float:
        """The upper block-weighted divergence with the blanket counts refined where it lies: at
        deep windows (tiny delta) ``D_M`` falls by orders of magnitude across a block, so charging
        each block at its first count (:func:`_count_blocks`) cost up to 1.2% in eps at delta =
        1e-290. Cells ``[r_i, r_{i+1} - 1]`` between evaluated counts ``r_i`` are charged at their
        first count (``D_M`` is non-increasing in ``M``) with masses from cdf differences
        (:func:`_block_masses`, rounded up). It starts from the blocks' first counts (those the
        walk evaluates, on the walk), so its first total is the unrefined bound, and splits the
        cells whose charge exceeds their mass times the next count's value most, until those
        excesses are at most ``FINE_TARGET`` of the total or ``FINE_ROWS`` more counts are
        evaluated (``FINE_WALK_ROWS`` on the walk). Every total is an upper bound: the least.
        ``row_fn(counts)``: upper bounds on ``D_M`` at those counts (one direction of one pair)."""
        hi = float(self.m_lower[-1])
        N, gam = float(self.n - 1), min(self.gamma, 1.0)
        rows = _count_blocks(self.m_upper, self.block_w, WALK_ROWS)[1] if walks else self.m_upper
        most = rows.size + (FINE_WALK_ROWS if walks else FINE_ROWS)
        vals = dict(zip(rows.tolist(), np.asarray(row_fn(rows)).tolist(), strict=True))
        best = math.inf
        while True:
            edges = np.append(rows, hi + 1.0)
            W = _block_masses(edges, N, gam) * (1.0 + ROUNDING_RTOL)
            d = np.array([vals[r] for r in rows.tolist()])
            gap = W * (d - np.append(d[1:], d[-1]))
            total = float(np.dot(W, d))
            best = min(best, total)
            wide = np.flatnonzero((np.diff(edges) >= 2.0) & (gap > 0.0))
            if float(np.sum(gap)) <= FINE_TARGET * total or rows.size >= most or wide.size == 0:
                return best
            pick = wide[np.argsort(-gap[wide], kind="stable")][: min(FINE_STEP, most - rows.size)]
            new = np.floor(0.5 * (edges[pick] + edges[pick + 1]))
            vals.update(zip(new.tolist(), np.asarray(row_fn(new)).tolist(), strict=True))
            rows = np.unique(np.concatenate([rows, new]))

    def _alt_value(self, alt: GroupedPair, ee: float) -> float | None:
        """A pair's ``alt`` decomposition (another blanket: its own ``M`` law and window charge,
        expressed against this pair's ``M``-window charge so that :meth:`_finish` gives its bound);
        ``None`` when it is skipped: a pair evaluated through count tables whose table would be
        wider than ``ALT_CELLS_MAX`` per ``M`` block (its cost grows with sqrt(n); it is only
        min'd with the main value, so skipping it is sound). A pair that evaluates itself
        (``block_value``, e.g. a blocked three-group pair) is always evaluated."""
        key = id(alt)
        if key not in self._alt:
            s_alt = alt.w[0] + alt.w[1] if len(alt.w) <= 3 else 0.5  # a spread's: as in _auto_blocks
            cells = three_group_cells(self.n * min(alt.gamma, 1.0), s_alt, self.tail)
            cheap = hasattr(alt, "block_value") or cells <= ALT_CELLS_MAX
            self._alt[key] = DecomposedPair(None, self.n, tail=self.tail, pairs=[alt],
                                            all_spreads=self.all_spreads) if cheap else None
        other = self._alt[key]
        if other is None:
            return None
        return other.pair_value(alt, ee, True) + (other.m_outside - self.m_outside) / (1.0 + ROUNDING_RTOL)

    def _finish(self, value: float) -> float:
        """The upper bound from the largest pair value: rounding allowance and the ``M``-window mass."""
        return min(value * (1.0 + ROUNDING_RTOL) + self.m_outside, 1.0)

    def _delta(self, eps: float, upper: bool) -> float:
        eps = valid_eps(eps)
        ee = math.exp(min(eps, EPS_CAP))
        best = max(self.pair_value(g, ee, upper) for g in self.directed)
        return self._finish(best) if upper else min(best, 1.0)

    def delta(self, eps: float) -> float:
        """Upper bound on the decomposed pair's divergence at ``e^eps``."""
        return self._delta(eps, True)

    def delta_lower(self, eps: float) -> float:
        """Lower bound on the decomposed pair's divergence (blocks at their largest M; no
        allowances): shows the blocking error. Not a lower bound on the mechanism."""
        return self._delta(eps, False)


def decomposition_delta(matrix, n: int, eps: float, **kw) -> float:
    """Upper bound on delta(eps) of shuffling n reports of the randomizer ``matrix``."""
    return DecomposedPair(matrix, n, **kw).delta(eps)


def pairs_eps0(pairs: list[GroupedPair]) -> float:
    """The randomizer's own eps0 over the listed pairs (largest group log-likelihood ratio)."""
    top = 0.0
    for g in pairs:
        for a, b in zip(g.p, g.q, strict=True):
            if a > 0 and b > 0:
                top = max(top, abs(math.log(a / b)))
    return top


def decomposition_eps(matrix, n: int, delta: float, *, rtol: float = 1e-5, guess: float | None = None,
                      pairs: list[GroupedPair] | None = None, ceiling: float | None = None, **kw) -> float:
    """Smallest eps (relative precision about ``rtol``, rounded up, a verified point) whose upper
    delta meets ``delta``. Shuffling eps0-LDP reports is eps0-DP, so the answer is at most the
    randomizer's own eps0. ``guess`` (e.g. the lower bound's eps) speeds up the search.
    ``ceiling`` (e.g. another sound bound's eps): evaluated first; where this bound's delta there
    is above ``delta`` it cannot do better, and the randomizer's eps0 is returned at once (e.g. at
    n = 1e15 and tiny delta, where its rounding allowances put a floor under its delta); else the
    search runs below it."""
    delta = valid_delta(delta)
    tail = kw.pop("tail", max(TAIL_MIN, 1e-3 * rtol * delta))
    pair = DecomposedPair(matrix, n, tail=tail, pairs=pairs, **kw)
    top = pairs_eps0(pair.pairs)
    if pair.m_outside > delta:
        # every delta(eps) adds the blanket count's mass outside its window: nothing below the
        # randomizer's own eps0 can be certified (delta near 1e-300, where the window's tail
        # cannot be set below delta); the search would end there too, after many evaluations
        return top

    def fn(e: float) -> float:
        return 0.0 if e >= top else pair.delta(e)

    hi = top
    if ceiling is not None and 0.0 < ceiling < top:
        if not (guess is not None and guess > 0) and fn(0.0) <= delta:
            return 0.0  # (the search would test eps = 0 first too; the ceiling would cost one more)
        if fn(ceiling) > delta:
            return top
        hi = ceiling  # a verified point of every pair

    def search() -> float:
        if guess is None or not (0 < guess < hi):
            return bisect_eps(fn, delta, hi, rtol)[1]
        # no need to test eps = 0 first: the returned end is always a verified point
        return secant_eps(fn, delta, 0.0, hi, guess, rtol)

    every = list(pair.directed)
    if len(every) == 1:
        return search()
    # several pairs (e.g. subset-exp's overlaps): search with the pair that is worst at the start,
    # then verify every other pair at the answer and search again with any that exceeds delta;
    # the returned eps is a verified point of the maximum over all pairs
    start = guess if guess is not None and 0 < guess < hi else hi / 2
    ee = math.exp(min(start, EPS_CAP))
    values = [pair.pair_value(g, ee) for g in every]
    active = [every[int(np.argmax(values))]]
    while True:
        pair.directed = active
        eps = search()
        pair.directed = every
        if eps >= hi:
            return eps
        ee = math.exp(min(eps, EPS_CAP))
        over = []
        for g in every:
            if g in active:
                continue
            if pair._finish(pair.pair_value(g, ee)) > delta:
                over.append(g)
        if not over:
            return eps
        active = active + over
