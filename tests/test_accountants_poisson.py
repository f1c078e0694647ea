"""Poisson randomizer accountant (segmented paper Sec. 5.1) against exact enumeration of the
(Lemma 2-simplified) output of Algorithm 2: the victim's Poisson message plus n*ceil(m) blanket
trials, observed as the counts of the victim's two items and of all other items."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants.numerics.hockey_stick import hockey_stick_symmetric
from shuffledp.accountants.special import poisson as ps


def _exact_simplified(n, m, d, lam, eps):
    """(full, pair): exact delta of the observable counts (c_j0, c_j1, c_other) and of the pair
    (c_j0, c_j1) only. Each blanket trial: j0 or j1 w.p. gamma/d each, another item w.p.
    gamma (d-2)/d, nothing w.p. 1-gamma."""
    cm = math.ceil(m)
    g = m / cm
    T = n * cm
    probs = [g / d, g / d, g * (d - 2) / d, 1 - g]
    P, Q = {}, {}
    for c0 in range(T + 1):
        for c1 in range(T + 1 - c0):
            for co in range(T + 1 - c0 - c1):
                pr = stats.multinomial.pmf([c0, c1, co, T - c0 - c1 - co], T, probs)
                for key, store, wt in (((c0 + 1, c1, co), P, lam), ((c0, c1 + 1, co), Q, lam),
                                       ((c0, c1, co), P, 1 - lam), ((c0, c1, co), Q, 1 - lam)):
                    store[key] = store.get(key, 0.0) + wt * pr
    keys = sorted(set(P) | set(Q))
    p = np.array([P.get(k, 0.0) for k in keys])
    q = np.array([Q.get(k, 0.0) for k in keys])
    P2, Q2 = {}, {}
    for k in keys:
        P2[k[:2]] = P2.get(k[:2], 0.0) + P.get(k, 0.0)
        Q2[k[:2]] = Q2.get(k[:2], 0.0) + Q.get(k, 0.0)
    k2 = sorted(P2)
    return (hockey_stick_symmetric(p, q, eps),
            hockey_stick_symmetric(np.array([P2[k] for k in k2]), np.array([Q2[k] for k in k2]), eps))


CASES = [(6, 1.0, 4, 0.5, 0.5), (6, 1.5, 4, 0.5, 0.5), (6, 0.5, 4, 0.5, 0.5), (5, 2.0, 6, 0.8, 1.0),
         (8, 0.3, 5, 0.3, 0.8), (7, 0.7, 5, 0.9, 0.2), (5, 2.5, 4, 0.2, 1.5)]


@pytest.mark.parametrize("n, m, d, lam, eps", CASES)
def test_sound_accountant_is_the_exact_output_divergence(n, m, d, lam, eps):
    full, pair = _exact_simplified(n, m, d, lam, eps)
    lo, hi = ps.poisson_delta_bounds(lam, n, m, d, eps)            # default: sound
    assert lo <= full * (1 + 1e-12) and hi >= full * (1 - 1e-12)  # brackets the enumeration
    assert hi == pytest.approx(full, rel=1e-8)
    indicator = ps.poisson_delta(lam, n, m, d, eps, accountant="indicator")
    assert indicator >= full * (1 - 1e-12)
    if m == math.ceil(m):            # integer m: the count reveals the send indicator
        assert indicator == pytest.approx(full, rel=1e-8)
    # Proposition 1: the pair of counts is exactly the reduction with n' = n ceil(m) + 1
    lo, hi = ps.poisson_delta_bounds(lam, n, m, d, eps, accountant="pair")
    assert lo <= pair * (1 + 1e-9) and hi >= pair * (1 - 1e-9)
    assert ps.poisson_delta_lower(lam, n, m, d, eps) <= full


@pytest.mark.parametrize("n, m, d, lam, eps, full_ref, paper_ref", [
    (6, 1.0, 4, 0.5, 0.5, 0.15153067, 0.08764486),      # integer m: about half the true delta
    (5, 2.5, 4, 0.2, 1.5, 3.5334238e-4, 2.15003e-8),    # non-integer m: four orders of magnitude
])
def test_paper_theorem3_is_optimistic(n, m, d, lam, eps, full_ref, paper_ref):
    """Finding (claim not held): the printed Theorem 3 bound is below the exact delta of the
    (Lemma 2-simplified) output it covers."""
    full, _ = _exact_simplified(n, m, d, lam, eps)
    paper = ps.poisson_delta(lam, n, m, d, eps, accountant="paper")
    assert full == pytest.approx(full_ref, rel=1e-6)
    assert paper == pytest.approx(paper_ref, rel=1e-5)
    assert paper < full


def test_group_privacy_over_two_items_bounds_exact():
    """s = 2: victim holds {j0, j0'} vs {j1, j1'}; exact delta of the 4 item counts (others hold
    other items; integer m, so the blanket count is fixed) vs Theorem 3's s e^eps D(eps/s)."""
    n, m, d, lam, eps, s = 3, 1.0, 6, 0.6, 1.0, 2
    T = n * int(m)
    probs = [1 / d] * 4 + [(d - 4) / d]
    P, Q = {}, {}
    vic = {(a, b): (lam if a else 1 - lam) * (lam if b else 1 - lam) for a in (0, 1) for b in (0, 1)}
    for c in np.ndindex(*(T + 1,) * 4):
        if sum(c) > T:
            continue
        pr = stats.multinomial.pmf([*c, T - sum(c)], T, probs)
        for (a, b), w in vic.items():
            kp = (c[0] + a, c[1] + b, c[2], c[3], T - sum(c))
            kq = (c[0], c[1], c[2] + a, c[3] + b, T - sum(c))
            P[kp] = P.get(kp, 0.0) + w * pr
            Q[kq] = Q.get(kq, 0.0) + w * pr
    keys = sorted(set(P) | set(Q))
    exact = hockey_stick_symmetric(np.array([P.get(k, 0) for k in keys]), np.array([Q.get(k, 0) for k in keys]), eps)
    bound = ps.poisson_user_delta(lam, n, m, d, s, eps)
    assert bound >= exact


def test_lambda_search_is_feasible_maximal_and_monotone():
    n, d, s, eps, delta = 5000, 17, 4, 1.0, 2e-6
    prev = 0.0
    for m in (0.2, 0.5, 1.0, 2.0, 3.0):
        for acc in ("sound", "indicator", "paper"):
            r = ps.solve_poisson_lambda(n, m, d, s, eps, delta, accountant=acc)
            assert r.feasible and 0 < r.lam <= 1
            assert r.delta_user <= delta * (1 + 1e-12)
            assert ps.poisson_user_delta(r.lam, n, m, d, s, eps, accountant=acc) <= delta * (1 + 1e-9)
            if r.lam < 1:   # maximal: a slightly larger lambda violates the constraint
                assert ps.poisson_user_delta(min(1.0, r.lam * (1 + 1e-4)), n, m, d, s, eps, accountant=acc) > delta
        r = ps.solve_poisson_lambda(n, m, d, s, eps, delta, accountant="paper")
        assert r.lam >= prev
        prev = r.lam
    # delta grows with lambda, shrinks with m (at fixed lambda, within and across integers)
    ds = [ps.poisson_delta(lam, n, 1.5, d, 0.25) for lam in (0.1, 0.3, 0.6, 0.9, 1.0)]
    assert all(a <= b for a, b in zip(ds, ds[1:], strict=False)) and ds[2] < ds[3] < ds[4]
    dm = [ps.poisson_delta(0.5, n, m, d, 0.25, accountant="paper") for m in (0.3, 0.6, 0.9, 1.8, 3.6)]
    assert all(a > b for a, b in zip(dm, dm[1:], strict=False))


def test_edge_cases_and_errors():
    # m = 0: no blankets, the message itself is revealed: D = lambda (for any eps)
    assert ps.poisson_delta(0.3, 100, 0.0, 10, 1.0) == pytest.approx(0.3)
    r = ps.solve_poisson_lambda(100, 0.0, 10, 1, 1.0, 1e-3)
    assert r.lam == pytest.approx(1e-3 / math.e, rel=1e-9)
    # lambda = delta / (s e^eps) is always feasible, even for absurdly small delta
    r = ps.solve_poisson_lambda(1000, 1.0, 10, 1, 1.0, 1e-305)
    assert r.feasible and 0 < r.lam and r.delta_user <= 1e-305
    assert ps.group_privacy(0.25, 1e-7, 4) == (1.0, pytest.approx(4 * math.e * 1e-7))
    with pytest.raises(ValueError, match="^--m:"):
        ps.solve_poisson_lambda(100, -1.0, 10, 1, 1.0, 1e-3)
    with pytest.raises(ValueError, match="^--accountant:"):
        ps.poisson_delta(0.5, 100, 1.0, 10, 1.0, accountant="nope")
    with pytest.raises(ValueError, match="^--lambda:"):
        ps.poisson_delta(1.5, 100, 1.0, 10, 1.0)
    # m_k: lambda = 1 is feasible at m_k and not just below it
    mk = ps.min_blanket_rate(5000, 17, 4, 1.0, 2e-6, accountant="paper")
    assert ps.poisson_lambda(5000, mk, 17, 4, 1.0, 2e-6, accountant="paper") == 1.0
    assert ps.poisson_lambda(5000, mk * 0.99, 17, 4, 1.0, 2e-6, accountant="paper") < 1.0


@pytest.mark.parametrize("n, m, d, lam, eps", [c for c in CASES if c[1] != math.ceil(c[1])])
def test_grouped_bracket_contains_the_exact_value(n, m, d, lam, eps):
    """When the (t, a) cells are too many, Z is grouped: the bracket must still contain the truth."""
    full, _ = _exact_simplified(n, m, d, lam, eps)
    cm = math.ceil(m)
    for max_pairs in (0, 5):
        est, slack, skipped = ps._exact_parts(lam, n * cm, m / cm, d, eps, 1e-40, max_pairs)
        assert est - slack <= full * (1 + 1e-12)
        assert est + slack + skipped >= full * (1 - 1e-12)
