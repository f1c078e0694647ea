"""The Poisson rate search's canonical answer (solve_poisson_lambda): lambda = exp(-k h) on a fixed grid
in y = -log(lambda), h = rtol, with k the evaluated switch (k passes, k - 1 fails); the same k from the
wide bracket and from any hint of neighbouring answers, right or wrong."""

from __future__ import annotations

import math

import pytest

from shuffledp.accountants.numerics.grid_search import grid_switch, warm_bracket
from shuffledp.accountants.special import poisson
from shuffledp.accountants.special.poisson import LAMBDA_RTOL, poisson_delta_bounds, single_item_target

# (n, m, d, s, eps, delta, accountant): non-integer m (the searched cases) over the accountants searched
POINTS = [
    (50000, 0.1, 128, 8, 2.0, 2e-7, "sound"),
    (50000, 3.48, 128, 8, 0.5, 2e-7, "sound"),
    (5000, 0.46, 21, 4, 1.0, 2e-6, "sound"),
    (5000, 2.15, 128, 4, 0.5, 2e-6, "paper"),
    (50000, 0.1, 21, 4, 0.5, 2e-7, "paper"),
    (2000, 0.7, 16, 2, 0.5, 1e-6, "pair"),
    (50000, 0.1, 128, 8, 1.0, 2e-7, "pair"),
    (50000, 6.3, 128, 4, 0.5, 2e-7, "pair"),
]


def _cold(args):
    """The answer from the wide bracket (no earlier answers remembered)."""
    poisson._WARM.clear()
    n, m, d, s, eps, delta, acc = args
    return poisson.solve_poisson_lambda(n, m, d, s, eps, delta, accountant=acc)


def _key(args):
    n, m, d, s, eps, delta, acc = args
    return (n, d, s, float(eps), float(delta), acc, float(LAMBDA_RTOL))


def _k(lam: float) -> int:
    k = round(-math.log(lam) / LAMBDA_RTOL)
    assert math.exp(-k * LAMBDA_RTOL) == lam, "the answer is not a grid point"
    return k


def _dval(lam, args):
    n, m, d, s, eps, delta, acc = args
    eps_single, target = single_item_target(eps, delta, s)
    tail = max(1e-300, 1e-6 * target)
    return poisson_delta_bounds(lam, n, m, d, eps_single, accountant=acc, tail=tail)[1], target


@pytest.mark.parametrize("args", POINTS)
def test_answer_is_the_grid_switch(args):
    """y = k h passes, y - h fails (both evaluated here again, independently of the search)."""
    res = _cold(args)
    assert res.feasible and 0 < res.lam < 1
    k = _k(res.lam)
    d_here, target = _dval(res.lam, args)
    d_before, _ = _dval(math.exp(-(k - 1) * LAMBDA_RTOL), args)
    assert d_here <= target < d_before
    assert res.delta_single == d_here


@pytest.mark.parametrize("args", POINTS)
def test_answer_does_not_depend_on_the_bracket(args):
    """Wide bracket, warm brackets from real neighbours, and wrong hints on either side: one answer."""
    cold = _cold(args)
    k = _k(cold.lam)
    n, m, d, s, eps, delta, acc = args
    # real neighbours solved first (their answers become the hints)
    poisson._WARM.clear()
    for mm in (m * 0.8, m * 1.25):
        poisson.solve_poisson_lambda(n, mm, d, s, eps, delta, accountant=acc)
    assert poisson.solve_poisson_lambda(n, m, d, s, eps, delta, accountant=acc) == cold
    # wrong hints: too narrow, on the wrong side, far off, one-sided
    for below, above in [(k + 3, k + 1), (k - 5, k - 20), (k + 40000, k - 40000), (1, 1), (k, None),
                         (None, k - 1), (k - 1, None), (None, k + 1)]:
        known = {}
        if below is not None:
            known[m * 0.9] = below
        if above is not None:
            known[m * 1.1] = above
        poisson._WARM.clear()
        poisson._WARM[_key(args)] = known
        assert poisson.solve_poisson_lambda(n, m, d, s, eps, delta, accountant=acc) == cold, (below, above)


PROXIES = {
    "linear": lambda x: x,
    "cubic": lambda x: x**3,
    "sign": lambda x: math.copysign(1.0, x),
    "none": lambda x: math.nan,
}


def _counting(switch: int, flips=(), proxy="linear"):
    """A grid predicate failing below ``switch`` (values at ``flips`` inverted); its proxy a
    function of ``switch - k - 1/2`` (exact, curved, sign only, or none)."""
    calls = []

    def passes(k):
        calls.append(k)
        return (k >= switch) != (k in flips), PROXIES[proxy](float(switch - k) - 0.5)
    return passes, calls


@pytest.mark.parametrize("proxy", list(PROXIES))
@pytest.mark.parametrize("switch", [1, 2, 7, 500, 99_998, 99_999])
def test_grid_switch_finds_the_switch_from_any_bracket(switch, proxy):
    for lo, hi in [(0, 100_000), (switch - 1, switch), (max(0, switch - 3), switch + 1000)]:
        passes, _ = _counting(switch, proxy=proxy)
        assert grid_switch(passes, lo, passes(lo)[1], hi, passes(hi)[1]) == (switch - 1, switch)


@pytest.mark.parametrize("proxy", list(PROXIES))
def test_grid_switch_ends_on_an_evaluated_adjacent_pair_when_not_monotone(proxy):
    """Non-monotone predicate (a passing point below the switch): the result is still a pair
    (fails, passes), both evaluated."""
    passes, calls = _counting(600, flips={300}, proxy=proxy)
    lo, hi = grid_switch(passes, 0, passes(0)[1], 1000, passes(1000)[1])
    assert hi == lo + 1 and lo in calls and hi in calls
    assert not passes(lo)[0] and passes(hi)[0]


def test_warm_bracket_widens_a_wrong_hint():
    passes, calls = _counting(700)
    for hint in [(100, 200), (900, 950), (650, 750), (None, 800), (600, None)]:
        lo, _, hi, _ = warm_bracket(passes, *hint, 0, 5000)
        assert lo < 700 <= hi and not passes(lo)[0] and passes(hi)[0]
