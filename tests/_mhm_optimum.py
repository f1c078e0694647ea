"""MHM's optimal decomposition value at small n, shared by the lattice tests and
benchmarks/accountants_mhm_gap.py: the all-differ pair from the independent oracle
(:mod:`_oracle_mhm`, no ``shuffledp``) and the shared-attribute pairs' exact atoms from
``mhm_randomizer.mhm_pair`` through :func:`_oracle_decomposition.atoms_expectation`."""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import _oracle_decomposition as O
import _oracle_mhm as OM
import numpy as np

from shuffledp.accountants.randomizers import mhm as M


def optimum_delta(d: int, g: int, eps0: float, n: int, eps: float, full: bool = True) -> float:
    """Largest exact decomposed divergence over the victim pairs (each is its own mirror image):
    every m = 1..d, or only the m = d pair unless ``full``."""
    best = OM.all_differ_delta(d, g, eps0, n, eps)
    for m in range(1, d if full else 1):
        pr = M.mhm_pair(d, g, eps0, m)
        keep = [i for i, w in enumerate(pr.w) if w > 0]
        w = np.array([pr.w[i] for i in keep])
        z = (np.array([pr.p[i] for i in keep]) - math.exp(eps) * np.array([pr.q[i] for i in keep])) / w
        best = max(best, O.atoms_expectation(w, z, pr.gamma, n))
    return best


# --------------------------------------------------------------------------- contraction (any n)
# A lower estimate of the m = d pair's decomposed divergence at any n, for the gap benchmark where
# the optimum cannot be enumerated. Each law is a list of atoms grouped by an integer label (atoms
# near label * w), each group carrying its mass and first moment: replacing a group's atoms by
# their mean is a contraction (convex order, Jensen), so every expectation of a convex function
# >= 0 computed from it is below the true one. Convolutions group the product atoms by the sum of
# labels (any grouping is a conditioning: still a contraction), so masses and moments convolve;
# groups are merged in pairs as the law widens (again a contraction), and the ends are dropped
# (a sub-law: lower for an integrand >= 0). Arithmetic in long double, its rounding charged down.
LD = np.longdouble
ULD = float(np.finfo(np.longdouble).eps)
PER_SD_LOW = 32


class _Contracted:
    """``(lo, m, f, ab, w, rel, pr)``: groups labelled ``lo + k``, masses ``m``, moments ``f`` (sum
    of mass times position), ``ab`` (sum of mass times the sum of the summed offsets' absolute
    values), label width ``w``. The atoms (mass ``m``, position ``f / m``) are within
    ``pr ab / m`` in position of a measure whose masses are within ``rel`` (relative) of those of a
    contraction of the true sub-law: each operation on the computed inputs is compared with the
    same operation done exactly on them, its rounding added, so position errors add along the
    operations (relative to the offsets' absolute sums: a sum of tiny offsets stays accurate
    however far a rare one lies) and mass errors multiply."""

    def __init__(self, lo, m, f, ab, w, rel, pr, count=1):
        self.lo, self.m, self.f, self.ab, self.w, self.rel, self.pr = lo, m, f, ab, w, rel, pr
        self.count = count  # reports summed (pruned in proportion: a law enters the last N / count times)

    def means(self):
        return self.f / np.where(self.m > 0, self.m, 1)

    def merged(self) -> _Contracted:
        """Groups ``2j, 2j + 1`` merged (label width doubled)."""
        pad = self.lo % 2
        arrs = []
        for x in (self.m, self.f, self.ab):
            x = np.concatenate([np.zeros(pad, dtype=LD), x, np.zeros((pad + x.size) % 2, dtype=LD)])
            arrs.append(x[0::2] + x[1::2])
        return _Contracted(self.lo // 2, *arrs, 2 * self.w, self.rel + ULD, self.pr * (1 + 4 * ULD) + 4 * ULD,
                           self.count)

    def settled(self) -> _Contracted:
        law = self
        while True:
            mass = float(law.m.sum())
            mu = float(law.f.sum()) / mass
            var = float((law.m * (law.means() - mu) ** 2).sum()) / mass
            if math.sqrt(max(var, 0.0)) <= 2 * PER_SD_LOW * law.w:
                return law
            law = law.merged()

    def pruned(self, drop: float) -> _Contracted:
        c = np.cumsum(self.m.astype(np.float64))
        head = int(np.searchsorted(c, drop, side="right"))
        c2 = np.cumsum(self.m[::-1].astype(np.float64))
        tail = int(np.searchsorted(c2, drop, side="right"))
        end = max(self.m.size - tail, head + 1)
        head = min(head, end - 1)
        cut = slice(head, end)
        return _Contracted(self.lo + head, self.m[cut], self.f[cut], self.ab[cut], self.w, self.rel, self.pr,
                           self.count)

    def times(self, other: _Contracted, drop: float) -> _Contracted:
        a, b = self, other
        while a.w < b.w:
            a = a.merged()
        while b.w < a.w:
            b = b.merged()
        m = np.convolve(a.m, b.m)
        f = np.convolve(a.f, b.m) + np.convolve(a.m, b.f)
        ab = np.convolve(a.ab, b.m) + np.convolve(a.m, b.ab)
        terms = min(int(np.count_nonzero(a.m)), int(np.count_nonzero(b.m))) + 2  # per entry, at most
        rel = a.rel + b.rel + a.rel * b.rel + terms * ULD
        # each group mean against the exact mean of the inputs as computed: their errors (at most
        # max(pr) ab / m) plus this convolution's rounding of the moments and the masses
        pr = max(a.pr, b.pr) * (1 + 4 * terms * ULD) + 4 * terms * ULD
        count = a.count + b.count
        return _Contracted(a.lo + b.lo, m, f, ab, a.w, rel, pr, count).pruned(drop * count).settled()


def _ld(x: Fraction):
    """A rational as a long double (through 30 significant digits: within 1e-29 relative)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 30
        return LD(str(decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)))


def _one_report(d: int, g: int, eps0: float) -> tuple[_Contracted, float]:
    """The true one-report law, positions in units of ``e^eps0 - 1`` (the ratio offsets centred
    on their mean ``d / g``: exact rationals), no spread (every level its own atom unless two share
    a label), and ``1 / (e^eps0 - 1) + d / g`` (the mean ratio in those units). Probabilities
    exact rationals (the oracle's Stirling numbers); all rounded once to long double."""
    em1 = math.expm1(eps0)
    probs = [Fraction(0)] * (d + 1)
    for ell in range(1, d + 1):
        pr = Fraction(math.comb(g, ell) * OM.stirling2(d, ell) * math.factorial(ell), g ** d)
        probs[0] += pr * Fraction(ell, g)
        probs[ell] = pr * Fraction(g - ell, g)
    exact = [Fraction(1)] + [Fraction(d - ell, g - ell) for ell in range(1, d + 1)]
    keep = [i for i, pr in enumerate(probs) if pr > 0]
    offs = np.array([_ld(exact[i] - Fraction(d, g)) for i in keep], dtype=LD)
    pl = np.array([_ld(probs[i]) for i in keep], dtype=LD)
    sd = math.sqrt(float(np.dot(pl, offs ** 2)))
    # labels of at least 1 / 512: a rare far hit (large g) would otherwise make the first laws
    # long and sparse (the misses, all near 0 then, share a label: a coarser contraction)
    w = max(sd / PER_SD_LOW, 1.0 / 512.0)
    lab = np.floor(offs.astype(np.float64) / w).astype(np.int64)
    lo = int(lab.min())
    m = np.zeros(int(lab.max()) - lo + 1, dtype=LD)
    f = np.zeros_like(m)
    np.add.at(m, lab - lo, pl)
    np.add.at(f, lab - lo, pl * offs)
    ab = np.zeros_like(m)
    np.add.at(ab, lab - lo, pl * np.abs(offs))
    return _Contracted(lo, m, f, ab, w, 16 * ULD, 4 * (d + 2) * ULD), 1.0 / em1 + d / g


def _power_c(one: _Contracted, n: int, drop: float) -> _Contracted:
    result, base = None, one.settled()
    while True:
        if n & 1:
            result = base if result is None else result.times(base, drop)
        n >>= 1
        if not n:
            return result
        base = base.times(base, drop)


def _contracted_laws(one: _Contracted, ns: list[int], drop: float) -> list[_Contracted]:
    """The contracted laws at the increasing counts ``ns``: the first by squaring, the others as
    the first plus the accumulated increments (each a power of ``one``)."""
    base = _power_c(one, ns[0], drop)
    out, acc, cache = [base], None, {}
    for gap in np.diff(ns).tolist():
        if gap not in cache:
            cache[gap] = _power_c(one, gap, drop)
        acc = cache[gap] if acc is None else acc.times(cache[gap], drop)
        out.append(base.times(acc, drop))
    return out


def _plus_lower(law: _Contracted, ee: float, a: float) -> float:
    """A lower bound on ``E[(a + Y - ee Y')_+]`` for ``Y, Y'`` independent with the true law whose
    contraction is ``law``: the contraction's value with each group mean moved against us by its
    error bound (``Y`` down, ``Y'`` up: the integrand is monotone in each) and every rounding of
    the threshold and the suffix sums charged."""
    keep = law.m > 0
    m = law.m[keep]
    mu, err = law.means()[keep], law.pr * law.ab[keep] / m
    lo_mu, hi_mu = mu - err, mu + err
    order = np.argsort(lo_mu)
    ys, ym = lo_mu[order], m[order]
    sm = np.append(np.cumsum(ym[::-1])[::-1], LD(0))
    smu = np.append(np.cumsum((ym * ys)[::-1])[::-1], LD(0))
    sabs = np.append(np.cumsum((ym * np.abs(ys))[::-1])[::-1], LD(0))
    a, e = LD(a), LD(ee)
    # a from the double e^eps0 - 1 (a few ulps of it) and the threshold's own rounding
    t = e * hi_mu - a
    t = t + LD(8 * 2.0 ** -52) * abs(a) + LD(8 * ULD) * np.abs(t) + LD(8 * ULD) * e * np.abs(hi_mu)
    idx = np.searchsorted(ys, t, side="right")  # per Y' atom: the Y above t
    val = smu[idx] - t * sm[idx]
    rnd = LD(ys.size * 4 * ULD) * (sabs[idx] + np.abs(t) * sm[idx])
    tot = float(np.sum(m * np.maximum(val - rnd, LD(0))))
    return max(tot * (1.0 - law.rel) ** 2 * (1.0 - 1e-15), 0.0)


class ContractedPair:
    """Lower estimate of the m = d pair's decomposed divergence at ``n`` users (any ``n``): the
    blanket count's window cut into ``blocks`` blocks, each charged its mass (binomial cdfs, rounded
    down) times the divergence at its last count (``D_M`` is non-increasing in ``M``), each
    divergence from the contracted laws (:class:`_Contracted`). The mass outside the window and
    the dropped ends are left out (a lower estimate)."""

    def __init__(self, d: int, g: int, eps0: float, n: int, *, blocks: int = 200, tail: float = 1e-13):
        from scipy import stats

        one, self.rbar = _one_report(d, g, eps0)
        self.em1 = math.expm1(eps0)
        self.gamma = g / (d * math.exp(eps0) + g - d)
        # the blanket count's window: the mass outside is left out (a lower estimate), so it need
        # not be as small as the laws' tail; a narrower window keeps the blocks narrow
        window = max(tail, 1e-13)
        lo = int(stats.binom.ppf(window, n - 1, self.gamma))
        hi = int(stats.binom.isf(window, n - 1, self.gamma))
        edges = np.unique(np.round(np.linspace(lo, hi + 1, min(blocks, hi - lo + 1) + 1)).astype(np.int64))
        first, last = edges[:-1], edges[1:] - 1
        cdf = stats.binom.cdf
        self.w = np.maximum(cdf(last, n - 1, self.gamma) - cdf(first - 1, n - 1, self.gamma), 0.0) * (1 - 1e-9)
        self.ns = (last + 1).tolist()
        self.laws = _contracted_laws(one, self.ns, tail / (8.0 * (len(self.ns) + 64) * self.ns[-1]))

    def delta(self, eps: float) -> float:
        ee = math.exp(eps)
        # U - e^eps V = (e^eps0 - 1) (a + Y - e^eps Y') in the units of _one_report
        vals = [self.gamma / N * self.em1 * _plus_lower(law, ee, (1.0 - ee) * N * self.rbar)
                for N, law in zip(self.ns, self.laws, strict=True)]
        return float(np.dot(self.w, vals))

    def eps(self, delta: float, top: float, rtol: float = 1e-7) -> float:
        """The smallest eps whose lower estimate is at most ``delta`` (bisection in ``[0, top]``)."""
        if self.delta(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, top
        while hi - lo > rtol * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if self.delta(mid) <= delta else (mid, hi)
        return lo
