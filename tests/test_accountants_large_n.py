"""The decomposition of flag pairs (OUE, OLH, MHM) at any n: chord blocks of the B count, blocks of
the blanket count M without enumeration, binomial errors charged (accountants.flags,
accountants.decomposition; docs/accountants_internals.md, "Large n")."""

from __future__ import annotations

import math
import time

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants import best, registry
from shuffledp.accountants.lower import lower_bounds as lbm
from shuffledp.accountants.randomizers import standard as rz
from shuffledp.accountants.randomizers.mhm import mhm_pairs
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper import flags


def _pairs(name: str):
    if name == "oue-1":
        return rz.oue_pairs(100, 1.0)
    if name == "oue-8":
        return rz.oue_pairs(100, 8.0)
    if name == "olh-default":
        return rz.olh_pairs(rz.olh_default_g(2.0), 2.0)
    if name == "olh-g2":
        return rz.olh_pairs(2, 1.0)
    params = best.mechanism_params("mhm", 3.0, d=5)
    return mhm_pairs(params["d"], params["g"], 3.0)


PAIRS = ["oue-1", "oue-8", "olh-default", "olh-g2", "mhm-5"]


def _forced(monkeypatch, blocked: bool):
    monkeypatch.setattr(flags, "B_EXACT_MAX", 0 if blocked else 10**12)


@pytest.mark.parametrize("name", PAIRS)
@pytest.mark.parametrize("N", [10**3, 10**4, 10**5, 10**6])
def test_chord_blocks_never_below_the_exact_sum(monkeypatch, name, N):
    """At every eps of a grid the chord-blocked value (forced, even where the window is short) is
    at least the term-by-term sum (up to the order of summation), and within 1e-2 of it where
    delta is above 1e-14."""
    g = _pairs(name)[0]
    ms, w = np.array([float(N)]), np.array([1.0])
    fa = flags.FlagPair.block_value
    worst = 0.0
    for eps in np.linspace(0.002, 2.0, 25):
        ee = math.exp(eps)
        _forced(monkeypatch, False)
        exact = fa(g, ms, w, ee, 1e-30, upper=True)
        _forced(monkeypatch, True)
        blocked = fa(g, ms, w, ee, 1e-30, upper=True)
        assert blocked >= exact * (1 - 1e-12), (eps, blocked, exact)  # both rounded up; 1e-12: summation order
        if exact > 1e-14:
            worst = max(worst, blocked / exact - 1.0)
    assert worst < 1e-2, worst


@pytest.mark.parametrize("name", PAIRS)
@pytest.mark.parametrize("n", [10**4, 10**6])
@pytest.mark.parametrize("delta", [1e-6, 1e-12])
def test_chord_blocks_within_1e3_eps_wise(monkeypatch, name, n, delta):
    """The eps found with chord blocks is at least, and within 1e-3 relative of, the eps found
    with the exact B sums (same M blocks)."""
    out = []
    for blocked in (False, True):
        _forced(monkeypatch, blocked)
        out.append(dec.decomposition_eps(None, n, delta, pairs=_pairs(name), max_blocks=16))
    exact, blocked = out
    assert exact > 0
    assert exact * (1 - 1e-5) <= blocked <= exact * (1 + 1e-3), (exact, blocked)


def test_m_blocks_at_huge_n_bracket_the_enumerated_law():
    """Above M_ENUM_MAX the blanket count is cut into cdf-difference blocks: the masses add up to
    the window's (within the charged error), every block's mass is rounded up, and the blocks
    cover the window with no gap."""
    n, gam = 10**13, 0.4
    w, m_up, m_lo, outside = dec._m_law(n - 1, gam, 1e-20, 32, rz.olh_pairs(2, 1.0))
    assert m_up.size <= 32 and np.all(m_up[1:] == m_lo[:-1] + 1.0)
    assert 1.0 <= w.sum() + outside <= 1.0 + 1e-6
    mid = (m_up + m_lo) / 2
    approx = stats.norm.cdf(m_lo + 0.5, n * gam, math.sqrt(n * gam * (1 - gam))) - stats.norm.cdf(
        m_up - 0.5, n * gam, math.sqrt(n * gam * (1 - gam)))
    assert np.all(w >= approx - 1e-3), (mid, w, approx)


def test_no_quantile_search_warning_at_eps0_30(recwarn):
    """The windows are closed forms (Bernstein): no 'Unable to bracket root' from binom.ppf."""
    registry.get("decomposition").eps_for_delta("oue", 30.0, 10**9, 1e-6, d=100)
    assert not [w for w in recwarn if "bracket" in str(w.message)]


@pytest.mark.parametrize("mech,kw", [("oue", {"d": 100}), ("olh", {}), ("mhm", {"d": 5})])
def test_at_1e15_finite_fast_above_every_lower_bound(mech, kw):
    eps0, n, delta = 30.0, 10**15, 1e-6
    start = time.perf_counter()
    up = registry.get("decomposition").eps_for_delta(mech, eps0, n, delta, **kw)
    assert time.perf_counter() - start < 10.0  # under 2 s on an idle core; the margin is for shared CPUs
    assert math.isfinite(up) and 0 < up < eps0
    for name, fn in best.lower_bounds(mech, eps0, n, delta, **kw).items():
        assert fn() <= up, name


@pytest.mark.parametrize("mech,eps0,kw", [("oue", 8.0, {"d": 100}), ("oue", 30.0, {"d": 100}),
                                          ("olh", 2.0, {"g": 2}), ("mhm", 30.0, {"d": 2})])
def test_monotone_in_n_up_to_1e15(mech, eps0, kw):
    acc = registry.get("decomposition")
    vals = [acc.eps_for_delta(mech, eps0, 10**e, 1e-6, **kw) for e in range(3, 16, 2)]
    assert all(b <= a for a, b in zip(vals, vals[1:], strict=False)), vals
    assert vals[-1] < vals[0]


def _mp_pmf(k, N, p):
    k, N = mp.mpf(k), mp.mpf(N)
    return mp.exp(mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1)
                  + k * mp.log(p) + (N - k) * mp.log1p(-p))


def _mp_sf(k, N, p):
    """Pr[Bin(N, p) >= k] by summing the pmf (short tails only: sd in the hundreds)."""
    term, total, j = _mp_pmf(k, N, p), mp.mpf(0), k
    while term > total * mp.mpf(10) ** -30:
        total += term
        term *= (mp.mpf(N) - j) * p / ((j + 1) * (1 - mp.mpf(p)))
        j += 1
    return total


def test_binomial_terms_within_the_charged_tolerance():
    """The pmf and the betainc tail of flags._tail_terms at N = 1e12 and 1e15, against 50-digit
    mpmath: relative errors below lower_bounds.binom_rtol, the tolerance flags charges."""
    mp.mp.dps = 50
    for N, p in ((1e12, 0.38), (1e15, 0.38), (1e15, 0.5), (1e12, 3e-8), (1e15, 1e-10)):
        sd = math.sqrt(N * p * (1 - p))
        for z in (-12, -3, 0.5, 3, 12):
            k = float(math.floor(N * p + z * sd))
            pmf, sf = flags._tail_terms(N, np.array([k]), p)
            exact = _mp_pmf(k, N, p)
            assert float(abs(mp.mpf(float(pmf[0])) - exact) / exact) < float(lbm.binom_rtol(N, p)), (N, p, z)
            if sd < 1000 and z > 0:
                exact_sf = _mp_sf(int(k), N, p)
                rel = float(abs(mp.mpf(float(sf[0])) - exact_sf) / exact_sf)
                assert rel < float(lbm.binom_rtol(N, p)), (N, p, z, rel)


def test_block_masses_within_the_charged_tolerance():
    """decomposition._block_masses rounds every block's mass up: at N = 1e15 (p small enough
    for an mpmath tail sum) each is at least the exact mass, and not above it by more than the
    tolerance of its two tails."""
    mp.mp.dps = 50
    N, p = 1e15, 1e-10
    mean, sd = N * p, math.sqrt(N * p)
    edges = np.round(mean + sd * np.array([-3.0, -1.0, 1.0, 2.0, 4.0, 7.0]))
    got = dec._block_masses(edges, N, p)
    tol = float(lbm.binom_rtol(N, p))
    for a, b, m in zip(edges[:-1], edges[1:], got, strict=True):
        sa, sb = _mp_sf(int(a), N, p), _mp_sf(int(b), N, p)
        assert sa - sb <= mp.mpf(float(m)) <= sa - sb + 3 * tol * (sa + sb + 1), (a, b)
