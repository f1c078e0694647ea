"""Exact blanket decomposition of four-group pairs whose two flags are independent.

Many randomizers' victim pairs ``(x, x')`` split the outputs by two flags: ``a`` (the output
"favours" ``x``: OLH's ``y = h(x)``, OUE's bit at ``x``) and ``b`` (the same for ``x'``). The
ratio of a row to the blanket is then ``u = u0 + (u1 - u0) a`` under ``x`` and ``v = v0 +
(v1 - v0) b`` under ``x'``. When the blanket draws' two flags are *independent*
(``a ~ Bern(alpha)``, ``b ~ Bern(beta)``), the four groups need no spread
(:func:`~shuffledp.accountants.upper.decomposition.spread_to_three`): given ``N = M + 1`` reports
(``M`` blanket draws and the victim's), the histogram's pmf is the blanket's multinomial times
``gamma (N u0 + (u1 - u0) A) / N`` (resp. ``v`` and ``B``), ``A`` and ``B`` the numbers of reports
with ``a = 1`` and ``b = 1`` (module docstring of :mod:`~shuffledp.accountants.upper.decomposition`).
Under the multinomial ``A ~ Bin(N, alpha)`` and ``B ~ Bin(N, beta)`` are independent, so

    D_M = gamma / N * E[(N (u0 - e^eps v0) + (u1 - u0) A - e^eps (v1 - v0) B)_+],

a sum over ``B`` of closed-form binomial tails in ``A``
(``E[(c A - K)_+] = c t (1 - alpha) Pr[A = t] + (c N alpha - K) Pr[A >= t]`` with ``t`` the
first integer above ``K / c``, from ``E[(A - N alpha) 1{A >= t}] = t (1 - alpha) Pr[A = t]``:
two terms of the value's size, no cancellation of terms of size ``N``).

Which randomizers have independent flags:

* local hashing over all functions ``[k] -> [g]`` with the blanket ``1 / (e^eps0 + g - 1)``
  per output (valid for every ``k``): ``h(x)`` and ``h(x')`` independent uniform, so
  ``alpha = beta = 1/g`` -- every ``g``, including binary local hashing (``g = 2``);
* OUE with the blanket ``omega'(y) = Pr[y | all bits Bern(q)] * (1 - p) / (1 - q)``, every row's
  value at ``y`` with its own bit read as 0: at most every row (``p > q``), so a valid blanket
  (Balle et al.'s argument needs only ``omega' <= min_x P[x, .]``), a hair smaller than the
  optimal one (they differ at the all-ones vector only, mass ``(e^eps0 - 1) q^d`` of it), with
  ``alpha = beta = q``.

Errors charged to the upper bound (as in :mod:`decomposition`): the ``M`` window and blocks (the
caller's), ``B`` outside a window holding all but ``tail`` of ``Bin(N, beta)`` (the integrand is at
most the ``P``-likelihood, so at most that mass), ``ROUNDING_RTOL`` plus twice
:func:`lower_bounds.binom_rtol` (scipy's binomial loses digits as ``N`` grows) of the magnitudes
of every tail term, and the rounding of ``K`` times ``phi``'s slope (:func:`_phi`). Wide ``B``
windows are summed in chord blocks (:func:`_chord_sum`): ``phi`` is convex in ``B``, so the chord
is an upper bound with no charge beyond the blocks' masses and means, both rounded against us.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.numerics.binomial_blocks import block_stats
from shuffledp.accountants.numerics.grouped import ROUNDING_RTOL, GroupedPair, bernstein_half_width, t_window
from shuffledp.accountants.numerics.tolerances import binom_rtol

__all__ = ["FlagPair", "flag_pair", "flag_divergence"]

B_EXACT_MAX = 2048  # B windows narrower than this are summed term by term, wider ones in chord blocks
B_EVEN = 256        # chord points spread evenly over a wide B window ...
B_KINK = 256        # ... and over phi's kink, KINK_SPAN of its scales either side (:func:`_chord_points`)
KINK_SPAN = 12.0
CACHE_BYTES = 32 << 20  # eps-independent windows and weights kept per process, each cache at most this

# An eps search and a privacy profile evaluate the same pair at many eps: the B window of each
# count and the B weights summed term by term do not depend on eps. Kept here keyed by their
# exact arguments (the arrays' bytes), read-only: the same numbers as computing them again.
_WINDOWS: dict = {}
_WEIGHTS: dict = {}
_TABLES: dict = {}
_ASKED: dict = {}
TABLE_AFTER = 4           # a count set's tail table is built at its 4th evaluation (:func:`_tail_table`)
TABLE_CELLS_MAX = 1 << 20  # at most this many cells (t values times counts)
TABLE_RATIO = 16           # and at most this many times the cells of one evaluation
_LAZY: dict = {}           # wider count sets: their tails kept as asked (:class:`_LazyTails`)
LAZY_SPAN = 1              # each one's kept block: this many times the widest t-range asked, either side
LAZY_CELLS_MAX = 1 << 22   # and at most this many cells


def _kept(cache: dict, key, build):
    """``build()``'s arrays, read-only, remembered under ``key`` (the cache emptied when full)."""
    hit = cache.get(key)
    if hit is None:
        hit = tuple(build())
        for arr in hit:
            arr.flags.writeable = False
        size = sum(arr.nbytes for arr in hit)
        if sum(a.nbytes for v in cache.values() for a in v) + size > CACHE_BYTES:
            cache.clear()
        if size <= CACHE_BYTES:
            cache[key] = hit
    return hit


def _window(N: np.ndarray, beta: float, tail: float):
    """:func:`t_window` of ``Bin(N, beta)`` (``N`` float64), remembered."""
    return _kept(_WINDOWS, (N.tobytes(), float(beta), float(tail)), lambda: t_window(N, beta, tail))
ROW_CELLS = 8192    # cost of one chord-summed M block in the decomposition's cell budget (python per row)


@dataclass(frozen=True)
class FlagPair(GroupedPair):
    """A four-group pair (groups: ``a=1,b=0``; ``a=0,b=1``; ``a=b=1``; ``a=b=0``) with independent
    flags under the blanket. ``u = (u0, u1)``, ``v = (v0, v1)``: the rows' ratios to the blanket.
    ``alt``: another valid decomposition of the same victim pair (e.g. the optimal blanket through
    the three-atom spread); :class:`~shuffledp.accountants.upper.decomposition.DecomposedPair` keeps the
    smaller of the two values (both are upper bounds)."""

    alpha: float = 0.5
    beta: float = 0.5
    u: tuple[float, float] = (1.0, 1.0)
    v: tuple[float, float] = (1.0, 1.0)
    alt: GroupedPair | None = None

    def cells_per_m(self, m_top: float, tail: float) -> float:
        """Cost of one ``M`` block at up to ``m_top`` blanket draws, in the decomposition's cells:
        the ``B`` window's width when summed term by term, else ``ROW_CELLS`` (chord blocks: a
        fixed number of points, whatever ``M``)."""
        width = 2.0 * float(bernstein_half_width(m_top + 1.0, self.beta, tail)) + 3.0
        return width if width < B_EXACT_MAX else float(ROW_CELLS)

    def block_value(self, ms, block_w, ee: float, tail: float, *, upper: bool) -> float:
        """Block-weighted divergence (both directions, the larger) for blanket counts ``ms``."""
        fwd = flag_divergence(ms, self.gamma, self.alpha, self.beta, self.u, self.v, ee, tail, upper=upper)
        best = float(np.dot(block_w, fwd))
        if not (self.alpha == self.beta and self.u == self.v):
            rev = flag_divergence(ms, self.gamma, self.beta, self.alpha, self.v, self.u, ee, tail, upper=upper)
            best = max(best, float(np.dot(block_w, rev)))
        return best


    def row_values(self, ee: float, tail: float, ms=None) -> list | None:
        """Per direction, ``counts -> D_M`` at each count (upper bounds): what the decomposition
        refines its blanket counts with at deep windows (``DecomposedPair._refined_value``); None
        where the pair's own ``block_value`` must answer at the blanket counts ``ms``."""
        def side(alpha, beta, u, v):
            return lambda ms: flag_divergence(ms, self.gamma, alpha, beta, u, v, ee, tail, upper=True)
        out = [side(self.alpha, self.beta, self.u, self.v)]
        if not (self.alpha == self.beta and self.u == self.v):
            out.append(side(self.beta, self.alpha, self.v, self.u))
        return out


def flag_pair(gamma: float, alpha: float, beta: float, u: tuple[float, float], v: tuple[float, float],
              alt: GroupedPair | None = None) -> FlagPair:
    """The :class:`FlagPair` with its four groups' ``w, p, q`` filled in (``p_g = gamma u_g w_g``)."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"flag probabilities must lie in (0, 1), got {alpha!r}, {beta!r}")
    if not (0.0 < gamma <= 1.0):
        raise ValueError(f"blanket mass must lie in (0, 1], got {gamma!r}")
    flags = ((1, 0), (0, 1), (1, 1), (0, 0))
    w = tuple((alpha if a else 1.0 - alpha) * (beta if b else 1.0 - beta) for a, b in flags)
    p = tuple(gamma * u[a] * wg for (a, _), wg in zip(flags, w, strict=True))
    q = tuple(gamma * v[b] * wg for (_, b), wg in zip(flags, w, strict=True))
    return FlagPair(w, p, q, float(gamma), float(alpha), float(beta), tuple(map(float, u)),
                    tuple(map(float, v)), alt)


def _tail_terms(N, t, alpha):
    """``(Pr[Bin(N, alpha) = t], Pr[Bin(N, alpha) >= t])`` for integer ``t`` in ``[0, N + 1]``."""
    from scipy import special, stats

    with np.errstate(invalid="ignore", divide="ignore"):
        mid = (t >= 1.0) & (t <= N)
        sf = np.where(t <= 0.0, 1.0, np.where(t > N, 0.0, special.betainc(
            np.where(mid, t, 1.0), np.where(mid, N - t + 1.0, 1.0), alpha)))
    pmf = np.where(t <= N, stats.binom.pmf(np.minimum(t, N), N, alpha), 0.0)
    return pmf, sf


def flag_divergence(ms, gamma: float, alpha: float, beta: float, u, v, ee: float, tail: float, *,
                    upper: bool) -> np.ndarray:
    """``D_M`` (module docstring) for every blanket count ``M`` in ``ms``, one direction (``P``
    with ``u`` and ``A``, ``Q`` with ``v`` and ``B``). ``upper``: plus the ``B``-window mass and
    the rounding allowances (an upper bound); else minus the allowances, window only (a lower
    bound of the decomposed value, to show the blocking error). ``B`` windows wider than
    ``B_EXACT_MAX`` are summed in chord blocks (:func:`_chord_sum`), narrower ones term by term."""
    N = np.atleast_1d(np.asarray(ms, dtype=np.float64)) + 1.0
    cu = float(u[1] - u[0])
    if cu <= 0.0:
        # the P-likelihood does not grow with A: the positive part needs B small; mirror the flags
        # (a -> 1 - a turns u0 + cu a into u1 - cu a); the formula below needs cu > 0
        if cu == 0.0:
            raise ValueError("the pair's first flag carries no information")
        return flag_divergence(ms, gamma, 1.0 - alpha, 1.0 - beta, (u[1], u[0]), (v[1], v[0]), ee, tail,
                               upper=upper)
    lo, hi, outside = _window(N, beta, tail)
    wide = (hi - lo) >= B_EXACT_MAX
    res = np.zeros_like(N)
    if np.any(~wide):
        res[~wide] = _exact_sum(N[~wide], lo[~wide], hi[~wide], alpha, beta, u, v, ee, upper)
    for i in np.flatnonzero(wide):
        res[i] = _chord_sum(N[i], lo[i], hi[i], alpha, beta, u, v, ee, upper)
    res = gamma / N * res
    if upper:
        res = res * (1.0 + ROUNDING_RTOL) + outside
    return res


def _phi(N, B, alpha: float, u, v, ee: float, upper: bool, shift=None, tails=None, shift_mag=None) -> np.ndarray:
    """``phi(B) = E[(cu A - K(B))_+]``, ``A ~ Bin(N, alpha)``, ``K(B) = e^eps cv B - shift`` with
    ``shift = N (u0 - e^eps v0)`` unless given (:mod:`dependent_flags` adds its fixed reports to it)
    (``B`` may be real), rounded up (``upper``) or down by the binomial tails' tolerance
    (:func:`lower_bounds.binom_rtol`, twice: two tails) of the magnitudes and by ``1e-15`` of the
    magnitudes entering ``K`` times ``phi``'s slope in ``K`` just below it (the rounding of ``K``,
    and a threshold ``t`` misplaced by it, move the value by at most that). ``tails(t)``, if given,
    replaces :func:`_tail_terms` (``Pr[A = t]`` and ``Pr[A >= t]``, or bounds on them on the side
    that moves the value the way asked); ``shift_mag``, if given, the magnitude of the terms the
    given ``shift`` was summed from (its rounding is charged at that scale)."""
    cu, cv = float(u[1] - u[0]), float(v[1] - v[0])
    if shift is None:
        shift = N * (u[0] - ee * v[0])
    K = ee * cv * B - shift
    t = np.clip(np.floor(K / cu) + 1.0, 0.0, N + 1.0)
    pmf, sf = _tail_terms(N, t, alpha) if tails is None else tails(t)
    # E[(A - tau)_+] = t (1 - alpha) Pr[A = t] + (N alpha - tau) Pr[A >= t] (tau = K / cu, t the
    # first integer above it): two terms of the value's size (no cancellation of N-sized ones)
    lead = cu * t * (1.0 - alpha) * pmf
    rest = (cu * N * alpha - K) * sf
    val = lead + rest
    mag = lead + np.abs(rest)
    # K, tau and the difference in ``rest`` are rounded by at most ``dk``: phi moves by at most
    # dk times its slope in K just below, Pr[cu A > K - dk] <= Pr[A >= first integer above (K - 2 dk) / cu]
    # (t' = t: Pr[A >= t]; t' = t - 1: plus Pr[A = t - 1], from Pr[A = t] by the pmf's ratio; else 1)
    dk = 1e-15 * (np.abs(ee * cv * B) + (np.abs(shift) if shift_mag is None else shift_mag) + cu * N * alpha)
    lag = t - np.clip(np.floor((K - 2.0 * dk) / cu) + 1.0, 0.0, N + 1.0)
    inside = (t >= 1.0) & (t <= N)
    below = np.where(inside, pmf * t * (1.0 - alpha) / (np.where(inside, N - t + 1.0, 1.0) * alpha), 0.0)
    slope = np.where(lag <= 0.0, sf, np.where((lag == 1.0) & (inside | (t < 1.0)), sf + below * (1.0 + 1e-12), 1.0))
    err = (ROUNDING_RTOL + 2.0 * binom_rtol(N, alpha)) * (mag + dk * slope) + dk * slope
    if upper:
        return np.maximum(val, 0.0) + err
    return np.maximum(val - err, 0.0)


def _exact_sum(N, lo, hi, alpha, beta, u, v, ee, upper: bool) -> np.ndarray:
    """``sum_B w(B) phi(B)`` over each window ``[lo, hi]`` term by term (rows: the counts ``N``)."""
    B, wB = _weights(N, lo, hi, beta, upper)
    return np.sum(wB * _phi(N[:, None], B, alpha, u, v, ee, upper, tails=_tail_table(N, alpha, B.size)), axis=1)


def _tail_table(N, alpha: float, cells: int):
    """For the counts ``N`` (rows) asked about again and again (:data:`TABLE_AFTER` calls: a
    privacy profile evaluates one pair at many eps), :func:`_tail_terms` at every ``t`` in ``[0,
    N + 1]`` tabulated once and read at the ``t`` asked (an integer in ``[0, N + 1]``, as
    :func:`_phi` asks): the same function at the same arguments, elementwise, hence the same
    numbers. None (compute them) before that, or when the table would exceed
    :data:`TABLE_CELLS_MAX` cells or :data:`TABLE_RATIO` times the ``cells`` of one call; in that
    last case, from half :data:`TABLE_AFTER` calls on, the cells asked are kept instead
    (:class:`_LazyTails`)."""
    key = (N.tobytes(), float(alpha))
    hit = _TABLES.get(key)
    if hit is None:
        seen = _ASKED[key] = _ASKED.get(key, 0) + 1
        size = N.size * (int(np.max(N)) + 2)
        too_big = size > min(TABLE_CELLS_MAX, TABLE_RATIO * cells)
        if seen < TABLE_AFTER or too_big:
            return _lazy_tails(key, N, alpha) if too_big and 2 * seen >= TABLE_AFTER else None
        if len(_ASKED) > 4096:
            _ASKED.clear()

        def build():
            j = np.arange(int(np.max(N)) + 2, dtype=np.float64)[None, :]
            return _tail_terms(N[:, None], np.minimum(j, N[:, None] + 1.0), alpha)

        hit = _kept(_TABLES, key, build)
    rows = np.arange(N.size)[:, None]

    def tails(t):
        if not np.all(np.isfinite(t)):
            return _tail_terms(N[:, None], t, alpha)
        idx = t.astype(np.int64)
        return hit[0][rows, idx], hit[1][rows, idx]
    return tails


def _lazy_tails(key, N, alpha: float):
    """The tails of a count set too wide to tabulate whole (:func:`_tail_table`), asked about again:
    kept (:class:`_LazyTails`) under ``key``, the kept ones dropped when they hold more than
    :data:`CACHE_BYTES`."""
    lazy = _LAZY.get(key)
    if lazy is None:
        if sum(x.nbytes() for x in _LAZY.values()) > CACHE_BYTES:
            _LAZY.clear()
        lazy = _LAZY[key] = _LazyTails(N, alpha)
    return lazy


class _LazyTails:
    """:func:`_tail_terms` of the counts ``N`` (rows) at the ``t`` asked, each ``(N, t)`` computed the
    first time it is asked and read back after: a privacy profile or an eps search asks the same
    pair at many eps, whose ``t`` windows overlap. The same function at the same arguments,
    elementwise, hence the same numbers. The kept block (per row, from ``base``) grows to hold
    what is asked, with :data:`LAZY_SPAN` times the widest row asked as a margin, up to
    :data:`LAZY_CELLS_MAX` cells; past that, the cells are computed and not kept."""

    def __init__(self, N, alpha: float):
        self.N, self.alpha, self.base, self.width = N, float(alpha), None, 0

    def nbytes(self) -> int:
        return 0 if self.base is None else self.pmf.nbytes + self.sf.nbytes + self.known.nbytes

    def _cover(self, lo, hi) -> bool:
        """Make the block hold ``[lo, hi]`` of every row (arrays of the rows); False if too large."""
        if self.base is not None and np.all(lo >= self.base) and np.all(hi < self.base + self.width):
            return True
        pad = LAZY_SPAN * (int(np.max(hi - lo)) + 1)
        base = lo - pad if self.base is None else np.minimum(self.base, lo - pad)
        end = hi + 1 + pad if self.base is None else np.maximum(self.base + self.width, hi + 1 + pad)
        width = int(np.max(end - base))
        if self.N.size * width > LAZY_CELLS_MAX:
            return False
        arrays = (np.zeros((self.N.size, width)), np.zeros((self.N.size, width)),
                  np.zeros((self.N.size, width), dtype=bool))
        if self.base is not None:   # the kept cells, moved to their new columns
            rows = np.arange(self.N.size)[:, None]
            cols = (self.base - base)[:, None] + np.arange(self.width)[None, :]
            for new, old in zip(arrays, (self.pmf, self.sf, self.known), strict=True):
                new[rows, cols] = old
        self.pmf, self.sf, self.known = arrays
        self.base, self.width = base, width
        return True

    def __call__(self, t):
        N = self.N
        if t.ndim != 2 or t.shape[0] != N.size or not np.all(np.isfinite(t)):
            return _tail_terms(N[:, None], t, self.alpha)
        ti = t.astype(np.int64)
        if not self._cover(ti.min(axis=1), ti.max(axis=1)):
            return _tail_terms(N[:, None], t, self.alpha)
        flat = ti - self.base[:, None]
        flat += (np.arange(N.size) * self.width)[:, None]
        pmf, sf, known = self.pmf.ravel(), self.sf.ravel(), self.known.ravel()
        miss = ~known[flat]
        if miss.any():
            new = np.unique(flat[miss])
            rows = new // self.width
            pmf[new], sf[new] = _tail_terms(N[rows], (self.base[rows] + new % self.width).astype(np.float64),
                                            self.alpha)
            known[new] = True
        return pmf[flat], sf[flat]


def _weights(N, lo, hi, beta: float, upper: bool):
    """``(B, w(B))`` of :func:`_exact_sum`: each window's counts (0 past ``hi``) and ``Bin(N, beta)``'s
    pmf there (0 past ``hi``; raised by its tolerance when ``upper``), remembered."""
    from scipy import stats

    def build():
        width = int(np.max(hi - lo)) + 1
        B = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
        valid = B <= hi[:, None]
        B = np.where(valid, B, 0.0)
        Nc = N[:, None]
        wB = np.where(valid, stats.binom.pmf(B, Nc, beta), 0.0)
        if upper:
            wB = wB * (1.0 + binom_rtol(Nc, beta))
        return B, wB

    key = (N.tobytes(), lo.tobytes(), hi.tobytes(), float(beta), bool(upper))
    return _kept(_WEIGHTS, key, build)


def _chord_points(N: float, lo: float, hi: float, alpha: float, u, v, ee: float) -> np.ndarray:
    """The integer points of :func:`_chord_sum`: ``B_EVEN`` even steps over ``[lo, hi]`` and
    ``B_KINK`` over ``KINK_SPAN`` scales either side of ``phi``'s kink (where ``K(B) / cu`` meets
    ``A``'s mean; its scale in ``B`` is ``cu sd(A) / (e^eps |cv|)``); ``lo`` and ``hi`` included."""
    cu, cv = float(u[1] - u[0]), float(v[1] - v[0])
    even = np.linspace(lo, hi, B_EVEN + 1)
    pts = [even]
    if cv != 0.0:
        kink = (cu * N * alpha + N * (u[0] - ee * v[0])) / (ee * cv)
        scale = cu * math.sqrt(N * alpha * (1.0 - alpha)) / (ee * abs(cv))
        pts.append(kink + scale * np.linspace(-KINK_SPAN, KINK_SPAN, B_KINK + 1))
    return np.unique(np.clip(np.round(np.concatenate(pts)), lo, hi))


def _chord_sum(N: float, lo: float, hi: float, alpha, beta, u, v, ee, upper: bool) -> float:
    """``sum_B w(B) phi(B)`` over ``[lo, hi]`` in blocks ``[p_i, p_{i+1} - 1]`` between the points
    of :func:`_chord_points` (the last point alone). ``phi`` is convex in ``B`` (the positive part
    of an affine function, averaged), so on a block it is at most the chord through its values at
    ``p_i`` and ``p_{i+1}``, whose sum needs only the block's mass and mean: both from
    :func:`blocked_pairs.block_stats` (cdf differences; the mean bracketed by the truncated
    geometric laws of the pmf's end ratios), each taken at the end of its error bound that
    raises the chord. Not ``upper``: each block at the smaller of its ends' values (``phi`` is
    monotone in ``B``), no allowances: a lower bound, to show the blocking error."""
    pts = _chord_points(N, lo, hi, alpha, u, v, ee)
    edges = np.append(pts, hi + 1.0)
    mass, m_err, mean, mean_err = block_stats(edges, N, beta)
    phi = _phi(N, pts, alpha, u, v, ee, upper)
    nxt = np.append(phi[1:], phi[-1])
    if not upper:
        return float(np.sum(np.maximum(mass - m_err, 0.0) * np.minimum(phi, nxt)))
    span = np.append(np.diff(pts), 1.0)
    slope = (nxt - phi) / span
    off = np.clip(np.where(slope < 0, mean - mean_err, mean + mean_err) - pts, 0.0, span - 1.0)
    chord = np.maximum(phi + slope * off, 0.0)
    return float(np.sum((mass + m_err) * chord))
