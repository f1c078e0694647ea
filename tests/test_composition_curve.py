"""The ``curve`` composition candidate (issue 38, item 2): one round's whole privacy profile made
into a dominating PLD by connect-the-dots, and the exact profile of binary randomized response.

Held against the exact T-fold composition of the worst real pair found
(:func:`exact.worst_pair_composed_eps`: exact law of the pair's counts, bracketed composition) on
a grid of randomizers, n, eps0, delta and T: never below it, and within 10% of it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accountants.composition import exact
from shuffledp.accountants.composition import profile_pld as pp
from shuffledp.accountants.composition import rounds as composition


def _hockey(P, Q, eps: float) -> float:
    return float(np.maximum(P - math.exp(eps) * Q, 0.0).sum())


def _pairs():
    rng = np.random.default_rng(38)
    out = []
    for size in (3, 5, 9):
        for _ in range(3):
            P, Q = rng.random(size) + 0.05, rng.random(size) + 0.05
            out.append((P / P.sum(), Q / Q.sum()))
    out.append(exact.krr_pair_pmfs(2, 1.0, 6, 0))
    return out


@pytest.mark.parametrize("idx", range(10))
def test_connect_the_dots_pld_dominates_both_directions(idx):
    """A PLD built from a pair's profile (both directions' max, at 24 points) reports at every eps,
    negative ones included, a delta at least each direction's exact one."""
    P, Q = (np.ravel(x) for x in _pairs()[idx])
    keep = (P > 0) | (Q > 0)
    P, Q = P[keep], Q[keep]
    both_pos = (P > 0) & (Q > 0)
    eps0 = float(np.max(np.abs(np.log(P[both_pos] / Q[both_pos]))))

    def both(e):
        return max(_hockey(P, Q, e), _hockey(Q, P, e))

    pts = np.linspace(0.0, eps0, 24)
    pld = pp.pld_from_profile(pts, [both(e) for e in pts], eps0, 1e-3)
    for eps in np.linspace(-eps0, eps0, 41):
        assert pld.get_delta_for_epsilon(eps) >= both(eps) - 1e-12, eps
    # and composed: never below the pair's own exact T-fold composition
    for rounds in (1, 8):
        low, _ = exact.pair_composed_eps_bracket(P, Q, rounds, 1e-6, 1e-3)
        ours = pld.self_compose(rounds).get_epsilon_for_delta(1e-6) if rounds > 1 else pld.get_epsilon_for_delta(1e-6)
        assert ours >= low - 1e-9


def test_hull_is_above_every_given_point_and_convex():
    P, Q = (np.ravel(x) for x in exact.krr_pair_pmfs(2, 2.0, 8, 3))
    pts = np.linspace(0.0, 2.0, 9)
    dl = [max(_hockey(P, Q, e), _hockey(Q, P, e)) for e in pts]
    hx, hy = pp.hull_curve(pts, dl, 2.0)
    slopes = np.diff(hy) / np.diff(hx)
    assert np.all(np.diff(slopes) >= -1e-12) and hx[0] == 0.0 and hy[0] == 1.0
    for e in np.linspace(-2.0, 2.0, 81):
        assert np.interp(math.exp(e), hx, hy) >= max(_hockey(P, Q, e), _hockey(Q, P, e)) - 1e-12


@pytest.mark.parametrize("eps0,n", [(0.5, 2), (1.0, 7), (2.0, 12)])
def test_binary_profile_is_the_largest_pair(eps0, n):
    """Exact: the largest divergence over every m (others m at x, n - 1 - m at x'), both directions."""
    prof = pp.binary_profile(eps0, n)
    pairs = [exact.krr_pair_pmfs(2, eps0, n, m) for m in range(n)]
    for eps in (0.0, 0.1, 0.5, eps0 * 0.9):
        ref = max(max(_hockey(P, Q, eps), _hockey(Q, P, eps)) for P, Q in pairs)
        assert prof(eps) == pytest.approx(ref, rel=1e-9, abs=1e-15)


def _h(mech, eps0, n, rounds, kw):
    vp, vq, configs = exact.group_laws(mech, eps0, **kw)
    P, Q = exact.group_pair_pmfs(vp, vq, [(configs["others_at_x'"], n - 1)])
    L, W, _ = exact.loss_law(P, Q)
    mean = float(np.dot(W, L))
    sd = float(np.sqrt(np.dot(W, (L - mean) ** 2)))
    return max(1e-6, 3e-3 * (rounds * mean + 5 * math.sqrt(rounds) * sd) / rounds)


GRID = [("krr", {"k": 2}, 1.0, 40, 1e-6, 1), ("krr", {"k": 2}, 1.0, 40, 1e-6, 100),
        ("krr", {"k": 2}, 0.5, 12, 1e-3, 1000), ("krr", {"k": 2}, 2.0, 16, 1e-6, 10),
        ("krr", {"k": 3}, 1.0, 10, 1e-6, 10), ("krr", {"k": 10}, 2.0, 16, 1e-6, 100),
        ("subset-exp", {"d": 4, "s": 1}, 1.0, 12, 1e-6, 10),
        # tiny n, every neighbouring pair enumerated (composition.enumerated): the exact profile
        ("oue", {"d": 3}, 1.0, 12, 1e-6, 10), ("oue", {"d": 2}, 2.0, 8, 1e-3, 100),
        ("olh", {"g": 3, "domain": 3}, 1.0, 12, 1e-6, 10),
        # OLH without a domain at n <= 4: every domain is D = n + 1 (enumerated; 1.18 and 1.12 before)
        ("olh", {"g": 3}, 1.0, 4, 1e-6, 10), ("olh", {"g": 3}, 0.5, 4, 1e-6, 100),
        # subset-exp at eps0 = 0.5 (PrivSet's subset size 2, D = 5 items): 192 datasets x 294k output
        # multisets, every pair on a grid of eps (enumerated.profile_on_grid; 1.121 before, with the
        # one-round bound of `best`)
        ("subset-exp", {"d": 4, "s": 1}, 0.5, 12, 1e-6, 100)]
# Open: OLH without a known input domain at n = 12 (every domain: its exact profile is that at
# D = n + 1 = 13 inputs, 2^13 report classes, enumerated only up to n = 4). There the curve composes
# the one-round upper bound of `best`, itself 8% above the exact profile of the pairs with the
# others on at most one value besides x and x' (one round, delta = 1e-6: 0.4275 against 0.3958).
# Measured here: 1.206 of the reference; that restricted profile would give 1.030, but that it is
# the exact one is unproven (enumerated's module docstring: an open question, tested where
# enumerable, with a stronger per-(a, b) form and a garbling for a = b = 0 at n <= 5; no proof for
# every n; a clone bound for the other datasets is too loose there, and the published decompositions
# are not below `best`, which evaluates the optimal one; the docstring's "What a proof would need"
# reduces the question to one lemma on the posterior of which reports hold the others on third
# values, and shows why the third-value bits alone cannot prove it when a + b >= 1). Soundness is asserted;
# the 10% goal is a strict xfail, so that meeting it shows.
OPEN = [("olh", {"g": 3}, 1.0, 12, 1e-6, 10)]


def _ref_kw(kw: dict) -> dict:
    return {name: value for name, value in kw.items() if name != "domain"}   # a third input: domain >= 3


def _check(mech, kw, eps0, n, delta, rounds):
    ref = _ref_kw(kw)
    low, split = exact.worst_pair_composed_eps(mech, eps0, n, rounds, delta, _h(mech, eps0, n, rounds, ref), **ref)
    res = composition.composed_eps(mech, eps0, n, delta, rounds, **kw)
    assert low <= res["eps"] * (1 + 1e-9), (split, low, res)
    return low, split, res


@pytest.mark.parametrize("mech,kw,eps0,n,delta,rounds", GRID)
def test_composed_within_ten_percent_of_the_worst_pair(mech, kw, eps0, n, delta, rounds):
    low, split, res = _check(mech, kw, eps0, n, delta, rounds)
    assert res["eps"] <= 1.10 * low, (split, low, res["eps"], res["by"])


@pytest.mark.parametrize("mech,kw,eps0,n,delta,rounds", OPEN)
def test_open_points_sound(mech, kw, eps0, n, delta, rounds):
    low, split, res = _check(mech, kw, eps0, n, delta, rounds)
    if res["eps"] > 1.10 * low:
        pytest.xfail(f"open: {res['eps'] / low:.3f} of the exact worst pair ({split})")


def test_not_looser_at_ten_thousand_rounds():
    """Small n, T = 10,000: the answer is the least candidate, never above the advanced theorem on
    the project's own one-round eps, and the curve wins over the pair's PLD (not evaluated by the
    answer where every pair is enumerated)."""
    res = composition.composed_eps("krr", 1.0, 100, 1e-6, 10_000, k=2)
    cand = res["candidates"]
    assert res["eps"] == min(cand.values()) <= cand["advanced"]
    pld, _ = composition.composed_pld("krr", 1.0, 100, 10_000, delta=1e-6, k=2)
    assert res["by"] == "curve" and cand["curve"] < pld.get_epsilon_for_delta(1e-6) and "pld" in res["skipped"]


def test_one_round_binary_uses_the_exact_profile():
    from shuffledp.accountants import best

    one = best.best_eps("krr", 1.0, 200, 1e-6, k=2)
    res = composition.composed_eps("krr", 1.0, 200, 1e-6, 1, k=2)
    assert res["by"] == "curve" and one["eps_lower"] <= res["eps"] < one["eps"]


def test_a_single_pair_profile_is_caught(monkeypatch):
    """Mutation: the exact profile of one configuration (others split between x and x') instead of
    the largest over every neighbouring pair composes below the exact worst pair: caught."""
    from shuffledp.accountants.composition import enumerated

    orig = enumerated.pair_laws

    def balanced(mechanism, eps0, n, params):
        kept = [c for c in orig(mechanism, eps0, n, params) if c[0][:2] == (n - 1 - (n - 1) // 2, (n - 1) // 2)]
        if len(kept) != 1:
            raise RuntimeError(f"the mutant's configuration is not enumerated: {kept}")
        return kept

    monkeypatch.setattr(enumerated, "pair_laws", balanced)
    with pytest.raises(AssertionError):
        _check("oue", {"d": 2}, 2.0, 8, 1e-3, 100)


def test_binary_at_ten_thousand_rounds_within_ten_percent_of_every_pair():
    """Binary randomized response, T = 10,000 (eps0 = 0.5, n = 12, delta = 1e-6): sound and within
    10% of the largest exact T-fold composition over every neighbouring pair (lower end: the
    optimistic PLD of each pair)."""
    eps0, n, delta, rounds = 0.5, 12, 1e-6, 10_000
    low = max(exact.optimistic_pair_eps(*exact.krr_pair_pmfs(2, eps0, n, m), rounds, delta, 2e-4) for m in range(n))
    res = composition.composed_eps("krr", eps0, n, delta, rounds, k=2)
    assert low <= res["eps"] <= 1.10 * low, (low, res["eps"], res["by"])


@pytest.mark.parametrize("m", [0, 2, 5])
def test_optimistic_lower_end_is_below_the_bracket(m):
    """The optimistic PLD's eps is at most the bracket's upper end (so at most the exact eps), and
    close to its lower end."""
    P, Q = exact.krr_pair_pmfs(2, 1.0, 6, m)
    low, high = exact.pair_composed_eps_bracket(P, Q, 8, 1e-6, 1e-4)
    opt = exact.optimistic_pair_eps(P, Q, 8, 1e-6, 1e-4)
    assert opt <= high + 1e-12 and opt >= low - 1e-2 * low
