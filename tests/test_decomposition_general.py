"""The blanket decomposition for ANY number of likelihood-ratio groups against an independent oracle
(tests/_oracle_decomposition.py, issue 17).

For a victim pair with G groups the accountant bounds E[(Z_1 + ... + Z_{M+1})_+] / (M + 1) after
spreading the inner atoms of Z onto three (a mean-preserving spread: an upper bound). Checked here:

* sound: above the exact divergence of the real shuffled histogram for every ordered victim pair
  and EVERY multiset of the other users' inputs (random matrices, 3-4 inputs, 3-5 outputs, n <= 6;
  the subset-exponential, OUE and OLH randomizers at small sizes);
* above the exact divergence of the decomposed pair itself (every M, every group count vector),
  and equal to it (relative 1e-9) when a pair has at most three groups (the reduction is exact);
* the analytic grouped pairs of subset-exp / OUE / OLH equal the grouping of their matrices, and
  the package's matrices equal the oracle's, written from the definitions;
* ``decomposition_eps`` returns a verified point;
* power: the spread's looseness against the exact decomposed divergence stays bounded.

The oracle itself is checked first against a second route to each quantity.
"""

from __future__ import annotations

import itertools
import math

import _oracle
import _oracle_decomposition as O
import numpy as np
import pytest

# ----------------------------------------------------------------------------- the oracle itself

def test_merging_proportional_columns_keeps_the_divergence():
    """Merged dense convolution == sparse enumeration over every output kept apart."""
    cases = [(O.olh_matrix(3, 2, 1.0), [(0, 1, (2, 2)), (1, 2, (0, 1))]),
             (O.oue_matrix(3, 1.5), [(0, 1, (2, 0)), (2, 0, (1, 1))]),
             (O.subset_exp_matrix(3, 2, 2, 1.0), [(0, 5, (2, 3)), (1, 9, (4,))])]
    assert O.merge_columns(cases[0][0]).shape[1] == 7 and O.merge_columns(cases[1][0]).shape[1] == 7
    for mat, pairs in cases:
        for x0, x1, others in pairs:
            for eps in (0.0, 0.1, 0.6):
                a = O.exact_shuffle_delta(mat, x0, x1, others, eps)
                b = O.exact_shuffle_delta(mat, x0, x1, others, eps, merge=False)
                assert a > 0
                assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("k,n,eps0", [(3, 5, 1.0), (4, 4, 1.5), (2, 6, 0.7)])
def test_worst_shuffle_matches_the_krr_oracle(k, n, eps0):
    """The general enumerator and tests/_oracle.py (log-space, k-RR partitions) agree."""
    mat = np.array([np.exp(_oracle.krr_row(k, eps0, x)) for x in range(k)])
    eps_list = [0.0, 0.2, 0.7]
    got = O.worst_shuffle_delta(mat, n, eps_list)
    for eps, (d, _) in zip(eps_list, got, strict=True):
        assert d == pytest.approx(_oracle.exact_krr_delta(k, eps0, n, eps), rel=1e-10)


def _decomposed_by_convolution(mat, x0, x1, n, eps):
    """Second route to the decomposed pair: the histogram of the victim and M users whose report
    is drawn from the blanket, by the dense convolution of the real-shuffle enumerator."""
    omega, gamma = O.blanket(mat)
    ext = np.vstack([mat, omega / gamma])
    blank = mat.shape[0]
    tot = 0.0
    for m in range(n):
        wm = math.comb(n - 1, m) * gamma**m * (1.0 - gamma) ** (n - 1 - m)
        tot += wm * O.exact_shuffle_delta(ext, x0, x1, [blank] * m, eps, merge=False)
    return tot


def test_exact_decomposed_two_routes_and_grouping():
    """exact_decomposed_delta (multinomial enumeration) == convolution of the blanket draws ==
    E[(Z_1 + ... + Z_{M+1})_+] / (M + 1) averaged over M (the representation the accountant
    spreads), and grouping the outputs by likelihood ratio changes nothing (sufficiency)."""
    rng = np.random.default_rng(7)
    mats = [O.random_matrix(rng, 3, 4), O.random_matrix(rng, 3, 3), O.oue_matrix(2, 1.0)]
    positive = 0
    for mat in mats:
        omega, gamma = O.blanket(mat)
        for n, frac in ((3, 0.1), (5, 0.3)):
            eps = frac * O.local_eps(mat)
            for x0, x1 in itertools.permutations(range(mat.shape[0]), 2):
                ungrouped = O.exact_decomposed_delta(omega / gamma, mat[x0], mat[x1], gamma, n, eps)
                w, p, q, _ = O.pair_groups(mat, x0, x1)
                grouped = O.exact_decomposed_delta(w, p, q, gamma, n, eps)
                conv = _decomposed_by_convolution(mat, x0, x1, n, eps)
                z = (np.asarray(p) - math.exp(eps) * np.asarray(q)) / np.asarray(w)
                atoms = O.atoms_expectation(w, z, gamma, n)
                positive += conv > 1e-6
                assert atoms == pytest.approx(conv, rel=1e-11, abs=1e-15)
                assert ungrouped == pytest.approx(conv, rel=1e-11, abs=1e-15)
                assert grouped == pytest.approx(conv, rel=1e-11, abs=1e-15)
    assert positive >= 24  # of 28 cases (25 today): the comparisons are not between zeros


def test_exact_decomposed_is_above_every_real_configuration():
    """The decomposition argument itself, oracle against oracle (no package code): the exact
    decomposed divergence bounds the exact shuffled one for every configuration."""
    rng = np.random.default_rng(11)
    for _ in range(3):
        mat = O.random_matrix(rng, 3, 4)
        for n, eps in ((3, 0.1), (4, 0.5)):
            worst = O.worst_shuffle_delta(mat, n, [eps])[0][0]
            assert worst <= O.decomposed_worst(mat, n, eps)[0]


def test_oracle_matrices_follow_their_definitions():
    e = math.exp(1.0)
    oue = O.oue_matrix(3, 1.0)
    f = 1 / (e + 1)
    # input 1, output bits (0, 1, 1): bit 0 is 0 (1-f), bit 1 is 1 (1/2), bit 2 is 1 (f)
    assert oue[1, 3] == pytest.approx((1 - f) * 0.5 * f)
    olh = O.olh_matrix(3, 2, 1.0)
    assert olh.shape == (3, 16)
    # h = (0, 1, 1), y = 1: input 0 hashes to 0 != y, input 2 hashes to 1 == y
    col = 3 * 2 + 1
    assert olh[0, col] == pytest.approx(1 / (e + 1) / 8) and olh[2, col] == pytest.approx(e / (e + 1) / 8)
    sub = O.subset_exp_matrix(3, 1, 2, 1.0)
    assert sub.shape == (4, 6)
    # x = {0}; z = {1, 2} misses it: weight 1 among C(3,2)=3 misses and 3 hits
    assert sub[0, 3] == pytest.approx(1 / (3 + 3 * e))
    for mat in (oue, olh, sub):
        assert np.allclose(mat.sum(axis=1), 1.0)
