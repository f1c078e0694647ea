import numpy as np
import pytest
from scipy import stats

from shuffledp.datasets.synthetic import generate_sets


def test_uniform_sets_are_distinct_sorted_and_uniform():
    rng = np.random.default_rng(11)
    sets = generate_sets(20000, 128, 4, "uniform", rng)
    assert sets.shape == (20000, 4)
    assert (np.diff(sets, axis=1) > 0).all()  # sorted and distinct
    counts = np.bincount(sets.ravel(), minlength=128)
    # each item is in a set with probability 4/128: chi-square goodness of fit at level 0.001
    p = stats.chisquare(counts).pvalue
    assert p > 1e-3


def test_zipf_is_skewed_and_seeded():
    a = generate_sets(5000, 50, 3, "zipf", np.random.default_rng(5), zipf_exponent=1.2)
    b = generate_sets(5000, 50, 3, "zipf", np.random.default_rng(5), zipf_exponent=1.2)
    np.testing.assert_array_equal(a, b)
    counts = np.sort(np.bincount(a.ravel(), minlength=50))[::-1]
    assert counts[0] > 5 * counts[-1]


def test_set_size_larger_than_domain_is_rejected():
    with pytest.raises(ValueError, match="set_size"):
        generate_sets(10, 3, 4, "uniform", np.random.default_rng(0))
