"""Grouped pairs and the per-count divergence of a blanket-decomposed pair: the numerics that
the decomposition accountant (:mod:`shuffledp.accountants.upper.decomposition`), the flag pairs
(:mod:`shuffledp.accountants.upper.flags` and its siblings), the randomizers' descriptions and
the exact-pair lower bounds (:mod:`shuffledp.accountants.lower.exact_pairs`) share.

A victim pair ``(x, x')`` reduced to three groups of outputs (:class:`GroupedPair`: blanket
weights ``w``, the victim's group probabilities ``p`` under ``x`` and ``q`` under ``x'``);
:class:`CountTable` holds the eps-independent part for a set of counts of other draws, and
:func:`divergence_given_count` the divergence at each count, exact inside a window of the
binomial count (:func:`t_window`) and charged with the mass outside (upper side). The checks
``valid_*`` raise ``ValueError`` (the front's checks, :mod:`shuffledp.accountants.validation`,
raise the accountants' domain error).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp.accountants.numerics import count_sums
from shuffledp.accountants.numerics.windows import bernstein_half_width, chernoff_ends, t_window

__all__ = ["GroupedPair", "CountTable", "divergence_given_count", "grouped_pairs", "krr_pairs", "krr_matrix",
           "blanket_of", "spread_to_three", "pair_is_mirror", "swapped_pair", "bernstein_half_width",
           "chernoff_ends", "t_window", "valid_eps0", "valid_int", "valid_eps", "valid_delta"]

ROUNDING_RTOL = 1e-10  # relative allowance for rounding in the summed terms
DEFAULT_TAIL = 1e-30
EPS_CAP = 700.0
TABLE_AFTER = 4            # a count table tabulates its region masses at the 4th evaluation of one split at the
TABLE_CELLS_MAX = 1 << 20  # earliest, at most this many (t, a) cells, and once the distinct (t, a0) evaluated
TABLE_PAYBACK = 0.5        # one at a time for that split add up to this many times the table's cells (rent or buy)
DISTINCT_DENSE = 32        # _distinct keys densely where the (t, a0) box spans at most this many keys per cell


# --------------------------------------------------------------------------- validation
def valid_eps0(eps0) -> float:
    """``eps0`` as a float in (0, 50], else ``ValueError``."""
    eps0 = float(eps0)
    if not (math.isfinite(eps0) and 0.0 < eps0 <= 50.0):
        raise ValueError(f"eps0 must be a number in (0, 50], got {eps0!r}")
    return eps0


def valid_int(value, name: str, low: int) -> int:
    """``value`` as an int ``>= low`` (an integral float is accepted), else ``ValueError``."""
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def valid_eps(eps) -> float:
    """``eps`` as a finite float ``>= 0``, else ``ValueError``."""
    eps = float(eps)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    return eps


def valid_delta(delta) -> float:
    """``delta`` as a float in (0, 1), else ``ValueError``."""
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return delta


# --------------------------------------------------------------------------- randomizers
def krr_matrix(k: int, eps0: float) -> np.ndarray:
    """Output matrix of k-ary randomized response: ``e^eps0 / (e^eps0 + k - 1)`` on the diagonal."""
    k = valid_int(k, "k", 2)
    eps0 = valid_eps0(eps0)
    e = math.exp(eps0)
    mat = np.full((k, k), 1.0 / (e + k - 1.0))
    np.fill_diagonal(mat, e / (e + k - 1.0))
    return mat


def blanket_of(matrix) -> tuple[np.ndarray, float]:
    """``(omega, gamma)``: the blanket ``omega(y) = min_x P[x, y]`` and its mass."""
    mat = np.asarray(matrix, dtype=np.float64)
    if mat.ndim != 2 or mat.shape[0] < 2 or mat.shape[1] < 2:
        raise ValueError("matrix must be 2-D with at least two inputs and two outputs")
    if not np.all(np.isfinite(mat)) or np.any(mat < 0):
        raise ValueError("matrix must hold finite non-negative probabilities")
    if np.any(np.abs(mat.sum(axis=1) - 1.0) > 1e-9):
        raise ValueError("every row of matrix must sum to 1")
    omega = mat.min(axis=0)
    return omega, float(omega.sum())


@dataclass(frozen=True)
class GroupedPair:
    """A victim pair reduced to its likelihood-ratio groups of outputs (``G >= 2`` of them).

    ``w`` blanket masses of the groups (normalised, sum 1), ``p`` / ``q`` the victim's group
    probabilities under the two inputs, ``gamma`` the blanket mass. With three groups (k-RR) groups
    1 and 2 are the two with the most extreme likelihood ratio and the sums are exact; with more,
    :func:`spread_to_three` reduces the pair per eps.
    """

    w: tuple[float, ...]
    p: tuple[float, ...]
    q: tuple[float, ...]
    gamma: float


def krr_pairs(k: int, eps0: float) -> list[GroupedPair]:
    """The single grouped pair of k-RR (every pair of inputs is equivalent by symmetry; groups:
    the victim's two values and the rest), equal to ``grouped_pairs(krr_matrix(k, eps0))``."""
    k = valid_int(k, "k", 2)
    eps0 = valid_eps0(eps0)
    e = math.exp(eps0)
    p, q = e / (e + k - 1.0), 1.0 / (e + k - 1.0)
    rest = (k - 2.0) / (e + k - 1.0)
    w = (1.0 / k, 1.0 / k, (k - 2.0) / k)
    return [GroupedPair(w, (p, q, rest), (q, p, rest), k / (e + k - 1.0))]


def _row_pair_groups(mat: np.ndarray, i: int, j: int, omega: np.ndarray, gamma: float):
    """``(w, p, q)`` of the ordered pair of rows ``(i, j)`` of :func:`grouped_pairs`: the blanket
    weight and the two rows' masses of every likelihood-ratio group (groups 1 and 2 the most
    extreme, at least three groups); None when the rows are identical."""
    keep = omega > 0
    if np.any(~keep & ((mat[i] > 0) | (mat[j] > 0))):
        raise ValueError("an output outside the blanket's support has positive probability; "
                         "the decomposition cannot bound it")
    u = mat[i, keep] / omega[keep]
    v = mat[j, keep] / omega[keep]
    key = np.round(np.stack([u, v]), 12)
    groups: dict[tuple[float, float], list[int]] = {}
    for col, pair in enumerate(map(tuple, key.T)):
        groups.setdefault(pair, []).append(col)
    if len(groups) == 1:
        return None  # identical rows: divergence 0
    om = omega[keep]
    cols = list(groups.values())
    # groups 1 and 2 are the two with the most extreme u/v; the rest is group 3
    cols.sort(key=lambda c: -abs(math.log(u[c[0]] / v[c[0]])) if u[c[0]] > 0 and v[c[0]] > 0
              else -math.inf)
    while len(cols) < 3:
        cols.append([])
    w = tuple(float(om[c].sum()) / gamma for c in cols)
    p = tuple(float(mat[i, keep][c].sum()) for c in cols)
    q = tuple(float(mat[j, keep][c].sum()) for c in cols)
    return w, p, q


def grouped_pairs(matrix) -> list[GroupedPair]:
    """Every ordered pair of distinct rows of ``matrix`` reduced to its likelihood-ratio groups.

    Pairs with at most three groups are evaluated exactly; pairs with more through the
    three-atom spreads of :func:`spread_to_three`. Raises ``ValueError`` if the blanket is empty
    (``gamma = 0``: no amplification) or an output outside its support has positive probability.
    """
    mat = np.asarray(matrix, dtype=np.float64)
    omega, gamma = blanket_of(mat)
    if gamma <= 0:
        raise ValueError("the randomizer has an empty blanket (some output column has a zero); "
                         "the decomposition certifies nothing")
    out = []
    seen = set()
    for i in range(mat.shape[0]):
        for j in range(mat.shape[0]):
            if i == j:
                continue
            grouped = _row_pair_groups(mat, i, j, omega, gamma)
            if grouped is None:
                continue  # identical rows: divergence 0
            w, p, q = grouped
            if len(w) > 3:
                # more groups: the order is immaterial (the spread sorts them per eps)
                sig = tuple(sorted(zip(np.round(w, 14), np.round(p, 14), np.round(q, 14), strict=True)))
                if sig in seen:
                    continue
                seen.add(sig)
                out.append(GroupedPair(w, p, q, gamma))
                continue
            sig = (tuple(np.round(w, 14)), tuple(np.round(p, 14)), tuple(np.round(q, 14)))
            if sig in seen:
                continue
            seen.add(sig)
            # relabelling groups 1 and 2 does not change the divergence
            seen.add(tuple((x[1], x[0], x[2]) for x in sig))
            out.append(GroupedPair(w, p, q, gamma))
    return out


def _spread_keeping(z: np.ndarray, w: np.ndarray, mid: int, ee: float,
                    gamma: float) -> tuple[float, float, GroupedPair]:
    """One spread of :func:`spread_to_three` (atoms ``z`` sorted, weights ``w``): keep atoms 0,
    ``mid`` and the last, split every other between its kept neighbours. Returns
    ``(added variance, scale, pair)``."""
    last = len(z) - 1
    keep = (0, mid, last)
    wk = {i: float(w[i]) for i in keep}
    added = 0.0  # variance the spread adds: sum of w_j (z_j - z_a)(z_b - z_j)
    for j in range(1, last):
        if j == mid:
            continue
        a, b = (0, mid) if j < mid else (mid, last)
        span = z[b] - z[a]
        to_a = 0.0 if span <= 0 else float(w[j] * (z[b] - z[j]) / span)
        to_a = min(max(to_a, 0.0), float(w[j]))
        wk[a] += to_a
        wk[b] += float(w[j]) - to_a
        added += float(w[j] * (z[j] - z[a]) * (z[b] - z[j]))
    total = wk[0] + wk[mid] + wk[last]
    ws = (wk[0] / total, wk[last] / total, wk[mid] / total)
    zs = (float(z[0]), float(z[last]), float(z[mid]))
    c = [wi * zi for wi, zi in zip(ws, zs, strict=True)]
    pp = [max(ci, 0.0) for ci in c]
    qq = [max(-ci, 0.0) / ee for ci in c]
    scale = sum(pp)
    return (added, scale, GroupedPair(ws, tuple(x / scale for x in pp),
                                      tuple(x / scale for x in qq), gamma))


def spread_to_three(g: GroupedPair, ee: float) -> list[tuple[float, float, GroupedPair]]:
    """Three-atom pairs that dominate a many-group pair at ``e^eps = ee``, as ``(scale, pair)``.

    Given ``M`` blanket draws, the pair's divergence is ``E[(Z_1 + ... + Z_{M+1})_+] / (M + 1)``
    with ``Z_i`` i.i.d., ``Z = z_g = (p_g - ee q_g) / w_g`` with probability ``w_g`` (module
    docstring). Keep the smallest and the largest atom and one middle atom ``m``; split every other
    atom ``z_j`` between its kept neighbours ``a < j < b`` in the proportions that keep its mean
    (``w_j (z_b - z_j) / (z_b - z_a)`` to ``a``, the rest to ``b``). The result ``Z'`` is a
    mean-preserving spread of ``Z`` (``E[Z' | Z] = Z``), so ``Z <= Z'`` in convex order, the sums of
    ``M + 1`` independent copies are ordered the same way, and ``x -> x_+`` is convex: the spread's
    divergence is at least the pair's for every ``M``. One spread per choice of ``m`` is returned
    as ``(added variance, scale, pair)``, the one adding the least variance first (their minimum
    is a bound too). Each is a three-group pair for the exact sums with
    ``p'_g - ee q'_g = w'_g z'_g``, scaled so that ``sum p' = 1`` (the window charges assume it);
    ``scale`` multiplies its divergence back. An empty list means every atom is ``<= 0``: the
    divergence is 0 for every ``M``.
    """
    w = np.asarray(g.w, dtype=np.float64)
    z = (np.asarray(g.p, dtype=np.float64) - ee * np.asarray(g.q, dtype=np.float64)) / w
    if not np.max(z) > 0:
        return []
    order = np.argsort(z, kind="stable")
    z, w = z[order], w[order]
    last = len(z) - 1
    out = [_spread_keeping(z, w, mid, ee, g.gamma) for mid in range(1, last)]
    # the spread adding the least variance first
    out.sort(key=lambda item: item[0])
    return [(added, scale, pair) for added, scale, pair in out]


# --------------------------------------------------------------------------- core sums
def _pmf(j, N, pi):
    """Binomial pmf (Boost via scipy), 0 outside the support and for N < 0."""
    from scipy import stats

    ok = (N >= 0) & (j >= 0) & (j <= N)
    if ok.ndim and ok.all():   # the masks would change nothing
        out = stats.binom.pmf(j, np.maximum(N, 0.0), pi)
        if isinstance(out, np.ndarray) and out.shape == ok.shape and out.dtype == np.float64:
            return out
    return np.where(ok, stats.binom.pmf(np.where(ok, j, 0.0), np.maximum(N, 0.0), pi), 0.0)


def _f_terms(a, t, Bt1, Bt, pi, c1, c2, c3):
    """``P(a,t) - e^eps Q(a,t)`` given the coefficient differences ``c_g = P_g - e^eps Q_g``."""
    return (Bt1 * (c1 * _pmf(a - 1.0, t - 1.0, pi) + c2 * _pmf(a, t - 1.0, pi))
            + c3 * Bt * _pmf(a, t, pi))


def _per_t(t, Bt1, Bt, pi, P, Q, ee, *, upper: bool, lookup=None, memo=None) -> np.ndarray:
    """Per row (axis 0) sum over ``t`` (axis 1) of ``sum_a (P(a,t) - e^eps Q(a,t))_+``.

    ``upper=True`` adds the rounding allowance and, where the real threshold lies so close to
    an integer that rounding could put it on the wrong side, the off-by-one charge;
    ``upper=False`` returns the sum over the computed half-line minus the allowance (a lower
    bound: any region gives at most the positive part). ``memo``: the count table's dict of
    eps-independent arrays; with it, a slope of one sign takes :mod:`.count_sums`' fewer passes
    (the same numbers).
    """
    c1, c2, c3 = P[0] - ee * Q[0], P[1] - ee * Q[1], P[2] - ee * Q[2]
    k1 = c1 / pi - c2 / (1.0 - pi)
    if memo is not None and math.isfinite(k1) and k1 != 0.0 and count_sums.table_memo(memo, t, Bt1)["finite"]:
        return _per_t_signed(memo, t, Bt1, Bt, pi, P, Q, ee, (c1, c2, c3, k1), upper=upper, lookup=lookup)
    tt = np.maximum(t, 1.0)
    slope = Bt1 / tt * k1
    icpt_a = Bt1 * c2 / (1.0 - pi)
    icpt_b = c3 * Bt
    icpt = icpt_a + icpt_b
    pos = slope > 0
    neg = slope < 0
    flat = ~(pos | neg)
    safe = np.where(flat, 1.0, slope)
    cross = np.where(flat, 0.0, -icpt / safe)
    # up (slope > 0 or flat): region a >= a0 ; down (slope < 0): region a <= a0
    a0 = np.where(pos, np.floor(cross) + 1.0, np.ceil(cross) - 1.0)
    a0 = np.where(flat, np.where(icpt > 0, 0.0, t + 1.0), a0)
    a0 = np.clip(a0, -1.0, t + 1.0)
    up = ~neg
    T1, T2, T3 = _region_masses(t, a0, pi, neg, up, lookup)
    pmass = Bt1 * (P[0] * T1 + P[1] * T2) + P[2] * Bt * T3
    qmass = Bt1 * (Q[0] * T1 + Q[1] * T2) + Q[2] * Bt * T3
    s = pmass - ee * qmass
    allowance = ROUNDING_RTOL * (pmass + ee * qmass)
    if not upper:
        return np.sum(np.maximum(s - allowance, 0.0), axis=-1)
    # threshold error: relative 1e-9 of the magnitudes entering -icpt/slope (Boost pmfs are
    # accurate to ~1e-14; the margin covers the arithmetic with a factor > 1e3)
    err = 1e-9 * ((np.abs(icpt_a) + np.abs(icpt_b)) / np.abs(safe) + np.abs(cross) + 1.0)
    near = ~flat & (np.abs(cross - np.round(cross)) <= err)
    corr = np.zeros_like(s)
    if np.any(near):
        idx = np.nonzero(near)
        corr[idx] = _off_by_one_charge(t[idx], a0[idx], up[idx], Bt1[idx], Bt[idx], pi, c1, c2, c3)
    return np.sum(np.maximum(s, 0.0) + allowance + corr, axis=-1)


def _per_t_signed(memo: dict, t, Bt1, Bt, pi, P, Q, ee, c, *, upper: bool, lookup) -> np.ndarray:
    """:func:`_per_t` for a finite non-zero ``k1`` (``c = (c1, c2, c3, k1)``), through
    :mod:`.count_sums`: each cell's numbers as there, in fewer passes."""
    c1, c2, c3, k1 = c
    a0, up, neg, flat, safe, cross, icpt_a, icpt_b = count_sums.thresholds(memo, t, Bt1, Bt, pi, k1, c2, c3)
    upward = k1 > 0.0
    uniform = upward or flat is None   # every cell's region points the same way
    T1, T2, T3 = _region_masses(t, a0, pi, neg, up, lookup, memo=memo if uniform else None, upward=upward)
    pmass = count_sums.group_mass(P, count_sums.scaled(memo, P[2], Bt), Bt1, T1, T2, T3)
    qmass = count_sums.group_mass(Q, count_sums.scaled(memo, Q[2], Bt), Bt1, T1, T2, T3)
    sums = count_sums.cell_sums(pmass, qmass, ee, ROUNDING_RTOL, upper)
    if not upper:
        return sums
    s, allowance = sums
    near = count_sums.near_integer(cross, safe, icpt_a, icpt_b, flat)
    np.maximum(s, 0.0, out=s)
    s += allowance
    if np.any(near):
        corr = np.zeros_like(s)
        idx = np.nonzero(near)
        corr[idx] = _off_by_one_charge(t[idx], a0[idx], up[idx], Bt1[idx], Bt[idx], pi, c1, c2, c3)
        s += corr
    return np.sum(s, axis=-1)


def _on(mask, fn, *args):
    """``fn(*args)`` on the cells of ``mask`` only (elementwise ``fn``), 0 elsewhere: the values
    where it is evaluated are those of the full evaluation, the rest is never read."""
    out = np.zeros(mask.shape)
    if np.any(mask):
        out[mask] = fn(*(a[mask] for a in args))
    return out


def _distinct(t: np.ndarray, a0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t_u, a0_u, inverse)``: the distinct ``(t, a0)`` pairs of two equal-shaped 1-d arrays of
    integers held as floats, and for every cell the index of its pair (``t_u[inverse] == t``).
    Keyed densely (no sort) where the pairs span at most :data:`DISTINCT_DENSE` times as many keys
    as there are cells; by :func:`numpy.unique` otherwise."""
    if t.size == 0:
        return t, a0, np.zeros(0, dtype=np.int64)
    t0, a_lo = float(t.min()), float(a0.min())
    rows, cols = int(t.max() - t0) + 1, int(a0.max() - a_lo) + 1
    key = (t - t0).astype(np.int64) * cols + (a0 - a_lo).astype(np.int64)
    if rows * cols <= DISTINCT_DENSE * t.size:
        seen = np.zeros(rows * cols, dtype=bool)
        seen[key] = True
        keys = np.flatnonzero(seen)
        slot = np.zeros(rows * cols, dtype=np.int64)   # touched only at the keys (calloc'd pages)
        slot[keys] = np.arange(keys.size)
        inverse = slot[key]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
    return (keys // cols).astype(np.float64) + t0, (keys % cols).astype(np.float64) + a_lo, inverse


def _region_terms(t, a0, pi, mid, neg, up, tally=None, *, dedupe: bool = True):
    """The four elementwise terms of :func:`_region_masses`, each 0 off the cells that read it.

    Many cells share their ``(t, a0)`` (the rows are counts of blanket draws whose windows
    overlap; the threshold moves slowly with the count): each special function is evaluated once
    per distinct pair of a direction and read back into every cell that has it -- the same
    function at the same arguments, hence the same numbers as evaluating every cell. ``tally``: a
    one-element list, increased by the number of distinct pairs evaluated; ``dedupe=False``: every
    cell evaluated on its own (where they are known to be distinct, or to check the dedupe)."""
    from scipy import special

    if not (dedupe and np.all(np.isfinite(a0)) and np.all(np.isfinite(t))):
        pis, cpis = np.full(t.shape, pi), np.full(t.shape, 1.0 - pi)   # every cell on its own
        return (_on(mid & up, special.betainc, a0, t - a0, pis), _on(mid & neg, special.betainc, t - a0, a0, cpis),
                _on(up, _pmf, a0 - 1.0, t - 1.0, pis), _on(neg, _pmf, a0, t - 1.0, pis))
    out = [None] * 4   # inc_up, inc_dn, pm_lo, pm_at
    for side, cells in ((0, up), (1, neg)):
        if not np.any(cells):
            continue
        whole = bool(cells.all())   # every cell: read in C order, written without a mask
        tu, au, inverse = _distinct(t.ravel(), a0.ravel()) if whole else _distinct(t[cells], a0[cells])
        if tally is not None:
            tally[0] += tu.size
        inside = (au >= 1.0) & (au <= tu - 1.0)   # the cells' ``mid``, a function of (t, a0)
        pis = np.full(tu.shape, pi)
        if side == 0:
            # up: T2 = Pr[Bin(t-1) >= a0] = I_pi(a0, t - a0) ; Pr[Bin(t-1) = a0 - 1]
            vals = _on(inside, special.betainc, au, tu - au, pis)
            pms = _pmf(au - 1.0, tu - 1.0, pis)
        else:
            # down: T1 = Pr[Bin(t-1) <= a0-1] = I_{1-pi}(t - a0, a0) ; Pr[Bin(t-1) = a0]
            vals = _on(inside, special.betainc, tu - au, au, np.full(tu.shape, 1.0 - pi))
            pms = _pmf(au, tu - 1.0, pis)
        if whole:
            out[side], out[side + 2] = np.where(mid, vals[inverse].reshape(t.shape), 0.0), pms[inverse].reshape(t.shape)
            continue
        out[side], out[side + 2] = np.zeros(t.shape), np.zeros(t.shape)
        out[side][cells] = np.where(mid[cells], vals[inverse], 0.0)
        out[side + 2][cells] = pms[inverse]
    zero = np.broadcast_to(0.0, t.shape)   # a direction no cell takes: read-only zeros, no memory
    return tuple(zero if term is None else term for term in out)


def _region_masses(t, a0, pi, neg, up, lookup=None, *, memo=None, upward: bool = True):
    """``(T1, T2, T3)`` of :func:`_per_t`: the masses of the region (``a >= a0`` where ``up``,
    ``a <= a0`` elsewhere) under ``Bin(t-1)`` shifted by one (T1), ``Bin(t-1)`` (T2) and ``Bin(t)`` (T3).
    Each term is evaluated only on the cells whose direction reads it (``lookup``: read from
    :meth:`CountTable.region_lookup`'s table of the same masses instead). ``memo``: every cell's
    region points one way (``upward`` or down) and the count table's arrays are in ``memo``."""
    if lookup is not None:
        masses = lookup(t, a0, neg)
        if masses is not None:
            return masses
    mid = (a0 >= 1.0) & (a0 <= (t - 1.0 if memo is None else memo["t_minus"]))
    terms = _region_terms(t, a0, pi, mid, neg, up, tally=getattr(lookup, "tally", None))
    if memo is None:
        return _masses_of_terms(t, a0, pi, neg, up, terms)
    inc, pm = (terms[0], terms[2]) if upward else (terms[1], terms[3])
    return count_sums.uniform_masses(memo, t, a0, pi, upward, inc, pm)


def _masses_of_terms(t, a0, pi, neg, up, terms):
    """:func:`_region_masses` from the four terms of :func:`_region_terms`."""
    inc_up, inc_dn, pm_lo, pm_at = terms
    big = a0 > t - 1.0
    small = a0 < 1.0
    t_up = np.where(small, 1.0, np.where(big, 0.0, inc_up))
    t_dn = np.where(small, 0.0, np.where(big, 1.0, inc_dn))
    T2 = np.where(up, t_up, t_dn + pm_at)
    T1 = np.where(up, t_up + pm_lo, t_dn)
    nonempty = t >= 1
    T1 = np.where(nonempty, T1, 0.0)
    T2 = np.where(nonempty, T2, 0.0)
    # Pr[Bin(t) >= a0] = pi T1 + (1-pi) T2 (up); Pr[Bin(t) <= a0] likewise (down); t = 0: the
    # single point a = 0, inside the region iff a0 <= 0 (up) / a0 >= 0 (down)
    T3 = np.where(nonempty, pi * T1 + (1.0 - pi) * T2,
                  np.where(up, (a0 <= 0).astype(float), (a0 >= 0).astype(float)))
    return T1, T2, T3


def _off_by_one_charge(tn, an, upn, b1, b0, pi, c1, c2, c3):
    """Charge of the cells whose threshold ``an`` lies so close to an integer that rounding could
    put it on the wrong side: the positive part of the cell just outside, the negative part of
    the one just inside, and the rounding allowance of both."""
    outside = np.where(upn, an - 1.0, an + 1.0)
    f_out = _f_terms(outside, tn, b1, b0, pi, c1, c2, c3)
    f_in = _f_terms(an, tn, b1, b0, pi, c1, c2, c3)
    f_out = np.where((outside >= 0) & (outside <= tn), f_out, 0.0)
    f_in = np.where((an >= 0) & (an <= tn), f_in, 0.0)
    return (np.maximum(f_out, 0.0) + np.maximum(-f_in, 0.0)
            + ROUNDING_RTOL * (np.abs(f_out) + np.abs(f_in)))


class _Tally:
    """A region lookup with no table: answers None (compute the terms) and carries ``tally``, the
    count of distinct ``(t, a0)`` pairs evaluated so far for its split."""

    def __init__(self, tally: list):
        self.tally = tally

    def __call__(self, t, a0, neg):
        return None


class CountTable:
    """eps-independent part for a set of other-draw counts ``N``: the t-grid and the weights
    ``B(t)``, ``B(t-1)`` of the others' count in groups 1 and 2 (``Bin(N, s)``)."""

    def __init__(self, N, s: float, tail: float):
        N = np.atleast_1d(np.asarray(N, dtype=np.float64))
        s = min(float(s), 1.0)
        if not s > 0:
            raise ValueError("groups 1 and 2 carry no mass of the other draws")
        lo, hi, outside = t_window(N, s, tail)
        width = int(np.max(hi - lo)) + 2  # t = t' or t' + 1
        t = lo[:, None] + np.arange(width, dtype=np.float64)[None, :]
        valid = t <= (N[:, None] + 1.0)
        # one pmf per count: B(t - 1) is B(t) one column to the left (t = lo - 1 .. lo + width - 1)
        pmf = _pmf(lo[:, None] + np.arange(-1.0, width)[None, :], N[:, None], s)
        if valid.all():   # the masks below would change nothing
            self.t, self.Bt, self.Bt1 = t, np.ascontiguousarray(pmf[:, 1:]), np.ascontiguousarray(pmf[:, :-1])
        else:
            self.t = np.where(valid, t, 0.0)
            self.Bt = np.where(valid, pmf[:, 1:], 0.0)
            self.Bt1 = np.where(valid, pmf[:, :-1], 0.0)
        self.outside = outside
        self.memo: dict = {}   # eps-independent arrays of the sums (:func:`.count_sums.table_memo`)
        self._asked: dict = {}
        self._terms: dict = {}
        self._spent: dict = {}

    def region_lookup(self, pi: float):
        """For the split ``pi`` asked about again and again (:data:`TABLE_AFTER` evaluations: an eps
        search or a privacy profile evaluates one pair at many eps), :func:`_region_masses` at every
        ``(t, a0)`` these counts can ask, ``t`` in ``[0, max t]``, ``a0`` in ``[-1, t + 1]``, for both
        directions, tabulated once and read where asked: the same functions at the same arguments,
        elementwise, hence the same numbers. Before that (fewer than :data:`TABLE_AFTER` evaluations,
        or fewer distinct ``(t, a0)`` evaluated one at a time than :data:`TABLE_PAYBACK` times the
        table's cells: the table would cost more than it saves), or when it would exceed
        :data:`TABLE_CELLS_MAX` cells: a lookup that answers None (compute them) and counts the
        pairs evaluated (``tally``). The lookup also answers None for cells outside the table."""
        pi = float(pi)
        tab = self._terms.get(pi)
        if tab is None:
            self._asked[pi] = self._asked.get(pi, 0) + 1
            top = int(np.max(self.t))
            cells = (top + 1) * (top + 3)
            spent = self._spent.setdefault(pi, [0])
            if self._asked[pi] < TABLE_AFTER or cells > TABLE_CELLS_MAX or spent[0] < TABLE_PAYBACK * cells:
                return _Tally(spent)
            tt = np.broadcast_to(np.arange(top + 1.0)[:, None], (top + 1, top + 3))
            aa = np.broadcast_to(np.arange(-1.0, top + 2.0)[None, :], (top + 1, top + 3))
            aa = np.minimum(aa, tt + 1.0)
            mid = (aa >= 1.0) & (aa <= tt - 1.0)
            every, none = np.ones(tt.shape, dtype=bool), np.zeros(tt.shape, dtype=bool)
            terms = _region_terms(tt, aa, pi, mid, every, every, dedupe=False)   # all distinct
            # (T1, T2, T3) flat, the upward region's cells first, then the downward one's
            up_side = _masses_of_terms(tt, aa, pi, none, every, terms)
            down_side = _masses_of_terms(tt, aa, pi, every, none, terms)
            tab = self._terms[pi] = tuple(np.concatenate([u.ravel(), d.ravel()])
                                          for u, d in zip(up_side, down_side, strict=True))
        rows, width = int(np.max(self.t)) + 1, int(np.max(self.t)) + 3
        base = self.t.astype(np.int64) * width + 1   # the table's flat index of (t, a0 = 0)

        def lookup(t, a0, neg):
            if t is not self.t:
                if not np.all((t >= 0) & (t <= rows - 1)):
                    return None
                start = t.astype(np.int64) * width + 1
            else:
                start = base
            if not np.all(np.isfinite(a0)):
                return None
            idx = start + a0.astype(np.int64) + neg * (rows * width)
            return tab[0][idx], tab[1][idx], tab[2][idx]
        return lookup


def divergence_given_count(table: CountTable, g: GroupedPair, pi: float, ee: float, *,
                            upper: bool) -> np.ndarray:
    """Divergence ``D_{e^eps}(P||Q)`` for each count of other draws in ``table``.

    Every evaluated t gets its exact terms; t outside [lo, hi + 1] implies the others' count
    t' outside [lo, hi], whose mass (``table.outside``) bounds the rest (upper bound only).
    """
    if not (0.0 < pi < 1.0):
        raise ValueError("degenerate group split (pi in {0, 1}) is not supported")
    res = _per_t(table.t, table.Bt1, table.Bt, pi, g.p, g.q, ee, upper=upper, lookup=table.region_lookup(pi),
                 memo=table.memo)
    return res + table.outside if upper else res


def pair_is_mirror(g: GroupedPair) -> bool:
    """True when relabelling groups 1 and 2 turns (p, q) into (q, p): D(P||Q) = D(Q||P)."""
    return g.w[0] == g.w[1] and g.p[0] == g.q[1] and g.p[1] == g.q[0] and g.p[2] == g.q[2]


def swapped_pair(g: GroupedPair) -> GroupedPair:
    """The pair with the victim's two inputs exchanged (``p`` and ``q`` swapped)."""
    return GroupedPair(g.w, g.q, g.p, g.gamma)
