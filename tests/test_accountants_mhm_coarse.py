"""The coarsened lattice sums (accountants.lattice_sums.coarsen, LatticeSums(coarse=True)).

Coarsening moves a law on a grid of step ``s`` to the grid of step ``2 s`` by splitting each odd
point's mass in halves between its two even neighbours: the mean is kept exactly, the variance
grows by exactly the odd points' mass (in squared old steps), and the new law is above the old
one in convex order, so every value computed from coarsened laws is above the uncoarsened one.
Checked in exact arithmetic (dyadic masses), against a wrong split that must fail the checks,
against the uncoarsened laws, and against the enumerated laws of the oracles.
"""

from __future__ import annotations

import math
from fractions import Fraction

import _oracle_mhm as OM
import numpy as np
import pytest

from shuffledp.accountants.numerics import lattice_sums as L
from shuffledp.accountants.randomizers import mhm as M
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper.blanket import mhm_domain


def _dyadic_law(rng, size: int) -> np.ndarray:
    p = rng.integers(0, 1 << 20, size=size).astype(np.float64)
    p[rng.random(size) < 0.2] = 0.0
    p[0] = p[-1] = 1.0
    return p / 2.0 ** 30  # every sum and half of these is exact in binary


def _moments(lo: int, p: np.ndarray, step: int) -> tuple[Fraction, Fraction, Fraction]:
    mass = sum(Fraction(x) for x in p.tolist())
    mean = sum(Fraction(x) * step * (lo + i) for i, x in enumerate(p.tolist())) / mass
    var = sum(Fraction(x) * (step * (lo + i) - mean) ** 2 for i, x in enumerate(p.tolist())) / mass
    return mass, mean, var


def _is_spread(lo, p, lo2, q) -> bool:
    """Same mass and mean, and E(X - k)_+ of the coarse law >= the fine one's at every kink k."""
    fine, coarse = _moments(lo, p, 1), _moments(lo2, q, 2)
    if fine[:2] != coarse[:2]:
        return False
    xs, ys = lo + np.arange(p.size), 2 * (lo2 + np.arange(q.size))
    for k in np.concatenate([xs, ys]).tolist():
        a = sum(Fraction(w) * max(x - k, 0) for w, x in zip(p.tolist(), xs.tolist(), strict=True))
        b = sum(Fraction(w) * max(y - k, 0) for w, y in zip(q.tolist(), ys.tolist(), strict=True))
        if b < a:
            return False
    return True


def _floor_coarsen(lo, p):
    """A wrong coarsening: each odd point's mass to its lower even neighbour (the mean drops)."""
    lo2 = lo // 2
    q = np.zeros((lo + p.size - 1) // 2 - lo2 + 1)
    np.add.at(q, (lo + np.arange(p.size)) // 2 - lo2, p)
    return lo2, q


@pytest.mark.parametrize("lo,size", [(0, 9), (3, 10), (-5, 7), (7, 1), (2, 2)])
def test_coarsen_keeps_the_mean_exactly_and_adds_at_most_a_quarter_step_squared(lo, size):
    rng = np.random.default_rng(100 + size + lo)
    p = _dyadic_law(rng, size) if size > 1 else np.array([0.5])
    lo2, q = L.coarsen(lo, p)
    mass, mean, var = _moments(lo, p, 1)
    mass2, mean2, var2 = _moments(lo2, q, 2)
    assert (mass2, mean2) == (mass, mean)  # exact
    odd = sum(Fraction(x) for i, x in enumerate(p.tolist()) if (lo + i) % 2) / mass
    assert var2 - var == odd  # exact: each odd point moved by one old step either way
    assert var2 - var <= Fraction(2 * 2, 4)  # at most (new step)^2 / 4
    assert _is_spread(lo, p, lo2, q)
    if any((lo + i) % 2 and x > 0 for i, x in enumerate(p.tolist())):
        assert not _is_spread(lo, p, *_floor_coarsen(lo, p))  # the checks catch a wrong split


def test_settled_laws_keep_their_width_bounded():
    rng = np.random.default_rng(7)
    pi = rng.uniform(size=40)
    pi /= pi.sum()
    one = L._Law(0, pi, 0.0, 0.0, 1, 2.0 * L.PER_SD)
    law = L._power(one, 10 ** 9, 1e-40)
    assert law.step > 1 and L._sd(law.p) <= 2.0 * L.PER_SD
    assert law.p.size < 4.0 * L._z(1e-40) * L.PER_SD + 60


def _enumerated(pi, h, gamma, ee, N):
    vals, p = OM._sum_law(1.0 + h * np.arange(float(pi.size)), pi, N)
    return gamma / N * OM.plus_expectation(vals, p, vals, p, ee)


def test_heavily_coarsened_sums_stay_above_the_enumerated_value(monkeypatch):
    """PER_SD = 1: laws coarsened to steps of about their standard deviation; still above the
    exact enumeration (every count vector) at every count and eps, and not absurdly so."""
    monkeypatch.setattr(L, "PER_SD", 1)
    rng = np.random.default_rng(2513)
    pi = rng.uniform(0.0, 1.0, size=7) ** 2
    pi[2] = 0.0
    pi /= pi.sum()
    h, gamma, ns = 0.3, 0.7, [3, 6, 10, 13]
    sums = L.LatticeSums(pi, 1e-15, ns, 1e-30)
    assert max(sums.steps) >= 2
    for ee in (1.0, 1.15, 1.6):
        up = sums.divergence(gamma, h, 1.0 + 6 * h, ee, upper=True)
        for i, N in enumerate(ns):
            exact = _enumerated(pi, h, gamma, ee, N)
            assert exact * (1 - 1e-12) <= up[i], (ee, N, up[i], exact)
            assert up[i] <= exact * 3.0 + 1e-12  # 2 points per sd: loose, but bounded


@pytest.mark.parametrize("d,eps0,ns", [(5, 0.5, [20000, 20040, 20100]), (2, 1.0, [60000, 60300])])
def test_coarsened_sums_are_above_and_close_to_the_uncoarsened(d, eps0, ns, monkeypatch):
    monkeypatch.setattr(M, "LATTICE_K_MAX", 32)  # K = g - 1: the uncoarsened laws stay affordable
    g = mhm_domain(eps0, d)
    pi, rel0, h = M.mhm_lattice_law(d, g, eps0)
    gamma = g * M.mhm_blanket_cell(d, g, eps0)
    coarse = L.LatticeSums(pi, rel0, ns, 1e-30)
    exact = L.LatticeSums(pi, rel0, ns, 1e-30, coarse=False)
    assert min(coarse.steps) >= 2 and max(exact.steps) == 1
    for eps in (0.001, 0.003, 0.006, 0.01):  # delta from about 1e-3 to 1e-9
        ee = math.exp(eps)
        up = coarse.divergence(gamma, h, math.exp(eps0), ee, upper=True)
        ref = exact.divergence(gamma, h, math.exp(eps0), ee, upper=True)
        assert np.all(up >= ref * (1 - 1e-12)), (eps, up, ref)
        assert np.all(up <= ref * 1.005), (eps, up / ref)  # delta: eps moves far less


def test_accountant_with_forced_coarsening_stays_above_the_all_differ_pair(monkeypatch):
    """The whole accountant with laws coarsened from 2 points per standard deviation on: above the
    oracle's exact value of the m = d pair (every count vector of the true levels)."""
    monkeypatch.setattr(L, "PER_SD", 1)
    d, eps0, n = 5, 0.5, 30
    g = mhm_domain(eps0, d)
    pairs = M.mhm_pairs(d, g, eps0)
    for eps in (0.05, 0.3):
        up = dec.decomposition_delta(None, n, eps, pairs=pairs)
        exact = OM.all_differ_delta(d, g, eps0, n, eps)
        assert exact * (1 - 1e-12) <= up, (eps, up, exact)  # sound; loose in the tail at 2 points per sd
    assert any(v[0] is not None and max(v[0].steps) > 1 for v in pairs[0].cache.values())


def _with_and_without_lattice(d: int, eps0: float, g: int | None = None):
    """MHM's pairs as the accountant builds them, and the same with the lattice switched off (the
    flags' two-level spread answers)."""
    g = mhm_domain(eps0, d) if g is None else g
    pairs, flags = M.mhm_pairs(d, g, eps0), M.mhm_pairs(d, g, eps0)
    object.__setattr__(flags[0], "lattice", None)
    return pairs, flags


def test_large_n_uses_the_lattice_below_the_flags():
    d, eps0, n = 16, 0.5, 10 ** 9
    pairs, flags = _with_and_without_lattice(d, eps0)
    for eps in (3e-6, 6e-6):
        lat = dec.decomposition_delta(None, n, eps, pairs=pairs)
        assert lat < 0.9 * dec.decomposition_delta(None, n, eps, pairs=flags)
    sums = [v[0] for v in pairs[0].cache.values()]
    assert sums and all(s is not None and 0 < s.rel_max < 1e-3 for s in sums)


def test_rounding_bound_grows_with_the_count_and_gates_the_lattice(monkeypatch):
    d, eps0 = 5, 0.5
    g = mhm_domain(eps0, d)
    pi, rel0, _ = M.mhm_lattice_law(d, g, eps0)
    assert rel0 == L.UNIT / 2  # one rounding of an exact rational per entry
    r1 = L.LatticeSums(pi, rel0, [10 ** 6], 1e-30).rel_max
    r2 = L.LatticeSums(pi, rel0, [10 ** 8], 1e-30).rel_max
    assert 50 * r1 < r2 < 200 * r1  # about linear in the count
    monkeypatch.setattr(M, "LATTICE_REL_MAX", 0.0)
    pairs, flags = _with_and_without_lattice(d, eps0, g)
    assert dec.decomposition_delta(None, 10 ** 5, 0.01, pairs=pairs) == \
        dec.decomposition_delta(None, 10 ** 5, 0.01, pairs=flags)
    assert all(v[0] is None for v in pairs[0].cache.values())


def test_exact_lattice_law_matches_the_group_law_programme():
    for d, g in ((2, 7), (5, 18), (16, 60)):
        miss, hit = M._distinct_counts(d, g)
        assert sum(miss) + sum(hit) == g ** d
        ref: dict = {}
        for (ha, la, _, _), pr in M.mhm_group_law(d, d, g).items():
            ref[(ha, la)] = ref.get((ha, la), 0.0) + pr
        for ell in range(d + 1):
            assert miss[ell] / g ** d == pytest.approx(ref.get((0, ell), 0.0), rel=1e-12, abs=1e-300)
            assert hit[ell] / g ** d == pytest.approx(ref.get((1, ell), 0.0), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("d,eps0,n", [(2, 0.5, 12), (3, 1.0, 25), (5, 2.0, 20)])
def test_contraction_lower_estimate_is_below_the_exact_value(d, eps0, n):
    """The gap benchmark's reference at large n (``_mhm_optimum.ContractedPair``): below the
    oracle's exact m = d value (every count vector), and close to it."""
    from _mhm_optimum import ContractedPair

    g = mhm_domain(eps0, d)
    low = ContractedPair(d, g, eps0, n)
    for eps in (0.05, 0.3):
        exact = OM.all_differ_delta(d, g, eps0, n, eps)
        assert 0.97 * exact <= low.delta(eps) <= exact, (eps, low.delta(eps), exact)


def test_contraction_is_below_the_coarsened_upper_bound_at_large_n():
    d, eps0, n = 5, 0.5, 10 ** 7
    g = mhm_domain(eps0, d)
    from _mhm_optimum import ContractedPair

    low = ContractedPair(d, g, eps0, n)
    for eps in (2e-4, 3e-4):
        up = dec.decomposition_delta(None, n, eps, pairs=M.mhm_pairs(d, g, eps0))
        assert low.delta(eps) <= up <= 1.1 * low.delta(eps) + 1e-12, (eps, low.delta(eps), up)


def test_rounding_limit_stops_the_work_early():
    d, eps0 = 5, 0.5
    g = mhm_domain(eps0, d)
    pi, rel0, _ = M.mhm_lattice_law(d, g, eps0)
    with pytest.raises(L.RoundingTooLarge):
        L.LatticeSums(pi, rel0, [10 ** 13, 10 ** 13 + 10 ** 7], 1e-30, rel_limit=0.05)
    with pytest.raises(L.RoundingTooLarge):
        L.LatticeSums(pi, rel0, [10 ** 15], 1e-30)  # the hard limit (0.5): never a division near 0
    assert L.LatticeSums(pi, rel0, [10 ** 9], 1e-30, rel_limit=0.05).rel_max < 1e-3


def test_long_double_laws_agree_with_double_and_carry_a_smaller_rounding_bound():
    d, eps0 = 5, 1.0
    g = mhm_domain(eps0, d)
    pi, rel0, h = M.mhm_lattice_law(d, g, eps0)
    pil, rel0l, _ = M.mhm_lattice_law(d, g, eps0, long=True)
    assert pil.dtype == np.longdouble and rel0l < rel0 / 100
    assert np.allclose(pil.astype(np.float64), pi, rtol=1e-15, atol=0.0)
    ns = [10 ** 7, 10 ** 7 + 5000]
    a, b = L.LatticeSums(pi, rel0, ns, 1e-30), L.LatticeSums(pil, rel0l, ns, 1e-30)
    assert b.rel_max < a.rel_max / 100
    gamma = g * M.mhm_blanket_cell(d, g, eps0)
    for eps in (3e-4, 1e-3):
        x = a.divergence(gamma, h, math.exp(eps0), math.exp(eps), upper=True)
        y = b.divergence(gamma, h, math.exp(eps0), math.exp(eps), upper=True)
        # long double laws are kept narrower (PER_SD_LONG): coarser steps, a little more spread
        assert np.all(x * (1 - 1e-6) <= y) and np.all(y <= x * 1.03), (eps, x, y)  # delta; eps: far less


def test_lattice_answers_at_n_1e12_in_long_double_below_the_flags():
    d, eps0, n = 5, 4.0, 10 ** 12
    pairs, flags = _with_and_without_lattice(d, eps0)
    eps = 5.07e-6
    assert dec.decomposition_delta(None, n, eps, pairs=pairs) < dec.decomposition_delta(None, n, eps, pairs=flags)
    sums = [v[0] for v in pairs[0].cache.values()]
    assert sums and all(s is not None and s.rel_max < 1e-4 for s in sums)


def _icx_both(lo, hi, ee):
    wl, ul, vl, il = M._levels(lo)
    wh, uh, vh, ih = M._levels(hi)
    kdu, kdv = np.concatenate([ul[il], uh[ih]]), np.concatenate([vl[il], vh[ih]])
    *fl, el = M._plus_sums_sorted(wl, ul, vl, kdu, kdv, ee)
    *fh, eh = M._plus_sums_sorted(wh, uh, vh, kdu, kdv, ee)
    fast = M._icx_verdict(fl, fh, el + eh)
    exact = M._icx_verdict(M._plus_sums(wl, ul, vl, kdu, kdv, ee), M._plus_sums(wh, uh, vh, kdu, kdv, ee), 0.0)
    return fast, exact


@pytest.mark.parametrize("d,eps0", [(3, 1.0), (5, 0.5), (8, 2.0), (5, 30.0), (2, 50.0)])
def test_fast_icx_check_never_accepts_what_the_exact_one_rejects(d, eps0):
    """Both directions of every m < d pair against the reference (the lattice pair, or the flag
    pair): the reverse direction is false, so the fast check must reject it too."""
    g = mhm_domain(eps0, d)
    pair = M.mhm_pairs(d, g, eps0)[0]
    ref = pair.lattice[3] if pair.lattice else pair
    accepted = 0
    for other in pair.others:
        for eps in np.linspace(0.001, eps0, 9):
            for lo, hi in ((other, ref), (ref, other)):
                fast, exact = _icx_both(lo, hi, math.exp(eps))
                assert exact or not fast, (eps, lo is ref)
                accepted += fast
    if d <= 8 and eps0 <= 2:
        assert accepted > 0  # the fast path decides there


@pytest.mark.parametrize("N", [10 ** 6, 3 * 10 ** 11])
def test_dropped_mass_stays_below_half_the_tail_at_any_count(N):
    """Squaring doubles a law's missing mass: pruning in proportion to the reports summed keeps the
    total below tail / 2 (it was about N times the per-operation share before)."""
    d, eps0 = 5, 2.0
    g = mhm_domain(eps0, d)
    pi, rel0, _ = M.mhm_lattice_law(d, g, eps0, long=N > M.LATTICE_LONG_FROM)
    tail = 1e-15
    sums = L.LatticeSums(pi, rel0, [N, N + 1000], tail)
    miss = np.concatenate([ch["miss"] for ch in sums.chunks])
    assert np.all(miss <= tail / 2) and np.all(miss > 0)
