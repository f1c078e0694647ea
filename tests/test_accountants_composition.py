"""Composition of T shuffle rounds through the dominating pair's privacy-loss distribution (issue 38,
item 2): the pair's law against direct enumeration and the variation-ratio bound, the blocks of C
dominating, the composed eps against an independent grid-bracketed T-fold composition of the pair
itself (never below it, within a percent) and of real shuffled k-RR pairs at the smallest domains
(never below), never above the advanced or basic composition theorem of the one-round eps."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accountants.composition import exact as exact_composition
from shuffledp.accountants.composition import pair_pld
from shuffledp.accountants.composition import rounds as composition
from shuffledp.accountants.upper import variation_ratio as vr

DELTA = 1e-6


@pytest.mark.parametrize("eps0,n", [(0.5, 2), (1.0, 10), (2.0, 40), (4.0, 25)])
def test_pair_law_is_the_variation_ratio_pair(eps0, n):
    """Cell by cell the pair is Theorem 1's (P, Q) with the general parameters: its divergence at
    every eps equals direct enumeration of vr_pair_pmf (both ways) to rounding."""
    P, Q = vr.vr_pair_pmf(vr.vr_params("general", eps0), n)
    loss = pair_pld.pair_loss(eps0, n)
    assert loss.rows == loss.counts  # no blocks here
    for eps in (0.0, 0.05, 0.3, 1.0):
        exact = float(np.maximum(P - math.exp(eps) * Q, 0).sum())
        assert exact <= loss.delta(eps) <= exact * (1 + 1e-9) + 1e-15


def test_krr_sound_parameters_are_the_general_pair():
    """The registry's k-RR variation-ratio parameters are the general ones for k = 2 and k >= 3:
    one pair serves every randomizer."""
    for k in (2, 3, 10):
        assert vr.vr_params("krr", 1.5, k=k) == vr.vr_params("general", 1.5)


@pytest.mark.parametrize("eps0,n", [(2.0, 100_000), (1.0, 3_000_000)])
def test_pair_law_at_large_n_against_the_vr_bound(eps0, n):
    """Windows and blocks charged against us: at large n the pair's delta is at least the
    variation-ratio bound's (its own rigorous evaluation) and within 0.1% of it where it matters."""
    loss = pair_pld.pair_loss(eps0, n)
    prm = vr.vr_params("general", eps0)
    for eps in (0.0, 0.005, 0.01, 0.03):
        ref = vr.vr_delta(prm, n, eps)
        ours = loss.delta(eps)
        assert ours >= ref * (1 - 1e-9)
        if ref > 1e-12:
            assert ours <= ref * 1.001


def test_blocks_of_c_dominate():
    """Charging each block of C its smallest count can only raise the divergence."""
    full = pair_pld.pair_loss(2.0, 20_000, cells_max=10**8)
    for cap in (50_000, 5_000):
        blocked = pair_pld.pair_loss(2.0, 20_000, cells_max=cap)
        assert blocked.rows < full.rows
        for eps in (0.0, 0.01, 0.03, 0.06):
            assert blocked.delta(eps) >= full.delta(eps) * (1 - 1e-12)


def test_losses_rounded_up_on_the_grid():
    loss = pair_pld.pair_loss(1.0, 200)
    low, probs = pair_pld.loss_pmf_on_grid(loss, 1e-3)
    grid = (low + np.arange(probs.size)) * 1e-3
    assert np.isclose(probs.sum(), loss.masses.sum())
    # the grid law is the losses moved up: its mean is above theirs, by at most one step
    mean = float(np.dot(loss.masses, loss.losses))
    assert mean <= float(np.dot(probs, grid)) <= mean + 1e-3 * probs.sum()


def _bracket_h(P, Q, rounds, rel=1e-3):
    L, W, _ = exact_composition.loss_law(P, Q)
    mean = float(np.dot(W, L))
    sd = float(np.sqrt(np.dot(W, (L - mean) ** 2)))
    return max(1e-7, rel * (rounds * mean + 5 * math.sqrt(rounds) * sd) / rounds)


@pytest.mark.parametrize("eps0,n,rounds", [(1.0, 10, 1), (1.0, 10, 10), (1.0, 10, 100), (2.0, 40, 1), (2.0, 40, 10)])
def test_composed_pair_against_its_exact_composition(eps0, n, rounds):
    """dp_accounting's composition of our PLD against an independent T-fold composition of the
    same pair (numpy FFT, losses rounded down and up on a grid finer than ours): never below the
    exact value's lower end, and within 1% of its upper end."""
    P, Q = vr.vr_pair_pmf(vr.vr_params("general", eps0), n)
    h = _bracket_h(P, Q, rounds, 1e-4 if rounds <= 10 else 1e-3)   # finer than our grid up to T = 10
    low, high = exact_composition.pair_composed_eps_bracket(P, Q, rounds, DELTA, h)
    pld, _ = composition.composed_pld("general", eps0, n, rounds, delta=DELTA)
    ours = float(pld.get_epsilon_for_delta(DELTA))
    assert low <= ours <= high * 1.01 + 1e-9


@pytest.mark.parametrize("k,eps0,n,rounds", [(2, 1.0, 6, 1), (3, 1.0, 6, 1), (2, 2.0, 20, 1), (3, 0.5, 12, 1),
                                            (2, 1.0, 6, 10), (3, 1.0, 6, 10), (2, 2.0, 20, 10), (3, 0.5, 12, 10),
                                            (2, 2.0, 20, 100), (3, 1.0, 6, 100)])
def test_never_below_real_pairs_composed(k, eps0, n, rounds):
    """Smallest domains: T rounds of a real neighbouring pair of shuffled k-RR (same datasets each
    round) lower-bound T rounds of the mechanism; the composed answer is never below it."""
    ours = composition.composed_eps("krr", eps0, n, DELTA, rounds, k=k)["eps"]
    for m in (0, (n - 1) // 2, n - 1):
        P, Q = exact_composition.krr_pair_pmfs(k, eps0, n, m)
        low, _ = exact_composition.pair_composed_eps_bracket(P, Q, rounds, DELTA, _bracket_h(P, Q, rounds))
        assert low <= ours * (1 + 1e-9), (m, low, ours)


@pytest.mark.parametrize("mech,kw,n", [("krr", {"k": 10}, 10_000), ("oue", {"d": 20}, 5_000),
                                       ("general", {}, 100_000)])
def test_never_above_advanced_or_basic_composition(mech, kw, n):
    for rounds in (10, 1_000):
        res = composition.composed_eps(mech, 2.0, n, DELTA, rounds, **kw)
        cand = res["candidates"]
        assert res["eps"] == min(cand.values()) and res["by"] in cand
        assert res["eps"] <= cand["advanced"] and res["eps"] <= cand["basic"] <= rounds * 2.0
        eps1 = res["eps1"]
        assert cand["advanced"] == pytest.approx(
            math.sqrt(2 * rounds * math.log(2 / DELTA)) * eps1 + rounds * eps1 * math.expm1(eps1))


def test_skipped_advanced_could_not_have_won():
    """With the forward answer given, advanced/basic are skipped only where the answer is already
    below their value at the forward lower bound, hence below their real value."""
    from shuffledp.accountants import best

    fwd = best.best_eps("krr", 2.0, 10_000, DELTA, k=10)
    res = composition.composed_eps("krr", 2.0, 10_000, DELTA, 1_000, k=10, forward=fwd)
    full = composition.composed_eps("krr", 2.0, 10_000, DELTA, 1_000, k=10)
    assert res["skipped"] and "advanced" not in res["candidates"]
    assert res["eps"] == full["eps"] <= full["candidates"]["advanced"]


def test_one_round_is_the_forward_answer():
    from shuffledp.accountants import best

    one = best.best_eps("oue", 1.0, 2_000, DELTA, d=3)
    res = composition.composed_eps("oue", 1.0, 2_000, DELTA, 1, d=3)
    assert res["eps"] == one["eps"] and res["by"] == "one-round"


def test_monotone_in_rounds():
    vals = [composition.composed_eps("general", 1.0, 5_000, DELTA, t)["eps"] for t in (1, 10, 100, 1_000, 10_000)]
    assert all(a <= b for a, b in zip(vals, vals[1:], strict=False))


def test_accountant_mixes_kinds_of_rounds():
    from shuffledp.accountants import ShuffleAccountant, ShuffleEvent

    a = ShuffleEvent("krr", 1.0, 10_000, k=10)
    b = ShuffleEvent("general", 0.5, 2_000)
    only_a = ShuffleAccountant().compose(a, 20).pld(DELTA).get_epsilon_for_delta(DELTA)
    only_b = ShuffleAccountant().compose(b, 5).pld(DELTA).get_epsilon_for_delta(DELTA)
    both = ShuffleAccountant().compose(a, 20).compose(b, 5)
    eps = both.get_epsilon(DELTA)
    assert max(only_a, only_b) <= eps <= only_a + only_b
    assert both.get_delta(eps * 1.02) <= DELTA   # its own grid (sized for smaller deltas)
    with pytest.raises(ValueError, match="count"):
        both.compose(a, 0)


def test_cli_rounds_names_the_candidate():
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "shuffledp", "account", "best", "--mechanism", "general",
                           "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--rounds", "1000"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["composed_by"] in out["composed_candidates"]
    assert out["eps_composed"] == min(out["composed_candidates"].values()) <= 1000
