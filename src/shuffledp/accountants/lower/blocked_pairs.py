"""Lower bounds from real neighbouring pairs at any n (2 .. 1e15), evaluated in blocks.

The pairs are those whose other users all hold one third input (Su, Cheng and Wang's class for
OUE and local hashing, arXiv 2504.07414; for k-RR the others at a third value). With the
reference dataset "all n users at the third input", the victim's report is a size-biased pick of
the n reports, so (module docstring of :mod:`~shuffledp.accountants.lower.third_flag`)

    D_{e^eps}(P_x || P_x') = 1/n * E_ref[(Z)_+],   Z = sum over reports of a per-report term,

and ``Z`` is linear in a few counts of the reference histogram. Every pair here is brought to

    Z = cA X_A + cB X_B + K0 + K1 m,   m ~ Bin(n, pm),
    X_A | m ~ Bin(a0 + a1 m, pA),  X_B | m ~ Bin(b0 + b1 m, pB)  (independent given m).

**Evaluation (a lower bound, every step an inequality in our disfavour).** ``m`` is cut into
blocks. On a block, ``X_A`` is coupled as ``X_A' + E_A`` with ``X_A' ~ Bin(NA_min, pA)``
(``NA_min`` the block's fewest trials) independent of ``m`` and ``E_A`` the remaining trials;
likewise ``X_B``. Conditional Jensen (``E[(Z)_+] >= E[(E[Z | G])_+]``) replaces ``E_A``,
``E_B`` by their means (linear in ``m``), then ``m`` by its mean on the block, then ``X_B'`` by
its mean on blocks of its own values. What is left is ``E[(cA X_A' - T)_+]`` for a binomial
``X_A'``, in closed form (``t`` the first integer above ``tau = T / cA``):

    E[(X - tau)_+] = t (1 - p) Pr[X = t] + (N p - tau) Pr[X >= t],   X ~ Bin(N, p), 1 <= t <= N,

(from ``E[(X - N p) 1{X >= t}] = t (1 - p) Pr[X = t]``), whose two terms are of the size of the
value itself far in the tail (no cancellation of ``N p Pr[Bin(N - 1, p) >= t - 1]`` against
``tau Pr[X >= t]``). Blocks of unit width are exact (no Jensen loss), so at small n the value is
the pair's exact divergence up to the windows and the allowances. Mass outside the windows is
dropped (each term is non-negative).

**Floating point, charged against the bound.** scipy's binomial pmf / cdf / sf lose digits as
the law widens (measured against 50-digit mpmath: up to 2.4e-7 relative at n = 1e15, p = 1/2);
:func:`lower_bounds.binom_rtol` charges at least 13 times the largest error measured
(``tests/test_blocked_pairs.py`` re-measures it). Each block's mass is a binomial cdf / sf
difference taken on the small side, reduced by that tolerance of its terms; each block mean's
error (from the same differences) is charged through ``|d cell / d T| <= 1`` times its
coefficient; each cell is reduced by twice the tolerance of its terms' magnitudes and by
``1e-15`` of the magnitudes summed into its threshold; the sorted atoms' tail sums (full pair)
by ``1e-12`` of theirs.

Pairs (each a projection of the full histogram, i.e. a post-processing, or the exact statistic):

* OUE / local hashing (:func:`third_flag_pairs`): with the three flags ``a, b, c`` of
  :mod:`third_flag`, ``Z`` depends on the ``a, b`` counts among reports with ``c = 0`` and among
  those with ``c = 1``; keeping one of the two sets exactly and the other through its mean given
  ``m`` (Jensen again) gives two pairs of the form above; both are evaluated, the larger kept.
* k-RR (:func:`krr_third_pair`): victim at 0 or 1, others at a third value 2: ``(N_0, N_1, N_2)``
  is sufficient; ``m = N_0 + N_1``, ``X_A = N_0 | m ~ Bin(m, 1/2)``, ``X_B`` the reports outside
  ``{0, 1, 2}``. This is the pair's exact divergence up to the blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.lower.lower_bounds import _krr_probs
from shuffledp.accountants.numerics.binomial_blocks import (
    block_stats,
    block_stats_rows,
    lower_quantile,
    lower_quantiles,
)
from shuffledp.accountants.numerics.grouped import bernstein_half_width
from shuffledp.accountants.numerics.secant import secant_eps
from shuffledp.accountants.numerics.tolerances import TAIL_MIN, binom_rtol
from shuffledp.accountants.validation import check_delta, check_eps

__all__ = ["scarf_upper", "LinearPair", "BlockedPair", "FullThirdFlag", "third_input_pair", "krr_third_pair",
           "krr_pair", "third_input_atoms", "krr_atoms", "blocked_delta", "blocked_lower_eps", "DEFAULT_TAIL"]

DEFAULT_TAIL = 1e-15  # mass left outside the windows (1e-3 delta below delta = 1e-12)
M_BLOCKS = 24        # blocks of the outer count m (unit blocks when its window is this short)
B_BLOCKS = 160       # blocks of X_B per block of m
R_BLOCKS = 64        # k-RR: blocks of the reports outside the three values per block of m
KRR_M_BLOCKS = 160   # k-RR: blocks of N0 + N1 (its Jensen loss matters at moderate eps)
HUGE_N = 10**8       # k-RR above this n: fewer blocks (the counts' tails are slow to evaluate)
FLOOR = 1e-2         # eps below FLOOR x the search's guess (an upper-bound estimate) are not tried
MAX_EVALS = 16       # evaluations of the pair per eps search
DIRECT = 8           # terms beside the threshold summed one by one
V_BLOCKS = 96        # blocks of each of the full pair's two counts per block of m


@dataclass(frozen=True)
class LinearPair:
    """``Z`` of the module docstring; ``coef(ee) -> (cA, cB, K0, K1)`` at ``ee = e^eps``."""

    n: int
    pm: float
    a: tuple[int, int]
    pA: float
    b: tuple[int, int]
    pB: float
    coef: object
    atoms: tuple = ()   # per report under the reference: (probability, f_x, f_x') (see :func:`scarf_upper`)


def scarf_upper(atoms, n: int, ee: float) -> float:
    """An UPPER bound on the pair's divergence ``1/n E_ref[(Y)_+]``, ``Y = sum_i (f_x - ee f_x')(y_i)``
    over the n reports, from its mean ``(1 - ee) n`` and variance ``n Var(f_x - ee f_x')`` alone:
    ``E[Y_+] <= (sqrt(mu^2 + var) + mu) / 2`` for every law with that mean and variance (Scarf's
    bound). Where it is below delta the pair cannot refute (eps, delta), so the blocked value is
    not needed there (it would be below delta as well)."""
    if not atoms:
        return math.inf
    pr = np.array([a[0] for a in atoms])
    z = np.array([a[1] - ee * a[2] for a in atoms])
    mean = float(np.dot(pr, z))
    var = n * max(float(np.dot(pr, (z - mean) ** 2)), 0.0) * (1.0 + 1e-9) + 1e-300
    mu = (1.0 - ee) * n
    root = math.sqrt(var + mu * mu)
    return (var / (2.0 * (root - mu)) if mu < 0 else 0.5 * (root + mu)) / n * (1.0 + 1e-9)




def _edges(lo, hi, N, p, nblocks: int):
    """Block edges (first counts, one per block, and the end ``hi + 1``) on ``[lo, hi]``: unit
    blocks when the window is short, else half evenly spaced and half at normal quantiles."""
    from scipy import special

    if hi - lo + 1 <= nblocks:
        return np.arange(lo, hi + 2, dtype=np.float64)
    even = np.linspace(lo, hi + 1, nblocks // 2 + 1)
    q = (np.arange(nblocks // 2) + 0.5) / (nblocks // 2 + 0.25)   # no edge at the median (slow tails)
    quant = N * p + math.sqrt(N * p * (1.0 - p)) * special.ndtri(q)
    return np.unique(np.clip(np.round(np.concatenate([even, quant])), lo, hi + 1))


def _window(N: float, p: float, tail: float) -> tuple[float, float]:
    """A window of Bin(N, p) outside which at most about ``tail`` lies (only the value's
    tightness depends on it: what lies outside is dropped)."""
    from scipy import stats

    if N <= 0 or p <= 0.0:
        return 0.0, 0.0
    if p >= 1.0:
        return float(N), float(N)
    lo = max(0.0, lower_quantile(tail, N, p) - 1.0)
    if N * p * (1.0 - p) < 1.0:
        # Boost's isf fails to bracket its root here: the same quantile by scanning the few counts
        # below Bernstein's closed-form bound (the smallest k with Pr[X > k] <= tail)
        # (bisection on the counts: Pr[X > k] falls with k; a few scalar sfs, not one per count)
        k_lo, k_hi = 0.0, min(float(N), math.ceil(N * p + float(bernstein_half_width(N, p, 2.0 * tail))))
        while k_hi - k_lo > 0.5:
            mid = math.floor((k_lo + k_hi) / 2.0)
            if float(stats.binom.sf(mid, N, p)) <= tail:
                k_hi = mid
            else:
                k_lo = mid + 1.0
        hi = min(float(N), k_hi + 1.0)
    else:
        hi = min(float(N), float(stats.binom.isf(tail, N, p)) + 1.0)
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
        return 0.0, float(N)
    return lo, hi


def _windows(Ns, p: float, tail: float) -> list[tuple[float, float]]:
    """:func:`_window` of ``Bin(N, p)`` for every ``N > 0`` of ``Ns`` (``0 < p < 1``), the quantile
    searches in one scipy call each (elementwise: the same numbers as one call per count)."""
    from scipy import stats

    Ns = np.asarray(Ns, dtype=np.float64)
    q = lower_quantiles(tail, Ns, p) - 1.0
    lo = np.where(q > 0.0, q, 0.0)              # max(0.0, q)
    scan = Ns * p * (1.0 - p) < 1.0             # _window's scan (a few scalar sfs): row by row
    hi = np.full(Ns.shape, np.nan)
    if np.any(~scan):
        top = stats.binom.isf(tail, Ns[~scan], p) + 1.0
        hi[~scan] = np.where(top < Ns[~scan], top, Ns[~scan])   # min(N, top)
    out = []
    for i, N in enumerate(Ns):
        if scan[i]:
            out.append(_window(N, p, tail))
        elif not (math.isfinite(lo[i]) and math.isfinite(hi[i])) or hi[i] < lo[i]:
            out.append((0.0, float(N)))
        else:
            out.append((float(lo[i]), float(hi[i])))
    return out


def _zero_padded(rows: list) -> np.ndarray:
    """The 1-d arrays ``rows`` as the rows of one 2-d array, zeros after each row's end (what
    ``np.array([np.pad(r, (0, width - len(r))) for r in rows])`` gives, without a pad call per row)."""
    out = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.result_type(*rows))
    for j, r in enumerate(rows):
        out[j, : len(r)] = r
    return out


class BlockedPair:
    """The eps-independent part of the evaluation: blocks of ``m`` and of ``X_B`` with masses
    and means (lower-rounded, errors kept); :meth:`delta` adds the closed-form cells."""

    def __init__(self, pair: LinearPair, tail: float, m_blocks: int = M_BLOCKS, b_blocks: int = B_BLOCKS):
        self.pair, self.n, self.atoms = pair, pair.n, pair.atoms
        n = float(pair.n)
        lo, hi = _window(n, pair.pm, tail)
        e = _edges(lo, hi, n, pair.pm, m_blocks)
        mf, ml = e[:-1], e[1:] - 1.0
        self.m_mass, self.m_err, self.m_mean, self.m_mean_err = (
            (np.ones(1), np.zeros(1), np.full(1, lo), np.zeros(1)) if pair.pm in (0.0, 1.0)
            else block_stats(e, n, pair.pm))
        a0, a1 = pair.a
        b0, b1 = pair.b
        self.na_min = np.minimum(a0 + a1 * mf, a0 + a1 * ml)
        self.nb_min = np.minimum(b0 + b1 * mf, b0 + b1 * ml)
        rows = self._b_rows(self.nb_min, tail, b_blocks)
        self.b_mass, self.b_err, self.b_mean, self.b_mean_err = (_zero_padded([r[i] for r in rows]) for i in range(4))

    def _b_row(self, nb: float, tail: float, b_blocks: int):
        p = self.pair.pB
        if nb <= 0 or p <= 0.0 or p >= 1.0:
            val = nb if p >= 1.0 else 0.0
            return np.ones(1), np.zeros(1), np.full(1, max(val, 0.0)), np.zeros(1)
        lo, hi = _window(nb, p, tail)
        return block_stats(_edges(lo, hi, nb, p, b_blocks), nb, p)

    def _b_rows(self, nbs, tail: float, b_blocks: int) -> list:
        """:meth:`_b_row` of every count of ``nbs``, the windows' quantiles and the blocks' tails
        and pmfs in one scipy call each over the rows (:func:`_windows`, :func:`block_stats_rows`)."""
        p = self.pair.pB
        if p <= 0.0 or p >= 1.0:
            return [self._b_row(nb, tail, b_blocks) for nb in nbs]
        rows: list = [None] * len(nbs)
        live = [i for i, nb in enumerate(nbs) if not nb <= 0]
        for i in set(range(len(nbs))) - set(live):
            rows[i] = self._b_row(nbs[i], tail, b_blocks)
        if live:
            wins = _windows([nbs[i] for i in live], p, tail)
            edges = [_edges(lo, hi, nbs[i], p, b_blocks) for i, (lo, hi) in zip(live, wins, strict=True)]
            for i, st in zip(live, block_stats_rows(edges, [nbs[i] for i in live], p), strict=True):
                rows[i] = st
        return rows

    def delta(self, ee: float) -> float:
        """Lower bound on ``D_{ee}`` of the pair (module docstring)."""
        pr = self.pair
        cA, cB, K0, K1 = pr.coef(ee)
        a0, a1 = pr.a
        b0, b1 = pr.b
        m = self.m_mean[:, None]
        # the coupling's remainders at their means: linear in m, slope ``sl``
        sl = K1 + cA * pr.pA * a1 + cB * pr.pB * b1
        lin = (K0 + K1 * m + cA * pr.pA * (a0 + a1 * m - self.na_min[:, None])
               + cB * pr.pB * (b0 + b1 * m - self.nb_min[:, None]))
        lin_mag = (abs(K0) + abs(K1 * m) + abs(cA * pr.pA) * (abs(a0) + abs(a1 * m) + self.na_min[:, None])
                   + abs(cB * pr.pB) * (abs(b0) + abs(b1 * m) + self.nb_min[:, None]))
        T = -(cB * self.b_mean + lin)
        t_mag = abs(cB) * self.b_mean + lin_mag
        t_err = 1e-15 * t_mag + abs(sl) * self.m_mean_err[:, None] + abs(cB) * self.b_mean_err
        cell = _hockey_cell(cA, self.na_min[:, None], pr.pA, T, t_err)
        w = (np.maximum(self.m_mass - self.m_err, 0.0)[:, None]
             * np.maximum(self.b_mass - self.b_err, 0.0))
        total = float(np.sum(w * np.maximum(cell, 0.0)))
        return max(total * (1.0 - 1e-12), 0.0) / pr.n


def _cell_groups(v, N):
    """``(first, inverse)`` of the distinct cells ``(v, N)`` (flat: each group's first cell, every
    cell's group), or None where they are not all finite integers in a range that keeps one float
    key per cell exact (then every cell is evaluated). Neighbouring blocks of X_B share their
    threshold: a delta evaluation at k-RR, n = 1e5 asks 7e5 pmf points, 2e4 distinct."""
    if v.size == 0 or not (np.all(np.isfinite(v)) and np.all(np.isfinite(N))):
        return None
    if not (np.all(v == np.floor(v)) and np.all(N == np.floor(N))):
        return None
    lo = min(float(np.min(v)), float(np.min(N)))
    span = max(float(np.max(v)), float(np.max(N))) - lo + 1.0
    if not span * span < 2.0 ** 52:
        return None
    _, first, inverse = np.unique(((v - lo) * span + (N - lo)).reshape(-1), return_index=True,
                                  return_inverse=True)
    return first, inverse.reshape(-1)


def _by_cell(groups, fn, *args) -> np.ndarray:
    """``fn(*args)`` (elementwise; arrays broadcast to the cells' shape, with at most one more
    trailing axis, their values a function of the cell's group) evaluated at each group's first
    cell and spread back: the same function at the same arguments, hence the same bits."""
    args = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    if groups is None:
        return fn(*args)
    first, inverse = groups
    sub = [a.reshape(inverse.size, -1)[first] for a in args]
    return fn(*sub)[inverse].reshape(args[0].shape)


def _hockey_cell(c: float, N, p: float, T, t_err) -> np.ndarray:
    """Lower-rounded ``E[(c X - T)_+]`` for ``X ~ Bin(N, p)`` (``c != 0``; arrays broadcast);
    ``t_err`` bounds the error of ``T`` (the value moves by at most that much: its slope in ``T``
    lies in [-1, 0]). The ``DIRECT`` terms nearest the threshold are summed one by one, the rest
    by the closed forms of the module docstring (upper tail for ``c > 0``; for ``c < 0``,
    ``E[(sig - X) 1{X <= u}] = (sig - N p) Pr[X <= u] + (u + 1)(1 - p) Pr[X = u + 1]``), so no
    large terms cancel where the positive part is a few points at the end of the support. Any
    split point gives a sum of non-negative terms' lower bounds, so a threshold misjudged by
    rounding only lowers the value."""
    from scipy import stats

    N = np.broadcast_to(np.asarray(N, dtype=np.float64), np.shape(T))
    sig = T / c                                   # c > 0: X > sig counts; c < 0: X < sig counts
    j = np.arange(DIRECT, dtype=np.float64)
    def pmf_at(x, m):
        return stats.binom.pmf(x, m, p)

    if c > 0:
        t = np.clip(np.floor(sig) + 1.0, 0.0, N + 1.0)
        g = _cell_groups(t, N)                     # every scipy argument below is a function of (t, N)
        pts = t[..., None] + j                     # t, t+1, ...: X - sig > 0
        rest = t + DIRECT                          # closed form from here up
        ok = pts <= N[..., None]
        direct = np.where(ok, (pts - sig[..., None]) * _by_cell(g, pmf_at, np.where(ok, pts, 0.0), N[..., None]),
                          0.0)
        inside = (rest >= 1.0) & (rest <= N)
        pmf = np.where(inside, _by_cell(g, pmf_at, np.where(inside, rest, 0.0), N), 0.0)
        tail = np.where(inside, _by_cell(g, lambda x, m: stats.binom.sf(x, m, p), np.where(inside, rest - 1.0, 0.0), N),
                        np.where(rest <= 0.0, 1.0, 0.0))
        first, second = rest * (1.0 - p) * pmf, (N * p - sig) * tail
    else:
        u = np.clip(np.ceil(sig) - 1.0, -1.0, N)  # largest X with X < sig
        g = _cell_groups(u, N)                     # every scipy argument below is a function of (u, N)
        pts = u[..., None] - j
        rest = u - DIRECT                          # closed form from here down
        ok = pts >= 0.0
        direct = np.where(ok, (sig[..., None] - pts) * _by_cell(g, pmf_at, np.where(ok, pts, 0.0), N[..., None]),
                          0.0)
        inside = (rest >= 0.0) & (rest < N)
        cdf = np.where(inside, _by_cell(g, lambda x, m: stats.binom.cdf(x, m, p), np.where(inside, rest, 0.0), N),
                       np.where(rest >= N, 1.0, 0.0))
        nxt = np.where(rest + 1.0 <= N, _by_cell(g, pmf_at, np.clip(rest + 1.0, 0.0, N), N), 0.0)
        first, second = (sig - N * p) * cdf, (rest + 1.0) * (1.0 - p) * nxt * (rest >= 0.0)
    d = direct.sum(axis=-1)
    val = abs(c) * (d + first + second)
    mag = abs(c) * (d + np.abs(first) + np.abs(second))
    return val - 2.0 * binom_rtol(N, p) * mag - t_err


class FullThirdFlag:
    """The third-input pair of OUE / local hashing with every flag kept (no projection):
    ``Z = V_a - e^eps V_b - (e^eps - 1) n`` with ``V = al A0 - be (n - m - A1) = al A0 + be A1 -
    be (n - m)`` (``A0``, ``A1`` the set ``a`` flags among the ``m`` reports with ``c = 0`` and
    among the ``n - m`` with ``c = 1``, both rate ``r``: accurate when ``r`` is tiny; ``V_b`` the
    same for ``b``), ``V_a, V_b`` i.i.d. given ``m``. Per block of ``m`` the
    two counts are blocked (Jensen, as in :class:`BlockedPair`), the atoms of ``V`` sorted once,
    and ``E[(u_a - ee u_b - K)_+]`` read off tail sums at every threshold (centred atoms ``u``)."""

    def __init__(self, n: int, r: float, s: float, tail: float, m_blocks: int = M_BLOCKS,
                 v_blocks: int = V_BLOCKS):
        f1, f0 = s / r, (1.0 - s) / (1.0 - r)
        self.n, self.r, self.al, self.be = n, r, (f1 - f0) / f0, (f1 - f0) / f1
        self.atoms = third_input_atoms(r, s)
        self.slope = self.al * r + self.be * (1.0 - r)   # d L / d m (coupling remainders)
        lo, hi = _window(float(n), 1.0 - s, tail)
        e = _edges(lo, hi, float(n), 1.0 - s, m_blocks)
        mf, ml = e[:-1], e[1:] - 1.0
        self.m_mass, self.m_err, self.m_mean, self.m_mean_err = block_stats(e, float(n), 1.0 - s)
        self.blocks = [self._atoms(a, b, r, tail, v_blocks) for a, b in zip(mf, ml, strict=True)]
        self.mf, self.ml = mf, ml

    def _atoms(self, mf: float, ml: float, r: float, tail: float, v_blocks: int):
        """Sorted centred atoms of ``V`` for the block ``[mf, ml]`` of ``m``, with tail sums."""
        sides = []
        for N, p in ((mf, r), (self.n - ml, r)):
            if N <= 0:
                sides.append((np.ones(1), np.zeros(1), np.zeros(1), np.zeros(1)))
                continue
            lo, hi = _window(N, p, tail)
            sides.append(block_stats(_edges(lo, hi, N, p, v_blocks), N, p))
        (wa, ea, ma, mae), (wb, eb, mb, mbe) = sides
        mu = (self.al * mf + self.be * (self.n - ml)) * r
        u = (self.al * ma[:, None] + self.be * mb[None, :] - mu).ravel()
        err = (self.al * mae[:, None] + self.be * mbe[None, :]
               + 1e-15 * (self.al * ma[:, None] + self.be * mb[None, :] + abs(mu))).ravel()
        w = (np.maximum(wa - ea, 0.0)[:, None] * np.maximum(wb - eb, 0.0)[None, :]).ravel()
        order = np.argsort(u, kind="stable")
        u, w = u[order], w[order]
        s0 = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
        s1 = np.concatenate([np.cumsum((w * u)[::-1])[::-1], [0.0]])
        s1_abs = np.concatenate([np.cumsum((w * np.abs(u))[::-1])[::-1], [0.0]])
        return u, w, s0, s1, s1_abs, float(err.max()), mu

    def delta(self, ee: float) -> float:
        """Lower bound on ``D_{ee}`` of the pair."""
        total = 0.0
        for j, (u, w, s0, s1, s1_abs, e_max, mu) in enumerate(self.blocks):
            mbar = self.m_mean[j]
            L = (self.al * self.r * (mbar - self.mf[j]) + self.be * self.r * (self.ml[j] - mbar)
                 - self.be * (self.n - mbar))
            lin = self.n + mu + L
            K = (ee - 1.0) * lin
            k_err = (ee - 1.0) * (1e-15 * (self.n + abs(mu) + abs(L) + self.slope * self.ml[j])
                                  + self.slope * self.m_mean_err[j])
            t = ee * u + K
            idx = np.searchsorted(u, t, side="right")
            val = s1[idx] - t * s0[idx]
            mag = s1_abs[idx] + np.abs(t) * s0[idx]
            err = e_max * (1.0 + ee) + k_err
            near = np.searchsorted(u, t - err, side="right")
            cell = val - 1e-12 * mag - err * s0[near]
            total += max(self.m_mass[j] - self.m_err[j], 0.0) * float(np.dot(w, np.maximum(cell, 0.0)))
        return max(total * (1.0 - 1e-12), 0.0) / self.n


def krr_third_pair(k: int, eps0: float, n: int) -> LinearPair:
    """k-RR (``k >= 3``), victim at 0 or 1, the other ``n - 1`` users at 2 (module docstring)."""
    ph, pl, _, _ = _krr_probs(k, eps0)
    c = math.expm1(eps0)       # ph / pl - 1
    rho = math.exp(-eps0)      # pl / ph
    p_rest = (k - 3) * pl / (ph + (k - 3) * pl)   # Pr[outside {0, 1, 2} | outside {0, 1}]

    def coef(ee):
        # Z = (c - e2) m - c (1+ee) N1 - e2 R - (ee-1) rho n,  e2 = (ee-1)(1 - rho), m = N0 + N1,
        # R the reports outside {0, 1, 2}; closed form in N1 | m ~ Bin(m, 1/2)
        e2 = (ee - 1.0) * (1.0 - rho)
        return -c * (1.0 + ee), -e2, -(ee - 1.0) * rho * n, c - e2

    return LinearPair(n, 2.0 * pl, (0, 1), 0.5, (n, -1), p_rest, coef, krr_atoms(k, eps0))


def third_input_atoms(r: float, s: float) -> tuple:
    """Per report under the reference (everyone at the third input): (probability, the victim's
    likelihood ratio at x, at x') for the eight flag patterns (:func:`scarf_upper`)."""
    f1, f0 = s / r, (1.0 - s) / (1.0 - r)
    f = {0: f0, 1: f1}
    return tuple(((r if a else 1 - r) * (r if b else 1 - r) * (s if c else 1 - s), f[a] / f[c], f[b] / f[c])
                 for a in (0, 1) for b in (0, 1) for c in (0, 1))


def krr_atoms(k: int, eps0: float) -> tuple:
    """The same for k-RR's pair (others at 2; victim at 0 or 1): reports 0, 1, 2 and the rest."""
    ph, pl, _, _ = _krr_probs(k, eps0)
    rho = math.exp(-eps0)
    return ((pl, ph / pl, 1.0), (pl, 1.0, ph / pl), (ph, rho, rho), ((k - 3) * pl, 1.0, 1.0))


def third_input_pair(n: int, r: float, s: float, tail: float = 1e-12) -> FullThirdFlag:
    """OUE / local hashing's third-input pair (``r, s`` as :func:`third_flag.third_flag_rates`)."""
    if not (0.0 < r < s < 1.0):
        raise ValueError(f"need 0 < r < s < 1, got r={r!r}, s={s!r}")
    return FullThirdFlag(int(n), float(r), float(s), tail)


def krr_pair(k: int, eps0: float, n: int, tail: float = 1e-12) -> BlockedPair:
    """k-RR's others-at-a-third-value pair, blocked (:func:`krr_third_pair`); above ``HUGE_N``
    users (eps small, the Jensen losses second order) 12 x 8 blocks, each tail there costing up to
    2 ms."""
    big = n > HUGE_N   # each binomial tail costs 25 us to 2 ms there: fewer cells
    return BlockedPair(krr_third_pair(k, eps0, n), tail, m_blocks=12 if big else KRR_M_BLOCKS,
                       b_blocks=8 if big else R_BLOCKS)


def blocked_delta(built, eps: float) -> float:
    """Lower bound on the shuffled delta at ``eps`` from a built pair (:func:`third_input_pair`,
    :func:`krr_pair`)."""
    return built.delta(math.exp(min(check_eps(eps), 700.0)))


def blocked_lower_eps(build, delta: float, top: float, *, rtol: float = 1e-4,
                      guess: float | None = None, atoms: tuple = (), n: int = 0) -> float:
    """Largest eps found (a verified point, rounded down) at which the pair's blocked divergence
    exceeds ``delta``; 0 if none. ``build(tail)`` returns the pair (windows holding all but
    ``tail = 1e-3 delta``); ``top``: the randomizer's eps0 (no pair exceeds it). ``atoms``, ``n``
    (optional): the pair's per-report law, to answer 0 before building when Scarf's bound on its
    total variation is already below ``delta``."""
    delta = check_delta(delta)
    if atoms and scarf_upper(atoms, n, 1.0) <= delta:
        return 0.0
    built = build(min(DEFAULT_TAIL, max(TAIL_MIN, 1e-3 * delta)))

    calls = [0]

    def fn(e: float) -> float:
        # 0 is a valid lower bound on any delta: beyond MAX_EVALS evaluations (a search heading to
        # eps = 0, where every threshold is central and the binomial tails slowest) it answers 0
        ee = math.exp(min(e, 700.0))
        if e >= top or scarf_upper(built.atoms, built.n, ee) <= delta:
            return 0.0
        calls[0] += 1
        return 0.0 if calls[0] > MAX_EVALS else built.delta(ee)

    if guess is None or not 0 < guess < top:  # the binary-RR asymptotic value: an upper-bound estimate
        from shuffledp.accountants.numerics.secant import asymptotic_guess

        guess = min(asymptotic_guess(2, top, built.n, delta), top / 2)
    start = guess
    floor = FLOOR * start
    return secant_eps(lambda e: 0.0 if e < floor else fn(e), delta, 0.0, top, start, rtol, side="lower")
