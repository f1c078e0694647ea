"""MHM's hash randomizer in the decomposition accountant (shuffledp.accountants.mhm_randomizer).

The closed-form groups are checked against the tiny explicit matrix reduced mechanically, the
matrix against the protocol's own selection rule, the upper bound against exact enumeration (the
real shuffled pair over every configuration, and the exact decomposed divergence of every victim
pair), the lower bound against the exact real pair it claims to lower-bound.
"""

from __future__ import annotations

import itertools
import math

import _oracle_decomposition as O
import numpy as np
import pytest

from shuffledp.accountants import best
from shuffledp.accountants import decomposition as dec
from shuffledp.accountants import mhm_randomizer as M
from shuffledp.accountants.blanket import mhm_domain
from shuffledp.accountants.validation import AccountantDomainError

TINY = [(2, 2, 3, 1.0), (2, 3, 3, 0.7), (3, 2, 4, 1.5), (2, 2, 5, 2.0)]  # (d, k, g, eps0)


def _inputs(d: int, k: int):
    return list(itertools.product(range(k), repeat=d))


@pytest.mark.parametrize("d,k,g,eps0", TINY)
def test_matrix_is_the_protocols_selection_rule(d, k, g, eps0):
    from shuffledp.mechanisms.collision import collision_pmf
    from shuffledp.protocols.mhm import mhm_pq

    mat = M.mhm_matrix(d, k, g, eps0)
    p = mhm_pq(eps0, d, g)[0]
    funcs = list(itertools.product(range(g), repeat=k))
    rng = np.random.default_rng(25)
    for i, x in enumerate(_inputs(d, k)):
        for c in rng.choice(len(funcs) ** d, size=5, replace=False):
            fs = [funcs[(int(c) // len(funcs) ** j) % len(funcs)] for j in reversed(range(d))]
            hashed = np.array([f[xj] for f, xj in zip(fs, x, strict=True)])
            col = int(c) * g
            assert np.allclose(mat[i, col:col + g] * len(funcs) ** d, collision_pmf(hashed, p, g), rtol=1e-12)
    assert np.allclose(mat.sum(axis=1), 1.0)


@pytest.mark.parametrize("d,k,g,eps0", TINY)
def test_closed_form_groups_equal_the_matrix_reduced_mechanically(d, k, g, eps0):
    mat = M.mhm_matrix(d, k, g, eps0)
    cell = M.mhm_blanket_cell(d, g, eps0) / (g ** k) ** d
    omega = np.full(mat.shape[1], cell)
    gamma = float(omega.sum())
    assert np.all(mat.min(axis=0) >= omega * (1 - 1e-12))  # a valid blanket (at most every row)
    ins = _inputs(d, k)
    for j in range(1, len(ins)):
        m = sum(a != b for a, b in zip(ins[0], ins[j], strict=True))
        w, p, q = dec._row_pair_groups(mat, 0, j, omega, gamma)
        pair = M.mhm_pair(d, g, eps0, m)
        assert O.canonical(w, p, q) == O.canonical(pair.w, pair.p, pair.q)
        assert pair.gamma == pytest.approx(gamma, rel=1e-12)


@pytest.mark.parametrize("d,k,g,eps0", TINY)
def test_local_eps_is_eps0_despite_collisions(d, k, g, eps0):
    assert M.mhm_local_eps(d, g, eps0) == pytest.approx(eps0, rel=1e-12)
    assert O.local_eps(M.mhm_matrix(d, k, g, eps0)) == pytest.approx(eps0, rel=1e-12)


def test_group_law_is_a_distribution_with_the_right_hit_rate():
    for d, m, g in [(1, 1, 2), (2, 1, 5), (4, 4, 9), (5, 2, 12)]:
        law = M.mhm_group_law(d, m, g)
        assert sum(law.values()) == pytest.approx(1.0, abs=1e-13)
        # P(y among x's hashes) = E|HR(x)| / g, E|HR| = g (1 - (1 - 1/g)^d) (d balls in g bins)
        hit = sum(pr for (ha, _, _, _), pr in law.items() if ha)
        assert hit == pytest.approx(1.0 - (1.0 - 1.0 / g) ** d, rel=1e-12)
        assert all(1 <= la <= d and 1 <= lb <= d for (_, la, _, lb) in law)


def test_icx_check_is_one_sided():
    d, eps0 = 3, 1.0
    g = mhm_domain(eps0, d)
    flag = M.mhm_pairs(d, g, eps0)[0]
    for other in flag.others:
        for eps in (0.01, 0.1, 0.5):
            ee = math.exp(eps)
            assert M.icx_below(other, flag, ee)
            assert not M.icx_below(flag, other, ee)  # the flag pair is strictly more spread


@pytest.mark.parametrize("d,k,g,eps0", [(2, 2, 3, 1.0), (2, 2, 5, 2.0), (2, 2, 4, 1.5)])  # 31-35 merged outputs
def test_upper_is_above_the_exact_shuffle_of_every_configuration(d, k, g, eps0):
    mat = M.mhm_matrix(d, k, g, eps0)
    pairs = M.mhm_pairs(d, g, eps0)
    eps_list = [0.05, 0.2, 0.5]
    for n in (3, 4):
        exact = O.worst_shuffle_delta(mat, n, eps_list)
        for eps, (ex, _) in zip(eps_list, exact, strict=True):
            up = dec.decomposition_delta(None, n, eps, pairs=pairs)
            assert up >= ex * (1 - 1e-9), (n, eps, up, ex)


@pytest.mark.parametrize("d,eps0", [(2, 0.5), (2, 2.0), (3, 1.0)])
def test_upper_is_above_the_exact_decomposed_divergence_of_every_pair(d, eps0):
    g = mhm_domain(eps0, d)
    pairs = M.mhm_pairs(d, g, eps0)
    n = 8
    for eps in (0.05, 0.3):
        ee = math.exp(eps)
        up = dec.decomposition_delta(None, n, eps, pairs=pairs)
        for m in range(1, d + 1):
            pr = M.mhm_pair(d, g, eps0, m)
            keep = [i for i, w in enumerate(pr.w) if w > 0]
            w = np.array([pr.w[i] for i in keep])
            z = (np.array([pr.p[i] for i in keep]) - ee * np.array([pr.q[i] for i in keep])) / w
            exact = O.atoms_expectation(w, z, pr.gamma, n)  # the pair is symmetric: one direction
            assert up >= exact * (1 - 1e-9), (m, eps, up, exact)
        assert up <= 2.0 * exact  # not vacuous (the delta, not the eps, ratio)


def _two_user_hockey(mat, a: int, b: int, other: int, eps: float) -> float:
    """Exact divergence of the shuffled pair of two reports (victim at ``a`` vs ``b``, one other user
    at ``other``): the law of the unordered pair of (merged) outputs."""
    def law(x):
        j = np.outer(mat[x], mat[other])
        return np.triu(j + j.T, 1) + np.diag(np.diag(j))
    return float(np.maximum(law(a) - math.exp(eps) * law(b), 0.0).sum())


def test_lower_configs_are_below_the_exact_real_pair():
    d, k, g, eps0, n = 2, 3, 3, 1.0, 2  # 293 merged outputs: one other user
    mat = M.mhm_matrix(d, k, g, eps0)
    ins = _inputs(d, k)
    x0, x1, x2 = ins.index((0, 0)), ins.index((1, 1)), ins.index((2, 2))
    vic_p, vic_q, configs = M.mhm_real_pair_configs(d, g, eps0)
    from shuffledp.accountants.randomizers import coarse_three

    small = O.merge_columns(mat)
    for name, other in (("others_at_third", x2), ("others_at_x", x0)):
        for eps in (0.05, 0.3):
            low = dec.pair_delta(eps, n, coarse_three(vic_p), coarse_three(vic_q), coarse_three(configs[name]))
            exact = max(_two_user_hockey(small, a, b, other, eps) for a, b in ((x0, x1), (x1, x0)))
            assert 0 < low <= exact * (1 + 1e-9), (name, eps, low, exact)


@pytest.mark.parametrize("d", [2, 5])
def test_lower_is_below_upper_on_a_grid(d):
    for eps0, n in ((0.5, 1000), (2.0, 20000), (8.0, 1000), (2.0, 10**7)):
        res = best.best_eps("mhm", eps0, n, 1e-6, d=d, parallel=False)
        assert 0 < res["eps_lower"] <= res["eps"] <= eps0
        if n <= best.HEAVY_N_MAX["mhm"]:
            assert res["upper_by"] == "decomposition"


@pytest.mark.parametrize("kw,flag", [({}, "d"), ({"d": 17}, "d"), ({"d": 0}, "d"), ({"d": 3, "g": 3}, "g"),
                                     ({"d": 2, "s": 2}, "s"), ({"d": 2, "k": 2}, "k")])
def test_domain_errors_name_the_flag(kw, flag):
    with pytest.raises(AccountantDomainError) as err:
        best.best_eps("mhm", 1.0, 100, 1e-6, **kw)
    assert err.value.flag == flag


def test_large_d_refuses_a_large_eps0_before_the_work():
    with pytest.raises(AccountantDomainError) as err:
        best.best_eps("mhm", best.MHM_BIG_D_EPS0_MAX * 1.1, 100, 1e-6, d=best.MHM_BIG_D + 1)
    assert err.value.flag == "eps0"
    res = best.best_eps("mhm", 40.0, 1000, 1e-6, d=best.MHM_BIG_D, parallel=False)  # the largest d still allowed
    assert 0 < res["eps_lower"] <= res["eps"] < 40.0


def test_cli_mhm_answers_and_names_a_missing_d(capsys):
    import json

    from shuffledp.cli import main

    assert main(["account", "best", "--mechanism", "mhm", "--d", "2", "--eps0", "2", "--n", "1000",
                 "--delta", "1e-6"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[0])
    assert out["upper_by"] == "decomposition" and 0 < out["eps_lower"] <= out["eps"] < 2
    assert main(["account", "best", "--mechanism", "mhm", "--eps0", "1", "--n", "100", "--delta", "1e-6"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shuffledp: error: --d:"), lines
