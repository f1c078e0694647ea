"""The third-input lower bound (shuffledp.accountants.lower.third_flag) against exact enumeration of the
shuffled histogram (tests/_oracle_decomposition.py): equal to the exact divergence of the pair
"victim at x or x', every other user at x''" (never above it), below the exact worst case over
every configuration, its eps a verified point below the exact eps and below the upper bound."""

from __future__ import annotations

import _oracle_decomposition as O
import numpy as np
import pytest

from shuffledp.accountants import best
from shuffledp.accountants.lower import third_flag as tf
from shuffledp.accountants.randomizers import standard as rz
from shuffledp.accountants.upper import decomposition as dec

CASES = [
    ("oue", lambda e: O.oue_matrix(3, e), {}),
    ("oue", lambda e: O.oue_matrix(4, e), {}),
    ("olh", lambda e: O.olh_matrix(3, 2, e), {"g": 2}),
    ("olh", lambda e: O.olh_matrix(3, 3, e), {"g": 3}),
]


@pytest.mark.parametrize("mech,mat_fn,kw", CASES)
@pytest.mark.parametrize("eps0", [0.7, 2.5])
@pytest.mark.parametrize("n", [2, 5])
def test_equals_exact_divergence_of_the_pair(mech, mat_fn, kw, eps0, n):
    mat = mat_fn(eps0)
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    for eps in (0.0, 0.1 * eps0, 0.4 * eps0):
        exact = O.exact_shuffle_delta(mat, 0, 1, [2] * (n - 1), eps)
        lower = tf.third_flag_delta(n, r, s, eps)
        assert exact * (1 - 1e-7) - 1e-30 <= lower <= exact, (eps, exact, lower)


@pytest.mark.parametrize("mech,mat_fn,kw", CASES[:3])
def test_below_the_exact_worst_case(mech, mat_fn, kw):
    eps0, n = 1.5, 4
    mat = mat_fn(eps0)
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    eps_list = [0.0, 0.2, 0.6]
    for eps, (worst, _) in zip(eps_list, O.worst_shuffle_delta(mat, n, eps_list), strict=True):
        assert tf.third_flag_delta(n, r, s, eps) <= worst


@pytest.mark.parametrize("mech,mat_fn,kw,delta", [
    ("oue", lambda e: O.oue_matrix(3, e), {}, 0.05),
    ("olh", lambda e: O.olh_matrix(3, 2, e), {"g": 2}, 0.02),
])
def test_lower_eps_is_a_verified_point_below_the_exact_eps(mech, mat_fn, kw, delta):
    """At the returned eps the pair's exact divergence still exceeds delta: the exact eps of the
    mechanism (this pair or any worse) is at least the returned one."""
    eps0, n = 2.0, 6
    r, s = tf.third_flag_rates(mech, eps0, **kw)
    low = tf.third_flag_lower_eps(n, r, s, delta, eps0, rtol=1e-5)
    assert 0 < low < eps0
    assert tf.third_flag_delta(n, r, s, low) > delta
    assert O.exact_shuffle_delta(mat_fn(eps0), 0, 1, [2] * (n - 1), low) > delta


@pytest.mark.parametrize("mech,kw", [("oue", {"d": 17}), ("olh", {"g": 2, "domain": 3}),
                                     ("olh", {"domain": 3})])
def test_best_registers_it_below_the_upper_bound(mech, kw):
    """n = 1000, eps0 = 4 (OLH over 3 input values: a third input exists): the third-input pair is
    registered, above the two-flag pair-group-counts bound and below the decomposition's upper bound."""
    res = best.best_eps(mech, 4.0, 1000, 1e-6, parallel=False, **kw)
    b = res["bounds"]
    third = b["pair-third-input"]["eps"]
    assert b["pair-third-input"]["kind"] == "lower"
    assert b["pair-group-counts"]["eps"] < third <= res["eps_lower"] <= b["decomposition"]["eps"]


def test_large_n_uses_the_cheap_bound_only():
    """Beyond the cell budget the bound declines the point (its cost grows as n^1.5): listed by the
    registry, it answers the trivial lower bound 0 with a note, without running its enumeration."""
    r, s = tf.third_flag_rates("oue", 1.0)
    assert tf.third_flag_cells(10**5, r, s) > tf.AFFORDABLE_CELLS
    value = best.lower_bounds("oue", 1.0, 10**5, 1e-6, d=17)["pair-third-input"]()
    assert value == 0.0 and "not evaluated" in value.note and "cells" in value.note
    # below the budget it is a real (positive) lower bound
    assert best.lower_bounds("oue", 4.0, 1000, 1e-6, d=17)["pair-third-input"]() > 0


def test_upper_above_lower_at_moderate_n():
    """OUE and binary local hashing at n = 300: the exact decomposition is above the pair's eps."""
    for mech, kw, pairs in (("oue", {}, rz.oue_pairs(17, 3.0)), ("olh", {"g": 2}, rz.olh_pairs(2, 3.0))):
        r, s = tf.third_flag_rates(mech, 3.0, **kw)
        low = tf.third_flag_lower_eps(300, r, s, 1e-5, 3.0)
        up = dec.decomposition_eps(None, 300, 1e-5, pairs=pairs)
        assert 0 < low <= up


def test_rates_reject_other_mechanisms():
    with pytest.raises(ValueError, match="oue or olh"):
        tf.third_flag_rates("krr", 1.0)
    with pytest.raises(ValueError, match="r < s"):
        tf.ThirdFlagPair(10, 0.6, 0.5)


@pytest.mark.parametrize("r, tail", [(0.12, 1e-12), (0.5, 1e-12), (0.02, 1e-30), (0.9, 1e-6)])
def test_windows_of_many_counts_equal_one_at_a_time(r, tail):
    """The pair's per-count windows are built for all counts at once (one scipy call of each
    kind): every window's start and pmf equal, bit for bit, those of one count at a time."""
    counts = np.array([0, 1, 2, 5, 17, 100, 999, 4000, 123457])
    batch = tf._windows(counts, r, tail)
    for N, (lo, pmf) in zip(counts.tolist(), batch, strict=True):
        lo1, pmf1 = tf._window(N, r, tail)
        assert lo == lo1 and pmf.tolist() == pmf1.tolist()



def _per_c_sorting_anew(pair, C, table, ee):
    """The sum of ThirdFlagPair._per_c computed as it was before its cells were kept: the X cells
    above the smallest threshold sorted at this eps, their suffix sums, each threshold searched."""
    v1, p1, v0, p0 = table
    kappa = (ee - 1.0) * pair.f0 * (C / pair.f1 + (pair.n - C) / pair.f0) / pair.df
    x = v1[:, None] + v0[None, :]
    xmin, xmax = v1[0] + v0[0], v1[-1] + v0[-1]
    t_min = ee * xmin + kappa
    if t_min >= xmax:
        return 0.0
    up = x > t_min
    xs, ps = x[up], (p1[:, None] * p0[None, :])[up]
    order = np.argsort(xs, kind="stable")
    xs, ps = xs[order], ps[order]
    t0 = np.concatenate([np.cumsum(ps[::-1])[::-1], [0.0]])
    t1 = np.concatenate([np.cumsum((ps * xs)[::-1])[::-1], [0.0]])
    thr_all = ee * x + kappa
    low = thr_all < xmax
    thr, py = thr_all[low], (p1[:, None] * p0[None, :])[low]
    idx = np.searchsorted(xs, thr, side="right")
    val, mag = t1[idx] - thr * t0[idx], t1[idx] + np.abs(thr) * t0[idx]
    return float(np.dot(py, np.maximum(val - tf.ALLOWANCE * mag, 0.0)))


@pytest.mark.parametrize("n, r, s", [(3, 0.4, 0.45), (60, 0.1, 0.5), (400, 0.05, 0.3)])
def test_kept_sorted_cells_give_the_same_numbers_as_sorting_at_every_eps(n, r, s):
    """The per-C sorted cells and suffix sums kept across eps (and the search of the thresholds
    below max x only) give bit for bit the numbers of sorting the cells above the smallest
    threshold anew at each eps, with or without the kept cells, the order of eps mixed."""
    pair = tf.ThirdFlagPair(n, r, s)
    for eps in (0.7, 0.0, 2.5, 0.05, 0.7, 1.2, 0.3):
        ee = float(np.exp(eps))
        for i, (C, table) in enumerate(zip(pair.cs, pair._tables, strict=True)):
            want = _per_c_sorting_anew(pair, int(C), table, ee)
            assert pair._per_c(int(C), table, ee, i) == want
            assert pair._per_c(int(C), table, ee) == want
