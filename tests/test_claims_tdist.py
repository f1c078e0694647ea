"""The claims engine's Student-t quantile and survival function and Kendall's tau-b are the doubles
scipy.stats gives (the report jobs compute them without importing scipy.stats): compared bit for bit
on grids that hold the edge cases (df <= 0, infinite df, q at 0 and 1, NaN, ties, constant data)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.claims import core
from shuffledp.claims.engine import kendall_interval, kendall_tau_b, t_ppf, t_sf


def _same(a, b) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b)))) \
        and bool(np.all(np.signbit(a) == np.signbit(b)))


DFS = np.concatenate([np.arange(-2, 120), np.random.default_rng(0).uniform(0.01, 500, 400),
                      [np.inf, np.nan, 0.5, 1e-300, 1e300]])


def test_t_ppf_is_scipy_stats_t_ppf():
    qs = np.concatenate([[0, 1, 0.5, 0.975, 0.025, 0.95, 0.995, 1e-300, 1 - 1e-16, -0.1, 1.1, np.nan],
                         np.random.default_rng(1).uniform(0, 1, 30)])
    d, q = np.meshgrid(DFS, qs)
    assert _same(t_ppf(q, d), stats.t.ppf(q, d))
    for q0, df in ((0.975, 19), (0.975, 3.5), (0.95, np.array([1, 2, 3]))):
        got, want = t_ppf(q0, df), stats.t.ppf(q0, df)
        assert type(got) is type(want) and _same(got, want)


def test_t_sf_is_scipy_stats_t_sf():
    xs = np.concatenate([[0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, 40.0, -40.0],
                         np.random.default_rng(2).normal(0, 3, 40)])
    d, x = np.meshgrid(DFS, xs)
    assert _same(t_sf(x, d), stats.t.sf(x, d))
    assert type(t_sf(2.0, 5.5)) is type(stats.t.sf(2.0, 5.5))


def test_the_claims_t_helpers_keep_their_values():
    reps = np.array([0, 1, 2, 3, 5, 20, 200])
    want = np.where(reps >= 2, stats.t.ppf(0.975, np.maximum(reps - 1, 1)), np.inf)
    assert _same(core.t_critical(reps), want)
    a, b = np.array([1.0, 2.5, 2.0, 4.0]), np.array([0.5, 1.0, 1.5, 0.7, 0.2])
    r = core.t_test(a, b, paired=False)
    want_p = 2 * stats.t.sf(abs(r.t), r.df)
    assert r.p == float(want_p)
    p = core.t_test(a, a[::-1] * 0.5, paired=True)
    assert p.p == float(2 * stats.t.sf(abs(p.t), p.df))


@pytest.mark.parametrize("seed", range(6))
def test_kendall_tau_b_is_scipy_kendalltau(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        n = int(rng.integers(2, 40))
        k = int(rng.integers(1, 8))
        x = rng.integers(0, k + 1, n).astype(float) if rng.random() < 0.5 else rng.normal(size=n)
        y = rng.integers(0, k + 1, n).astype(float) if rng.random() < 0.5 \
            else x * rng.normal() + rng.normal(size=n) * rng.random()
        if rng.random() < 0.1:
            y = -3 * x  # tau -1 (or NaN for a constant x)
        assert _same(kendall_tau_b(x, y), stats.kendalltau(x, y).statistic), (x, y)


def test_kendall_tau_b_edges():
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall_tau_b([1, 2, 3], [2, 2, 2]))
    assert kendall_tau_b([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0
    assert kendall_tau_b([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    x = np.random.default_rng(3).normal(size=2100)  # past PAIRS_MAX: scipy's own
    y = x + np.random.default_rng(4).normal(size=2100)
    assert kendall_tau_b(x, y) == float(stats.kendalltau(x, y).statistic)
    iv = kendall_interval([1, 2, 3, 4, 5], [5, 3, 4, 1, 2])
    assert iv.estimate == float(stats.kendalltau([1, 2, 3, 4, 5], [5, 3, 4, 1, 2]).statistic)
