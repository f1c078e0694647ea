"""Negatively dependent flags (subset-exp's four groups) without the three-atom spread.

Every bound is held against an exact computation written here: the decomposed divergence given
``M`` by enumerating every multinomial count of the four groups (small ``N``), and by the exact
joint law of the two flag counts built by repeated 2-D convolution (``N`` up to a few hundred).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from shuffledp.accountants import best
from shuffledp.accountants.randomizers import standard as rz
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper import dependent_flags as df
from shuffledp.accountants.upper import hoeffding_flags as hf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _oracle_flags as OF  # noqa: E402


def _random_pair(rng, e):
    """Random negatively dependent blanket masses and the flag ratios of a randomizer with
    ``e^eps0 = e`` (u = v = (1, e) scaled so that the blanket's mean ratio is 1 / gamma)."""
    while True:
        w = rng.dirichlet(np.ones(4))
        if w[0] * w[1] > w[2] * w[3] * 1.2 and min(w) > 0.01:
            break
    u = (1.0, e)
    # gamma such that sum_g p_g = 1 under x: gamma * sum_g u_a w_g = 1
    gamma = 1.0 / (w[1] + w[3] + e * (w[0] + w[2]))
    return df.dependent_flag_pair(gamma, tuple(w), u, u)


def _exact_enum(pair, N: int, ee: float) -> float:
    """D_M (M = N - 1) by enumerating every count (n10, n01, n11, n00) of the N reports."""
    w10, w01, w11, w00 = pair.w
    (u0, u1), (v0, v1) = pair.u, pair.v
    total = 0.0
    lf = [math.lgamma(i + 1.0) for i in range(N + 1)]
    for a in range(N + 1):
        for b in range(N + 1 - a):
            for c in range(N + 1 - a - b):
                d = N - a - b - c
                logp = (lf[N] - lf[a] - lf[b] - lf[c] - lf[d] + a * math.log(w10) + b * math.log(w01)
                        + c * math.log(w11) + d * math.log(w00))
                A, B = a + c, b + c   # flag counts
                s = N * (u0 - ee * v0) + (u1 - u0) * A - ee * (v1 - v0) * B
                if s > 0:
                    total += math.exp(logp) * s
    return pair.gamma / N * total


def _exact_conv(pair, N: int, ee: float) -> float:
    """D_M from the exact joint law of the flag counts (A, B), one report at a time (2-D)."""
    w10, w01, w11, w00 = pair.w
    (u0, u1), (v0, v1) = pair.u, pair.v
    law = np.zeros((1, 1))
    law[0, 0] = 1.0
    for _ in range(N):
        nxt = np.zeros((law.shape[0] + 1, law.shape[1] + 1))
        nxt[:-1, :-1] += w00 * law
        nxt[1:, :-1] += w10 * law
        nxt[:-1, 1:] += w01 * law
        nxt[1:, 1:] += w11 * law
        law = nxt
    A = np.arange(N + 1)[:, None]
    B = np.arange(N + 1)[None, :]
    s = N * (u0 - ee * v0) + (u1 - u0) * A - ee * (v1 - v0) * B
    return pair.gamma / N * float(np.sum(law * np.maximum(s, 0.0)))


def test_mixture_matches_every_mass():
    rng = np.random.default_rng(3)
    for _ in range(50):
        pair = _random_pair(rng, 2.0)
        rho, a1, b1 = df._mixture(pair.w)
        q = 1.0 - rho
        rebuilt = (rho + q * a1 * (1 - b1), q * (1 - a1) * b1, q * a1 * b1, q * (1 - a1) * (1 - b1))
        assert np.allclose(rebuilt, pair.w, rtol=1e-12, atol=1e-15)
        assert 0 < rho < 1


@pytest.mark.parametrize("seed", range(6))
def test_brackets_exact_enumeration(seed):
    """upper >= exact >= lower at every N (several counts in one call, as the decomposition asks),
    several eps (incl. eps = 0); and each count alone within the chords' target of the exact value
    (with several counts the target is on their weighted total)."""
    rng = np.random.default_rng(seed)
    pair = _random_pair(rng, float(np.exp(rng.uniform(0.3, 3.0))))
    ms = np.array([0, 1, 2, 5, 11, 23], dtype=np.float64)
    for ee in (1.0, 1.05, 1.4, 3.0):
        exacts = [_exact_enum(pair, int(M) + 1, ee) for M in ms]
        # a wide tail makes narrow windows: the counts outside them are charged, not dropped
        for tail in (1e-14, 1e-4, 1e-2):
            up = df.dependent_flag_divergence(ms, pair.gamma, pair.w, pair.u, pair.v, ee, tail, upper=True)
            lo = df.dependent_flag_divergence(ms, pair.gamma, pair.w, pair.u, pair.v, ee, tail, upper=False)
            assert np.all(up >= np.array(exacts) * (1 - 1e-12) - 1e-300)
            assert np.all(lo <= np.array(exacts) * (1 + 1e-12) + 1e-300)
        for M, exact in zip(ms, exacts, strict=True):
            alone = df.dependent_flag_divergence([M], pair.gamma, pair.w, pair.u, pair.v, ee, 1e-14, upper=True)[0]
            assert exact * (1 - 1e-12) <= alone <= exact * (1 + df.TARGET) + 1e-12  # + the windows' charges


@pytest.mark.parametrize("N", [60, 150, 400])
def test_brackets_exact_joint_law(N):
    rng = np.random.default_rng(N)
    pair = _random_pair(rng, math.exp(1.0))
    for eps in (0.05, 0.2, 0.6):
        ee = math.exp(eps)
        up = df.dependent_flag_divergence([N - 1], pair.gamma, pair.w, pair.u, pair.v, ee, 1e-14, upper=True)[0]
        lo = df.dependent_flag_divergence([N - 1], pair.gamma, pair.w, pair.u, pair.v, ee, 1e-14, upper=False)[0]
        exact = _exact_conv(pair, N, ee)
        assert lo <= exact * (1 + 1e-10) <= up * (1 + 2e-10)
        # tight up to the windows' charges (tail 1e-14: absolute, they show at eps where D is ~0)
        assert up <= exact * (1 + df.TARGET) + 1e-12


def test_wrong_mixture_would_be_caught(monkeypatch):
    """A mutation check: with the point mass put on the wrong group ((0, 1) instead of (1, 0):
    the mixture then rebuilds other masses) the exact-enumeration bracket fails, so the tests
    above can fail."""
    rng = np.random.default_rng(11)
    while True:
        pair = _random_pair(rng, math.exp(2.0))
        if abs(pair.w[0] - pair.w[1]) > 0.1:
            break
    right = df._mixture
    monkeypatch.setattr(df, "_mixture", lambda w: right((w[1], w[0], w[2], w[3])))
    broken = 0
    for N in (6, 12, 24):
        for ee in (1.05, 1.4, 3.0):
            exact = _exact_enum(pair, N, ee)
            up = df.dependent_flag_divergence([N - 1], pair.gamma, pair.w, pair.u, pair.v, ee, 1e-14, upper=True)[0]
            lo = df.dependent_flag_divergence([N - 1], pair.gamma, pair.w, pair.u, pair.v, ee, 1e-14, upper=False)[0]
            broken += not (lo <= exact * (1 + 1e-12) and up >= exact * (1 - 1e-12))
    assert broken > 0


def _subset_pair(d, s, eps0):
    kw = best.mechanism_params("subset-exp", eps0, d=d, s=s)
    return rz.subset_exp_pairs(kw["d"], kw["s"], kw["k"], eps0)[0]


@pytest.mark.parametrize("d,s,eps0,n", [(17, 4, 0.5, 30), (50, 1, 1.0, 40), (200, 2, 0.5, 60)])
def test_subset_exp_within_optimum(d, s, eps0, n):
    """The decomposition with the dependent pair against the independent tabulation of the
    optimal decomposition (tests/_oracle_flags.py): at or above its lower end, within 0.3%
    (the three-atom spread was 0.9-1.8% above it at these points)."""
    g = _subset_pair(d, s, eps0)
    assert isinstance(g, df.DependentFlagPair)
    ours = dec.decomposition_eps(None, n, 1e-6, pairs=[g])
    spread = dec.decomposition_eps(None, n, 1e-6, pairs=[dec.GroupedPair(g.w, g.p, g.q, g.gamma)])
    ug = [g.p[i] / (g.gamma * g.w[i]) for i in range(2)]
    vg = [g.q[i] / (g.gamma * g.w[i]) for i in range(2)]
    lo, _ = OF.eps_bracket(g.w, (ug[1], ug[0]), (vg[0], vg[1]), g.gamma, n, 1e-6, ours, rel=1e-4, blocks=200,
                           ends="lower")
    assert ours >= lo
    assert ours <= lo * 1.003
    assert spread > ours * 1.004


def test_gates_fall_back_to_the_spread(monkeypatch):
    g = _subset_pair(200, 2, 0.5)
    ms = np.array([df.N_MAX], dtype=np.float64)   # N = N_MAX + 1 reports
    # above N_MAX the exact sums decline: Hoeffding's bound answers where it is cheap and adds less
    # variance than the spread, else the spread (None)
    hoeff = g.block_value(ms, np.ones(1), 1.01, 1e-14, upper=True)
    assert hoeff == max(hf.hoeffding_divergence(ms, g.gamma, w, u, v, 1.01, 1e-14)[0]
                        for w, u, v in (((g.w), g.u, g.v), ((g.w[1], g.w[0], g.w[2], g.w[3]), g.v, g.u)))
    monkeypatch.setattr(df, "H_CELLS_MAX", 0.0)
    assert g.block_value(ms, np.ones(1), 1.01, 1e-14, upper=True) is None
    # eps0 = 4: the subset meets both sets with probability 3e-4, the spread adds nothing
    g4 = _subset_pair(200, 2, 4.0)
    added, var = df._spread_added(g4, math.exp(2.2))
    assert added <= df.SPREAD_EXACT * var
    assert g4.block_value(np.arange(50.0), np.full(50, 0.02), math.exp(2.2), 1e-14, upper=True) is None
    # and the end-to-end answer is then the spread's
    plain = dec.GroupedPair(g4.w, g4.p, g4.q, g4.gamma)
    assert dec.decomposition_eps(None, 100, 1e-6, pairs=[g4]) <= dec.decomposition_eps(None, 100, 1e-6, pairs=[plain])


def test_positive_dependence_keeps_the_spread():
    """Overlapping victim sets can make the flags positively dependent: no point-mass mixture
    exists on (1, 0) then, and the pair stays a plain grouped pair."""
    kw = best.mechanism_params("subset-exp", 0.5, d=17, s=4)
    pairs = rz.subset_exp_pairs(kw["d"], kw["s"], kw["k"], 0.5)
    for g in pairs:
        if len(g.w) == 4 and not isinstance(g, df.DependentFlagPair):
            assert g.w[0] * g.w[1] <= g.w[2] * g.w[3]
    with pytest.raises(ValueError, match="not negatively dependent"):
        df.dependent_flag_pair(0.5, (0.1, 0.1, 0.4, 0.4), (1.0, 2.0), (1.0, 2.0))


def test_adaptive_counts_bracket_every_count():
    """Above SMALL_N reports the upper bound evaluates few blanket counts (cells charged at their
    first count): it lies above the lower side of every count evaluated, and within 2% of the
    upper side of every count evaluated (the cells' target is 0.3%)."""
    g = _subset_pair(50, 1, 1.0)
    n, ee = 2000, math.exp(0.075)
    pair = dec.DecomposedPair(None, n, pairs=[g], tail=1e-14)
    ms, wts = pair.m_upper, pair.block_w
    assert ms[0] + 1 > df.SMALL_N and ms.size > df.M_START
    ours = df._adaptive_counts(ms, wts, g._divergence(g.w, g.u, g.v, ee, 1e-14))
    every_up = df.dependent_flag_divergence(ms, g.gamma, g.w, g.u, g.v, ee, 1e-14, upper=True, weights=wts)
    every_lo = df.dependent_flag_divergence(pair.m_lower, g.gamma, g.w, g.u, g.v, ee, 1e-14, upper=False,
                                            weights=wts)
    assert float(np.dot(wts, every_lo)) <= ours <= float(np.dot(wts, every_up)) * 1.02
    # and the value the decomposition gets is this one
    assert g.block_value(ms, wts, ee, 1e-14, upper=True) == pytest.approx(ours, rel=1e-12)


def test_costly_evaluations_decline(monkeypatch):
    """At tiny delta every window widens: where an evaluation would pass CELLS_MAX cells the exact
    sums decline (Hoeffding's bound or the spread answers), above SMALL_N reports only."""
    monkeypatch.setattr(df, "H_CELLS_MAX", 0.0)
    g = _subset_pair(50, 1, 1.0)
    big = dec.DecomposedPair(None, 9000, pairs=[g], tail=1e-300)
    assert g.block_value(big.m_upper, big.block_w, math.exp(0.3), 1e-300, upper=True) is None
    small = dec.DecomposedPair(None, 200, pairs=[g], tail=1e-300)
    assert g.block_value(small.m_upper, small.block_w, math.exp(0.5), 1e-300, upper=True) is not None


# --------------------------------------------------------------------------- Hoeffding's bound
def _both_sides(pair):
    w10, w01, w11, w00 = pair.w
    return [(pair.w, pair.u, pair.v), ((w01, w10, w11, w00), pair.v, pair.u)]


def _side_pair(pair, w, u, v):
    """``pair`` seen from one side (for the exact law, which reads ``pair.w``, ``u``, ``v``)."""
    return df.dependent_flag_pair(pair.gamma, w, u, v)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hoeffding_bound_is_above_the_exact_joint_law(seed):
    """Random negatively dependent masses, every side, N from 2 to 150, eps from 0.01 to 2: the
    bound is at least the exact D_M from the 2-D joint law of the flag counts."""
    rng = np.random.default_rng(seed)
    for _ in range(8):
        pair = _random_pair(rng, float(rng.choice([1.5, 3.0, 8.0, 30.0])))
        for w, u, v in _both_sides(pair):
            side = _side_pair(pair, w, u, v)
            for N in (2, 5, 40, 150):
                for eps in (0.01, 0.1, 0.5, 2.0):
                    ee = math.exp(eps)
                    exact = _exact_conv(side, N, ee)
                    ours = hf.hoeffding_divergence([N - 1], side.gamma, w, u, v, ee, 1e-30)[0]
                    assert ours >= exact * (1.0 - 1e-12), (N, eps, ours, exact)


def test_ignoring_the_dependence_would_be_caught():
    """A mutation: the flags taken as independent with their marginal rates (the dependence
    dropped: negative dependence between A and B widens u - e^eps v) falls below the exact law
    somewhere, so the comparison above can fail."""
    from shuffledp.accountants.upper import flags

    pair = _subset_pair(50, 1, 1.0)
    w10, w01, w11, w00 = pair.w
    below = 0
    for N in (40, 150):
        for eps in (0.05, 0.2, 0.5):
            ee = math.exp(eps)
            wrong = flags.flag_divergence([N - 1], pair.gamma, w10 + w11, w01 + w11, pair.u, pair.v, ee, 1e-30,
                                          upper=True)[0]
            below += wrong < _exact_conv(pair, N, ee)
    assert below > 0


@pytest.mark.parametrize("d,s,eps0", [(50, 1, 1.0), (200, 2, 2.0)])
def test_hoeffding_bound_near_the_exact_sums(d, s, eps0):
    """At 3000 reports, against the exact sums (both sides): never below their lower side, within
    1% of their upper side where delta is 1e-6 or more (Hoeffding adds (a0 - a1)^2 of variance
    per report there, about 4e-4 of it)."""
    g = _subset_pair(d, s, eps0)
    ms = np.array([2999.0])
    for eps in (0.03, 0.06, 0.1):
        ee = math.exp(eps)
        for w, u, v in _both_sides(g):
            ours = hf.hoeffding_divergence(ms, g.gamma, w, u, v, ee, 1e-14)[0]
            lo = df.dependent_flag_divergence(ms, g.gamma, w, u, v, ee, 1e-14, upper=False)[0]
            up = df.dependent_flag_divergence(ms, g.gamma, w, u, v, ee, 1e-14, upper=True)[0]
            assert ours >= lo
            if up >= 1e-6:
                assert ours <= up * 1.01, (eps, ours, up)


def test_hoeffding_answers_where_the_exact_sums_decline(monkeypatch):
    """d = 50, s = 1, eps0 = 1, n = 1e4, delta = 1e-50 (the exact sums pass CELLS_MAX): within 0.05%
    of the exact sums forced to run, and the spread (Hoeffding switched off) is 0.9% above."""
    g = _subset_pair(50, 1, 1.0)
    ours = dec.decomposition_eps(None, 10_000, 1e-50, pairs=[g])
    monkeypatch.setattr(df, "H_CELLS_MAX", 0.0)
    spread = dec.decomposition_eps(None, 10_000, 1e-50, pairs=[g])
    monkeypatch.setattr(df, "N_MAX", 10 ** 9)
    monkeypatch.setattr(df, "CELLS_MAX", 1e12)
    exact = dec.decomposition_eps(None, 10_000, 1e-50, pairs=[g])
    assert ours <= exact * 1.0005
    assert spread >= ours * 1.009


def test_table_cache_overflow_keeps_every_key(monkeypatch):
    """When the table cache overflows mid-query it is cleared: every count the call needs must
    then be built again (a KeyError here once ended a long search at n = 3e4, delta = 1e-200)."""
    monkeypatch.setattr(df, "TABLE_CACHE", 4)
    df._TABLES.clear()
    first = df._tables_for(np.array([100.0, 101.0, 102.0]), 0.2, 0.3, 1e-14)
    both = df._tables_for(np.array([100.0, 103.0, 104.0]), 0.2, 0.3, 1e-14)  # 3 + 2 > 4: cleared
    assert len(both) == 3 and both[0][0] == first[0][0]
    assert np.array_equal(both[0][1], first[0][1])
    df._TABLES.clear()


def test_jensen_lower_side_below_the_exact_joint_law():
    """Where Hoeffding's bound answers, the lower side is Jensen's: below the exact D_M (random
    masses, both sides, N 2-150) and below Hoeffding's upper bound, so delta_lower <= delta."""
    rng = np.random.default_rng(4)
    for _ in range(8):
        pair = _random_pair(rng, float(rng.choice([1.5, 3.0, 8.0])))
        for w, u, v in _both_sides(pair):
            side = _side_pair(pair, w, u, v)
            for N in (2, 40, 150):
                for eps in (0.01, 0.1, 0.5):
                    ee = math.exp(eps)
                    low = hf.jensen_lower([N - 1], side.gamma, w, u, v, ee, 1e-30)[0]
                    assert low <= _exact_conv(side, N, ee) * (1.0 + 1e-12)
                    assert low <= hf.hoeffding_divergence([N - 1], side.gamma, w, u, v, ee, 1e-30)[0]
    g = _subset_pair(50, 1, 1.0)
    pair = dec.DecomposedPair(None, 10 ** 4, pairs=[g])
    for eps in (0.02, 0.05):
        assert 0.0 < pair.delta_lower(eps) <= pair.delta(eps)
