"""The blocked three-group walk (shuffledp.accountants.numerics.walk_blocks): its conditional function is
convex, its upper bound is never below the exact decomposed divergence (multinomial enumeration,
the per-t sums) and within its refinement target above it, and at blanket-draw counts up to 1e15
it is finite, fast and non-increasing in the count."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants import best
from shuffledp.accountants.numerics import grouped as grp
from shuffledp.accountants.numerics import secant as sec
from shuffledp.accountants.numerics import walk_blocks as wb
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper import dependent_flags

RNG_SEED = 20261126


def _random_pairs(count: int):
    """Three-group pairs with random blanket weights and victim rows (fixed seed)."""
    rng = np.random.default_rng(RNG_SEED)
    out = []
    for _ in range(count):
        w = rng.dirichlet(np.ones(3))
        p = rng.dirichlet(np.ones(3))
        q = rng.dirichlet(np.ones(3))
        out.append(dec.GroupedPair(tuple(w), tuple(p), tuple(q), 0.5))
    return out


def _enumerated(pair, N: int, ee: float) -> float:
    """``E[(sum_g z_g H_g)_+] / N`` by summing the multinomial law of the group counts."""
    w, p, q = (np.asarray(x, dtype=float) for x in (pair.w, pair.p, pair.q))
    z = (p - ee * q) / w
    h1, h2 = np.meshgrid(np.arange(N + 1.0), np.arange(N + 1.0), indexing="ij")
    ok = h1 + h2 <= N
    h3 = np.where(ok, N - h1 - h2, 0.0)
    pmf = np.where(ok, stats.multinomial.pmf(np.stack([h1, h2, h3], -1), N, w), 0.0)
    return float(np.sum(pmf * np.maximum(z[0] * h1 + z[1] * h2 + z[2] * h3, 0.0))) / N


def _per_t(pair, ms, ee: float):
    """The decomposition's per-t sums (every t of a window; ``upper=False``: minus its allowances)."""
    s = pair.w[0] + pair.w[1]
    table = grp.CountTable(ms, s, 1e-30)
    return (grp.divergence_given_count(table, pair, pair.w[0] / s, ee, upper=True),
            grp.divergence_given_count(table, pair, pair.w[0] / s, ee, upper=False))


def test_conditional_function_is_convex():
    """F(j) = E[(S)_+ | J = j] with J the count of the largest coefficient's group: second
    differences never below minus their charged errors (the soundness of every chord)."""
    for pair in _random_pairs(12):
        for ee in (1.0, 1.3, 4.0):
            wk = wb.walk_of(pair.w, pair.p, pair.q, ee)
            if wk is None:
                continue
            N = 400.0
            j = np.arange(N + 1.0)
            F, err = wb._edge_values(j, np.full(j.size, N), wk)
            second = F[2:] - 2.0 * F[1:-1] + F[:-2]
            slack = err[2:] + 2.0 * err[1:-1] + err[:-2] + 1e-12 * np.max(F)
            assert np.all(second >= -slack)


def test_matches_enumeration_at_small_n():
    """upper >= the enumerated divergence >= lower, and the two sides within the target."""
    for pair in _random_pairs(10):
        for ee in (1.0, 1.2, 3.0):
            for N in (5, 40, 120):
                exact = _enumerated(pair, N, ee)
                up, lo = wb.walk_divergence([N - 1], pair, ee)
                assert up[0] >= exact * (1.0 - 1e-12) - 1e-300
                assert lo[0] <= exact * (1.0 + 1e-12) + 1e-300
                assert up[0] <= exact * (1.0 + 2.0 * wb.TARGET) + 1e-290


@pytest.mark.parametrize("k", [2, 3, 10, 100])
def test_krr_against_per_t_sums(k):
    """k-RR: never below the exact per-t sums, within 2x the target above them where they are
    not dominated by their own window charge (1e-30)."""
    for eps0 in (0.5, 2.0, 8.0):
        pair = dec.krr_pairs(k, eps0)[0]
        for M in (10**3, 10**5, 2 * 10**6):
            ms = np.array([M, M + 17])
            for eps in (0.003, 0.02, 0.1, 0.3):
                ee = math.exp(eps)
                up, lo = wb.walk_divergence(ms, pair, ee)
                ex_up, ex_lo = _per_t(pair, ms, ee)
                assert np.all(up >= ex_lo)
                assert np.all(lo <= ex_up)
                big = ex_up > 1e-25
                assert np.all(up[big] <= ex_up[big] * (1.0 + 2.0 * wb.TARGET))


def _pairs_for(mechanism: str, eps0: float, **kw):
    return best.grouped_pairs_for(mechanism, eps0, best.mechanism_params(mechanism, eps0, **kw))


@pytest.mark.parametrize("mechanism,kw", [("subset-exp", {"d": 100, "s": 4}), ("oue", {"d": 16}),
                                          ("subset-exp", {"d": 20, "s": 3})])
def test_spreads_and_alt_through_the_dispatch(monkeypatch, mechanism, kw):
    """subset-exp's spreads and OUE's alternative blanket, evaluated by the walk (forced) and by
    every t, on the same blanket-draw counts: the walk's bound at least the per-t lower side, within
    2x the target of the per-t value."""
    monkeypatch.setattr(dec, "WALK_ROWS", 10**6)
    monkeypatch.setattr(dependent_flags, "H_CELLS_MAX", 0.0)  # subset-exp's dependent flags: spreads too
    for eps0 in (0.5, 2.0, 8.0):
        pairs = _pairs_for(mechanism, eps0, **kw)
        for eps in (0.01, 0.05, 0.2):
            exact = dec.DecomposedPair(None, 10**4, pairs=pairs)
            ex, ex_lo = exact.delta(eps), exact.delta_lower(eps)
            monkeypatch.setattr(dec, "WALK_WIDTH", 0.0)
            walked = dec.DecomposedPair(None, 10**4, pairs=pairs).delta(eps)
            monkeypatch.setattr(dec, "WALK_WIDTH", 3000)
            assert walked >= ex_lo
            assert walked <= ex * (1.0 + 2.0 * wb.TARGET) + 1e-28


@pytest.mark.parametrize("delta", [1e-6, 1e-12])
def test_eps_within_1e3_of_every_t(monkeypatch, delta):
    """The shuffled eps through the walk: at least the per-t answer (up to its search tolerance),
    at most 1e-3 relative above it."""
    for k, eps0, n in ((10, 0.5, 10**5), (10, 2.0, 10**6), (2, 8.0, 10**5), (100, 4.0, 10**6)):
        pairs = dec.krr_pairs(k, eps0)
        exact = dec.decomposition_eps(None, n, delta, pairs=pairs)
        monkeypatch.setattr(dec, "WALK_WIDTH", 0.0)
        walked = dec.decomposition_eps(None, n, delta, pairs=pairs)
        monkeypatch.setattr(dec, "WALK_WIDTH", 3000)
        assert exact * (1.0 - 2e-5) <= walked <= exact * (1.0 + 1e-3)


@pytest.mark.parametrize("M", [10**9, 10**12, 10**15])
def test_huge_counts_finite_fast_and_monotone(M):
    """At 1e9..1e15 blanket draws: finite, lower <= upper within a few targets, non-increasing in
    M (one more blanket draw is a post-processing), each count in well under a second."""
    for k, eps0, scale in ((10, 2.0, 1.0), (2, 0.5, 1.0), (100, 8.0, 1.0)):
        pair = dec.krr_pairs(k, eps0)[0]
        ms = np.floor(M * (1.0 + np.array([0.0, 1e-6, 1e-4, 1e-2])))
        # an eps where the divergence is about 1e-8: the leading-order shuffled eps of k-RR
        eps = sec.asymptotic_guess(k, eps0, M, 1e-8) * scale
        for ee in (math.exp(eps * 0.8), math.exp(eps)):
            t0 = time.perf_counter()
            up, lo = wb.walk_divergence(ms, pair, ee)
            assert time.perf_counter() - t0 < 4.0
            assert np.all(np.isfinite(up)) and np.all(up <= 1.0) and np.all(lo >= 0.0)
            assert np.all(lo <= up) and np.all(up - lo <= 1e-2 * up + 1e-290)
            assert np.all(np.diff(up) <= 1e-2 * up[1:])
            assert np.all(lo[1:] <= up[:-1])


def test_end_to_end_krr_at_1e9():
    """The decomposition through the walk at n = 1e9 (k-RR k = 10): at least every registered lower
    bound that answers at this n, at most every other upper bound (with a 1e-3 allowance)."""
    n, delta = 10**9, 1e-6
    for eps0 in (0.5, 2.0, 8.0):
        walked = dec.decomposition_eps(None, n, delta, pairs=dec.krr_pairs(10, eps0))
        lows = best.lower_bounds("krr", eps0, n, delta, k=10)
        for name, fn in lows.items():
            assert walked >= fn() * (1.0 - 1e-6), name
        ups = best.upper_bounds("krr", eps0, n, delta, k=10)
        other = min(fn() for name, fn in ups.items() if name != "decomposition")
        assert walked <= other * (1.0 + 1e-3)
