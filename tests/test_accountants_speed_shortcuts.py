"""The shortcuts that keep `account best` under its time budget (issue 25 item 3) are sound: each
value with the shortcut is compared with the value without it, at tiny deltas and n >= 1e12.

* the eps search (``numerics.secant.secant_eps``: secant on ``sqrt(log 1/delta)``, Illinois regula
  falsi once bracketed): always a verified point, within the search tolerance of the root that a
  plain bisection finds;
* the walk's refinement (``walk_blocks``: steered by the blocking gap, several cuts per block):
  its upper bound is never below the lower bound of a much finer refinement and stays within the
  target of its upper bound;
* the Chernoff ends of the count windows (``numerics.grouped.t_window``): inside Bernstein's
  window, the mass outside at most the tail, and the divergence at least the one with Bernstein's
  window alone (a narrower window only moves cells into the charged outside mass) and at most
  the tail above it;
* the forward answer seeding the composition's profile (``compose.round_profile(known=...)``):
  the composed eps stays above the composed exact real pair and close to the unseeded one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accountants import best
from shuffledp.accountants.composition import profile as compose
from shuffledp.accountants.numerics import grouped as grp
from shuffledp.accountants.numerics import secant as sec
from shuffledp.accountants.numerics import walk_blocks as wb
from shuffledp.accountants.upper import decomposition as dec

# slow queries of the random-domain benchmark (seed 7) and a moderate one
SEARCH_POINTS = [
    ("krr", {"k": 176}, 0.037, 386_167_291_547_907, 4.31e-268),
    ("krr", {"k": 6834}, 18.433, 11_909_044, 5.18e-252),
    ("krr", {"k": 1198}, 0.23, 1_576_759_641_774, 3.82e-240),
    ("oue", {"d": 100}, 2.0, 10_000, 1e-6),
]


def _plain_bisection(fn, delta: float, lo: float, hi: float, rtol: float) -> float:
    """The smallest verified eps by bisection alone (the search without any interpolation)."""
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fn(mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("mech,kw,eps0,n,delta", SEARCH_POINTS)
def test_decomposition_search_is_a_verified_point_near_the_bisection_root(mech, kw, eps0, n, delta):
    rtol = 1e-5
    pairs = best.grouped_pairs_for(mech, eps0, best.mechanism_params(mech, eps0, **kw))
    tail = max(1e-300, 1e-3 * rtol * delta)
    pair = dec.DecomposedPair(None, n, tail=tail, pairs=pairs)
    top = dec.pairs_eps0(pairs)

    def fn(e: float) -> float:
        return 0.0 if e >= top else pair.delta(e)

    guess = sec.asymptotic_guess(kw.get("k", 2), eps0, n, delta)
    fast = dec.decomposition_eps(None, n, delta, pairs=pairs, rtol=rtol, guess=guess)
    assert fn(fast) <= delta   # verified with the same windows
    # the root by bisection, started from a bracket around the answer (both ends checked)
    lo, hi = fast * (1 - 1e-3), fast * (1 + 1e-3)
    assert fn(lo) > delta and fn(hi) <= delta
    slow = _plain_bisection(fn, delta, lo, hi, rtol / 4)
    assert slow <= fast <= slow * (1 + 1.5 * rtol)


@pytest.mark.parametrize("side", ["upper", "lower"])
def test_secant_search_on_plateaus_and_tiny_targets(side):
    """Synthetic non-increasing functions: a Gaussian-like tail down to 1e-280 with a floor (the
    charged truncated mass) and a step; the answer is always a verified point on its side and
    within rtol of the true root, in far fewer evaluations than bisection would need."""
    rtol = 1e-5
    for root, delta, floor in ((7e-9, 4e-268, 1e-278), (16.8, 5e-252, 1e-262), (0.08, 1e-6, 0.0)):
        a = math.log(1.0 / delta) / root ** 2
        calls: list[float] = []

        def fn(e: float, a=a, floor=floor, top=2.5 * root, calls=calls) -> float:
            calls.append(e)
            return max(math.exp(-a * e * e), floor) if e < top else 0.0

        got = dec.secant_eps(fn, delta, 0.0, 3 * root, 0.7 * root, rtol, side=side)
        if side == "upper":
            assert fn(got) <= delta and got <= root * (1 + rtol)
        else:
            assert fn(got) > delta and got >= root * (1 - rtol)
        assert len(calls) <= 16


@pytest.mark.parametrize("k,eps0,M,eps", [(176, 0.037, 386_084_614_743_927, 6.9952e-9),
                                          (1198, 0.23, 1_576_000_000_000, 2.7259e-7),
                                          (10, 2.0, 10**6, 0.02)])
def test_walk_refinement_against_a_much_finer_one(k, eps0, M, eps):
    """The blocked walk at the default target against the same walk refined to a target 100 times
    finer: the default upper bound is at least the fine lower bound (it bounds the true value)
    and within the default target (plus the rounding charges' share) of the fine upper bound."""
    pair = dec.krr_pairs(k, eps0)[0]
    ms = np.floor(np.array([float(M), float(M) * (1 + 1e-6)]))
    up, lo = wb.walk_divergence(ms, pair, math.exp(eps))
    fine_up, fine_lo = wb.walk_divergence(ms, pair, math.exp(eps), target=wb.TARGET / 100)
    assert np.all(up > 0) and np.all(lo <= up)
    assert np.all(up >= fine_lo * (1 - 1e-12))
    assert np.all(up <= fine_up * (1 + 2 * wb.TARGET))


@pytest.mark.parametrize("N,s,tail", [(11_909_044.0, 6.8e-5, 5e-260), (2019.0, 2.9e-4, 5e-260),
                                      (1e4, 0.3, 1e-16), (1e15, 1e-12, 1e-300), (3.9e14, 0.0057, 4e-276)])
def test_chernoff_window_holds_its_tail_inside_bernstein(N, s, tail):
    lo, hi, out = grp.t_window(np.array([N]), s, tail)
    blo, bhi, bout = grp.t_window(np.array([N]), s, tail, chernoff=False)
    assert blo[0] <= lo[0] <= hi[0] <= bhi[0]
    assert bout[0] <= out[0] <= tail * (1 + 1e-6) + 1e-299   # rounded up by binom_rtol, floor 1e-300


@pytest.mark.parametrize("mech,kw,eps0,n,eps,delta", [
    ("krr", {"k": 6834}, 18.433, 11_909_044, 16.8154, 5.18e-252),
    ("krr", {"k": 1198}, 0.23, 1_576_759_641_774, 2.7259e-7, 3.82e-240),
    ("subset-exp", {"d": 20, "s": 2}, 2.0, 10_000, 0.0773, 1e-6),
    ("olh", {"g": 2}, 2.0, 10_000, 0.079, 1e-6),
])
def test_divergence_with_and_without_the_chernoff_ends(monkeypatch, mech, kw, eps0, n, eps, delta):
    """A narrower window moves cells into the charged outside mass, which is at least their
    divergence: the bound with the Chernoff ends is at least the one with Bernstein's window
    alone (up to the rounding allowance) and at most a few tails above it."""
    pairs = best.grouped_pairs_for(mech, eps0, best.mechanism_params(mech, eps0, **kw))
    tail = 1e-3 * 1e-5 * delta
    fast = dec.DecomposedPair(None, n, tail=tail, pairs=pairs).delta(eps)
    monkeypatch.setattr(grp, "chernoff_ends", lambda N, s, tail: (-np.inf, np.inf))
    plain = dec.DecomposedPair(None, n, tail=tail, pairs=pairs).delta(eps)
    assert plain * (1 - 1e-9) <= fast <= plain * (1 + 1e-9) + 4 * tail


@pytest.mark.parametrize("mech,kw,n,eps0,rounds", [("krr", {"k": 2}, 50, 2.0, 30), ("krr", {"k": 10}, 2_000, 1.0, 30),
                                                   ("olh", {"g": 2}, 10_000, 2.0, 10),
                                                   ("subset-exp", {"d": 20, "s": 2}, 10_000, 2.0, 100)])
def test_profile_seeded_by_the_forward_answer(mech, kw, n, eps0, rounds):
    """The forward answer's (eps, delta) is a guarantee of one round, so the seeded profile keeps
    it as a point; the composed eps with the seed stays within 1% of the unseeded search's and
    below basic composition, and (binary RR, small n) above the composed exact real pair."""
    delta = 1e-6
    fwd = best.best_eps(mech, eps0, n, delta, parallel=False, **kw)
    seeded = compose.composed_eps(mech, eps0, n, delta, rounds, forward=fwd, **kw)
    plain = compose.composed_eps(mech, eps0, n, delta, rounds, **kw)
    own = fwd["upper_by"] in ("decomposition", "variation-ratio")   # else the forward is not a seed
    assert ((fwd["eps"], delta) in seeded["profile"]) == own
    assert seeded["eps"] <= rounds * eps0
    assert abs(seeded["eps"] - plain["eps"]) <= 0.01 * plain["eps"]
    if kw.get("k") == 2:
        from dp_accounting.pld import privacy_loss_distribution as pld
        from test_accountants_compose import _binary_rr_pair  # the exact real pair's laws

        p, q = _binary_rr_pair(n, eps0)
        logs = [{i: float(v) for i, v in enumerate(np.log(a)) if np.isfinite(v)} for a in (p, q)]
        pair = pld.from_two_probability_mass_functions(logs[0], logs[1], pessimistic_estimate=False,
                                                       value_discretization_interval=1e-4, symmetric=False)
        assert pair.self_compose(rounds).get_epsilon_for_delta(delta) <= seeded["eps"]


@pytest.mark.parametrize("mech,kw,eps0,n,tail,epss", [
    ("subset-exp", {"d": 20, "s": 2}, 2.0, 10_000, 1e-16, (1e-9, 0.05, 0.1)),
    ("krr", {"k": 10}, 2.0, 10**6, 1e-16, (0.005, 0.01)),
    ("olh", {"g": 2}, 2.0, 10_000, 1e-16, (0.05, 0.1)),
    ("krr", {"k": 1198}, 0.23, 1_576_759_641_774, 1e-250, (2.7e-7, 3e-7)),
])
def test_profile_block_cap_only_loosens(mech, kw, eps0, n, tail, epss):
    """The profile's decomposition with at most PROFILE_BLOCKS blanket-count blocks (each charged at
    its smallest count) still bounds the decomposed divergence from above: it is never below the
    lower side of the cell budget's blocking (each block at its largest count), and within 5% of
    that blocking's upper bound where delta is not tiny."""
    pairs = best.grouped_pairs_for(mech, eps0, best.mechanism_params(mech, eps0, **kw))
    capped = dec.DecomposedPair(None, n, tail=tail, pairs=pairs, block_cap=compose.PROFILE_BLOCKS)
    full = dec.DecomposedPair(None, n, tail=tail, pairs=pairs)
    assert capped.m_upper.size <= compose.PROFILE_BLOCKS
    for eps in epss:
        a = capped.delta(eps)
        assert a >= full.delta_lower(eps)
        if a > 1e-12:
            assert a <= 1.05 * full.delta(eps)


def test_window_mass_above_delta_answers_eps0_at_once():
    """Where the blanket count's mass outside its window already exceeds delta (delta near
    1e-303 with a window's tail of 1e-300), no eps under the randomizer's eps0 can be certified:
    decomposition_eps answers eps0 without a search, and the bound itself agrees (its delta just
    below eps0 is above the target). Its own tail goes down to TAIL_MIN (1e-304): there it searches."""
    pairs = dec.krr_pairs(10, 2.0)
    n, delta = 10 ** 15, 1e-303
    pair = dec.DecomposedPair(None, n, tail=1e-300, pairs=pairs)
    assert pair.m_outside > delta
    top = dec.pairs_eps0(pairs)
    assert dec.decomposition_eps(None, n, delta, pairs=pairs, tail=1e-300) == top
    assert pair.delta(top * (1 - 1e-9)) > delta
    assert dec.decomposition_eps(None, n, 1e-300, pairs=pairs) < 0.01 * top


def _exact_lower_eps(n: int, delta: float, pairs, hi: float) -> float:
    """eps where the every-count lower side (each blanket count its own block, no allowances)
    crosses delta: the decomposed value's eps from below, to 1e-6, searched in [hi / 1.01, hi]
    (its value at hi / 1.01 must exceed delta)."""
    E = dec.DecomposedPair(None, n, tail=max(1e-304, 1e-8 * delta), pairs=pairs, max_blocks=10 ** 6)
    lo = hi / 1.01
    assert max(E.pair_value(g, math.exp(lo), False) for g in E.directed) > delta
    assert max(E.pair_value(g, math.exp(hi), False) for g in E.directed) <= delta  # hi is not below it
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        v = max(E.pair_value(g, math.exp(mid), False) for g in E.directed)
        lo, hi = (mid, hi) if v > delta else (lo, mid)
    return lo


@pytest.mark.parametrize("n,delta", [(1000, 1e-290), (3000, 1e-200), (3000, 1e-60)])
def test_refined_counts_at_tiny_delta(n, delta, monkeypatch):
    """Below FINE_TAIL the blanket counts are refined where the divergence lies: never below the
    every-count lower side (a refinement charging a cell below its first count would be), within
    0.3% of it in eps, where the blocks alone were 0.1-1.2% above it."""
    pairs = dec.krr_pairs(10, 2.0)
    ours = dec.decomposition_eps(None, n, delta, pairs=pairs)
    exact = _exact_lower_eps(n, delta, pairs, ours)
    assert ours <= exact * 1.003
    tail = max(1e-304, 1e-8 * delta)
    P = dec.DecomposedPair(None, n, tail=tail, pairs=pairs)
    E = dec.DecomposedPair(None, n, tail=tail, pairs=pairs, max_blocks=10 ** 6)
    for eps in (0.98 * ours, ours, 1.02 * ours):
        ee = math.exp(eps)
        assert P.pair_value(pairs[0], ee, True) >= E.pair_value(pairs[0], ee, False)
    monkeypatch.setattr(dec, "FINE_TAIL", 0.0)
    coarse = dec.decomposition_eps(None, n, delta, pairs=pairs)
    assert coarse >= ours
    if delta < 1e-100:
        assert coarse >= exact * 1.006


def test_refined_counts_for_flag_pairs(monkeypatch):
    """The flag pairs (OUE, local hashing) refine their blanket counts too, per direction: OUE
    d = 8, eps0 = 2, n = 1000, delta = 1e-200 within 0.3% of the every-count lower side (the
    blocks alone: 1.1% above it); never below it."""
    params = best.mechanism_params("oue", 2.0, d=8)
    pairs = best.grouped_pairs_for("oue", 2.0, params)
    assert callable(pairs[0].row_values)
    ours = dec.decomposition_eps(None, 1000, 1e-200, pairs=pairs)
    exact = _exact_lower_eps(1000, 1e-200, pairs, ours)
    assert ours <= exact * 1.003
    monkeypatch.setattr(dec, "FINE_TAIL", 0.0)
    assert dec.decomposition_eps(None, 1000, 1e-200, pairs=pairs) >= exact * 1.008
