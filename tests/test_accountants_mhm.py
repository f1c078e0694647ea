"""MHM's hash randomizer in the decomposition accountant (shuffledp.accountants.randomizers.mhm).

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

from shuffledp.accountants import best, params
from shuffledp.accountants.lower import exact_pairs as xp
from shuffledp.accountants.numerics import grouped as grp
from shuffledp.accountants.randomizers import mhm as M
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper.blanket import mhm_domain
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
        w, p, q = grp._row_pair_groups(mat, 0, j, omega, gamma)
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
    from shuffledp.accountants.randomizers.standard import coarse_three

    small = O.merge_columns(mat)
    for name, other in (("others_at_third", x2), ("others_at_x", x0)):
        for eps in (0.05, 0.3):
            low = xp.pair_delta(eps, n, coarse_three(vic_p), coarse_three(vic_q), coarse_three(configs[name]))
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
        best.best_eps("mhm", params.MHM_BIG_D_EPS0_MAX * 1.1, 100, 1e-6, d=params.MHM_BIG_D + 1)
    assert err.value.flag == "eps0"
    res = best.best_eps("mhm", 40.0, 1000, 1e-6, d=params.MHM_BIG_D, parallel=False)  # the largest d still allowed
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


def _set_partitions(n: int):
    """Every partition of ``n`` labelled items into blocks, as restricted growth strings."""
    def grow(prefix, top):
        if len(prefix) == n:
            yield prefix
            return
        for b in range(top + 2):
            yield from grow(prefix + [b], max(top, b))
    yield from grow([], -1)


def _exact_offsets_law(d: int, m: int, g: int) -> dict:
    """The exact law (Fractions) of ``(r_u, r_v)``, the two rows' ratio offsets to the blanket over
    ``e^eps0 - 1`` (1 at a hit, ``(d - l) / (g - l)`` at a miss with ``l`` distinct values), from
    the equality pattern of the ``d - m`` shared, ``2 m`` own hashed values and ``y`` (each pattern
    with ``k`` blocks has probability ``g (g - 1) ... (g - k + 1) / g^items``): independent of
    :func:`mhm_group_law`'s programme."""
    from fractions import Fraction

    shared, items = d - m, d + m + 1
    law: dict = {}
    for rg in _set_partitions(items):
        pr = Fraction(math.perm(g, max(rg) + 1), g ** items)
        xs, xps, y = rg[:shared] + rg[shared:shared + m], rg[:shared] + rg[shared + m:-1], rg[-1]
        key = tuple(Fraction(1) if y in s else Fraction(d - len(set(s)), g - len(set(s))) for s in (xs, xps))
        law[key] = law.get(key, 0) + pr
    return law


def _exact_icx_holds(lo: dict, hi: dict, ee) -> bool:
    """``E(Y_lo - t)_+ <= E(Y_hi - t)_+`` at every atom ``t`` of either law, ``Y = r_u - ee r_v``, in
    exact arithmetic (both laws have mass 1 and the same mean: checked)."""
    def plus(law, t):
        return sum(w * max(ru - ee * rv - t, 0) for (ru, rv), w in law.items())
    assert sum(lo.values()) == 1 and sum(hi.values()) == 1
    def mean(law):
        return sum(w * (ru - ee * rv) for (ru, rv), w in law.items())
    assert mean(lo) == mean(hi)
    atoms = {ru - ee * rv for (ru, rv) in list(lo) + list(hi)}
    return all(plus(lo, t) <= plus(hi, t) for t in atoms)


@pytest.mark.parametrize("d,eps0", [(2, 50.0), (3, 50.0), (3, 30.0)])
def test_icx_check_decides_at_large_eps_and_agrees_with_exact_arithmetic(d, eps0):
    """At eps near eps0 = 30-50 the breakpoint sums carry a common term of about e^eps (the heavy
    atom at 0) against differences of order 1, which the up/down forms cannot resolve in double:
    the shared-attribute pairs then fell back to spreads and held eps at its n = 1e6 value up to
    n = 1e9. Every verdict must agree with the exact law (Fractions, set partitions) against the
    flag pair (the m = d spread: alpha = d / g exactly; the stored alpha is its rounding, whose
    effect on the divergence is far inside the accountant's rounding allowance), and the pairs must
    be accepted there."""
    from fractions import Fraction

    g = mhm_domain(eps0, d)
    flag = M.mhm_pairs(d, g, eps0)[0]
    assert flag.lattice is None  # the flag pair is the reference here
    a = Fraction(d, g)
    assert abs(Fraction(flag.alpha) / a - 1) < 1e-15
    flag_law = {(Fraction(1), Fraction(0)): a * (1 - a), (Fraction(0), Fraction(1)): a * (1 - a),
                (Fraction(1), Fraction(1)): a * a, (Fraction(0), Fraction(0)): (1 - a) ** 2}
    for m, other in zip(range(d - 1, 0, -1), flag.others, strict=True):
        law = _exact_offsets_law(d, m, g)
        assert sum(w * ru for (ru, _), w in law.items()) == a  # the spread keeps the mean
        for eps in (0.5 * eps0, eps0 - 12.0, eps0 - 6.0, eps0 - 0.1):
            ee = math.exp(eps)
            assert M.icx_below(other, flag, ee), (m, eps)
            assert _exact_icx_holds(law, flag_law, Fraction(ee)), (m, eps)
            assert not M.icx_below(flag, other, ee)
            assert not _exact_icx_holds(flag_law, law, Fraction(ee))


def _spread_one_atom(pair, frac: float):
    """``pair`` with ``frac`` of its heaviest miss-offset atom ``(c, 0)`` moved half to ``(0, 0)``
    and half to ``(2 c, 0)``: a mean-preserving spread, so strictly above ``pair`` in convex order."""
    du, dv, w = list(pair.du), list(pair.dv), list(pair.w)
    i = max((j for j in range(len(w)) if dv[j] == 0.0 and 0.0 < du[j] < pair.du[0]), key=lambda j: w[j])
    moved = frac * w[i]
    w[i] -= moved
    du += [0.0, 2.0 * du[i]]
    dv += [0.0, 0.0]
    w += [0.5 * moved, 0.5 * moved]
    p = tuple(pair.gamma * (1.0 + x) * wi for x, wi in zip(du, w, strict=True))
    q = tuple(pair.gamma * (1.0 + x) * wi for x, wi in zip(dv, w, strict=True))
    return M.LevelPair(tuple(w), p, q, pair.gamma, tuple(du), tuple(dv))


@pytest.mark.parametrize("eps0", [1.0, 30.0, 50.0])
def test_icx_check_rejects_a_slightly_more_spread_pair(eps0):
    """A mutation: the pair spread by a little (1e-10 of one atom's mass) is not below it, and the
    pair is not strictly below itself; both must be rejected at every eps, large ones included."""
    d = 3
    g = mhm_domain(eps0, d)
    other = M.mhm_pairs(d, g, eps0)[0].others[0]
    wider = _spread_one_atom(other, 1e-10)
    for eps in np.linspace(0.01, eps0 - 0.01, 7):
        ee = math.exp(eps)
        assert not M.icx_below(wider, other, ee), eps
        assert not M.icx_below(other, other, ee), eps


@pytest.mark.parametrize("d,eps0", [(2, 50.0), (4, 50.0), (8, 25.0)])
def test_shared_attribute_pairs_do_not_hold_eps_up_at_large_eps0(d, eps0):
    """With the anchored check the m < d pairs are covered by the m = d pair at every eps the search
    visits: the accountant equals the m = d pair's value alone and keeps falling with n (before,
    at eps0 = 50 it stayed at 37.79 from n = 1e6 to 1e9)."""
    g = mhm_domain(eps0, d)
    vals = []
    for n in (10 ** 6, 10 ** 9):
        pairs = M.mhm_pairs(d, g, eps0)
        alone = M.mhm_pairs(d, g, eps0)
        object.__setattr__(alone[0], "others", ())
        acc = dec.decomposition_eps(None, n, 1e-6, pairs=pairs)
        assert acc == dec.decomposition_eps(None, n, 1e-6, pairs=alone)
        vals.append(acc)
    assert vals[1] < vals[0] - 5.0


def test_flag_route_refines_its_counts_at_tiny_delta(monkeypatch):
    """Where the flags answer (no lattice: eps0 = 8) and every m < d pair is covered, MHM's pair is
    refined like a flag pair at deep windows: d = 5, n = 1000, delta = 1e-250 within 0.5% of the
    m = d flag spread alone (refined), where its own blocks had been 3.9% above it."""
    from shuffledp.accountants.upper import flags

    d, eps0, n, delta = 5, 8.0, 1000, 1e-250
    g = mhm_domain(eps0, d)
    p = M.mhm_pairs(d, g, eps0)[0]
    alone = dec.decomposition_eps(None, n, delta, pairs=[flags.flag_pair(p.gamma, p.alpha, p.beta, p.u, p.v)])
    ours = dec.decomposition_eps(None, n, delta, pairs=M.mhm_pairs(d, g, eps0))
    assert alone <= ours <= alone * 1.005
    monkeypatch.setattr(dec, "FINE_TAIL", 0.0)
    assert dec.decomposition_eps(None, n, delta, pairs=M.mhm_pairs(d, g, eps0)) >= ours * 1.03
