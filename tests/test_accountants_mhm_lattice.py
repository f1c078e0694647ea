"""The lattice evaluation of MHM's all-attributes-differ pair (accountants.lattice_sums, mhm_randomizer).

Checked against the independent oracle ``_oracle_mhm`` (every count vector of the true ratio
levels) and ``_oracle_decomposition`` (every count vector of every pair's groups): the upper bound
is above the exact optimum, within 0.5% of it at the gap benchmark's points, and the spread it
evaluates is a mean-preserving spread of the true law.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import _oracle_mhm as OM
import numpy as np
import pytest
from _mhm_optimum import optimum_delta

from shuffledp.accountants.numerics import lattice_sums as L
from shuffledp.accountants.randomizers import mhm as M
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper.blanket import mhm_domain


def _flags_only(d, g, eps0):
    pair = M.mhm_pairs(d, g, eps0)[0]
    object.__setattr__(pair, "lattice", None)
    return [pair]


@pytest.mark.parametrize("d,eps0", [(2, 0.5), (5, 1.0), (8, 2.0), (16, 0.5)])
def test_lattice_law_is_a_mean_preserving_spread_of_the_true_law(d, eps0):
    g = mhm_domain(eps0, d)
    pi, rel0, h = M.mhm_lattice_law(d, g, eps0)
    levels, probs, _ = OM.ratio_law(d, g, eps0)
    lat = 1.0 + h * np.arange(pi.size)
    assert pi.sum() == pytest.approx(1.0, abs=1e-13) and 0 < rel0 < 1e-12
    assert float(np.dot(pi, lat)) == pytest.approx(float(np.dot(probs, levels)), rel=1e-13)
    # convex order: E(X - k)_+ of the spread >= the true one at every k (the kinks: both supports)
    for k in np.concatenate([levels, lat]):
        true = float(np.dot(probs, np.maximum(levels - k, 0.0)))
        assert float(np.dot(pi, np.maximum(lat - k, 0.0))) >= true - 1e-13
    # every true level lies within one lattice step of where its mass went (little added variance)
    added = float(np.dot(pi, lat ** 2) - np.dot(probs, levels ** 2))
    assert 0.0 <= added <= 0.25 * h * h + 1e-12


@pytest.mark.parametrize("d,eps0,n", [(2, 0.5, 3), (2, 1.0, 4), (2, 2.0, 6), (3, 0.7, 3), (3, 1.5, 4)])
def test_upper_is_above_the_exact_optimum_of_every_pair(d, eps0, n):
    g = mhm_domain(eps0, d)
    pairs = M.mhm_pairs(d, g, eps0)
    for eps in (0.02, 0.2, 0.6):
        up = dec.decomposition_delta(None, n, eps, pairs=pairs)
        opt = optimum_delta(d, g, eps0, n, eps)
        assert opt * (1 - 1e-12) <= up <= opt * 1.05 + 1e-15, (eps, up, opt)


@pytest.mark.parametrize("d,eps0", [(2, 0.5), (5, 0.5), (5, 2.0), (8, 1.0)])
def test_upper_is_above_the_all_differ_pair_at_moderate_n(d, eps0):
    """Blocks of M and windows in play (the oracle enumerates every count vector). Tight to 5% in
    delta even at delta ~ 1e-10, where the spread's extra tail weighs most."""
    g = mhm_domain(eps0, d)
    n = {2: 40, 5: 30, 8: 14}[d]
    pairs = M.mhm_pairs(d, g, eps0)
    for eps in (0.05, 0.3):
        up = dec.decomposition_delta(None, n, eps, pairs=pairs)
        exact = OM.all_differ_delta(d, g, eps0, n, eps)
        assert exact * (1 - 1e-12) <= up <= exact * 1.05, (eps, up, exact)


@pytest.mark.parametrize("d,eps0", [(2, 0.5), (2, 1.0), (5, 0.5), (8, 0.5)])
def test_eps_within_half_a_percent_of_the_optimum_at_the_benchmark_points(d, eps0):
    n, delta = 12, 1e-3
    g = mhm_domain(eps0, d)
    acc = dec.decomposition_eps(None, n, delta, pairs=M.mhm_pairs(d, g, eps0), rtol=1e-7)
    # the optimum's eps brackets: every pair at d = 2; the m = d pair (a lower bound on it) beyond
    full = d <= 2

    def opt(eps):
        return optimum_delta(d, g, eps0, n, eps) if full else OM.all_differ_delta(d, g, eps0, n, eps)

    assert opt(acc) <= delta  # sound: the optimum's eps is at most the accountant's
    assert opt(acc / 1.005) > delta  # tight: the optimum's eps is above acc / 1.005
    old = dec.decomposition_eps(None, n, delta, pairs=_flags_only(d, g, eps0), rtol=1e-7)
    assert acc < old / 1.03  # the two-level flags were > 3% above here


def test_lattice_is_used_and_tighter_than_the_flags_at_n_1000():
    d, eps0, n = 5, 0.5, 1000
    g = mhm_domain(eps0, d)
    pairs = M.mhm_pairs(d, g, eps0)
    for eps in (0.03, 0.05):
        lat = dec.decomposition_delta(None, n, eps, pairs=pairs)
        flag = dec.decomposition_delta(None, n, eps, pairs=_flags_only(d, g, eps0))
        assert lat < 0.8 * flag
    assert any(v[0] is not None for v in pairs[0].cache.values())


def test_sums_match_direct_enumeration_of_the_lattice_law():
    """LatticeSums on a small pmf equals E[(U - e^eps V)_+] enumerated, upper above, lower below."""
    rng = np.random.default_rng(2511)
    pi = rng.uniform(0.0, 1.0, size=6) ** 2
    pi[[1, 3]] = 0.0
    pi /= pi.sum()
    h, gamma = 0.3, 0.7
    ns = [1, 2, 5, 9]
    for tail in (1e-30, 1e-4):  # the second drops mass: the charge must keep the upper bound above
        sums = L.LatticeSums(pi, 1e-15, ns, tail)
        for ee in (1.0, 1.1, 1.6):
            up = sums.divergence(gamma, h, 1.0 + h * 5, ee, upper=True)
            low = sums.divergence(gamma, h, 1.0 + h * 5, ee, upper=False)
            for i, N in enumerate(ns):
                vals, p = OM._sum_law(1.0 + h * np.arange(6.0), pi, N)
                exact = gamma / N * OM.plus_expectation(vals, p, vals, p, ee)
                assert low[i] <= exact * (1 + 1e-12) + 1e-300
                assert up[i] >= exact * (1 - 1e-12)
                if tail < 1e-20:
                    assert up[i] <= exact * (1 + 1e-7) + 1e-15  # the allowances: about 1e-8


def test_cost_no_longer_grows_with_n_and_the_lattice_answers_where_it_fell_back():
    """d = 16, n = 4e4 was above the budget of the uncoarsened laws (the flags answered): the
    coarsened laws' cost is bounded in n, and the lattice answers below the flags."""
    d, eps0 = 16, 2.0
    g = mhm_domain(eps0, d)
    pi = M.mhm_lattice_law(d, g, eps0)[0]
    assert L.lattice_cost(pi, [10 ** 15 - 300, 10 ** 15], 1e-300) < L.LATTICE_BUDGET
    pairs = M.mhm_pairs(d, g, eps0)
    up = dec.decomposition_delta(None, 40000, 0.05, pairs=pairs)
    assert all(v[0] is not None for v in pairs[0].cache.values())
    assert up < dec.decomposition_delta(None, 40000, 0.05, pairs=_flags_only(d, g, eps0))


def test_bad_input_is_one_clear_error():
    with pytest.raises(ValueError, match="pmf"):
        L.LatticeSums(np.array([0.5, -0.1, 0.6]), 0.0, [1], 1e-10)
    with pytest.raises(ValueError, match="increasing"):
        L.LatticeSums(np.array([0.5, 0.5]), 0.0, [3, 2], 1e-10)


@pytest.mark.parametrize("d,eps0", [(3, 1.0), (5, 0.5), (8, 2.0)])
def test_shared_attribute_pairs_are_below_the_lattice_pair_in_icx_order(d, eps0):
    """The m < d pairs are covered by the lattice pair's value (one-sided: not the reverse)."""
    g = mhm_domain(eps0, d)
    pair = M.mhm_pairs(d, g, eps0)[0]
    ref = pair.lattice[3]
    for other in pair.others:
        for eps in (0.01, 0.1, 0.5 * eps0):
            ee = math.exp(eps)
            assert M.icx_below(other, ref, ee)
            assert not M.icx_below(ref, other, ee)


def test_fewer_evaluated_counts_stay_above_every_count_evaluated(monkeypatch):
    """n = 5000: not every count is evaluated; the others take the value of the count below them,
    which is larger (D_M non-increasing in M), and not much larger."""
    d, eps0, n = 2, 1.0, 5000
    g = mhm_domain(eps0, d)
    pairs = M.mhm_pairs(d, g, eps0)
    dp = dec.DecomposedPair(None, n, pairs=pairs)
    sub = M._evaluated_counts(dp.m_upper.astype(np.int64), pairs[0].gamma)
    assert sub.size < 0.9 * dp.m_upper.size
    coarse = [dp.delta(eps) for eps in (0.02, 0.06)]
    monkeypatch.setattr(M, "LATTICE_PER_SD", 1e9)
    full_pairs = M.mhm_pairs(d, g, eps0)
    full_dp = dec.DecomposedPair(None, n, pairs=full_pairs)
    assert M._evaluated_counts(full_dp.m_upper.astype(np.int64), pairs[0].gamma).size == full_dp.m_upper.size
    for eps, c in zip((0.02, 0.06), coarse, strict=True):
        full = full_dp.delta(eps)
        assert full <= c <= 1.05 * full, (eps, c, full)

def test_chord_ends_stay_above_the_exact_sum(monkeypatch):
    """S' taken at chord ends (wide buckets forced): still above the enumerated value, and the
    lower side (every S') below it."""
    monkeypatch.setattr(L, "CHORD_PER_SD", 2.0)
    rng = np.random.default_rng(2512)
    pi = rng.uniform(0.0, 1.0, size=7) ** 2
    pi /= pi.sum()
    h, gamma, ns = 0.25, 0.6, [6, 10]
    sums = L.LatticeSums(pi, 1e-15, ns, 1e-30)
    assert any(int(ch["klocal"].size) < int(ch["size"].sum()) for ch in sums.chunks)  # buckets wider than 1
    for ee in (1.0, 1.2):
        up = sums.divergence(gamma, h, 1.0 + h * 6, ee, upper=True)
        low = sums.divergence(gamma, h, 1.0 + h * 6, ee, upper=False)
        for i, N in enumerate(ns):
            vals, p = OM._sum_law(1.0 + h * np.arange(7.0), pi, N)
            exact = gamma / N * OM.plus_expectation(vals, p, vals, p, ee)
            assert low[i] <= exact * (1 + 1e-12) <= up[i] * (1 + 2e-12)
            assert up[i] <= exact * 1.1  # buckets of about sd / 2 here: looser than the default


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([str(Path(__file__))]))


def test_chord_ends_built_without_a_sort_match_the_sorted_construction():
    """_chord's bucket ends are built sorted and distinct and each point's bucket by integer
    division: the same ends, widths and weights, bit for bit, as the construction through
    numpy.unique and searchsorted it replaced, on random laws of every scale of spread."""
    import math

    from shuffledp.accountants.numerics import lattice_sums as L

    def sorted_construction(p, s, s0):
        sd = math.sqrt(max(float(np.dot(p, (s - s0) ** 2) / max(p.sum(), 1e-300)), 0.0))
        width = 2 ** max(int(math.floor(math.log2(max(sd / L.CHORD_PER_SD, 1.0)))), 0)
        ends = np.unique(np.append(np.arange(0, p.size, width), p.size - 1))
        i = np.arange(p.size)
        k = np.searchsorted(ends, i, side="right") - 1
        k1 = np.minimum(k + 1, ends.size - 1)
        span = (ends[k1] - ends[k]).astype(np.float64)
        lam = np.where(span > 0, (ends[k1] - i) / np.where(span > 0, span, 1.0), 1.0)
        wts = np.bincount(k, weights=p * lam, minlength=ends.size) + np.bincount(
            k1, weights=p * (1.0 - lam), minlength=ends.size)
        return ends, wts, width

    rng = np.random.default_rng(2)
    widths = set()
    for trial in range(400):
        size = int(rng.integers(1, 3000))
        p = rng.random(size)
        s = np.arange(size, dtype=np.float64) * 10 ** rng.uniform(-2, 4)
        s0 = float(rng.uniform(0.0, s[-1] + 1.0))
        want, got = sorted_construction(p, s, s0), L._chord(p, s, s0)
        assert got[2] == want[2] and got[0].dtype == want[0].dtype, trial
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes(), trial
        widths.add(got[2])
    assert len(widths) > 5   # buckets of many widths were exercised
