"""Lower bounds for grouped randomizers (subset-exp) from real pairs seen through a few report
cells, evaluated in blocks at any n (2 .. 1e15) at a fixed cost.

**The pair and the statistic.** The victim holds ``x`` or ``x'``; every other user holds one
input ``o`` (a third set disjoint from both, or ``x`` itself). Each report is mapped to a *cell*
(subset-exp: whether the output meets ``x``, ``x'``, and, for the third set, ``x''``); the
histogram of the cells is a post-processing of the shuffled output, so its divergence is a lower
bound on the mechanism's. With the reference "all n users at ``o``" (per-report cell law ``q``)
and ``L_x = p_x / q``, ``L_x' = p_x' / q`` the victim's likelihood ratios per cell, the victim's
report is a size-biased pick of the n reports (:mod:`~shuffledp.accountants.lower.third_flag`), so

    D_{e^eps}(P_x || P_x') = 1/n * E_ref[(Z)_+],   Z = sum over cells N_i z_i,
    z_i = L_x(i) - e^eps L_x'(i),   (N_i) ~ Multinomial(n, q).

**Brought to** :class:`~shuffledp.accountants.lower.blocked_pairs.LinearPair`. The cells are put in
four groups ``A1, A2, B, R``; merging a group's cells is a projection (the merged ratio is the
``q``-weighted mean of the cells' ratios) and so is again a lower bound. Then ``m = N_A1 + N_A2 ~
Bin(n, q_A1 + q_A2)``, ``X_A = N_A1 | m ~ Bin(m, q_A1 / q_A)``, ``X_B = N_B | m ~ Bin(n - m,
q_B / (q_B + q_R))`` (the multinomial's own conditional laws: exact), ``N_R = n - m - X_B``, and

    Z = (z_A1 - z_A2) X_A + (z_B - z_R) X_B + n z_R + (z_A2 - z_R) m,

evaluated by :class:`~shuffledp.accountants.lower.blocked_pairs.BlockedPair` (blocks, conditional
Jensen, every error rounded down). Several groupings (and configurations of the others) are
valid pairs; each is probed at one eps and the one with the largest divergence there searched.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

from shuffledp.accountants.lower.blocked_pairs import BlockedPair, LinearPair, blocked_lower_eps
from shuffledp.accountants.numerics.tolerances import TAIL_MIN
from shuffledp.accountants.validation import check_eps

__all__ = ["CellLaw", "subset_exp_cells", "cell_linear_pair", "subset_exp_candidates", "cell_pair",
           "subset_exp_lower_eps", "subset_exp_lower_delta", "PROBES", "olh_at_x_cells",
           "cell_lower_delta", "cell_lower_eps", "M_BLOCKS", "B_BLOCKS", "PROBE_BLOCKS"]

# blocks of m (unit blocks when its window is this short) and of X_B per block of m. Measured
# (subset-exp d = 100, s = 4, delta = 1e-6): 96 x 64 gains at most 0.6% in eps over 64 x 32 at
# 2.5 times the cost; 12 x 8 loses up to 11%, enough to rank the candidates (PROBE_BLOCKS)
M_BLOCKS, B_BLOCKS = 64, 32
PROBE_BLOCKS = (12, 8)
HUGE_N = 10**8    # above: HUGE_BLOCKS (each binomial tail there costs up to 2 ms); measured at
HUGE_BLOCKS = (48, 16)  # n = 1e15, eps0 = 30: 12 x 8 gave 0.485, 48 x 16 0.602 (upper 0.619), <= 0.25 s


@dataclass(frozen=True)
class CellLaw:
    """Per cell: the other users' probability ``q`` and the victim's ``p_x``, ``p_x'``."""

    q: tuple[float, ...]
    px: tuple[float, ...]
    px2: tuple[float, ...]


def _pattern_count(big: int, s: int, k: int, hit: int, miss: int) -> int:
    """k-subsets of ``big`` items meeting each of ``hit`` given disjoint s-sets and missing each
    of ``miss`` others (inclusion-exclusion over the sets it must meet)."""
    total = 0
    for j in range(hit + 1):
        rest = big - s * (miss + j)
        total += (-1) ** j * math.comb(hit, j) * (math.comb(rest, k) if rest >= 0 else 0)
    return total


def subset_exp_cells(d: int, s: int, k: int, eps0: float, *, third: bool) -> CellLaw:
    """Cells of subset-exp (``D = d + s`` items, ``k``-subset outputs), the victim at disjoint
    ``x``, ``x'``. ``third``: the others at ``x''`` disjoint from both, cells ``(a, b, c)`` = the
    output meets ``x``, ``x'``, ``x''`` (8 cells, needs ``D >= 3 s``); else the others at ``x``,
    cells ``(a, b)`` (4 cells). Probabilities from exact integer counts (one rounding each)."""
    big, e = d + s, math.exp(eps0)
    total = math.comb(big, k)
    miss = math.comb(d, k)
    omega = miss / total + (total - miss) / total * e   # normaliser over C(D, k)
    flags = [(a, b, c) for a in (1, 0) for b in (1, 0) for c in ((1, 0) if third else (0,))]
    q, px, px2 = [], [], []
    for a, b, c in flags:
        hit = a + b + c
        w = _pattern_count(big, s, k, hit, (3 if third else 2) - hit) / total
        ea, eb, ec = (e if a else 1.0), (e if b else 1.0), (e if c else 1.0)
        px.append(ea * w / omega)
        px2.append(eb * w / omega)
        q.append((ec if third else ea) * w / omega)
    return CellLaw(tuple(q), tuple(px), tuple(px2))


def cell_linear_pair(law: CellLaw, groups, n: int, *, reverse: bool = False) -> LinearPair | None:
    """The :class:`LinearPair` of the module docstring for the grouping ``groups = (A1, A2, B, R)``
    (tuples of cell indices); ``reverse``: the direction ``D(P_x' || P_x)``. None when a group
    of ``A`` carries no mass (the grouping has no exact count to split)."""
    px, px2 = (law.px2, law.px) if reverse else (law.px, law.px2)
    mass = [sum(law.q[i] for i in g) for g in groups]
    if mass[0] <= 0.0 or mass[1] <= 0.0:
        return None
    lx = [sum(px[i] for i in g) / m if m > 0 else 0.0 for g, m in zip(groups, mass, strict=True)]
    lx2 = [sum(px2[i] for i in g) / m if m > 0 else 0.0 for g, m in zip(groups, mass, strict=True)]

    def coef(ee, lx=tuple(lx), lx2=tuple(lx2)):
        z = [u - ee * v for u, v in zip(lx, lx2, strict=True)]
        return z[0] - z[1], z[2] - z[3], n * z[3], z[1] - z[3]

    pm = mass[0] + mass[1]
    rest = mass[2] + mass[3]
    p_b = mass[2] / rest if rest > 0 else 0.0
    atoms = tuple((law.q[i], px[i] / law.q[i], px2[i] / law.q[i]) for i in range(len(law.q)) if law.q[i] > 0)
    return LinearPair(n, pm, (0, 1), mass[0] / pm, (n, -1), p_b, coef, atoms)


# cells of subset_exp_cells(third=True): index (1 - a) * 4 + (1 - b) * 2 + (1 - c)
_THIRD_GROUPINGS = (
    ((2, 3), (4, 5), (0, 1), (6, 7)),        # c not seen: the (a, b) counts, exactly
    ((3,), (5,), (1,), (0, 2, 4, 6, 7)),     # the reports missing x'' kept apart
    ((3,), (5,), (2, 4), (0, 1, 6, 7)),
)
# measured (d = 100, s = 4 and d = 20, s = 2; eps0 0.5-50; n 1e3-1e8): the first wins at eps0 = 0.5,
# the other two at eps0 >= 2 (within 1% of each other); the grouping (3,), (5,), (7,) never won,
# nor did the others at x (either direction) where group-one-count was not already as high
_AT_X_GROUPING = ((1,), (2,), (0,), (3,))   # others at x, cells (a, b): exact


def subset_exp_candidates(d: int, s: int, k: int, eps0: float, n: int, *, at_x: bool = False) -> list[LinearPair]:
    """The pairs tried for subset-exp: the others at a third set (when ``d + s >= 3 s``) under
    each grouping of :data:`_THIRD_GROUPINGS`; ``at_x``: also the others at ``x`` (direction
    ``D(P_x || P_x')``), which never won where it mattered (not tried by default)."""
    out = []
    if d >= 2 * s:
        law = subset_exp_cells(d, s, k, eps0, third=True)
        out += [cell_linear_pair(law, g, n) for g in _THIRD_GROUPINGS]
    if at_x and d >= s:
        law = subset_exp_cells(d, s, k, eps0, third=False)
        out.append(cell_linear_pair(law, _AT_X_GROUPING, n))
    return [p for p in out if p is not None]


class _Finite:
    """A blocked pair whose value is 0 wherever the floating point failed (a NaN at rates that
    round to 0 or 1): 0 is a lower bound on any divergence."""

    def __init__(self, built: BlockedPair):
        self.built, self.atoms, self.n = built, built.atoms, built.n

    def delta(self, ee: float) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            val = self.built.delta(ee)
        return val if math.isfinite(val) else 0.0


def cell_pair(pair: LinearPair, tail: float, *, blocks: tuple[int, int] | None = None) -> _Finite:
    """``pair`` blocked: ``blocks`` = (blocks of m, of X_B per block of m); by default
    ``(M_BLOCKS, B_BLOCKS)``, and ``HUGE_BLOCKS`` above ``HUGE_N`` users."""
    mb, bb = blocks or (HUGE_BLOCKS if pair.n > HUGE_N else (M_BLOCKS, B_BLOCKS))
    with warnings.catch_warnings():  # scipy's quantiles at rates near 0 or 1 (the window falls back)
        warnings.simplefilter("ignore", RuntimeWarning)
        return _Finite(BlockedPair(pair, tail, m_blocks=mb, b_blocks=bb))


def cell_lower_delta(pairs, eps: float, tail: float = 1e-15) -> float:
    """Lower bound on the shuffled delta at ``eps``: the largest over ``pairs``."""
    return max((cell_pair(p, tail).delta(math.exp(min(check_eps(eps), 700.0))) for p in pairs), default=0.0)


def cell_lower_eps(pairs, delta: float, top: float, *, rtol: float = 1e-4, guess: float | None = None) -> float:
    """Lower bound on the shuffled eps at ``delta`` (a verified point, rounded down; 0 if none):
    each pair, coarsely blocked (``PROBE_BLOCKS``), is probed at ``guess`` (halved up to
    ``PROBES`` times while every probe is 0); the one with the largest divergence there is built
    with the full blocks and searched (:func:`blocked_pairs.blocked_lower_eps`)."""
    from shuffledp.accountants.lower.blocked_pairs import DEFAULT_TAIL, scarf_upper
    from shuffledp.accountants.numerics.secant import asymptotic_guess
    from shuffledp.accountants.validation import check_delta

    delta = check_delta(delta)
    pairs = [p for p in pairs if scarf_upper(p.atoms, p.n, 1.0) > delta]
    if not pairs:
        return 0.0
    tail = min(DEFAULT_TAIL, max(TAIL_MIN, 1e-3 * delta))
    if guess is None or not 0 < guess < top:
        guess = min(asymptotic_guess(2, top, pairs[0].n, delta), top / 2)
    chosen, e = pairs[0], guess
    if len(pairs) > 1:
        coarse = [cell_pair(p, tail, blocks=PROBE_BLOCKS) for p in pairs]
        for _ in range(PROBES):
            vals = [b.delta(math.exp(e)) for b in coarse]
            chosen = pairs[max(range(len(pairs)), key=vals.__getitem__)]
            if max(vals) > 0.0:
                break
            e *= 0.5
    built = cell_pair(chosen, tail)
    return blocked_lower_eps(lambda _tail: built, delta, top, rtol=rtol, guess=guess, atoms=built.atoms, n=built.n)


PROBES = 4


def subset_exp_lower_eps(d: int, s: int, k: int, eps0: float, n: int, delta: float, *, rtol: float = 1e-4,
                         guess: float | None = None) -> float:
    """Lower bound on shuffled subset-exp's eps at ``delta`` (:func:`cell_lower_eps`)."""
    return cell_lower_eps(subset_exp_candidates(d, s, k, eps0, n), delta, eps0, rtol=rtol, guess=guess)


def subset_exp_lower_delta(d: int, s: int, k: int, eps0: float, n: int, eps: float) -> float:
    """Lower bound on shuffled subset-exp's delta at ``eps`` (:func:`cell_lower_delta`)."""
    return cell_lower_delta(subset_exp_candidates(d, s, k, eps0, n), eps)


def olh_at_x_cells(g: int, eps0: float) -> CellLaw:
    """OLH over all functions ``[k] -> [g]``, the others at ``x``: cells ``(a, b)`` = the report's
    ``y`` equals ``h(x)``, equals ``h(x')`` (order of :data:`_AT_X_GROUPING`). For that family the
    likelihood of ``(h, y)`` under ``x`` or ``x'`` depends on these two flags only, so the cell
    counts are sufficient for the pair: its value is the pair's exact divergence (up to blocks)."""
    e = math.exp(eps0)
    hi, lo = e / (e + g - 1.0), (g - 1.0) / (e + g - 1.0)   # y = h(x) or not
    px = (hi / g, hi * (g - 1.0) / g, lo / g, lo * (g - 1.0) / g)
    px2 = (hi / g, lo / g, hi * (g - 1.0) / g, lo * (g - 1.0) / g)
    return CellLaw(px, px, px2)
