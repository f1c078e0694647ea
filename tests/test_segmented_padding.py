"""The segmented protocol with padding sent (issue 42, option (a)), against the exact law of its FULL
output (every user's data and blanket messages, tests/_oracle_segmented.py) at small sizes.

The relation: two datasets are neighbours when one user's set changes to any other set of the
universe (any set of 0..s items of [d] with padding; exactly s items without), the levels fixed.
Every rate the workflow uses (our `sound` lambdas from the accountant table, the balls-into-bins
blanket rates) must give, for EVERY such pair (all the other users' sets and levels, every victim
level and pair of sets), an exact delta at the user's level at most the target; and every
single-item step must stay below the `sound` accountant's per-item delta. A version that never
sends padding fails the same check (mutation test), as does its message count.
"""

from __future__ import annotations

import itertools
import math

import _oracle_segmented as O
import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants.special.poisson import poisson_delta
from shuffledp.accountants.special.segmented_optimizer import segmented_table
from shuffledp.experiments.segmented_params import mm_blanket_rate
from shuffledp.mechanisms import poisson_set as ps
from shuffledp.protocols import mm, segmented

# (n, d, s, levels, delta, m): integer and non-integer m, one and two levels, s = 1 and 2
POINTS = [
    (5, 3, 1, (1.0,), 0.002, 1.0),        # the small example (integer m)
    (5, 3, 1, (1.0,), 0.002, 1.5),        # ... and non-integer m
    (4, 2, 1, (0.5, 1.0), 0.01, 1.0),
    (4, 2, 1, (0.5, 1.0), 0.01, 0.6),
    (4, 2, 1, (0.5, 1.0), 0.01, 2.0),
    (3, 2, 2, (1.0,), 0.02, 1.0),
    (3, 2, 2, (1.0,), 0.02, 1.5),
]


def _workflow_lambdas(n, d, s, levels, delta, m, padding):
    """The lambdas the workflow's accountant step writes for these inputs (`sound`)."""
    shares = [1.0 / len(levels)] * len(levels)
    t = segmented_table(n, d, s, list(levels), shares, delta, [m], include_optimum=False, accountants=["sound"],
                        padding=s if padding else 0)
    return list(t.sort_values("level")["lambda"])


def _check_point(n, d, s, levels, delta, m, lam, padding, accountant_domain):
    """(pairs checked, worst exact / target at user level, worst exact / sound per single step);
    asserts both <= 1."""
    pairs, worst_user, worst_step = 0, 0.0, 0.0
    for vl, others, x, y, _one, exact in O.neighbour_deltas(n, m, d, s, lam, lambda vl, one: levels[vl], padding):
        pairs += 1
        assert exact <= delta * (1 + 1e-9), (vl, others, x, y, exact, delta)
        worst_user = max(worst_user, exact / delta)
    for vl, others, x, y, one, exact in O.neighbour_deltas(n, m, d, s, lam, lambda vl, one: levels[vl] / s,
                                                           padding):
        if not one:
            continue
        bound = poisson_delta(lam[vl], n, m, accountant_domain, levels[vl] / s, accountant="sound")
        assert exact <= bound * (1 + 1e-9), (vl, others, x, y, exact, bound)
        worst_step = max(worst_step, exact / bound)
    return pairs, worst_user, worst_step


@pytest.mark.parametrize("n, d, s, levels, delta, m", POINTS)
def test_every_lambda_the_workflow_uses_is_sound_for_every_neighbouring_pair(n, d, s, levels, delta, m):
    lam = _workflow_lambdas(n, d, s, levels, delta, m, padding=True)
    assert all(0 < x <= 1 for x in lam)
    pairs, worst_user, worst_step = _check_point(n, d, s, levels, delta, m, lam, True, d + s)
    # every pair of the universe (sets of 0..s items), every multiset of the others, every victim level
    n_sets = sum(math.comb(d, k) for k in range(s + 1))
    n_others = math.comb(len(levels) * n_sets + n - 2, n - 1)
    assert pairs == n_others * len(levels) * math.comb(n_sets, 2)
    # the check has teeth: the single-item steps come close to the accountant (s = 1: within 4x)
    if s == 1:
        assert worst_step > 0.25


CONTROL = [p for p in POINTS if p[0] <= 4 and p[2] == 1] + [(3, 3, 2, (1.0,), 0.02, 1.0), (3, 3, 2, (1.0,), 0.02, 1.5)]


@pytest.mark.parametrize("n, d, s, levels, delta, m", CONTROL)
def test_control_without_padding_every_user_exactly_s_items(n, d, s, levels, delta, m):
    """The synthetic case: every user holds exactly s items of [d]; no padding domain, the
    accountant over d items (padding 0) is sound for every substitution of s-sets."""
    lam = _workflow_lambdas(n, d, s, levels, delta, m, padding=False)
    pairs, _, _ = _check_point(n, d, s, levels, delta, m, lam, False, d)
    n_sets = math.comb(d, s)
    assert pairs == math.comb(len(levels) * n_sets + n - 2, n - 1) * len(levels) * math.comb(n_sets, 2) > 0


@pytest.mark.parametrize("n, d, s, eps, delta", [(4, 2, 1, 1.0, 0.05), (4, 2, 1, 0.5, 0.05), (5, 3, 1, 1.0, 0.05)])
def test_balls_into_bins_blanket_rate_is_sound_with_padding(n, d, s, eps, delta):
    """MM, SepMM and weighted SepMM run balls-into-bins (lambda = 1) with the blanket rate of
    ``mm_blanket_rate`` over d + s items: sound for every pair of sets of 0..s items."""
    m = mm_blanket_rate(n, d + s, s, eps, delta)
    worst = max(ex for *_, ex in O.neighbour_deltas(n, m, d, s, [1.0], lambda vl, one: eps, True))
    assert worst <= delta


# ------------------------------------------------------------------------------------- mutation
def _old_item_level_counts(sets, levels, d, n_levels):
    """The code before issue 42: padding entries (< 0) are silently not sent."""
    sets, levels = np.asarray(sets), np.asarray(levels)
    rows = np.broadcast_to(levels[:, None], sets.shape)
    ok = sets >= 0
    flat = sets[ok].astype(np.int64) * n_levels + rows[ok].astype(np.int64)
    return np.bincount(flat, minlength=d * n_levels).reshape(d, n_levels)


@pytest.fixture
def never_sends_padding(monkeypatch):
    """The mutant: padding entries stay as they are and are never sent (the protocol before)."""
    monkeypatch.setattr(ps, "pad_sets", lambda sets, d: np.asarray(sets, dtype=np.int64))
    monkeypatch.setattr(ps, "item_level_counts", _old_item_level_counts)


@pytest.mark.parametrize("m, padding_in_accountant, factor", [(1.0, 0, 2.05), (1.5, 0, 5.28), (1.0, 1, 1.39),
                                                               (1.5, 1, 3.25)])
def test_mutant_that_never_sends_padding_fails_the_soundness_check(never_sends_padding, m, padding_in_accountant,
                                                                    factor):
    """n = 5, d = 3, s = 1, delta = 0.002 at E = 1 (the issue's example): with padding never sent,
    the pair {item} vs {} is told apart by the message count, beyond the target whatever the
    accountant's domain (d as before, or d + s): the soundness check above fails on it."""
    n, d, s, levels, delta = 5, 3, 1, (1.0,), 0.002
    lam = _workflow_lambdas(n, d, s, levels, delta, m, padding=bool(padding_in_accountant))
    with pytest.raises(AssertionError):
        _check_point(n, d, s, levels, delta, m, lam, True, d + s * padding_in_accountant)
    worst = max(ex for *_, ex in O.neighbour_deltas(n, m, d, s, lam, lambda vl, one: 1.0, True))
    assert worst / delta == pytest.approx(factor, rel=0.01)


def test_message_count_does_not_depend_on_the_set_size():
    """lambda = 1, integer m: every user sends s data messages and m blankets, whatever it holds;
    the protocol as run (both samplers) and balls-into-bins."""
    rng = np.random.default_rng(0)
    n, d, s, m = 200, 7, 3, 2.0
    sets = np.full((n, s), ps.PAD, dtype=np.int64)
    sizes = rng.integers(0, s + 1, n)
    for i, k in enumerate(sizes):
        sets[i, :k] = np.sort(rng.choice(d, k, replace=False))
    assert len(set(sizes)) == s + 1
    levels = rng.integers(0, 2, n)
    for sampler in ("counts", "messages"):
        run = segmented.run_segmented(sets, levels, [1.0, 1.0], m, d, rng, sampler=sampler)
        assert run.n_messages == n * (s + m)
        assert run.counts.size == d + s and run.estimate.size == d
    held, domain = ps.protocol_sets(sets, d)
    assert ps.item_level_counts(held, np.zeros(n, dtype=int), domain, 1).sum() == n * s
    assert mm.run_mm(sets, m, d, rng).size == d
    with pytest.raises(ValueError, match="padding"):      # without padding a short set is refused
        segmented.run_segmented(sets, levels, [1.0, 1.0], m, d, rng, padding=False)


@pytest.mark.parametrize("sampler", ["counts", "messages"])
def test_the_protocol_draws_from_the_exact_law(sampler):
    """The oracle's law is the law of what run_segmented draws (chi-square goodness of fit of the
    count vectors of 20,000 runs, cells of expected count < 5 pooled; fixed seed)."""
    rng = np.random.default_rng(11)
    n, d, s, m, lam = 3, 2, 2, 1.5, [0.3, 0.8]
    sets = np.array([[0, -1], [-1, -1], [0, 1]])
    levels = np.array([0, 1, 1])
    law = O.add_users(O.base_law(n, m, d + s, n * (s + 2)), sets, levels, lam, d, True)
    O.check_total(law)
    draws = [tuple(segmented.run_segmented(sets, levels, lam, m, d, rng, sampler=sampler).counts) for _ in range(20000)]
    keys, obs = np.unique(np.array(draws), axis=0, return_counts=True)
    expected = np.array([law[tuple(k)] for k in keys]) * len(draws)
    assert expected.sum() <= len(draws) * (1 + 1e-12)
    big = expected >= 5
    # the pooled cell: everything else (small cells and outcomes never drawn)
    o = np.append(obs[big], len(draws) - obs[big].sum())
    e = np.append(expected[big], len(draws) - expected[big].sum())
    p = stats.chisquare(o, e).pvalue
    assert p > 1e-3, p


def test_universe_and_one_item_steps():
    """The relation's universe at d = 2, s = 2: every set of 0..2 items, padded with distinct items
    of the padding domain; the single-item steps are the pairs whose held sets differ in one item."""
    u = O.universe(2, 2, True)
    assert u == [(-1, -1), (0, -1), (1, -1), (0, 1)]
    held = [tuple(ps.protocol_sets(np.array([x]), 2, True)[0][0]) for x in u]
    assert held == [(2, 3), (0, 3), (1, 3), (0, 1)]
    one = {(x, y) for x, y in itertools.combinations(u, 2) if O.differ_in_one_item(x, y, 2, True)}
    # {} vs {0, 1} ({2, 3} vs {0, 1}) substitutes two items; every other pair one
    assert ((-1, -1), (0, 1)) not in one and ((0, -1), (1, -1)) in one and len(one) == 5


def test_accountant_table_and_cli_over_the_padded_domain(capsys, tmp_path):
    """``padding = s``: every rate of the table is the accountant's over ``d + s`` items (the ``d``
    column keeps the real domain); the CLI's ``--padding`` does the same; other sizes are refused."""
    import json

    from shuffledp.accountants.special.segmented_optimizer import optimize_segmented
    from shuffledp.cli import main

    n, d, s, levels, shares, delta, m = 500, 5, 2, [0.5, 1.0], [0.5, 0.5], 2e-5, 1.5
    t = segmented_table(n, d, s, levels, shares, delta, [m], include_optimum=False, accountants=["sound"], padding=s)
    want = optimize_segmented(n, d + s, s, levels, shares, delta, m=m)["lambdas"]
    assert list(t["lambda"]) == want and set(t["d"]) == {d} and set(t["padding"]) == {s}
    assert want != optimize_segmented(n, d, s, levels, shares, delta, m=m)["lambdas"]
    with pytest.raises(ValueError, match="padding"):
        segmented_table(n, d, s, levels, shares, delta, [m], padding=1)
    args = ["account", "segmented", "--n", str(n), "--d", str(d), "--s", str(s), "--levels", "0.5,1",
            "--shares", "0.5,0.5", "--delta", str(delta), "--m", str(m)]
    assert main([*args, "--padding", str(s)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["lambdas"] == want and out["padding"] == s
    assert main([*args, "--padding", "1"]) != 0
    assert "--padding" in capsys.readouterr().err
    path = tmp_path / "t.parquet"
    assert main(["account-table", "segmented", "--n", str(n), "--d", str(d), "--s", str(s), "--levels", "0.5,1",
                 "--shares", "0.5,0.5", "--delta", str(delta), "--m-grid", str(m), "--accountants", "sound",
                 "--padding", str(s), "--out", str(path)]) == 0
    import pandas as pd

    assert list(pd.read_parquet(path).query("source == 'grid'")["lambda"]) == want


@pytest.mark.parametrize("n, d, m, lam, eps", [(4, 2, 1.0, 0.4, 0.7), (4, 3, 1.5, 0.6, 1.0), (5, 2, 0.5, 0.9, 0.5)])
def test_full_output_with_silent_others_is_the_sound_accountant(n, d, m, lam, eps):
    """Cross-check of the two oracles: when the other users send nothing (a level at rate 0) the
    full output is Lemma 2's output, whose exact delta the `sound` accountant is (checked by
    brute force in test_accountants_poisson.py): every single-item pair over the padded domain
    (padding items included) gives that value."""
    s = 1
    want = poisson_delta(lam, n, m, d + s, eps, accountant="sound")
    got = [ex for vl, _, _, _, one, ex in O.neighbour_deltas(n, m, d, s, [lam, 0.0], lambda vl, one: eps, True,
                                                               others_levels=[1]) if vl == 0 and one]
    assert len(got) > 0
    assert got == pytest.approx([want] * len(got), rel=1e-8)
