"""The pair memo of the Poisson accountant (issue 36): a value taken from the memo has the bits a
fresh evaluation gives, whatever was evaluated before, and scipy's binomial cdf on an array gives
the bits of its per-element calls (so batching the calls changes nothing)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from shuffledp.accountants.numerics.clone_counts import half_binom
from shuffledp.accountants.numerics.pair_memo import PairMemo
from shuffledp.accountants.special import poisson


def _cdf(n, k, rho=0.37):
    return (np.asarray(stats.binom.cdf(np.asarray(k, float), np.asarray(n, float), rho)),)


def test_binom_cdf_array_equals_per_element_calls():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 5000, size=400)
    k = (n * rng.random(400)).astype(np.int64)
    batch = stats.binom.cdf(k.astype(float), n.astype(float), 0.2137)
    single = np.array([stats.binom.cdf(float(a), float(b), 0.2137) for a, b in zip(k, n, strict=True)])
    assert np.array_equal(batch, single)


def test_memo_gives_fresh_bits_and_counts_only_misses():
    rng = np.random.default_rng(5)
    calls = []

    def fn(n, k):
        calls.append(n.size)
        return _cdf(n, k)

    memo = PairMemo(fn, 1)
    n1 = rng.integers(10, 3000, size=500)
    k1 = (n1 * rng.random(500)).astype(np.int64)
    assert np.array_equal(memo(n1, k1)[0], _cdf(n1, k1)[0])
    # the second call: half of it repeats the first (shuffled, with duplicates), half is new
    n2 = np.concatenate([n1[::-2], n1[:50], rng.integers(10, 3000, size=250)])
    k2 = np.concatenate([k1[::-2], k1[:50], rng.integers(0, 10, size=250)])
    got = memo(n2, k2)[0]
    assert np.array_equal(got, _cdf(n2, k2)[0])
    fresh_pairs = set(zip(n2.tolist(), k2.tolist(), strict=True)) - set(zip(n1.tolist(), k1.tolist(), strict=True))
    assert calls[-1] == len(fresh_pairs)


def test_memo_two_outputs_and_out_of_range_pairs():
    memo = PairMemo(half_binom, 2)
    t = np.array([5, 9, 9, 40, 3, 1])
    a = np.array([2, 3, 9, 30, 0, 1])
    want = half_binom(t, a)
    for _ in range(2):
        got = memo(t, a)
        assert all(np.array_equal(g, w) for g, w in zip(got, want, strict=True))
    big = np.array([2**33, 7])
    got = PairMemo(_cdf, 1)(big, np.array([2**32, 3]))[0]
    assert np.array_equal(got, _cdf(big, np.array([2**32, 3]))[0])


def test_exact_parts_do_not_depend_on_what_was_evaluated_before():
    args = [(lam, 3000, 0.61, 12, 0.4, 1e-15) for lam in (0.9, 0.35, 0.36, 0.9)]
    poisson._MEMOS.clear()
    warm = [poisson._exact_parts.__wrapped__(*a) for a in args]
    cold = []
    for a in args:
        poisson._MEMOS.clear()
        cold.append(poisson._exact_parts.__wrapped__(*a))
    assert warm == cold
    assert warm[0] == warm[3]
