"""The privacy-loss distribution of one shuffle round's dominating pair, for composition.

One round of a shuffled eps0-LDP randomizer is dominated by the variation-ratio pair of
:mod:`shuffledp.accountants.upper.variation_ratio` (Wang et al., VLDB 2024, Theorem 1) with the
parameters the registry's variation-ratio bound uses: k-RR's sound ones (for k = 2 they equal the
general ones, for k >= 3 the general ones are used) and, for every other randomizer, the general
eps0-LDP ones ``p = q = e^eps0``, ``beta = (e^eps0 - 1)/(e^eps0 + 1)``. With those the victim
always emits a clone (``w = 0``): with ``E = e^eps0``,

    C ~ Bin(n - 1, 2/(E + 1)),   A | C ~ Bin(C, 1/2),
    P = (A + D, C - A + 1 - D),  Q = (A + 1 - D, C - A + D),   D ~ Bern(E/(E + 1)),

the "stronger clone" pair of Feldman, McMillan and Talwar (FOCS 2023), also the pair Koskela,
Heikkila and Honkela compose for general eps0-LDP shufflers. For every neighbouring pair of
datasets and every eps the hockey-stick divergence of the shuffled outputs is at most this
pair's (both directions): its trade-off function is dominated (Dong, Roth and Su), and T
adaptive rounds, each dominated by one fixed pair, are dominated by its T-fold product (their
Thm. 3.2). So this pair's privacy-loss distribution (PLD), self-composed T times, bounds T rounds.

The pmf, row by row
-------------------
The total ``t = a + b = C + 1`` reveals ``C = c``. With ``h_c`` the pmf of ``Bin(c, 1/2)``:

    P(c, a) = B(c) [u h_c(a - 1) + alpha h_c(a)],   u = E/(E+1), alpha = 1/(E+1),

Q the same with ``u`` and ``alpha`` swapped, ``b = c + 1 - a``. Since ``h_c(a-1) = h_{c+1}(a)
2a/(c+1)`` and ``h_c(a) = h_{c+1}(a) 2b/(c+1)``, ``P(c, a) = B(c) h_{c+1}(a) 2 (u a + alpha b)/(c+1)``
and the loss is ``log((u a + alpha b)/(alpha a + u b))``: exact, cell by cell.

Blocks of C (a dominating coarsening)
-------------------------------------
Given ``c``, the pair at ``c' > c`` is the pair at ``c`` with ``c' - c`` more fair clones added
to the counts: the same Markov kernel in both worlds, so its divergences are no larger (data
processing). Charging every ``c`` of a block of consecutive counts the pair at the block's
smallest ``c`` (with the block's probability) therefore gives a pair that dominates the original
one (a post-processing maps it onto the original). Blocks are used only where the rows would
exceed :data:`CELLS_MAX` cells; they move the composed eps by far less than the grid does.

Pessimistic discretisation (never optimistic)
---------------------------------------------
* every loss is rounded *up* to the grid (``ceil((L + LOSS_SLACK) / interval)``); rounding the
  losses up can only increase ``E_P[(1 - e^{eps - L})_+]``, before and after convolution;
* cells outside the windows (``C`` outside a window of ``Bin(n-1, 2/(E+1))``; for each ``c``,
  ``a`` outside a window around ``(c+1)/2``) are not enumerated: their P-mass, computed exactly
  with binomial tails, goes to the infinite loss;
* every mass is multiplied by ``1 + rtol`` (``rtol`` = :data:`ROUNDING_RTOL` plus the bound on
  the rounding of the per-row cumulative sums of the log-pmf recurrence).

The pair is a mirror image (``P(c, a) = Q(c, c + 1 - a)``, windows symmetric), so the loss of P
against Q under P has the law of the loss of Q against P under Q: one symmetric dp_accounting
PLD serves both neighbouring directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.validation import check_eps0, check_n

__all__ = ["ROUNDING_RTOL", "LOSS_SLACK", "CELLS_MAX", "N_MAX", "PairLoss", "pair_loss", "pair_pld",
           "loss_pmf_on_grid"]

ROUNDING_RTOL = 1e-10  # relative allowance on every enumerated mass (binomial pmfs via Boost)
LOSS_SLACK = 1e-10     # added to every loss before it is rounded up (its floating-point error is ~1e-15)
CELLS_MAX = 600_000    # rows of C blocked beyond this many cells (time: ~0.1 s per 1e6 cells idle)
N_MAX = 10**9          # the a-window of one row alone has ~20 sqrt(n/(E+1)) cells: above this n, declined


@dataclass(frozen=True)
class PairLoss:
    """One round's privacy loss ``log P/Q`` under ``P``: ``losses[i]`` with mass ``masses[i]``
    (rounding allowance included), the P-mass of the cells not enumerated (``infinity``), and the
    number of rows (values or blocks of ``C``) and of counts of C they cover."""

    eps0: float
    n: int
    losses: np.ndarray
    masses: np.ndarray
    infinity: float
    rows: int
    counts: int

    def moments(self) -> tuple[float, float]:
        """Mean and standard deviation of the finite losses under P (a scale for the grid)."""
        tot = float(self.masses.sum())
        m = float(np.dot(self.masses, self.losses) / tot)
        v = float(np.dot(self.masses, (self.losses - m) ** 2) / tot)
        return m, math.sqrt(max(v, 0.0))

    def delta(self, eps: float) -> float:
        """``D_{e^eps}(P || Q)`` of the enumerated losses (exact losses, no grid), plus the
        infinite mass: an upper bound on the pair's delta at ``eps`` (tests, checks)."""
        return float(np.dot(self.masses, -np.expm1(np.minimum(eps - self.losses, 0.0)))) + self.infinity


def _count_window(N: int, pc: float, tail: float) -> tuple[int, int, float]:
    """``[c_lo, c_hi]`` of ``Bin(N, pc)`` leaving out about ``tail`` on each side, and the exact
    mass left out (binomial tails)."""
    from scipy import stats

    c_lo = max(0, int(stats.binom.ppf(tail, N, pc)) - 1)
    c_hi = min(N, int(stats.binom.isf(tail, N, pc)) + 1)
    out = (float(stats.binom.cdf(c_lo - 1, N, pc)) if c_lo > 0 else 0.0) + (
        float(stats.binom.sf(c_hi, N, pc)) if c_hi < N else 0.0)
    return c_lo, c_hi, out


def pair_loss(eps0: float, n: int, *, tail: float = 1e-16, cells_max: int = CELLS_MAX) -> PairLoss:
    """Every cell's privacy loss and P-mass of one round's dominating pair (module docstring) at
    ``n`` users, the windows leaving out about ``3 tail`` of P-mass (charged as infinite loss),
    the counts of C in blocks where the rows would exceed ``cells_max`` cells."""
    from scipy import stats

    eps0 = check_eps0(eps0)
    n = check_n(n)
    if n > N_MAX:
        raise ValueError(f"n: {n} above {N_MAX:g}: one row of the pair alone is too long")
    if not (0.0 < tail < 1e-3):
        raise ValueError(f"tail: {tail!r} must lie in (0, 1e-3)")
    N = n - 1
    u = 1.0 / (1.0 + math.exp(-eps0))   # E/(E+1), without overflow
    al = 1.0 / (1.0 + math.exp(eps0)) if eps0 < 700 else 0.0
    pc = 2.0 * al
    if N == 0 or pc <= 0.0:
        cs, wts, out_c = np.zeros(1, dtype=np.int64), np.ones(1), 0.0
    else:
        c_lo, c_hi, out_c = _count_window(N, pc, tail)
        cs = np.arange(c_lo, c_hi + 1, dtype=np.int64)
        wts = stats.binom.pmf(cs, N, pc)
    # the a-window of row c: t = c + 1 reports in the two cells, a within sqrt(t log(2/tail)/2)
    # of t/2 (Hoeffding: less than tail outside), symmetric about t/2
    t_top = int(cs[-1]) + 1
    half_top = int(math.ceil(math.sqrt(0.5 * t_top * math.log(2.0 / tail)))) + 2
    width_top = min(t_top + 1, 2 * half_top + 2)
    counts = cs.size
    if cs.size * width_top > cells_max and cs.size > 1:   # blocks, each charged its smallest c
        size = math.ceil(cs.size * width_top / cells_max)
        starts = np.arange(0, cs.size, size)
        wts = np.add.reduceat(wts, starts)
        cs = cs[starts]
    ts = cs + 1
    half = np.ceil(np.sqrt(0.5 * ts * math.log(2.0 / tail))).astype(np.int64) + 2
    lo = np.maximum(0, ts // 2 - half)
    hi = ts - lo
    width = int((hi - lo).max()) + 1
    a = lo[:, None] + np.arange(width)[None, :]   # rows: c (t = c + 1), columns: a (padded past hi)
    inside = a <= hi[:, None]
    a = np.minimum(a, hi[:, None])
    t2 = ts[:, None]
    # log h_t(a) = log h_t(lo) + sum_{a' = lo+1}^{a} log((t - a' + 1)/a'), row by row
    inc = np.zeros(a.shape)
    step = a[:, 1:] > a[:, :-1]
    inc[:, 1:] = np.where(step, np.log((t2 - a[:, 1:] + 1) / np.maximum(a[:, 1:], 1)), 0.0)
    logh = stats.binom.logpmf(lo, ts, 0.5)[:, None] + np.cumsum(inc, axis=1)
    # cumulative sums of <= width terms, each below log(t + 1) in magnitude and rounded to 2 ulps,
    # partial sums below log(t + 1) + 40: absolute error below width (3 log(t + 1) + 40) 2^-52 per
    # row, i.e. that relative error on each mass
    rtol = ROUNDING_RTOL + width * (3.0 * math.log(t_top + 1) + 40.0) * 2.0 ** -52
    b = t2 - a
    num = u * a + al * b
    den = al * a + u * b
    with np.errstate(divide="ignore"):   # a row whose probability underflows to 0 carries no mass
        scale = np.log(2.0 * wts / ts)[:, None]
    num, den = num[inside], den[inside]
    p = np.exp((logh + scale)[inside]) * num
    finite = (p > 0.0) & (den > 0.0)
    inf_cells = float(p[(p > 0.0) & (den <= 0.0)].sum())
    losses = np.log(num[finite] / den[finite])
    masses = p[finite] * (1.0 + rtol)
    # P-mass outside the a-windows: row c, h_c(a - 1) with a < lo or a > hi, and h_c(a) likewise
    cdf, sf = stats.binom.cdf, stats.binom.sf
    c = ts - 1
    a_out = wts * (u * (cdf(lo - 2, c, 0.5) + sf(hi - 1, c, 0.5)) + al * (cdf(lo - 1, c, 0.5) + sf(hi, c, 0.5)))
    infinity = (out_c + float(np.nan_to_num(a_out, nan=0.0).sum()) + inf_cells) * (1.0 + rtol)
    return PairLoss(eps0, n, losses, masses, min(infinity, 1.0), int(cs.size), int(counts))


def loss_pmf_on_grid(loss: PairLoss, interval: float) -> tuple[int, np.ndarray]:
    """``(lower index, masses)``: the losses rounded up to multiples of ``interval`` (after
    :data:`LOSS_SLACK`), masses summed per grid point."""
    if not interval > 0.0:
        raise ValueError(f"interval: {interval!r} must be > 0")
    idx = np.ceil((loss.losses + LOSS_SLACK) / interval).astype(np.int64)
    low = int(idx.min())
    return low, np.bincount(idx - low, weights=loss.masses)


def pair_pld(loss: PairLoss, interval: float):
    """dp_accounting's :class:`~dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution`
    of the pair: pessimistic (losses rounded up, the windows' outside mass infinite), symmetric
    (the pair is a mirror image)."""
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_distribution as pld

    low, probs = loss_pmf_on_grid(loss, interval)
    pmf = pld_pmf.DensePLDPmf(interval, low, probs, loss.infinity, pessimistic_estimate=True)
    return pld.PrivacyLossDistribution(pmf)
