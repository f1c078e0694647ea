"""Composition of ``account best`` over T rounds (issue 25, item 5): at T = 1 the one-round
answer; at small n never below the composition of a real neighbouring pair's exact laws (a lower
bound on the true T-round eps); monotone in T; the CLI flag."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants import best
from shuffledp.accountants.composition import profile as compose


def test_one_round_is_the_forward_answer():
    one = best.best_eps("krr", 1.0, 2_000, 1e-6, k=2, parallel=False)
    res = compose.composed_eps("krr", 1.0, 2_000, 1e-6, 1, k=2)
    assert res["eps"] == one["eps"] and res["rounds"] == 1
    # the PLD paths at T = 1 give the same point back, rounded up by their discretisation only
    via_pld = compose.composed_from_point(one["eps"], 1e-6, 1, 1e-6)
    assert one["eps"] <= via_pld <= one["eps"] + 1.5e-4
    via_pair = compose.composed_profile([(1.0, 0.0), (one["eps"], 1e-6)], 1, 1e-6)
    assert one["eps"] - 1e-9 <= via_pair <= one["eps"] + 1.5e-4


def test_tradeoff_pair_meets_every_point_from_the_weak_side():
    """The pair built from a profile has, at each point's eps and in both directions, hockey-stick
    divergence at least that point's delta (the pair is no more private than the points say:
    rounding goes against us, so it dominates) and at most a hair above it (it is the pair of
    those points, not a trivial one)."""
    from shuffledp.accountants.numerics.hockey_stick import hockey_stick

    points = [(3.0, 0.0), (0.8, 1e-3), (0.4, 1e-2), (1.5, 1e-6), (2.2, 1e-10)]
    p, q = compose.tradeoff_pair(points)
    assert p.sum() == pytest.approx(1.0) and q.sum() == pytest.approx(1.0)
    for eps, dlt in points:
        for a, b in ((p, q), (q, p)):
            assert dlt <= hockey_stick(a, b, eps) <= dlt * (1 + 1e-4) + 1e-14


def test_profile_deltas_whose_digits_would_be_lost_are_refused():
    """1 - 1e-20 is the double 1: such a point would read as pure eps-DP (optimistic)."""
    with pytest.raises(ValueError, match="lose its digits"):
        compose.tradeoff_pair([(1.0, 0.0), (0.3, 1e-20)])
    assert min(compose.profile_deltas(1e-300, 10)) >= compose.PROFILE_DELTA_MIN
    res = compose.composed_eps("krr", 1.0, 1000, 1e-300, 10, k=2)   # far below: pure composition
    assert res["eps"] == pytest.approx(10.0)


def test_one_point_pair_is_the_randomized_response_pair():
    from shuffledp.accountants.numerics.hockey_stick import hockey_stick

    p1, q1 = compose.tradeoff_pair([(0.5, 1e-4)])
    assert hockey_stick(p1, q1, 0.5) == pytest.approx(1e-4, rel=1e-9)


def _binary_rr_pair(n: int, eps0: float):
    """Exact laws of the count of ones of shuffled binary RR, the other n - 1 users all holding 0,
    the victim 0 or 1 (a real neighbouring pair)."""
    ph = math.exp(eps0) / (1 + math.exp(eps0))
    others = stats.binom.pmf(np.arange(n), n - 1, 1 - ph)
    pad, base = np.concatenate([[0.0], others]), np.concatenate([others, [0.0]])
    return (1 - ph) * pad + ph * base, ph * pad + (1 - ph) * base


@pytest.mark.parametrize("mech,n,eps0,rounds", [("krr", 20, 1.0, 10), ("krr", 50, 2.0, 30),
                                                ("general", 20, 1.0, 10), ("general", 200, 2.0, 100)])
def test_never_below_the_composed_exact_pair(mech, n, eps0, rounds):
    """The T-fold composition of a real pair (dp_accounting's optimistic PLD of its exact pmfs:
    rounded down, a lower bound on that pair's composed eps) lower-bounds the true T-round eps;
    our composed upper bound stays above it. Binary RR is eps0-LDP, so its pair also lower-bounds
    the class ``general``."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    p, q = _binary_rr_pair(n, eps0)
    logs = [{i: float(v) for i, v in enumerate(np.log(a)) if np.isfinite(v)} for a in (p, q)]
    pair = pld.from_two_probability_mass_functions(logs[0], logs[1], pessimistic_estimate=False,
                                                   value_discretization_interval=1e-4, symmetric=False)
    exact = pair.self_compose(rounds).get_epsilon_for_delta(1e-6)
    ours = compose.composed_eps(mech, eps0, n, 1e-6, rounds, **({"k": 2} if mech == "krr" else {}))["eps"]
    assert exact <= ours
    assert ours <= rounds * eps0


def test_monotone_in_rounds_and_below_basic_composition():
    res = [compose.composed_eps("krr", 1.0, 10_000, 1e-6, t, k=10) for t in (1, 10, 100)]
    eps = [r["eps"] for r in res]
    assert eps[0] < eps[1] < eps[2]
    # the profile pair is never worse than its own points alone: the one-point RR pair composed
    for t, r in zip((10, 100), res[1:], strict=True):
        for e1, d1 in r["profile"]:
            if 0 < d1 < 1e-6 / t:
                assert r["eps"] <= compose.composed_from_point(e1, d1, t, 1e-6) + t * 2e-4


def test_cli_rounds():
    base = [sys.executable, "-m", "shuffledp", "account", "best", "--mechanism", "krr", "--k", "2",
            "--eps0", "1", "--n", "1000", "--delta", "1e-6"]
    proc = subprocess.run([*base, "--rounds", "10"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["rounds"] == 10 and out["eps"] <= out["eps_composed"] <= 10 * 1.0
    proc = subprocess.run([*base, "--rounds", "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--rounds" in proc.stderr


@pytest.mark.parametrize("mech,kw,n", [("krr", {"k": 10}, 10_000), ("oue", {"d": 20}, 5_000),
                                       ("general", {}, 10_000)])
def test_profile_points_are_guarantees_of_the_forward_accountant(mech, kw, n):
    """Every point of the round's profile (one delta evaluation each, placed, not searched) is a
    guarantee by best_eps's own bounds: its eps at that point's delta is no larger."""
    pts = compose.round_profile(mech, 2.0, n, 1e-6, 10, **kw)
    inner = [(e, d) for e, d in pts if compose.PROFILE_DELTA_MIN < d < 0.5]
    assert len(inner) >= 6
    decades = {math.floor(math.log10(d)) for _, d in inner}
    assert len(decades) >= 5   # spread over the profile, not piled up
    for e, d in inner[::2]:
        assert best.best_eps(mech, 2.0, n, d, parallel=False, **kw)["eps"] <= e * (1 + 3e-5) + 1e-12


def test_one_round_reuses_a_given_forward_answer(monkeypatch):
    """With the forward answer given (the CLI's), one round does not run best_eps again."""
    one = best.best_eps("krr", 1.0, 2_000, 1e-6, k=2, parallel=False)

    def refuse(*args, **kw):
        raise AssertionError("best_eps run twice")

    monkeypatch.setattr(best, "best_eps", refuse)
    res = compose.composed_eps("krr", 1.0, 2_000, 1e-6, 1, k=2, forward=one)
    assert res["eps"] == one["eps"] and res["rounds"] == 1


@pytest.mark.parametrize("eps0,n", [(1.0, 30), (3.0, 60)])
def test_total_variation_point_above_the_exact_worst_case(eps0, n):
    """The profile's point at eps = 0 (bounded from the delta at TV_EPS) is at least binary RR's
    exact worst-case total variation (every configuration of the others enumerated), and at
    least the round's own bound at exactly 0 less TV_EPS."""
    from shuffledp.accountants.lower import lower_bounds as lbm

    pts = dict(compose.round_profile("krr", eps0, n, 1e-6, 10, k=2))
    exact = lbm.binary_rr_exact_delta(eps0, n, 0.0)
    assert pts[0.0] >= exact
    at_zero = best.round_delta("krr", eps0, n, 1e-16, k=2)(0.0)
    assert at_zero - compose.TV_EPS <= pts[0.0] <= at_zero + 2 * compose.TV_EPS
