"""shuffledp.accountants.numerics.boost_binom: scipy.stats.binom's pmf and cdf, bit for bit, without
its argument handling (the fast path on valid cells, scipy itself on any other call)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants.numerics import boost_binom as bb


@pytest.mark.parametrize("p", [0.0, 1e-12, 0.003, 0.5, 0.97, 1.0])
def test_valid_cells_give_scipys_numbers_bit_for_bit(p):
    rng = np.random.default_rng(5)
    n = rng.integers(1, 10 ** 6, 2000).astype(float)
    k = np.floor(n * rng.random(2000))            # 0 <= k < n
    for fn, ref in ((bb.binom_pmf, stats.binom.pmf), (bb.binom_cdf, stats.binom.cdf)):
        got, want = fn(k, n, p), np.asarray(ref(k, n, p), dtype=float)
        assert got.dtype == np.float64 and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(got.view(np.int64), want.view(np.int64))  # signed zeros too
    assert np.array_equal(bb.binom_pmf(n, n, p), stats.binom.pmf(n, n, p))  # k = n: pmf's support
    ps = np.full(n.shape, p)                      # p as an array (the count tables pass one)
    assert np.array_equal(bb.binom_pmf(k, n, ps), stats.binom.pmf(k, n, ps))
    assert np.array_equal(bb.binom_cdf(k, n, ps), stats.binom.cdf(k, n, ps))


@pytest.mark.parametrize("k, n", [
    ([-1.0, 0.0, 3.0], [5.0, 5.0, 5.0]),         # k below the support
    ([2.0, 7.0], [5.0, 5.0]),                     # k above n (cdf: 1, pmf: 0)
    ([5.0], [5.0]),                               # cdf at k = n
    ([2.5, 1.0], [5.0, 5.0]),                     # non-integral k
    ([1.0, 1.0], [4.5, -3.0]),                    # bad n (nan)
    ([np.nan, 1.0], [4.0, 4.0]), ([np.inf], [4.0]),
    (3.0, 10.0),                                  # scalars
])
def test_other_calls_give_scipys_numbers_too(k, n):
    for p in (0.3, 1.2, np.array(0.3), np.array([0.3, 1.5, np.nan])[: np.size(k)]):
        for fn, ref in ((bb.binom_pmf, stats.binom.pmf), (bb.binom_cdf, stats.binom.cdf)):
            assert np.array_equal(fn(k, n, p), np.asarray(ref(k, n, p), dtype=float), equal_nan=True)


def test_the_fast_path_is_taken_on_valid_cells(monkeypatch):
    """A valid call never reaches stats.binom (else the module would save nothing)."""
    def refuse(*a, **kw):
        raise AssertionError("stats.binom called")

    monkeypatch.setattr(bb.stats.binom, "pmf", refuse)
    monkeypatch.setattr(bb.stats.binom, "cdf", refuse)
    bb.binom_pmf([0.0, 3.0], [3.0, 3.0], 0.4)
    bb.binom_cdf([0.0, 2.0], [3.0, 3.0], 0.4)
    with pytest.raises(AssertionError):
        bb.binom_cdf([3.0], [3.0], 0.4)  # k = n: scipy's path
