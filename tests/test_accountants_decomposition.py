"""The blanket-decomposition accountant against independent computations.

* an exact enumerator of the shuffled histogram (written here, by convolution of the users'
  output distributions) over every configuration of the other users' values, k = 2..5;
* a direct enumeration of the decomposed pair (victim + Bin(n-1, gamma) blanket draws, full
  histogram) that the accountant claims to compute exactly;
* the exact real-pair lower bound at large n;
* a property sweep (hypothesis): sound, monotone in n and delta, finite or a clean error.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from shuffledp.accountants.lower import exact_pairs as xp
from shuffledp.accountants.upper import decomposition as D


# ----------------------------------------------------------------------------- enumerators
def _histogram_pmf(rows) -> dict:
    """Exact pmf of the histogram of independent reports, one output distribution per user."""
    k = len(rows[0])
    pmf = {tuple([0] * k): 1.0}
    for row in rows:
        nxt: dict = defaultdict(float)
        for h, pr in pmf.items():
            for y, py in enumerate(row):
                if py > 0:
                    hh = list(h)
                    hh[y] += 1
                    nxt[tuple(hh)] += pr * py
        pmf = nxt
    return pmf


def _hockey(p: dict, q: dict, eps: float) -> float:
    ee = math.exp(eps)
    keys = set(p) | set(q)
    return sum(max(p.get(h, 0.0) - ee * q.get(h, 0.0), 0.0) for h in keys)


def _exact_worst(mat: np.ndarray, n: int, eps: float) -> float:
    """max over victim pairs (x, x') and every multiset of the others' values of the exact
    shuffled divergence (both directions)."""
    k = mat.shape[0]
    worst = 0.0
    for others in itertools.combinations_with_replacement(range(k), n - 1):
        rows = [mat[v] for v in others]
        for x, x2 in itertools.permutations(range(k), 2):
            p = _histogram_pmf(rows + [mat[x]])
            q = _histogram_pmf(rows + [mat[x2]])
            worst = max(worst, _hockey(p, q, eps))
    return worst


def _decomposed_enumerated(mat: np.ndarray, n: int, eps: float) -> float:
    """The decomposed pair by brute force: sum_M Bin(M; n-1, gamma) D(victim + M blanket draws)."""
    omega, gamma = D.blanket_of(mat)
    blanket = omega / gamma
    worst = 0.0
    for x, x2 in itertools.permutations(range(mat.shape[0]), 2):
        tot = 0.0
        for m in range(n):
            w = stats.binom.pmf(m, n - 1, gamma)
            rows = [blanket] * m
            tot += w * _hockey(_histogram_pmf(rows + [mat[x]]), _histogram_pmf(rows + [mat[x2]]), eps)
        worst = max(worst, tot)
    return worst


# ----------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("k,n,eps0", [(2, 6, 1.0), (3, 6, 1.5), (4, 5, 1.0), (5, 4, 2.0), (3, 8, 0.7)])
def test_decomposed_pair_equals_brute_force(k, n, eps0):
    mat = D.krr_matrix(k, eps0)
    for eps in (0.0, 0.1, 0.3, 0.8):
        want = _decomposed_enumerated(mat, n, eps)
        pair = D.DecomposedPair(mat, n)
        up, lo = pair.delta(eps), pair.delta_lower(eps)
        # n <= 16 blocks: no grouping of M; upper = exact + allowances (tail 1e-30, 1e-10 rel)
        assert up >= want
        assert up <= want * (1 + 1e-8) + 1e-25
        assert lo <= want * (1 + 1e-12)
        assert lo >= want * (1 - 1e-8) - 1e-25


def test_asymmetric_binary_randomizer_against_brute_force():
    mat = np.array([[0.7, 0.3], [0.2, 0.8]])
    for n in (3, 6):
        pair = D.DecomposedPair(mat, n)
        for eps in (0.05, 0.4):
            want = _decomposed_enumerated(mat, n, eps)
            assert want <= pair.delta(eps) <= want * (1 + 1e-8) + 1e-25
            # and the decomposition is an upper bound on every real neighbouring pair
            assert _exact_worst(mat, n, eps) <= pair.delta(eps)


@pytest.mark.parametrize("k,n,eps0", [(2, 5, 1.0), (3, 5, 1.0), (4, 5, 1.5), (5, 4, 1.0)])
def test_sound_against_exact_enumeration_of_every_configuration(k, n, eps0):
    mat = D.krr_matrix(k, eps0)
    pair = D.DecomposedPair(None, n, pairs=D.krr_pairs(k, eps0))
    for eps in (0.0, 0.1, 0.6):
        exact = _exact_worst(mat, n, eps)
        lower, _ = xp.krr_pair_lower_delta(k, eps0, n, eps)
        assert lower <= exact * (1 + 1e-9) + 1e-300
        assert exact <= pair.delta(eps)
        if k >= 3 and eps <= 0.1:
            # k >= 3, small eps: the decomposition meets the worst real pair (others all at a
            # third value) even at this tiny n. At larger eps it does not (e.g. k = 5, n = 4,
            # eps = 0.6: 0.020896 vs 0.017699), and the worst configuration can be a mix that
            # the lower-bound search does not try (k = 3, n = 5, eps = 0.6).
            assert pair.delta(eps) <= exact * (1 + 1e-6)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_pair_lower_is_exact_for_sufficient_configurations(k):
    """Others all at x (any k) or all at a third value (k = 3): the group counts are sufficient,
    so pair_delta equals the enumerated divergence of that very pair."""
    n, eps0 = 5, 1.2
    mat = D.krr_matrix(k, eps0)
    vic_p, vic_q, configs = xp._krr_configs(k, eps0)
    cases = [("others_at_x", 0)] + ([("others_at_third", 2)] if k == 3 else [])
    for name, v in cases:
        rows = [mat[v]] * (n - 1)
        p = _histogram_pmf(rows + [mat[0]])
        q = _histogram_pmf(rows + [mat[1]])
        for eps in (0.05, 0.3):
            want = max(_hockey(p, q, eps), _hockey(q, p, eps))
            got = xp.pair_delta(eps, n, vic_p, vic_q, configs[name])
            assert got == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_grouping_of_a_matrix():
    assert D.grouped_pairs(D.krr_matrix(5, 1.3))[0].p == pytest.approx(D.krr_pairs(5, 1.3)[0].p)
    assert len(D.grouped_pairs(D.krr_matrix(7, 0.4))) == 1  # all pairs equivalent
    oue_like = np.array([[0.5, 0.2, 0.2, 0.1], [0.2, 0.5, 0.1, 0.2], [0.1, 0.2, 0.5, 0.2]])
    # four likelihood-ratio groups: accepted now (the spread reduction), every ordered pair kept
    many = D.grouped_pairs(oue_like)
    assert many and all(len(g.w) == 4 for g in many)
    with pytest.raises(ValueError, match="empty blanket"):
        D.grouped_pairs(np.array([[1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="sum to 1"):
        D.blanket_of(np.array([[0.5, 0.6], [0.5, 0.5]]))


# ----------------------------------------------------------------------------- large n
@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 10_000), (10, 2.0, 10_000), (100, 4.0, 100_000)])
def test_large_n_upper_meets_exact_pair_lower(k, eps0, n):
    """At large n the upper bound and the exact real pair (others at a third value) agree to
    well under 1% in eps; the upper is never below."""
    delta = 1e-6
    lo, which = xp.krr_pair_lower_eps(k, eps0, n, delta, rtol=1e-6)
    up = D.decomposition_eps(None, n, delta, pairs=D.krr_pairs(k, eps0), guess=lo, rtol=1e-6)
    assert which == "others_at_third"
    assert lo <= up <= lo * 1.01
    # the same windows as the search (tail = 1e-3 rtol delta): its eps is a verified point
    pair = D.DecomposedPair(None, n, pairs=D.krr_pairs(k, eps0), tail=1e-3 * 1e-6 * delta)
    assert pair.delta(up) <= delta
    # divergences at one eps: upper >= exact pair
    vic_p, vic_q, configs = xp._krr_configs(k, eps0)
    e = 0.9 * lo
    assert xp.pair_delta(e, n, vic_p, vic_q, configs["others_at_third"]) <= pair.delta(e)


def test_eps_search_returns_verified_point_without_guess():
    pairs = D.krr_pairs(10, 1.0)
    e1 = D.decomposition_eps(None, 5000, 1e-6, pairs=pairs)
    lo, _ = xp.krr_pair_lower_eps(10, 1.0, 5000, 1e-6)
    e2 = D.decomposition_eps(None, 5000, 1e-6, pairs=pairs, guess=lo)
    assert e1 == pytest.approx(e2, rel=1e-4)
    pair = D.DecomposedPair(None, 5000, pairs=pairs, tail=1e-3 * 1e-5 * 1e-6)
    assert pair.delta(e1) <= 1e-6 and pair.delta(e2) <= 1e-6


def test_clean_errors():
    with pytest.raises(ValueError, match="k must be"):
        D.krr_pairs(1, 1.0)
    with pytest.raises(ValueError, match="eps0"):
        D.krr_pairs(3, -1.0)
    with pytest.raises(ValueError, match="n must be"):
        D.DecomposedPair(None, 1, pairs=D.krr_pairs(3, 1.0))
    with pytest.raises(ValueError, match="delta"):
        D.decomposition_eps(None, 100, 1.5, pairs=D.krr_pairs(3, 1.0))
    with pytest.raises(ValueError, match="eps must be"):
        D.DecomposedPair(None, 100, pairs=D.krr_pairs(3, 1.0)).delta(float("nan"))


# ----------------------------------------------------------------------------- property sweep
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 60), eps0=st.floats(0.2, 6.0), logn=st.floats(1.5, 4.5),
       logdelta=st.floats(-9.0, -3.0))
def test_property_sound_and_monotone(k, eps0, logn, logdelta):
    n = int(10 ** logn)
    delta = 10 ** logdelta
    pairs = D.krr_pairs(k, eps0)
    lo, _ = xp.krr_pair_lower_eps(k, eps0, n, delta)
    up = D.decomposition_eps(None, n, delta, pairs=pairs, guess=lo)
    assert math.isfinite(up) and 0 <= lo <= up <= eps0 * (1 + 1e-12)
    # monotone: more users or a larger delta never increase the certified eps (up to rtol)
    up_n = D.decomposition_eps(None, 2 * n, delta, pairs=pairs, guess=lo)
    up_d = D.decomposition_eps(None, n, min(0.5, 4 * delta), pairs=pairs, guess=lo)
    assert up_n <= up * (1 + 1e-4) + 1e-12
    assert up_d <= up * (1 + 1e-4) + 1e-12


@pytest.mark.parametrize("k, eps0, n", [(3, 1.0, 60), (10, 2.0, 400), (4, 0.5, 300)])
def test_tabulated_region_terms_give_the_same_numbers(k, eps0, n, monkeypatch):
    """A count table asked about one split again and again tabulates the region terms
    (``CountTable.region_lookup``: an eps search or a privacy profile evaluates one pair at many
    eps): the divergence at every eps and on both sides equals, bit for bit, the one computed
    term by term with no table."""
    from shuffledp.accountants.numerics import grouped as G

    g = D.krr_pairs(k, eps0)[0]
    s = g.w[0] + g.w[1]
    ms = np.unique(np.round(np.geomspace(1.0, n, 40))) - 1.0   # as many counts as the blanket's blocks
    ees = [math.exp(e) for e in np.linspace(0.0, eps0, 11)]

    def values(table):
        return [x for ee in ees for upper in (True, False)
                for x in G.divergence_given_count(table, g, g.w[0] / s, ee, upper=upper).tolist()]

    with monkeypatch.context() as m:
        m.setattr(G, "TABLE_AFTER", 10**9)
        fresh = values(G.CountTable(ms, s, 1e-12))
    monkeypatch.setattr(G, "TABLE_PAYBACK", 0.0)   # tabulated at the 4th evaluation, whatever it saves
    table = G.CountTable(ms, s, 1e-12)
    first, again = values(table), values(table)
    assert table._terms, "the table was never built (the repeated evaluations must use it)"
    assert first == fresh and again == fresh



def _cell_by_cell_terms(t, a0, pi, mid, neg, up):
    """The region terms evaluated at every cell on its own (the definition)."""
    from scipy import special

    from shuffledp.accountants.numerics import grouped as G

    pis, cpis = np.full(t.shape, pi), np.full(t.shape, 1.0 - pi)
    return (G._on(mid & up, special.betainc, a0, t - a0, pis), G._on(mid & neg, special.betainc, t - a0, a0, cpis),
            G._on(up, G._pmf, a0 - 1.0, t - 1.0, pis), G._on(neg, G._pmf, a0, t - 1.0, pis))


@pytest.mark.parametrize("t_top", [3, 300, 10**7])   # dense keys; dense; numpy.unique
def test_region_terms_once_per_distinct_pair_give_every_cells_numbers(t_top):
    """The region terms are evaluated once per distinct (t, a0) of a direction and read back into
    every cell: bit for bit the numbers of the cell-by-cell evaluation, on random grids with
    repeated and unrepeated pairs, both directions, thresholds at and beyond the ends."""
    from shuffledp.accountants.numerics import grouped as G

    rng = np.random.default_rng(t_top)
    for trial in range(40):
        shape = (int(rng.integers(1, 40)), int(rng.integers(1, 60)))
        t = rng.integers(0, t_top + 1, shape).astype(float)
        a0 = np.clip(np.floor(rng.random(shape) * (t + 3.0)) - 1.0, -1.0, t + 1.0)
        if trial % 2:
            a0 = np.minimum(a0, 4.0)   # many cells share their pair
        neg = rng.random(shape) < 0.4
        up = ~neg
        mid = (a0 >= 1.0) & (a0 <= t - 1.0)
        pi = float(rng.uniform(0.01, 0.99))
        tally = [0]
        got = G._region_terms(t, a0, pi, mid, neg, up, tally)
        want = _cell_by_cell_terms(t, a0, pi, mid, neg, up)
        assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True)), trial
        assert 0 < tally[0] <= t.size


def test_chernoff_ends_both_at_once_match_one_at_a_time():
    """chernoff_ends bisects the lower and the upper end in one array: the same numbers as one end
    at a time (the loop it replaced), on random counts, probabilities and tails."""
    import math

    from shuffledp.accountants.numerics import grouped as G

    def one_at_a_time(N, s, tail):
        N = np.asarray(N, dtype=np.float64)
        L = math.log(2.0 / tail)
        ls, l1s = math.log(s), math.log1p(-s)

        def excess(a):
            kl = (np.where(a > 0, a * (np.log(np.maximum(a, 1e-300)) - ls), 0.0)
                  + np.where(a < 1, (1.0 - a) * (np.log1p(-np.minimum(a, 1.0)) - l1s), -l1s))
            return N * kl - L

        ends = []
        with np.errstate(divide="ignore", invalid="ignore"):
            for far in (0.0, 1.0):
                near_a, far_a = np.full(N.shape, s), np.full(N.shape, far)
                for _ in range(60):
                    mid = 0.5 * (near_a + far_a)
                    inside = excess(mid) < 0.0
                    near_a, far_a = np.where(inside, mid, near_a), np.where(inside, far_a, mid)
                ends.append(far_a * N)
        return np.floor(ends[0]), np.ceil(ends[1])

    rng = np.random.default_rng(7)
    for trial in range(60):
        N = np.floor(10 ** rng.uniform(0, rng.uniform(1, 15), int(rng.integers(1, 400))))
        s, tail = float(10 ** rng.uniform(-12, 0)) * 0.999, float(10 ** rng.uniform(-300, -3))
        got, want = G.chernoff_ends(N, s, tail), one_at_a_time(N, s, tail)
        assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True)), trial


def test_a_split_evaluated_often_enough_gets_its_table():
    """Rent or buy: a count table evaluates a split's terms pair by pair until they add up to
    TABLE_PAYBACK times the table's cells, then tabulates them (and reads the same numbers)."""
    from shuffledp.accountants.numerics import grouped as G

    g = D.krr_pairs(10, 2.0)[0]
    s = g.w[0] + g.w[1]
    ms = np.unique(np.round(np.geomspace(1.0, 300, 40))) - 1.0
    table = G.CountTable(ms, s, 1e-12)
    fresh = G.CountTable(ms, s, 1e-12)
    for e in np.linspace(0.0, 2.0, 400):
        got = G.divergence_given_count(table, g, g.w[0] / s, math.exp(e), upper=True)
        if table._terms:
            break
        assert table._spent[g.w[0] / s][0] > 0
    assert table._terms, "never tabulated"
    again = G.divergence_given_count(table, g, g.w[0] / s, math.exp(e), upper=True)
    assert got.tobytes() == again.tobytes()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(G, "TABLE_AFTER", 10**9)
        assert again.tobytes() == G.divergence_given_count(fresh, g, g.w[0] / s, math.exp(e), upper=True).tobytes()


@pytest.mark.parametrize("k, eps0, n", [(3, 1.0, 60), (10, 2.0, 400), (4, 0.5, 3000)])
def test_region_terms_once_per_distinct_cell_give_the_same_numbers(k, eps0, n, monkeypatch):
    """The region terms evaluated once per distinct ``(t, a0)`` and spread back over the cells
    (``grouped._on`` with groups: the rows of a count table share most cells) equal, bit for bit,
    the terms evaluated at every cell, on both directions of the threshold and both sides."""
    from shuffledp.accountants.numerics import grouped as G

    ms = np.unique(np.round(np.geomspace(1.0, n, 40))) - 1.0
    ees = [math.exp(e) for e in np.linspace(0.0, eps0, 7)]
    pairs = list(D.krr_pairs(k, eps0)) + [G.swapped_pair(g) for g in D.krr_pairs(k, eps0)]
    pairs.append(G.GroupedPair((0.2, 0.3, 0.5), (0.3, 0.1, 0.6), (0.1, 0.35, 0.55), 0.9))
    seen = {"dn": 0, "up": 0}
    real_terms = G._region_terms

    def counting(t, a0, pi, mid, neg, up, **kw):
        seen["dn"] += int(np.sum(neg & mid))
        seen["up"] += int(np.sum(up & mid))
        return real_terms(t, a0, pi, mid, neg, up, **kw)

    def values():
        out = []
        for g in pairs:
            s = g.w[0] + g.w[1]
            table = G.CountTable(ms, s, 1e-12)
            out += [x for ee in ees for upper in (True, False)
                    for x in G.divergence_given_count(table, g, g.w[0] / s, ee, upper=upper).tolist()]
        return out

    monkeypatch.setattr(G, "TABLE_AFTER", 10**9)  # no tabulation: every evaluation computes its terms
    monkeypatch.setattr(G, "_region_terms", counting)
    deduped = values()
    assert seen["up"] > 0 and seen["dn"] > 0, "both threshold directions must be exercised"
    monkeypatch.setattr(G, "_region_terms", lambda *a, **kw: real_terms(*a, **{**kw, "dedupe": False}))
    assert values() == deduped


def test_one_signed_slope_path_gives_the_general_paths_bits():
    """The per-count sums through :mod:`numerics.count_sums` (a slope of one sign, the count
    table's eps-free arrays kept in ``memo``) equal, bit for bit, the general code (no memo), on
    random pairs, tables (rows from 0: empty and flat cells), eps, both slope signs, both sides."""
    from shuffledp.accountants.numerics import grouped as G

    rng = np.random.default_rng(11)
    signs = set()
    for trial in range(40):
        w, p, q = (rng.dirichlet(np.ones(3)) for _ in range(3))
        s, pi = float(w[0] + w[1]), float(w[0] / (w[0] + w[1]))
        n = int(10 ** rng.uniform(0.5, 3.5))
        first = 0 if trial % 3 == 0 else max(0, n // 2 - 20)
        table = G.CountTable(np.arange(first, n // 2 + int(rng.integers(1, 40)), dtype=float), s,
                             float(10 ** rng.uniform(-30, -8)))
        memo: dict = {}
        for ee in (1.0, 1.3, 3.0, 20.0):
            signs.add((p[0] - ee * q[0]) / pi - (p[1] - ee * q[1]) / (1.0 - pi) > 0)
            for upper in (True, False):
                fast = G._per_t(table.t, table.Bt1, table.Bt, pi, tuple(p), tuple(q), ee, upper=upper, memo=memo)
                slow = G._per_t(table.t, table.Bt1, table.Bt, pi, tuple(p), tuple(q), ee, upper=upper)
                assert fast.tobytes() == slow.tobytes(), (trial, ee, upper)
    assert signs == {True, False}
