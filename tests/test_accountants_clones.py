"""Clones bound (FMT21 numerical and closed form, FMT23) held against independent computations.

Independent references used here:
* exact enumeration of the shuffled output of binary and 3-ary randomized response (small n);
* brute-force enumeration of the clone pair (P, Q) as explicit two-dimensional pmfs;
* the authors' public code (apple/ml-shuffling-amplification, commit of the stored snapshot,
  run in /tmp by the acct-clones helper on 2026-11-22): its example and a grid of brackets.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants.upper import clones as C
from shuffledp.cli import main

# --------------------------------------------------------------------------- exact references


def rr_shuffled_pair(eps0: float, n: int, ones_among_others: int):
    """Exact pmfs of the number of 1s after shuffling binary RR reports.

    The other n-1 users hold ``ones_among_others`` ones; the differing user holds 1 (P) or 0 (Q).
    """
    p = math.exp(eps0) / (math.exp(eps0) + 1)
    k = ones_among_others
    a = stats.binom.pmf(np.arange(k + 1), k, p)
    b = stats.binom.pmf(np.arange(n - k), n - 1 - k, 1 - p)
    others = np.append(np.convolve(a, b), 0.0)  # count among others, length n + 1
    shifted = np.concatenate([[0.0], others[:-1]])
    P = p * shifted + (1 - p) * others
    Q = (1 - p) * shifted + p * others
    return P, Q


def hockey(P, Q, eps):
    e = math.exp(eps)
    return max(np.maximum(P - e * Q, 0).sum(), np.maximum(Q - e * P, 0).sum())


def exact_eps(pairs, delta, hi):
    """Smallest eps with max over the given pairs of the hockey-stick divergence <= delta."""
    lo = 0.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if max(hockey(P, Q, mid) for P, Q in pairs) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def krr_shuffled_pair(eps0: float, n: int, k: int, z: int):
    """Exact pmfs of the shuffled histogram of k-RR: others hold z, the user holds 0 vs 1."""
    e = math.exp(eps0)

    def probs(x):
        v = np.full(k, 1.0 / (e + k - 1))
        v[x] = e / (e + k - 1)
        return v

    assert k == 3
    h0, h1 = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    ok = h0 + h1 <= n
    h0, h1 = h0[ok], h1[ok]
    h = np.stack([h0, h1, n - h0 - h1], axis=1)
    others = stats.multinomial(n - 1, probs(z))

    def world(x):
        px = probs(x)
        out = np.zeros(len(h))
        for j in range(k):
            prev = h.copy()
            prev[:, j] -= 1
            valid = prev[:, j] >= 0
            out[valid] += px[j] * others.pmf(prev[valid])
        return out

    return world(0), world(1)


# --------------------------------------------------------------------------- the public example
def test_public_example_of_the_clones_repository():
    # apple/ml-shuffling-amplification README/example.py: n = 1e5, eps0 = 4, delta = 1e-6
    # "eps between 0.1675385583317841 and 0.172790550755978", closed form 0.5378040242374512
    eps = C.eps_clones(4, 100_000, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978
    assert C.eps_clones(4, 100_000, 1e-6, closed_form=True) == pytest.approx(0.5378040242374512, abs=1e-12)
    # the formula as printed in the theorem is slightly smaller (never larger) than the code's
    printed = C.eps_clones_closed_form(4, 100_000, 1e-6, version="theorem")
    e4 = math.exp(4)
    by_hand = math.log(1 + (e4 - 1) / (e4 + 1) * (8 * math.sqrt(e4 * math.log(4e6)) / math.sqrt(1e5) + 8 * e4 / 1e5))
    assert printed == pytest.approx(by_hand, rel=1e-12)
    assert eps < printed < 0.5378040242374512


# Brackets [lower, upper] printed by the authors' numericalanalysis(n, eps0, delta, T=20, step, ·)
# (step = 5 for n = 1e3, 10 for n = 1e4, 50 for n = 1e5), run in /tmp on the stored snapshot of
# apple/ml-shuffling-amplification. Our value is the exact divergence of the same pair, so it must
# lie inside their discretised bracket (up to their binary-search resolution eps_hi / 2^20).
APPLE_BRACKETS = [
    # n, eps0, delta, lower, upper
    (1000, 0.5, 1e-06, 0.07039454509566251, 0.0721275215628301),
    (1000, 0.5, 1e-08, 0.09079207456755259, 0.09356785606963183),
    (1000, 1.0, 1e-06, 0.18184494389124617, 0.1880598584642836),
    (1000, 1.0, 1e-08, 0.22991182284731215, 0.23432902334890815),
    (1000, 2.0, 1e-06, 0.5410194396972656, 0.5665664672851562),
    (1000, 2.0, 1e-08, 0.6780471801757812, 0.7028236389160156),
    (1000, 4.0, 1e-06, 3.9739151000976562, 3.998363494873047),
    (1000, 4.0, 1e-08, 3.999744415283203, 3.9999847412109375),
    (1000, 6.0, 1e-06, 5.999994277954102, 6),
    (1000, 6.0, 1e-08, 6, 6),
    (10000, 0.5, 1e-06, 0.020393364122027084, 0.02122796710359676),
    (10000, 0.5, 1e-08, 0.027227121118880156, 0.02777117861298888),
    (10000, 1.0, 1e-06, 0.05297003208028857, 0.0549681624822656),
    (10000, 1.0, 1e-08, 0.06883642425396827, 0.07043126460767718),
    (10000, 2.0, 1e-06, 0.1547706234648072, 0.15918690649401968),
    (10000, 2.0, 1e-08, 0.19627407459387988, 0.20169131397193893),
    (10000, 4.0, 1e-06, 0.5925521850585938, 0.6208229064941406),
    (10000, 4.0, 1e-08, 0.7438163757324219, 0.7675704956054688),
    (10000, 6.0, 1e-06, 2.8211746215820312, 5.99772834777832),
    (10000, 6.0, 1e-08, 5.988561630249023, 5.999982833862305),
    (100000, 0.5, 1e-06, 0.005811253738413399, 0.005995361639424027),
    (100000, 0.5, 1e-08, 0.008112315637240613, 0.008366770734334767),
    (100000, 1.0, 1e-06, 0.015276574820255523, 0.016166707308407413),
    (100000, 1.0, 1e-08, 0.02058626318434098, 0.021043617414360245),
    (100000, 2.0, 1e-06, 0.04498154793055918, 0.046553512082853854),
    (100000, 2.0, 1e-08, 0.05870715601681927, 0.05936672238055303),
    (100000, 4.0, 1e-06, 0.1685720314504121, 0.17111493950111067),
    (100000, 4.0, 1e-08, 0.21344092918290353, 0.22106673733259732),
    (100000, 6.0, 1e-06, 0.5029731428381842, 0.5663006949337854),
    (100000, 6.0, 1e-08, 0.6309013366699219, 0.7141170501708984),
]


@pytest.mark.parametrize("n,eps0,delta,lower,upper", APPLE_BRACKETS)
def test_numerical_bound_inside_the_authors_brackets(n, eps0, delta, lower, upper):
    eps = C.eps_clones(eps0, n, delta)
    slack = eps0 / 2**20
    assert lower - slack <= eps <= upper + slack


# --------------------------------------------------------------------------- exact enumeration
def test_binary_rr_exact_value_of_the_issue():
    P, Q = rr_shuffled_pair(1.0, 1000, 0)
    assert exact_eps([(P, Q)], 1e-6, 1.0) == pytest.approx(0.126614, abs=5e-7)


@pytest.mark.parametrize("n", [50, 300, 1000])
@pytest.mark.parametrize("eps0", [0.5, 1.0, 2.0, 3.0])
def test_clones_bounds_dominate_exact_binary_rr(n, eps0):
    pairs = [rr_shuffled_pair(eps0, n, k) for k in (0, n // 3, n - 1)]
    for delta in (1e-3, 1e-6):
        exact = exact_eps(pairs, delta, eps0)
        f21 = C.eps_clones(eps0, n, delta)
        f23 = C.eps_clones(eps0, n, delta, variant="fmt23")
        closed = C.eps_clones(eps0, n, delta, closed_form=True)
        printed = C.eps_clones_closed_form(eps0, n, delta, version="theorem")
        assert exact <= f23 + 1e-12
        assert f23 <= f21 + 1e-12
        assert f21 <= closed + 1e-12
        assert exact <= printed + 1e-12
    # and pointwise in delta(eps)
    for eps in (0.05, 0.2, 0.5):
        exact_delta = max(hockey(P, Q, eps) for P, Q in pairs)
        assert exact_delta <= C.delta_clones(eps0, n, eps, variant="fmt23") + 1e-15
        assert exact_delta <= C.delta_clones(eps0, n, eps) + 1e-15


@pytest.mark.parametrize("eps0,n", [(1.0, 30), (2.0, 60), (0.5, 60)])
def test_clones_bounds_dominate_exact_three_ary_rr(eps0, n):
    pairs = [krr_shuffled_pair(eps0, n, 3, z) for z in (0, 1, 2)]
    for delta in (1e-2, 1e-4):
        exact = exact_eps(pairs, delta, eps0)
        assert exact <= C.eps_clones(eps0, n, delta, variant="fmt23") + 1e-12
        assert exact <= C.eps_clones(eps0, n, delta) + 1e-12


def test_fmt23_is_tight_for_binary_rr_in_delta():
    # for binary RR the stronger clone pair differs from the exact pair only by revealing the
    # clone count, so the bound is close to exact: within a factor 1.25 in eps here
    n, eps0, delta = 1000, 1.0, 1e-6
    P, Q = rr_shuffled_pair(eps0, n, 0)
    exact = exact_eps([(P, Q)], delta, eps0)
    assert exact <= C.eps_clones(eps0, n, delta, variant="fmt23") <= 1.25 * exact


# --------------------------------------------------------------------------- the clone pair core
def brute_pair(c_pmf, p, c_start=0):
    """P and Q as explicit pmfs over (first, second) coordinates."""
    cmax = c_start + len(c_pmf) - 1
    P = np.zeros((cmax + 2, cmax + 2))
    Q = np.zeros_like(P)
    for i, w in enumerate(c_pmf):
        c = c_start + i
        a = np.arange(c + 1)
        b = stats.binom.pmf(a, c, 0.5) * w
        P[a + 1, c - a] += p * b
        P[a, c - a + 1] += (1 - p) * b
        Q[a + 1, c - a] += (1 - p) * b
        Q[a, c - a + 1] += p * b
    return P.ravel(), Q.ravel()


@pytest.mark.parametrize("seed", range(5))
def test_delta_from_clone_pmf_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    c_start = int(rng.integers(0, 20))
    w = rng.random(size)
    w /= w.sum()
    p = float(rng.uniform(0.5, 1.0))
    P, Q = brute_pair(w, p, c_start)
    for eps in (0.0, 0.05, 0.3, 1.0, 3.0):
        e = math.exp(eps)
        d_pq = np.maximum(P - e * Q, 0).sum()
        d_qp = np.maximum(Q - e * P, 0).sum()
        assert d_pq == pytest.approx(d_qp, abs=1e-14)  # the pair is symmetric
        got = C.delta_from_clone_pmf(w, eps, p, c_start=c_start, max_points=None)
        assert got == pytest.approx(d_pq, abs=1e-13)
    arr = C.delta_from_clone_pmf(w, np.array([0.1, 0.2]), p, c_start=c_start)
    assert arr.shape == (2,)


def test_p_equal_one_and_one_half():
    w = stats.binom.pmf(np.arange(51), 50, 0.3)
    P, Q = brute_pair(w, 1.0)
    assert C.delta_from_clone_pmf(w, 0.4, 1.0) == pytest.approx(
        np.maximum(P - math.exp(0.4) * Q, 0).sum(), abs=1e-13)
    assert C.delta_from_clone_pmf(w, 0.0, 0.5) == 0.0


def test_binomial_pmf_shortcut_equals_scipy():
    """The clones accountant's binomial pmf (the ufunc behind scipy.stats.binom.pmf without its
    argument checks) gives scipy's doubles; inputs outside its case take scipy's own path."""
    rng = np.random.default_rng(5)
    c = np.concatenate([np.arange(0.0, 60.0), rng.integers(1, 10**7, 400).astype(float), [2e9, 3e9 + 1]])
    k = np.floor(rng.random(c.size) * (c + 1))
    for p in (0.5, 0.3, 1.0):
        assert C._binom_pmf(k, c, p).tobytes() == stats.binom.pmf(k, c, p).tobytes()
    odd = (np.array([1.5, -1.0, 4.0, 2.0]), np.array([3.0, 3.0, 3.0, 2.5]))
    assert np.array_equal(C._binom_pmf(*odd, 0.5), stats.binom.pmf(*odd, 0.5), equal_nan=True)


def test_kept_counts_give_the_same_divergences():
    """A pair's kept clone counts (``_Counts``: the public Binomial built once, the huge-count test
    skipped when no count exceeds 1e6) give the doubles of the unkept path, at every eps, on both
    sides, huge counts (bracketed tails) and counts at the top (no tail) included."""
    cases = [np.arange(0.0, 400.0), np.array([0.0, 1.0, 2.0]), np.arange(3.0e6, 3.0e6 + 50.0),
             np.array([5.0, 9.0, 2.5e9, 2.5e9 + 1.0])]
    for c in cases:
        kept = C._Counts(c)
        assert kept.dist is not None and kept.huge == bool((c > 1e6).any())
        for p in (0.55, 0.9, 0.999):
            for eps in (0.0, 1e-5, 0.01, 0.3, 2.0):
                for side in ("upper", "lower"):
                    got = C._divergence_per_count(c, p, 1.0 - p, eps, side, counts=kept)
                    assert got.tobytes() == C._divergence_per_count(c, p, 1.0 - p, eps, side).tobytes()
    k = np.floor(cases[0] / 3.0)
    assert C._Counts(cases[0]).pmf(k).tobytes() == stats.binom.pmf(k, cases[0], 0.5).tobytes()
    # counts the public Binomial is not used for (not integers): binom.pmf's own path
    assert C._Counts(np.array([2.5, 3.0])).dist is None
    pr = C.clone_pair(1.0, 5000)
    assert pr.delta(0.2) == pr.delta(0.2) and pr._counts("upper") is pr._counts("upper")


def test_kept_thresholds_give_the_same_divergences_in_any_order():
    """A pair's kept counts remember the latest thresholds' pmf and tail per side: evaluations in
    the order of an eps search (repeated thresholds, both sides interleaved, eps 0 before and after
    a tail was needed) give the doubles of fresh counts at every step."""
    for c in (np.arange(0.0, 400.0), np.arange(3.0e6, 3.0e6 + 50.0)):
        kept = C._Counts(c)
        p = 0.8
        eps_seq = [0.0, 0.3, 0.3, 0.3000001, 0.0, 0.31, 0.3, 1e-5, 1e-5, 0.0, 2.0, 2.0]
        for i, eps in enumerate(eps_seq):
            for side in (("upper", "lower") if i % 2 else ("lower", "upper")):
                got = C._divergence_per_count(c, p, 1.0 - p, eps, side, counts=kept)
                want = C._divergence_per_count(c, p, 1.0 - p, eps, side, counts=C._Counts(c))
                assert got.tobytes() == want.tobytes(), (eps, side)
    # the search itself: the same eps as with nothing kept between its steps
    pair = C.clone_pair(1.5, 3000)
    fresh = C.clone_pair(1.5, 3000)
    for e in (0.05, 0.1, 0.1, 0.10000001, 0.2):
        want = fresh.delta(e)
        fresh._counts_upper = None   # forget what the previous step kept
        assert pair.delta(e) == want


def test_divergence_per_clone_count_is_non_increasing():
    # the monotonicity that justifies the blocked upper bound, checked by brute force
    for p in (0.6, 0.8, 0.95):
        for eps in (0.05, 0.3):
            ds = []
            for c in range(0, 60):
                one = np.zeros(c + 1)
                one[c] = 1.0
                P, Q = brute_pair(one[c:], p, c_start=c)
                ds.append(np.maximum(P - math.exp(eps) * Q, 0).sum())
            assert all(x >= y - 1e-15 for x, y in zip(ds, ds[1:], strict=False))


def test_blocking_brackets_the_exact_value():
    pmf = stats.binom.pmf(np.arange(20_000), 19_999, 0.3)
    exact = C.ClonePair(pmf, 0.7, max_points=None, tail_mass=1e-30)
    blocked = C.ClonePair(pmf, 0.7, max_points=300, tail_mass=1e-30)
    assert blocked.c_upper.size <= 300
    for eps in (0.01, 0.03, 0.06):
        d = exact.delta(eps)
        assert blocked.delta_lower(eps) <= d + 1e-18 <= blocked.delta(eps) + 2e-18
        assert blocked.delta(eps) <= 1.1 * d + 1e-30


def test_tail_trimming_is_charged():
    pmf = stats.binom.pmf(np.arange(2000), 1999, 0.5)
    trimmed = C.ClonePair(pmf, 0.8, tail_mass=1e-12)
    assert trimmed.c.size < 2000
    assert 0 < trimmed.outside_mass <= 1e-12
    full = C.ClonePair(pmf, 0.8, max_points=None)
    assert full.delta(0.2) <= trimmed.delta(0.2) <= full.delta(0.2) + 1e-12


def test_window_mass_outside_is_negligible_and_charged():
    start, pmf, outside = C.clone_count_window(10**7, math.exp(-1))
    assert outside < 1e-30
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert start > 0


# --------------------------------------------------------------------------- properties
def test_monotone_in_n_and_eps0():
    for variant in ("fmt21", "fmt23"):
        by_n = [C.eps_clones(2.0, n, 1e-6, variant=variant) for n in (1000, 3000, 10_000, 100_000, 10**6)]
        assert all(a > b for a, b in zip(by_n, by_n[1:], strict=False))
        by_e = [C.eps_clones(e, 10_000, 1e-6, variant=variant) for e in (0.25, 0.5, 1, 2, 4, 6)]
        assert all(a < b for a, b in zip(by_e, by_e[1:], strict=False))
        by_d = [C.eps_clones(2.0, 10_000, d, variant=variant) for d in (1e-3, 1e-6, 1e-9)]
        assert all(a < b for a, b in zip(by_d, by_d[1:], strict=False))


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0, 6.0, 9.0])
@pytest.mark.parametrize("n", [100, 10_000, 10**6])
def test_fmt23_never_above_fmt21_and_numerical_below_closed_form(eps0, n):
    f21 = C.eps_clones(eps0, n, 1e-6)
    f23 = C.eps_clones(eps0, n, 1e-6, variant="fmt23")
    # both are the upper ends of brackets of relative width 1e-7
    assert f23 <= f21 * (1 + 1e-6) and f21 <= eps0
    for eps in (0.5 * f23, f23, 0.5 * (f23 + eps0)):
        assert C.delta_clones(eps0, n, eps, variant="fmt23") <= C.delta_clones(eps0, n, eps) + 1e-15
    closed = C.eps_clones(eps0, n, 1e-6, closed_form=True)
    assert f21 <= closed * (1 + 1e-6) and closed <= eps0
    assert C.eps_clones_closed_form(eps0, n, 1e-6, version="theorem") <= closed + 1e-15


def test_returned_eps_meets_delta_and_is_tight():
    for eps0, n, delta in [(1.0, 10_000, 1e-6), (4.0, 100_000, 1e-8), (8.0, 10**7, 1e-6)]:
        for variant in ("fmt21", "fmt23"):
            eps = C.eps_clones(eps0, n, delta, variant=variant)
            assert C.delta_clones(eps0, n, eps, variant=variant) <= delta
            assert C.delta_clones(eps0, n, eps * (1 - 1e-5), variant=variant) > delta


def test_closed_form_outside_its_regime_returns_eps0():
    # eps0 > log(n / (16 log(4/delta))): no amplification claimed
    assert C.eps_clones(5.0, 1000, 1e-6, closed_form=True) == 5.0
    assert C.eps_clones_closed_form(5.0, 1000, 1e-6, version="theorem") == 5.0


def test_large_eps0_keeps_precision():
    # p = e^eps0/(e^eps0+1) rounds to 1 in floating point above eps0 ~ 37; 1 - p is carried
    # separately so no spurious amplification appears (n = 100: essentially no clones)
    for eps0 in (30.0, 40.0, 60.0):
        assert C.eps_clones(eps0, 100, 1e-6) == eps0
        assert C.eps_clones(eps0, 100, 1e-6, variant="fmt23") == eps0
        eps = eps0 - 0.4
        expected = (math.exp(eps0) - math.exp(eps)) / (math.exp(eps0) + 1)
        assert C.delta_clones(eps0, 100, eps) == pytest.approx(expected, rel=1e-9)
    with pytest.raises(ValueError):
        C.eps_clones(800.0, 100, 1e-6)


def test_clone_probabilities():
    assert C.clone_probability(1.0) == pytest.approx(math.exp(-1))
    assert C.clone_probability(1.0, "fmt23") == pytest.approx(2 / (math.e + 1))
    assert C.clone_probability(2.0, "fmt23") > C.clone_probability(2.0)
    assert C.mixing_probability(1.0) == pytest.approx(math.e / (math.e + 1))


@pytest.mark.parametrize(
    "call",
    [
        lambda: C.eps_clones(0, 100, 1e-6),
        lambda: C.eps_clones(1, 1, 1e-6),
        lambda: C.eps_clones(1, 10.5, 1e-6),
        lambda: C.eps_clones(1, 100, 1.0),
        lambda: C.eps_clones(1, 100, 0.0),
        lambda: C.eps_clones(1, 100, 1e-6, variant="x"),
        lambda: C.eps_clones(1, 100, 1e-6, variant="fmt23", closed_form=True),
        lambda: C.delta_clones(1, 100, -0.1),
        lambda: C.delta_from_clone_pmf([0.5, 0.5], 0.1, 0.4),
        lambda: C.delta_from_clone_pmf([-0.5, 0.5], 0.1, 0.7),
        lambda: C.delta_from_clone_pmf([], 0.1, 0.7),
    ],
)
def test_invalid_arguments_raise(call):
    with pytest.raises(ValueError):
        call()


# --------------------------------------------------------------------------- CLI
def run_cli(capsys, *argv):
    code = main(["account", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_clones_single_and_grid(capsys):
    code, out, _ = run_cli(capsys, "clones", "--eps0", "4", "--n", "1e5", "--delta", "1e-6")
    assert code == 0
    row = json.loads(out)
    assert row["eps"] == pytest.approx(C.eps_clones(4, 100_000, 1e-6))
    code, out, _ = run_cli(capsys, "clones", "--eps0", "4", "--n", "100000", "--delta", "1e-6", "--closed-form")
    assert json.loads(out)["eps"] == pytest.approx(0.5378040242374512)
    code, out, _ = run_cli(capsys, "clones", "--eps0", "1,2", "--n", "1000,10000", "--delta", "1e-6",
                           "--variant", "fmt23")
    rows = json.loads(out)
    assert len(rows) == 4 and {r["variant"] for r in rows} == {"fmt23"}
    for r in rows:
        assert r["eps"] == pytest.approx(C.eps_clones(r["eps0"], r["n"], r["delta"], variant="fmt23"))
    code, out, _ = run_cli(capsys, "clones", "--eps0", "4", "--n", "1e5", "--eps", "0.2")
    assert json.loads(out)["delta"] == pytest.approx(C.delta_clones(4, 100_000, 0.2))


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["--eps0", "0", "--n", "100", "--delta", "1e-6"], "--eps0"),
        (["--eps0", "1", "--n", "1", "--delta", "1e-6"], "--n"),
        (["--eps0", "1", "--n", "100", "--delta", "1"], "--delta"),
        (["--eps0", "1", "--n", "100", "--delta", "1e-6", "--variant", "fmt22"], "--variant"),
        (["--eps0", "1", "--n", "100", "--delta", "1e-6", "--variant", "fmt23", "--closed-form"], "--variant"),
        (["--eps0", "1,x", "--n", "100", "--delta", "1e-6"], "--eps0"),
    ],
)
def test_cli_clones_errors_are_one_line(capsys, argv, flag):
    code, out, err = run_cli(capsys, "clones", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and flag in err
