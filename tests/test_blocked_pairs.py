"""The blocked third-input lower bounds (shuffledp.accountants.lower.blocked_pairs): never above the exact
divergence of their pair (exact enumeration, the exact third-flag tabulation), equal to it where
the blocks are single counts, below every registered upper bound up to n = 1e15, at least the
published lower bound at Su, Cheng and Wang's OUE point, and the binomial tolerance they charge
above scipy's measured error."""

from __future__ import annotations

import math

import _oracle_decomposition as O
import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants import best, registry
from shuffledp.accountants.lower import blocked_pairs as bp
from shuffledp.accountants.lower import lower_bounds as lbm
from shuffledp.accountants.lower import third_flag as tf
from shuffledp.accountants.numerics import binomial_blocks
from shuffledp.accountants.upper import decomposition as dec

RATES = [("oue", 0.7, {}), ("oue", 2.5, {}), ("olh", 1.0, {"g": 2}), ("olh", 2.5, {"g": 3})]


@pytest.mark.parametrize("mech,eps0,kw", RATES)
@pytest.mark.parametrize("n", [2, 5])
def test_full_pair_equals_exact_enumeration_at_small_n(mech, eps0, kw, n):
    """Single-count blocks: the blocked value is the pair's exact divergence up to the allowances,
    and never above it (oracle: the histogram of n reports enumerated)."""
    mat = O.oue_matrix(3, eps0) if mech == "oue" else O.olh_matrix(3, kw["g"], eps0)
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    pair = bp.third_input_pair(n, r, s)
    for eps in (0.0, 0.1 * eps0, 0.4 * eps0):
        exact = O.exact_shuffle_delta(mat, 0, 1, [2] * (n - 1), eps)
        low = bp.blocked_delta(pair, eps)
        assert exact * (1 - 1e-8) - 1e-15 <= low <= exact, (eps, exact, low)


@pytest.mark.parametrize("mech,eps0,kw", RATES)
@pytest.mark.parametrize("n", [300, 3000])
def test_full_pair_below_and_near_the_exact_tabulation(mech, eps0, kw, n):
    """Where the exact third-flag tabulation is affordable: never above it (beyond its own 1e-9
    allowance) and within 10% of it in delta (the blocks' Jensen loss, largest in the far tail)."""
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    pair = bp.third_input_pair(n, r, s)
    exact = tf.ThirdFlagPair(n, r, s, tail=1e-15)
    for eps in (0.05 * eps0, 0.15 * eps0):
        ex = exact.delta(eps)
        low = bp.blocked_delta(pair, eps)
        assert low <= ex * (1 + 1e-8) + 1e-300, (eps, ex, low)
        if ex > 1e-12:
            assert low >= 0.9 * ex, (eps, ex, low)


@pytest.mark.parametrize("mech,eps0,kw", [("oue", 4.0, {}), ("olh", 1.0, {"g": 2})])
def test_eps_within_half_a_percent_of_the_exact_tabulation(mech, eps0, kw):
    """n = 2000, delta = 1e-6: the blocked eps is below the exact tabulation's eps and within 2% of
    it (what the blocks cost where they matter; measured 0.1-1.1%)."""
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    ex = tf.third_flag_lower_eps(2000, r, s, 1e-6, eps0, rtol=1e-6)
    low = bp.blocked_lower_eps(lambda t: bp.third_input_pair(2000, r, s, t), 1e-6, eps0, rtol=1e-6)
    assert 0.98 * ex <= low <= ex * (1 + 1e-5), (ex, low)


def _krr_brute(k: int, eps0: float, n: int, eps: float) -> float:
    """Exact divergence of the pair (victim at 0 or 1, others at 2) by the oracle's enumeration."""
    mat = dec.krr_matrix(k, eps0)
    return O.exact_shuffle_delta(mat, 0, 1, [2] * (n - 1), eps)


@pytest.mark.parametrize("k,eps0,n", [(3, 1.0, 6), (5, 2.0, 5), (10, 8.0, 4)])
def test_krr_pair_equals_exact_enumeration(k, eps0, n):
    pair = bp.krr_pair(k, eps0, n)
    for eps in (0.0, 0.3 * eps0, 0.9 * eps0):
        exact = _krr_brute(k, eps0, n, eps)
        low = bp.blocked_delta(pair, eps)
        assert exact * (1 - 1e-8) - 1e-15 <= low <= exact, (eps, exact, low)


@pytest.mark.parametrize("k,eps0", [(3, 1.0), (10, 2.0), (100, 4.0)])
def test_krr_blocks_lose_little(k, eps0):
    """n = 2e4, delta = 1e-6: the blocked eps is at most the single-count evaluation's (every block
    one count: the pair's exact value up to the allowances) and within 1.5% of it (measured
    0.2-0.9%)."""
    n = 20_000

    def fine(tail):
        return bp.BlockedPair(bp.krr_third_pair(k, eps0, n), tail, m_blocks=10**6, b_blocks=10**6)

    b = bp.blocked_lower_eps(lambda t: bp.krr_pair(k, eps0, n, t), 1e-6, eps0, rtol=1e-6)
    f = bp.blocked_lower_eps(fine, 1e-6, eps0, rtol=1e-6)
    assert 0.985 * f <= b <= f * (1 + 1e-5), (b, f)


def test_never_above_the_exact_enumeration_points():
    """The contract test's exact points (every configuration of the others enumerated)."""
    eps0, n, delta = 1.5, 4, 0.02
    exact = bp.blocked_lower_eps  # the search's verified point
    r, s = tf.third_flag_rates("oue", eps0)
    low = exact(lambda tail: bp.third_input_pair(n, r, s, tail), delta, eps0, rtol=1e-6)
    mat = O.oue_matrix(3, eps0)
    worst = O.worst_shuffle_delta(mat, n, [low])[0][0]
    assert 0 < low and worst > delta   # the mechanism is not (low, delta)-DP
    low_k = bp.blocked_lower_eps(lambda tail: bp.krr_pair(3, 2.0, 5, tail), 1e-3, 2.0, rtol=1e-6)
    assert 0 < low_k and _krr_brute(3, 2.0, 5, low_k) > 1e-3


def test_published_oue_point():
    """OUE, n = 1e4, eps0 = 4, delta = 1e-6: at least Su, Cheng and Wang's published lower bound
    0.2390 (arXiv 2504.07414), computed here (not pasted), and below the upper bound."""
    res = best.best_eps("oue", 4.0, 10_000, 1e-6, d=10, parallel=False)
    third = res["bounds"]["third-input-blocked"]["eps"]
    assert third >= 0.2390
    assert res["eps_lower"] >= third and third <= res["eps"]


GRID_N = [10**3, 10**6, 10**9, 10**12, 10**15]
GRID = [("krr", {"k": 10}), ("krr", {"k": 3}), ("general", {}), ("oue", {"d": 10}), ("olh", {"domain": 3}),
        ("olh", {"g": 2, "domain": 3})]  # OLH over >= 3 input values: the third input exists


@pytest.mark.parametrize("mech,p", GRID)
@pytest.mark.parametrize("eps0", [0.5, 8.0])
def test_below_every_registered_upper_bound_up_to_1e15(mech, p, eps0):
    acc = registry.get("third-input-blocked")
    for n in GRID_N:
        low = acc.eps_for_delta(mech, eps0, n, 1e-6, rtol=1e-4, **p)
        ups = best.upper_bounds(mech, eps0, n, 1e-6, rtol=1e-4, **p)
        names = [nm for nm in ups if registry.get(nm).cost == "fixed"]
        top = min(ups[nm]() for nm in names)
        assert 0.0 <= low <= top * (1 + 1e-9), (n, low, top)


def test_delta_for_eps_is_consistent_with_eps_for_delta():
    acc = registry.get("third-input-blocked")
    for mech, p in (("oue", {"d": 10}), ("krr", {"k": 10})):
        e = acc.eps_for_delta(mech, 2.0, 10**7, 1e-6, **p)
        assert e > 0
        assert acc.delta_for_eps(mech, 2.0, 10**7, e, **p) > 1e-6 * (1 - 1e-9)
        assert acc.delta_for_eps(mech, 2.0, 10**7, 2.0 * e, **p) < 1e-6


def test_scarf_upper_is_above_the_exact_pair():
    """The search skips eps where Scarf's mean-variance bound is below delta: it must be an upper
    bound of the pair's true divergence."""
    r, s = tf.third_flag_rates("oue", 1.0)
    pair = bp.third_input_pair(5, r, s)
    mat = O.oue_matrix(3, 1.0)
    for eps in (0.0, 0.2, 0.6):
        assert bp.scarf_upper(pair.atoms, 5, math.exp(eps)) >= O.exact_shuffle_delta(mat, 0, 1, [2] * 4, eps)


def _mp_pmf(k, N, p):
    k, N, p = mp.mpf(k), mp.mpf(N), mp.mpf(p)
    return mp.exp(mp.loggamma(N + 1) - mp.loggamma(k + 1) - mp.loggamma(N - k + 1) + k * mp.log(p)
                  + (N - k) * mp.log1p(-p))


def test_binomial_tolerance_covers_scipys_error():
    """scipy's binomial pmf against a 50-digit log-space evaluation (n up to 1e15, out to 36
    standard deviations), and its survival function against an mpmath tail sum: the relative
    error stays below the tolerance the lower bounds charge (lower_bounds.binom_rtol), and that
    tolerance is not slack by more than a factor 1e4 at n = 1e15 (the measured error is real)."""
    mp.mp.dps = 50
    worst_ratio, big = 0.0, 0.0
    for N, p in ((1e15, 0.5), (1e15, 0.018), (1e13, 0.5), (1e12, 0.3), (1e9, 0.5), (1e6, 0.3)):
        sd = math.sqrt(N * p * (1 - p))
        for z in (-36, -9, -1, 3, 20, 36):
            k = math.floor(N * p + z * sd)
            exact = _mp_pmf(k, N, p)
            rel = float(abs(mp.mpf(float(stats.binom.pmf(k, N, p))) - exact) / exact)
            worst_ratio = max(worst_ratio, rel / float(lbm.binom_rtol(N, p)))
            if N == 1e15:
                big = max(big, rel)
    assert worst_ratio < 1.0, worst_ratio
    assert big > 1e-4 * float(lbm.binom_rtol(1e15, 0.5))
    N, p = 1e15, 1e-10            # sd = 316: the tail sum is short enough for mpmath
    sd = math.sqrt(N * p)
    for z in (0.5, 3.0, 8.0):
        k = math.floor(N * p + z * sd)
        term, total, j = _mp_pmf(k + 1, N, p), mp.mpf(0), k + 1
        while term > total * mp.mpf(10) ** -30:
            total += term
            term *= (mp.mpf(N) - j) * p / ((j + 1) * (1 - mp.mpf(p)))
            j += 1
        rel = float(abs(mp.mpf(float(stats.binom.sf(k, N, p))) - total) / total)
        assert rel < float(lbm.binom_rtol(N, p)), (z, rel)


def test_block_means_bracket_the_exact_conditional_means():
    """The log-concavity bracket of a block's mean holds the exact mean (summed directly)."""
    for N, p, edges in ((1000, 0.3, [250, 260, 290, 300, 301, 340]),
                        (10**6, 0.02, [19000, 19400, 19900, 20000, 20700])):
        _, _, mean, err = binomial_blocks.block_stats(np.array(edges, float), float(N), p)
        for i, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            ks = np.arange(a, b)
            w = stats.binom.pmf(ks, N, p)
            assert abs(np.dot(ks, w) / w.sum() - mean[i]) <= err[i] + 1e-9


def test_same_input_same_bits():
    r, s = tf.third_flag_rates("olh", 3.0, g=8)
    one = bp.blocked_lower_eps(lambda t: bp.third_input_pair(10**9, r, s, t), 1e-8, 3.0)
    two = bp.blocked_lower_eps(lambda t: bp.third_input_pair(10**9, r, s, t), 1e-8, 3.0)
    assert one == two > 0


def test_small_variance_window_end_is_the_exact_tail_quantile():
    """`_window`'s upper end where N p (1 - p) < 1 (found by bisection, a few scalar sfs) is the
    smallest k + 1 with Pr[X > k] <= tail, as a scan over every count gives it."""
    import math

    import numpy as np
    from scipy import stats

    from shuffledp.accountants.lower import blocked_pairs as bp
    from shuffledp.accountants.numerics.grouped import bernstein_half_width as _bernstein_half_width

    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(200):
        N = float(int(10 ** rng.uniform(0, 7)))
        p = 10 ** rng.uniform(-9, 0) * min(1.0, 1.0 / N)
        tail = 10 ** rng.uniform(-300, -3)
        if N * p * (1 - p) >= 1:
            continue
        ks = np.arange(0.0, min(N, math.ceil(N * p + float(_bernstein_half_width(N, p, 2 * tail)))) + 1.0)
        sf = stats.binom.sf(ks, N, p)
        assert sf[-1] <= tail
        assert bp._window(N, p, tail)[1] == min(N, float(ks[np.argmax(sf <= tail)]) + 1.0)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("mech,eps0,n,delta,kw", [
    ("oue", 7.422, 318, 2.66e-258, {"d": 393394}),
    ("krr", 0.133, 152, 2.9e-225, {"k": 824641}),
    ("oue", 22.755, 1169, 2.64e-281, {"d": 560}),
])
def test_extreme_tails_print_no_quantile_warning(mech, eps0, n, delta, kw):
    """Boost's quantile search fails at tails like 1e-280 ("Unable to bracket root"): the windows
    of the lower bounds no longer ask it there, and nothing is printed."""
    import warnings

    from shuffledp.accountants import best

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = best.best_eps(mech, eps0, n, delta, parallel=False, **kw)
    assert 0.0 <= res["eps_lower"] <= res["eps"] <= eps0


@pytest.mark.parametrize("k, eps0, n, tail", [(10, 4.0, 10**4, 1e-9), (100, 0.5, 1000, 1e-12),
                                              (10, 2.0, 10**7, 1e-12), (10, 8.0, 1000, 1e-9),
                                              (3, 0.3, 50, 1e-12), (4, 6.0, 200, 1e-12)])
def test_blocks_of_every_row_at_once_give_the_same_bits(k, eps0, n, tail, monkeypatch):
    """The rows of X_B blocks built with one scipy call per function over all rows
    (``BlockedPair._b_rows``: the windows' quantiles, the blocks' tails and pmfs) equal, bit for
    bit, the rows built one by one (``_b_row``), and so does the pair's delta (the last setting
    has rows of both window kinds: the quantile search and the scan of small variances)."""
    new = bp.krr_pair(k, eps0, n, tail)
    monkeypatch.setattr(bp.BlockedPair, "_b_rows",
                        lambda self, nbs, tail, b: [self._b_row(nb, tail, b) for nb in nbs])
    old = bp.krr_pair(k, eps0, n, tail)
    for name in ("b_mass", "b_err", "b_mean", "b_mean_err"):
        assert getattr(new, name).tobytes() == getattr(old, name).tobytes(), name
    ees = [math.exp(e) for e in np.linspace(0.05, eps0, 5)]
    assert [new.delta(ee) for ee in ees] == [old.delta(ee) for ee in ees]


@pytest.mark.parametrize("c", [0.7, -1.3])
def test_hockey_cell_once_per_distinct_cell_gives_the_same_bits(c, monkeypatch):
    """``_hockey_cell`` with its scipy terms evaluated once per distinct (threshold, N) cell and
    spread back equals the evaluation at every cell bit for bit, on both signs of ``c`` (upper and
    lower tail), with repeated cells, broadcast counts and thresholds beyond both ends."""
    rng = np.random.default_rng(3)
    N = rng.integers(1, 400, size=(30, 1)).astype(float)
    T = c * np.round(rng.uniform(-5, 420, size=(30, 40)) / 3.0) * 3.0 + 0.25
    T[:, :10] = T[:, :1]                   # repeated cells along a row
    t_err = np.full(T.shape, 1e-12)
    for p in (0.013, 0.5, 0.97):
        got = bp._hockey_cell(c, N, p, T, t_err)
        with monkeypatch.context() as m:
            m.setattr(bp, "_cell_groups", lambda v, n: None)
            want = bp._hockey_cell(c, N, p, T, t_err)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_zero_padded_rows_are_the_padded_arrays():
    """BlockedPair's rows of blocks, zero-padded to one width: the arrays np.pad row by row gives."""
    from shuffledp.accountants.lower.blocked_pairs import _zero_padded

    rows = [np.array([0.5, 0.25, 1e-300]), np.array([2.0]), np.arange(5, dtype=float) / 3, np.array([-0.0, 7.0])]
    width = max(len(r) for r in rows)
    want = np.array([np.pad(r, (0, width - len(r))) for r in rows])
    got = _zero_padded(rows)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
