"""The blanket decomposition for ANY number of likelihood-ratio groups against an independent oracle
(tests/_oracle_decomposition.py, issue 17).

For a victim pair with G groups the accountant bounds E[(Z_1 + ... + Z_{M+1})_+] / (M + 1) after
spreading the inner atoms of Z onto three (a mean-preserving spread: an upper bound). Checked here:

* sound: above the exact divergence of the real shuffled histogram for every ordered victim pair
  and EVERY multiset of the other users' inputs (random matrices, 3-4 inputs, 3-5 outputs, n <= 6;
  the subset-exponential, OUE and OLH randomizers at small sizes);
* above the exact divergence of the decomposed pair itself (every M, every group count vector,
  G up to 5, n up to 40), and equal to it up to the accountant's rounding allowances when a pair
  has at most three groups (the reduction is exact there);
* the analytic grouped pairs of subset-exp / OUE / OLH equal the grouping of their matrices, and
  the package's matrices equal the oracle's, written from the definitions;
* ``decomposition_eps`` returns a verified point; ``best.delta_upper`` is sound;
* power: the spread's looseness against the exact decomposed divergence stays bounded;
* ``shuffledp account best --mechanism subset-exp|oue|olh``: the exact worst case lies between
  ``eps_lower`` and ``eps``; bad flags exit 2 with one line;
* a derandomized hypothesis sweep over random matrices.

The oracle itself is checked first against a second route to each quantity.
"""

from __future__ import annotations

import itertools
import math

import _oracle
import _oracle_decomposition as O
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.accountants.randomizers import standard as rz
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper.dependent_flags import DependentFlagPair

# ----------------------------------------------------------------------------- the oracle itself

def test_merging_proportional_columns_keeps_the_divergence():
    """Merged count-vector convolution == dict enumeration with every output kept apart."""
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


# ----------------------------------------------------------------------------- the accountant
# random matrices (fixed seeds): (seed, inputs, outputs, n); entries >= 0.05
RANDOM_CASES = [(1, 3, 3, 6), (2, 3, 4, 6), (3, 3, 5, 5), (4, 4, 3, 5), (5, 4, 4, 5), (6, 4, 5, 4),
                (7, 3, 5, 2), (8, 4, 5, 3), (9, 4, 4, 6), (10, 3, 4, 3)]
EPS_FRACS = (0.0, 0.02, 0.1, 0.3, 0.6)  # of the matrix's own eps0
ORACLE_RTOL = 1e-12  # the oracle's float sums (a few hundred terms of magnitude <= 1)


def _exact_within(up: float, exact: float, eps: float) -> bool:
    """``up`` is ``exact`` plus the accountant's documented allowances: relative 1e-9, and
    ROUNDING_RTOL of the summed magnitudes (P and e^eps Q masses, at most 1 + e^eps), charged on
    the sums and once more on the total (factor 4 for headroom), plus the 1e-30 tails."""
    return exact <= up <= exact * (1 + 1e-9) + 4 * dec.ROUNDING_RTOL * (1 + math.exp(eps)) + 1e-25


def _random(seed, inputs, outputs):
    return O.random_matrix(np.random.default_rng(seed), inputs, outputs)


def _groupings_agree(mat, pairs):
    """The package's grouped pairs are the oracle's grouping of every ordered pair of rows."""
    mine = set()
    for x0, x1 in itertools.permutations(range(mat.shape[0]), 2):
        w, p, q, gamma = O.pair_groups(mat, x0, x1)
        if len(w) > 1:
            mine.add(O.canonical(w, p, q, 11))
            assert gamma == pytest.approx(pairs[0].gamma, rel=1e-12)
    theirs = {O.canonical(g.w, g.p, g.q, 11) for g in pairs}
    assert theirs == mine


@pytest.mark.parametrize("seed,inputs,outputs,n", RANDOM_CASES)
def test_random_matrix_sound_against_every_configuration(seed, inputs, outputs, n):
    """Upper bound >= the exact shuffled divergence, every ordered victim pair, every multiset of
    the other users' inputs, and >= the exact decomposed divergence (oracle grouping); equal to it
    when every pair has at most three groups."""
    mat = _random(seed, inputs, outputs)
    pairs = dec.grouped_pairs(mat)
    _groupings_agree(mat, pairs)
    groups = max(len(g.w) for g in pairs)
    eps_list = [f * O.local_eps(mat) for f in EPS_FRACS]
    exact = O.worst_shuffle_delta(mat, n, eps_list)
    acc = dec.DecomposedPair(mat, n)
    rel = []
    for eps, (real, arg) in zip(eps_list, exact, strict=True):
        up = acc.delta(eps)
        decomposed, _ = O.decomposed_worst(mat, n, eps)
        assert real <= decomposed * (1 + ORACLE_RTOL)  # the decomposition argument, oracle only
        assert real <= up, (eps, arg)
        assert decomposed <= up
        if groups <= 3:
            assert _exact_within(up, decomposed, eps)
        rel.append((up - real) / real if real > 0 else math.inf)
    print(f"random seed={seed} {inputs}x{outputs} G<={groups} n={n}: min (upper-real)/real "
          f"{min(rel):.3g}")


# upper / exact decomposed: G = 3 exact up to the allowances; measured when written 1.018-1.077 (G = 4,
# n = 12), 1.001-1.013 (G = 4, n = 40), 1.14-2.93 (G = 5, n = 12), 1.003-1.19 (G = 5, n = 24). Random
# asymmetric pairs are the spread's hard case (up to x5.6 for G = 4 and x8.3 for G = 5 at delta ~1e-5
# over other seeds); the structured randomizers are far tighter (power test below).
LOOSE_MAX = {3: 1 + 1e-8, 4: 1.5, 5: 4.0}


@pytest.mark.parametrize("seed,groups,n", [(21, 4, 12), (22, 5, 12), (23, 4, 40), (24, 5, 24), (25, 3, 40)])
def test_grouped_pair_against_exact_decomposed(seed, groups, n):
    """One G-group pair given directly (both directions), n up to 40: the spread's value is an upper
    bound on the exact decomposed divergence, equal to it for G <= 3."""
    rng = np.random.default_rng(seed)
    mat = O.random_matrix(rng, 2, groups, floor=0.03)
    w, p, q, gamma = O.pair_groups(mat, 0, 1)
    assert len(w) == groups
    g = dec.GroupedPair(w, p, q, gamma)
    ratios = []
    for frac in (0.02, 0.15, 0.4):
        eps = frac * O.local_eps(mat)
        for h in (g, dec.GroupedPair(g.w, g.q, g.p, g.gamma)):
            exact = O.exact_decomposed_delta(h.w, h.p, h.q, h.gamma, n, eps)
            up = dec.decomposition_delta(None, n, eps, pairs=[h])
            assert exact <= up
            if exact < 1e-6:  # e.g. every atom <= 0 in this direction: exact 0
                assert up <= 1e-6
                continue
            if groups <= 3:
                assert _exact_within(up, exact, eps)
            ratios.append(up / exact)
    assert len(ratios) >= 3
    print(f"G={groups} n={n}: upper/exact decomposed {min(ratios):.4f} .. {max(ratios):.4f}")
    assert max(ratios) <= LOOSE_MAX[groups]


@pytest.mark.parametrize("seed,groups", [(31, 4), (32, 5)])
def test_blocks_and_truncated_windows_stay_sound(seed, groups):
    """The error charges with spread pairs: M grouped into very few blocks (each charged its
    smallest M) and wide truncation tails (the mass outside charged in full) only raise the bound."""
    n = 20
    mat = O.random_matrix(np.random.default_rng(seed), 2, groups, floor=0.03)
    w, p, q, gamma = O.pair_groups(mat, 0, 1)
    pairs = [dec.GroupedPair(w, p, q, gamma), dec.GroupedPair(w, q, p, gamma)]
    for frac in (0.05, 0.3):
        eps = frac * O.local_eps(mat)
        exact = max(O.exact_decomposed_delta(w, p, q, gamma, n, eps), O.exact_decomposed_delta(w, q, p, gamma, n, eps))
        fine = dec.decomposition_delta(None, n, eps, pairs=pairs)
        assert exact <= fine
        for kw in ({"max_blocks": 1}, {"max_blocks": 3}, {"tail": 5e-4}, {"tail": 5e-4, "max_blocks": 2}):
            coarse = dec.decomposition_delta(None, n, eps, pairs=pairs, **kw)
            assert fine * (1 - 1e-12) <= coarse, kw
        assert dec.decomposition_delta(None, n, eps, pairs=pairs, max_blocks=1) > fine  # blocking bites


# subset-exp (d, s, k), OUE d, OLH (k, g): every instance has four-group pairs
# subset_exp_pairs(2, 2, 1) holds a TWO-group pair (disjoint sets covering every item), padded to
# three groups like grouped_pairs does (it once crashed the three-group sums with an IndexError)
INSTANCES = [("subset-exp", (3, 1, 2), 6), ("subset-exp", (3, 2, 1), 4), ("subset-exp", (2, 2, 1), 5),
             ("oue", (3,), 6), ("oue", (4,), 4), ("olh", (3, 2), 6), ("olh", (3, 3), 5), ("olh", (4, 2), 4)]


def _instance(name, args, eps0):
    if name == "subset-exp":
        return rz.subset_exp_matrix(*args, eps0), O.subset_exp_matrix(*args, eps0), rz.subset_exp_pairs(*args, eps0)
    if name == "oue":
        (d,) = args
        mine = O.oue_matrix(d, eps0)
        # the package indexes bit vectors by sum_j b_j 2^j, the oracle in itertools.product order
        perm = [sum(b << j for j, b in enumerate(bits)) for bits in itertools.product((0, 1), repeat=d)]
        reordered = np.empty_like(mine)
        reordered[:, perm] = mine
        return rz.oue_matrix(d, eps0), reordered, rz.oue_optimal_pairs(d, eps0)
    k, g = args
    return rz.olh_matrix(k, g, eps0), O.olh_matrix(k, g, eps0), rz.olh_pairs(g, eps0, k=k)


def _exact_flag_pairs(name, args, eps0):
    """The independent-flag pairs the accountant evaluates exactly (OUE's slightly smaller blanket,
    OLH's blanket for every domain size), or None (subset-exp: its flags are not independent)."""
    if name == "oue":
        return rz.oue_pairs(args[0], eps0)
    if name == "olh":
        return rz.olh_pairs(args[1], eps0)
    return None


@pytest.mark.parametrize("name,args,n", INSTANCES)
@pytest.mark.parametrize("eps0", [1.0, 2.5])
def test_randomizers_sound_and_pairs_match(name, args, n, eps0):
    """The package's matrix == the oracle's; grouped_pairs(matrix) and the closed-form pairs ==
    the oracle's grouping; both routes give the same bound, above the exact shuffled divergence of
    every configuration and the exact decomposed divergence."""
    mat, mine, pairs = _instance(name, args, eps0)
    np.testing.assert_allclose(mat, mine, rtol=1e-13, atol=0)
    _groupings_agree(mat, dec.grouped_pairs(mat))
    _groupings_agree(mat, pairs)  # the closed forms == the matrix, up to group order and 1e-11
    assert max(len(g.w) for g in pairs) == 4
    eps_list = [f * eps0 for f in EPS_FRACS]
    exact = O.worst_shuffle_delta(mat, n, eps_list)
    by_matrix = dec.DecomposedPair(mat, n)
    by_pairs = dec.DecomposedPair(None, n, pairs=pairs)
    flag_pairs = _exact_flag_pairs(name, args, eps0)
    by_flags = None if flag_pairs is None else dec.DecomposedPair(None, n, pairs=flag_pairs)
    rel = []
    for eps, (real, arg) in zip(eps_list, exact, strict=True):
        up = by_pairs.delta(eps)
        if any(isinstance(g, DependentFlagPair) for g in pairs):
            # subset-exp's closed-form pairs evaluate the dependent flags without the spread the
            # matrix route takes: no looser, and still above the exact decomposed value (below)
            assert up <= by_matrix.delta(eps) * (1 + 1e-9)
        else:
            assert up == pytest.approx(by_matrix.delta(eps), rel=1e-9)
        decomposed, _ = O.decomposed_worst(mat, n, eps)
        assert real <= decomposed * (1 + ORACLE_RTOL)
        assert real <= up, (eps, arg)
        assert decomposed <= up
        if by_flags is not None:
            # the exact independent-flag path: sound, above the optimal decomposition, no looser
            # than the spread of the optimal blanket beyond the blanket it gives up
            exact_flags = by_flags.delta(eps)
            assert real <= exact_flags, (eps, arg)
            assert decomposed <= exact_flags
        rel.append((up - real) / real if real > 0 else math.inf)
    print(f"{name}{args} eps0={eps0} n={n}: min (upper-real)/real {min(rel):.3g}")


def test_olh_pairs_without_k_are_looser():
    """olh_pairs(g, eps0) (blanket valid for every domain size, evaluated exactly) bounds the exact
    decomposed divergence of the k-specific (larger, optimal) blanket."""
    for k, g, n in ((3, 2, 30), (4, 3, 25)):
        (pk,) = rz.olh_pairs(g, 1.5, k=k)
        generic = dec.DecomposedPair(None, n, pairs=rz.olh_pairs(g, 1.5))
        for eps in (0.05, 0.3):
            exact_k = max(O.exact_decomposed_delta(pk.w, pk.p, pk.q, pk.gamma, n, eps),
                          O.exact_decomposed_delta(pk.w, pk.q, pk.p, pk.gamma, n, eps))
            assert exact_k <= generic.delta(eps)


# ----------------------------------------------------------------------------- eps search
@pytest.mark.parametrize("mat_fn,n,delta", [
    (lambda: _random(5, 4, 4), 6, 0.05),
    (lambda: _random(3, 3, 5), 5, 0.02),
    (lambda: rz.oue_matrix(3, 1.0), 6, 0.01),
    (lambda: rz.subset_exp_matrix(3, 1, 2, 1.5), 6, 0.01),
])
def test_decomposition_eps_is_a_verified_point(mat_fn, n, delta):
    """decomposition_eps returns an eps whose upper delta meets the target, within rtol of the
    root (just below it the upper bound exceeds delta), and the exact shuffled and decomposed
    divergences at that eps meet it too."""
    mat = mat_fn()
    rtol = 1e-5
    eps = dec.decomposition_eps(mat, n, delta, rtol=rtol)
    assert 0 < eps < O.local_eps(mat)
    assert dec.decomposition_delta(mat, n, eps) <= delta
    assert dec.decomposition_delta(mat, n, eps * (1 - 4 * rtol)) > delta
    assert O.decomposed_worst(mat, n, eps)[0] <= delta
    assert O.worst_shuffle_delta(mat, n, [eps])[0][0] <= delta


# ----------------------------------------------------------------------------- power
# Measured when written (three-atom spreads, the best kept middle atom), relative excess of the
# upper bound over the exact decomposed divergence (delta scale), n = 10 / 40, eps = 0.05, 0.2,
# 0.4 eps0:  subset-exp(3,1,2): 0.004 0.040 0.106 / 0.007 0.071 0.266;  OUE(3): 0.002 0.021 0.059
# / 0.003 0.043 0.165. Spreading to two atoms (min and max) instead costs 0.28-0.90 / 0.33-2.98
# (subset-exp) and 0.80-4.1 / 0.98-41 (OUE); keeping the wrong middle atom costs up to 0.42 / 6.9.
# The looseness grows as delta shrinks (the spread fattens the tail of the sum), so the ceiling
# is per eps: 0.02 at 0.05 eps0, 0.10 at 0.2 eps0, 0.30 at 0.4 eps0 -- above every measured value,
# below every one of the cruder alternatives at the same point but one (two atoms at n = 10,
# 0.05 eps0 is 0.28 > 0.02 too).
# On the eps scale (the eps the upper bound certifies at the exact decomposed delta) the same points
# cost 0.6-5.0% (subset-exp 2.5/4.8/5.0% at n = 10, 1.7/3.0/3.7% at n = 40; OUE 0.6-2.0%); ceiling 6%.
POWER_CEILING = {0.05: 0.02, 0.2: 0.10, 0.4: 0.30}
EPS_CEILING = 1.06


@pytest.mark.parametrize("name,mat_fn,pairs_fn", [
    ("subset-exp(3,1,2)", lambda: rz.subset_exp_matrix(3, 1, 2, 1.0), lambda: rz.subset_exp_pairs(3, 1, 2, 1.0)),
    ("oue(3)", lambda: rz.oue_matrix(3, 1.0), lambda: rz.oue_optimal_pairs(3, 1.0)),
])
def test_spread_looseness_is_bounded(name, mat_fn, pairs_fn):
    mat, pairs = mat_fn(), pairs_fn()
    assert len(pairs) == 1 and len(pairs[0].w) == 4  # every victim pair is this one (symmetry)
    g = pairs[0]
    eps0 = O.local_eps(mat)
    for n in (10, 40):
        acc = dec.DecomposedPair(None, n, pairs=pairs)
        row = []
        for frac, ceiling in POWER_CEILING.items():
            eps = frac * eps0
            exact = max(O.exact_decomposed_delta(g.w, g.p, g.q, g.gamma, n, eps),
                        O.exact_decomposed_delta(g.w, g.q, g.p, g.gamma, n, eps))
            up = acc.delta(eps)
            excess = (up - exact) / exact
            assert 0 <= excess <= ceiling, (n, frac)
            # on the eps scale: the eps the upper bound certifies at the exact decomposed delta
            certified = dec.decomposition_eps(None, n, exact, pairs=pairs, rtol=1e-6)
            assert eps <= certified <= eps * EPS_CEILING, (n, frac)
            row.append(f"{excess:.3f} (eps +{(certified / eps - 1) * 100:.1f}%)")
        print(f"{name} n={n}: (upper - exact decomposed) / exact at eps = 0.05, 0.2, 0.4 eps0: {' '.join(row)}")


# ----------------------------------------------------------------------------- CLI
# small instances whose exact worst case the oracle enumerates: (flags, oracle matrix, n, delta)
CLI_CASES = [
    (["--mechanism", "subset-exp", "--d", "3", "--s", "1", "--k", "2"], lambda e: O.subset_exp_matrix(3, 1, 2, e), 5),
    (["--mechanism", "oue", "--d", "3"], lambda e: O.oue_matrix(3, e), 5),
    (["--mechanism", "olh", "--g", "2", "--domain", "3"], lambda e: O.olh_matrix(3, 2, e), 5),  # 3 values
    (["--mechanism", "subset-exp", "--d", "3", "--s", "2", "--k", "1"], lambda e: O.subset_exp_matrix(3, 2, 1, e), 4),
    (["--mechanism", "oue", "--d", "4"], lambda e: O.oue_matrix(4, e), 4),
    (["--mechanism", "olh", "--g", "3", "--domain", "3"], lambda e: O.olh_matrix(3, 3, e), 4),
    (["--mechanism", "olh", "--g", "3", "--domain", "2"], lambda e: O.olh_matrix(2, 3, e), 4),
    # the two-group pair of subset_exp_pairs (once "internal error: IndexError", exit 1)
    (["--mechanism", "subset-exp", "--d", "2", "--s", "2", "--k", "1"],
     lambda e: O.subset_exp_matrix(2, 2, 1, e), 4),
]


@pytest.mark.parametrize("flags,mat_fn,n", CLI_CASES, ids=lambda v: " ".join(v[1:]) if isinstance(v, list) else "")
@pytest.mark.parametrize("eps0", [1.0, 2.5])
def test_cli_best_brackets_the_exact_worst_case(flags, mat_fn, n, eps0, capsys):
    """``account best`` for the three randomizers: JSON keys, eps_lower <= eps, and the exact worst
    case over every configuration (oracle) lies between them: the real divergence at ``eps`` is at
    most delta, at ``eps_lower`` above it."""
    import json

    from shuffledp.cli import main

    delta = 0.01
    assert main(["account", "best", *flags, "--eps0", str(eps0), "--n", str(n), "--delta", str(delta)]) == 0
    row = json.loads(capsys.readouterr().out)
    assert {"mechanism", "eps", "eps_lower", "upper_by", "lower_by", "gap", "seconds", "eps0", "n",
            "delta"} <= set(row)
    assert row["mechanism"] == flags[1]
    assert 0 < row["eps_lower"] <= row["eps"] < eps0
    (at_upper, _), (at_lower, _) = O.worst_shuffle_delta(mat_fn(eps0), n, [row["eps"], row["eps_lower"]])
    assert at_upper <= delta < at_lower
    print(f"{' '.join(flags[1:])} eps0={eps0} n={n} delta={delta}: eps_lower {row['eps_lower']:.4f} "
          f"<= exact <= eps {row['eps']:.4f} ({row['upper_by']}); exact delta there {at_lower:.4g} / {at_upper:.4g}")


@pytest.mark.parametrize("args,flag", [
    (["--mechanism", "oue"], "--d"),
    (["--mechanism", "subset-exp", "--d", "3", "--k", "1"], "--s"),
    (["--mechanism", "subset-exp", "--d", "3", "--s", "1", "--k", "3"], "--k"),
    (["--mechanism", "subset-exp", "--d", "3", "--s", "0"], "--s"),
    (["--mechanism", "oue", "--d", "1"], "--d"),
    (["--mechanism", "oue", "--d", "3", "--k", "2"], "--k"),
    (["--mechanism", "olh", "--d", "3"], "--d"),
    (["--mechanism", "olh", "--g", "1"], "--g"),
    (["--mechanism", "olh", "--g", "2.5"], "--g"),
    (["--mechanism", "olh", "--g", "nan"], "--g"),
])
def test_cli_best_bad_flags_one_line_exit_2(args, flag, capsys):
    from shuffledp.cli import main

    assert main(["account", "best", *args, "--eps0", "1", "--n", "100", "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"shuffledp: error: {flag}:"), err


@pytest.mark.parametrize("mechanism,params,mat_fn,n", [
    ("subset-exp", {"d": 3, "s": 1, "k": 2}, lambda e: O.subset_exp_matrix(3, 1, 2, e), 5),
    ("oue", {"d": 3}, lambda e: O.oue_matrix(3, e), 5),
    ("olh", {"g": 3}, lambda e: O.olh_matrix(3, 3, e), 4),
])
def test_best_delta_upper_is_sound(mechanism, params, mat_fn, n):
    """best.delta_upper (used to certify a local eps) >= the exact worst case over every
    configuration."""
    from shuffledp.accountants import best

    for eps0 in (0.7, 2.0):
        eps_list = [f * eps0 for f in EPS_FRACS]
        exact = O.worst_shuffle_delta(mat_fn(eps0), n, eps_list)
        for eps, (real, arg) in zip(eps_list, exact, strict=True):
            assert real <= best.delta_upper(mechanism, eps0, n, eps, **params), (eps0, eps, arg)


# ----------------------------------------------------------------------------- property sweep
@settings(max_examples=40, derandomize=True, deadline=None)
@given(data=st.data(), inputs=st.integers(2, 4), outputs=st.integers(2, 5), n=st.integers(2, 5),
       floor=st.sampled_from([0.01, 0.05, 0.15]))
def test_property_random_matrix_sound(data, inputs, outputs, n, floor):
    """Matrices drawn by hypothesis (entries >= floor, rows normalised): the accountant is above the
    exact worst case over every configuration and above the exact decomposed pair, at eps from 0 to
    the matrix's eps0."""
    raw = data.draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=outputs, max_size=outputs),
                             min_size=inputs, max_size=inputs))
    mat = np.asarray(raw) + 1e-3
    mat = floor + (1.0 - outputs * floor) * mat / mat.sum(axis=1, keepdims=True)
    if np.ptp(mat, axis=0).max() < 1e-6:
        return  # identical rows: nothing to account for
    eps_list = [f * O.local_eps(mat) for f in (0.0, 0.1, 0.4, 0.8)]
    exact = O.worst_shuffle_delta(mat, n, eps_list)
    acc = dec.DecomposedPair(mat, n)
    for eps, (real, arg) in zip(eps_list, exact, strict=True):
        up = acc.delta(eps)
        assert real <= up, (eps, arg)
        assert O.decomposed_worst(mat, n, eps)[0] <= up
