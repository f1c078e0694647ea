"""Soundness of the accountants against an independent oracle (tests/_oracle.py, issue 12).

* small n: the exact worst-case eps of shuffled k-RR (k = 2..5, every configuration of the other
  users' values, both directions) -- every upper bound that applies to k-RR must be >= it, every
  reported lower bound <= it;
* large n (up to 1e5): the exact eps of single neighbouring pairs seen through the count of
  reports equal to 1 -- a lower bound on the truth, so every upper bound must be >= it;
* the three failures of the issue, as regression tests.

Tolerance: the oracle solves eps(delta) in closed form from float64 sums of at most a few
thousand terms (relative error far below 1e-9); the accountants round their eps up. An upper
bound is accepted when ``upper >= exact (1 - 1e-9)``, a lower bound when ``lower <= exact (1 + 1e-9)``.
"""

from __future__ import annotations

import math

import _oracle as oracle
import numpy as np
import pytest

from shuffledp.accountants.lower import lower_bounds as LB
from shuffledp.accountants.special import personalized as P
from shuffledp.accountants.upper import blanket as B
from shuffledp.accountants.upper import clones as C
from shuffledp.accountants.upper import variation_ratio as vr
from shuffledp.accountants.validation import AccountantDomainError

TOL = 1e-9


def upper_bounds(k: int, eps0: float, n: int, delta: float) -> dict[str, float]:
    """Every upper bound of the package that applies to shuffled k-RR (k-RR is eps0-LDP; the
    variation-ratio parameter form is exercised through the mechanism forms' parameters)."""
    out = {
        "vr general": vr.vr_eps(vr.vr_params("general", eps0), n, delta),
        "vr krr": vr.vr_eps(vr.vr_params("krr", eps0, k=k), n, delta),
        # the 1-subset exponential mechanism on 1-item sets of a k-item domain is k-RR
        "vr subset-exp": vr.vr_eps(vr.vr_params("subset-exp", eps0, d=k, s=1, k=1), n, delta),
        "clones fmt21": C.eps_clones(eps0, n, delta, variant="fmt21"),
        "clones fmt23": C.eps_clones(eps0, n, delta, variant="fmt23"),
        "clones closed code": C.eps_clones_closed_form(eps0, n, delta, version="code"),
        "clones closed theorem": C.eps_clones_closed_form(eps0, n, delta, version="theorem"),
    }
    for bound in B.BOUNDS:
        out[f"blanket generic {bound}"] = B.eps_blanket(eps0, n, delta, mechanism="generic", bound=bound)
        out[f"blanket krr {bound}"] = B.eps_blanket(eps0, n, delta, mechanism="krr", bound=bound, k=k)
    if n <= 200:   # personalized accountants with equal local budgets reduce to eps0-LDP
        for bound in ("fv", "lzx"):   # CCC is not a bound (test_ccc_is_an_approximation_not_a_bound)
            out[f"personalized {bound}"] = P.personalized_eps(bound, [eps0] * n, 0.0, delta)
    return out


def lower_bounds(k: int, eps0: float, n: int, delta: float) -> dict[str, float]:
    """Every reported lower bound on shuffled k-RR (``account vr`` reports the witness)."""
    out = {"krr_eps_lower": LB.krr_eps_lower(k, eps0, n, delta)}
    out["witness krr"] = vr.witness_eps("krr", eps0, n, delta, k=k)
    return out


SMALL = [  # (k, n): every configuration of the others is enumerated
    (2, 2), (2, 6), (2, 20), (2, 60), (3, 3), (3, 6), (3, 12), (4, 4), (4, 8), (5, 3), (5, 6),
]
EPS0S = (0.3, 1.0, 3.0, 8.0)
DELTAS = (0.1, 1e-3, 1e-6)


def small_points():
    """(k, n, eps0, delta, exact eps) over the small grid."""
    pts = []
    for k, n in SMALL:
        for eps0 in EPS0S:
            for delta in DELTAS:
                pts.append((k, n, eps0, delta, oracle.exact_krr_eps(k, eps0, n, delta)[0]))
    return pts


def margins(pts):
    """(name, k, n, eps0, delta, value, exact) for every upper bound at every point."""
    rows = []
    for k, n, eps0, delta, exact in pts:
        for name, val in upper_bounds(k, eps0, n, delta).items():
            rows.append((name, k, n, eps0, delta, val, exact))
    return rows


# --------------------------------------------------------------------------- the oracle itself
def test_oracle_matches_brute_force_over_output_sequences():
    """The histogram law of the oracle against a sum over all k^n output sequences."""
    import itertools

    k, eps0, others = 3, 1.3, (2, 1, 1)
    logP, logQ = oracle.pair_logpmfs(k, eps0, others)
    values = [v for v, c in enumerate(others) for _ in range(c)]
    e = math.exp(eps0)

    def prob(x, y):
        return (e if x == y else 1.0) / (e + k - 1)

    hist_p, hist_q = {}, {}
    for outs in itertools.product(range(k), repeat=len(values) + 1):
        base = math.prod(prob(x, y) for x, y in zip(values, outs[1:], strict=True))
        h = tuple(outs.count(j) for j in range(k))
        hist_p[h] = hist_p.get(h, 0.0) + base * prob(0, outs[0])
        hist_q[h] = hist_q.get(h, 0.0) + base * prob(1, outs[0])
    got_p = np.sort(np.exp(logP))
    got_q = np.sort(np.exp(logQ))
    assert np.allclose(got_p, np.sort(list(hist_p.values())), rtol=1e-12, atol=0)
    assert np.allclose(got_q, np.sort(list(hist_q.values())), rtol=1e-12, atol=0)


def test_oracle_eps_solves_its_delta():
    """At the oracle's eps the worst-case delta equals the target (and is above it just below)."""
    for k, n, eps0, delta in ((3, 5, 4.0, 1e-3), (2, 12, 1.0, 1e-2), (4, 5, 2.0, 1e-4)):
        eps, _ = oracle.exact_krr_eps(k, eps0, n, delta)
        assert oracle.exact_krr_delta(k, eps0, n, eps) == pytest.approx(delta, rel=1e-9)
        assert oracle.exact_krr_delta(k, eps0, n, eps * (1 - 1e-6)) > delta


def test_oracle_matches_the_earlier_enumeration():
    """Issue 12's numbers: k = 3, n = 5, eps0 = 4, delta = 1e-3 -> 3.9988 (others hold value 1)."""
    eps, cfg = oracle.exact_krr_eps(3, 4.0, 5, 1e-3)
    assert eps == pytest.approx(3.998802, abs=1e-6)
    assert cfg[1] == 4


# --------------------------------------------------------------------------- small n: exact
@pytest.fixture(scope="module")
def small():
    return small_points()


def test_every_upper_bound_is_at_least_the_exact_eps(small):
    rows = margins(small)
    bad = [r for r in rows if not r[5] >= r[6] * (1 - TOL)]
    assert not bad, bad[:5]
    assert len(rows) >= 1650
    # and not vacuous: the tightest bound is within 2.5x of the exact value at every point (measured
    # worst 2.2x, binary RR n = 6: small n is where the reductions lose most)
    for k, n, eps0, delta, exact in small:
        if delta <= 1e-3:
            best = min(r[5] for r in rows if r[1:5] == (k, n, eps0, delta))
            assert best <= exact * 2.5 + 1e-3, (k, n, eps0, delta, best, exact)


def test_every_lower_bound_is_at_most_the_exact_eps(small):
    for k, n, eps0, delta, exact in small:
        lows = lower_bounds(k, eps0, n, delta)
        for name, val in lows.items():
            assert val <= exact * (1 + TOL), (name, k, n, eps0, delta, val, exact)
        # the worst pair found is the exact worst case for k = 2 when every split of the others is
        # searched (n <= 41; the count of ones is the whole output), within 1% with the split grid;
        # for k >= 3 one count loses information: measured >= 0.86 exact at delta <= 1e-3 (only
        # >= 0.18 at delta = 0.1, where the divergence spreads over the whole histogram)
        low = lows["krr_eps_lower"]
        if k == 2 and n <= 41:
            assert low == pytest.approx(exact, rel=1e-5, abs=1e-9)
        elif k == 2:
            assert low >= 0.99 * exact
        elif exact > 0.05 and delta <= 1e-3:
            assert low >= 0.8 * exact


# --------------------------------------------------------------------------- large n: pairs
LARGE = [(k, eps0, n) for k in (2, 3, 5) for eps0 in (1.0, 4.0, 8.0) for n in (1000, 10_000, 100_000)]


@pytest.mark.parametrize("k, eps0, n", LARGE)
def test_upper_bounds_above_exact_pair_divergences_at_large_n(k, eps0, n):
    delta = 1e-6
    pair = max(oracle.pair_count_eps(k, eps0, n, delta, m) for m in (0, n - 1))
    if n <= 10_000:
        pair = max(pair, oracle.pair_count_eps(k, eps0, n, delta, n // 2))
    for name, val in upper_bounds(k, eps0, n, delta).items():
        assert val >= pair * (1 - TOL), (name, val, pair)
    # our pair lower bounds reproduce the oracle's pairs (same pairs, independent code)
    for m in (0, n - 1):
        ours = LB.krr_pair_eps(k, eps0, n, delta, m)
        ref = oracle.pair_count_eps(k, eps0, n, delta, m)
        assert ours <= ref * (1 + TOL)
        assert ours >= ref * (1 - 1e-5) - 1e-12
    assert vr.witness_eps("krr", eps0, n, delta, k=k) >= max(
        oracle.pair_count_eps(k, eps0, n, delta, m) for m in (0, n - 1)) * (1 - 1e-5)


# --------------------------------------------------------------------------- regressions (issue 12)
def test_regression_krr_k3_vr_not_below_exact():
    assert vr.vr_eps(vr.vr_params("krr", 4.0, k=3), 5, 1e-3) >= 3.998802
    pair = oracle.pair_count_eps(3, 8.0, 1000, 1e-6, 999)   # victim 0 vs 1, every other user holds 1
    assert pair > 7.9999
    assert vr.vr_eps(vr.vr_params("krr", 8.0, k=3), 1000, 1e-6) >= pair
    # the published k = 3 value is the optimistic one (kept, labelled, for reproduction)
    assert vr.vr_eps(vr.vr_params("krr", 8.0, k=3, variant="published"), 1000, 1e-6) < pair
    # and the lower bound now finds the worst pair (was 7.31, the others-hold-0 pair)
    low = vr.witness_eps("krr", 8.0, 1000, 1e-6, k=3)
    assert pair * (1 - 1e-5) <= low <= pair * (1 + TOL)


@pytest.mark.parametrize("mechanism", ["generic", "krr", "laplace"])
@pytest.mark.parametrize("bound", ["hoeffding", "bennett"])
def test_regression_blanket_large_eps0_not_cancelled(mechanism, bound):
    kw = {"k": 3} if mechanism == "krr" else {}
    for eps0 in (30.0, 45.0, 60.0):
        eps = B.eps_blanket(eps0, 1000, 1e-6, mechanism=mechanism, bound=bound, **kw)
        assert eps >= 1.0     # was ~1e-13
        if mechanism != "laplace":
            assert eps >= oracle.pair_count_eps(3, eps0, 1000, 1e-6, 999) * (1 - TOL)


def test_blanket_mixture_is_the_exact_binomial_expectation():
    """``E[x^M] - P(M = 0)`` against an exact rational evaluation (fractions) of the naive formula."""
    from fractions import Fraction

    for n, gamma, x in ((50, 0.3, 0.2), (1000, 1e-12, 0.5), (1000, math.exp(-45.0), 0.9), (7, 0.999, 1e-3)):
        g, xx = Fraction(gamma), Fraction(x)
        exact = (1 - g * (1 - xx)) ** n - (1 - g) ** n
        assert B._mixture(n, gamma, x) == pytest.approx(float(exact), rel=1e-12)


def test_regression_extreme_n_answers_or_clean_error():
    p = vr.vr_params("general", 1.0)
    for n in (10**12, 10**15):
        lo, hi = vr.vr_eps_bounds(p, n, 1e-9)
        assert 0 <= lo <= hi < 1e-5 and hi <= lo * (1 + 1e-3) + 1e-12
    assert C.eps_clones(1.0, 10**15, 1e-9, variant="fmt23") == pytest.approx(hi, rel=1e-3)
    for fn in (lambda: vr.vr_eps(p, 10**20, 1e-6), lambda: C.eps_clones(1.0, 1e20, 1e-6),
               lambda: B.eps_blanket(1.0, 10**20, 1e-6, mechanism="generic")):
        with pytest.raises(AccountantDomainError) as info:
            fn()
        assert info.value.flag == "n" and str(info.value).startswith("--n: ")


def test_blocked_evaluation_brackets_the_exact_divergence():
    """Huge-n mode (blocks of clone counts) against the count-by-count evaluation at n = 1e7."""
    for mech in ("general", "balls-into-bins"):
        p = vr.vr_params(mech, 1.0) if mech == "general" else vr.vr_params(mech, d=17, s=1)
        for eps in (1e-4, 1e-3, 3e-3):
            exact = vr.clone_delta_bounds(p.u, p.alpha, p.w, p.r, 10**7 - 1, eps)
            lo, hi = vr.blocked_delta_bounds(p.u, p.alpha, p.w, p.r, 10**7 - 1, eps)
            assert lo <= exact[1] and hi >= exact[0]
            assert hi <= exact[1] * 1.01 + 1e-300


def test_cli_domain_errors_are_one_line(capsys):
    from shuffledp.cli import main

    for argv, flag in (
        (["account", "vr", "--mechanism", "krr", "--k", "3", "--eps0", "1", "--n", "1e20", "--delta", "1e-6"], "n"),
        (["account", "clones", "--eps0", "600", "--n", "100", "--delta", "1e-6"], "eps0"),
        (["account", "blanket", "--bound", "hoeffding", "--mechanism", "generic", "--eps0", "1", "--n", "1e20",
          "--delta", "1e-6"], "n"),
    ):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2 and out == ""
        assert err.startswith(f"shuffledp: error: --{flag}: ") and err.count("\n") == 1


def test_personalized_eps_for_delta_contract():
    """One contract: an unreachable target gives inf unless the cap is declared valid."""
    from shuffledp.accountants.numerics import hockey_stick as hs

    assert P.eps_for_delta(lambda e: math.exp(-e), 1e-3, 2.0) == math.inf
    assert hs.eps_for_delta(lambda e: math.exp(-e), 1e-3, 2.0) == math.inf
    assert P.eps_for_delta(lambda e: math.exp(-e), 1e-3, 2.0, cap_valid=True) == 2.0
    assert hs.eps_for_delta(lambda e: math.exp(-e), 1e-3, 2.0, cap_valid=True) == 2.0


def test_ccc_is_an_approximation_not_a_bound():
    """Finding: the CCC accountant (mu-GDP from a central-limit argument) is below the exact eps of
    shuffled binary RR -- so it is reported as a baseline, never as a guarantee."""
    exact = oracle.exact_krr_eps(2, 3.0, 20, 0.1)[0]
    assert P.personalized_eps("ccc", [3.0] * 20, 0.0, 0.1) < 0.9 * exact
    pair = oracle.pair_count_eps(2, 6.0, 1000, 0.01, 0)
    assert P.personalized_eps("ccc", [6.0] * 1000, 0.0, 0.01) < 0.5 * pair


def test_cli_krr_k3_reports_sound_upper_and_lower(capsys):
    """Issue 12's first example through the CLI: eps >= exact >= eps_lower."""
    import json

    from shuffledp.cli import main

    code = main(["account", "vr", "--mechanism", "krr", "--k", "3", "--eps0", "4", "--n", "5", "--delta", "1e-3"])
    obj = json.loads(capsys.readouterr().out)
    exact = oracle.exact_krr_eps(3, 4.0, 5, 1e-3)[0]
    assert code == 0 and obj["eps"] >= exact >= obj["eps_lower"] >= exact * (1 - 1e-5)


@pytest.mark.parametrize("call, flag", [
    (lambda: vr.vr_eps(vr.vr_params("krr", 1.0, k=1), 100, 1e-6), "k"),
    (lambda: vr.vr_params("general", 0.0), "eps0"),
    (lambda: vr.vr_params("general", math.nan), "eps0"),
    (lambda: vr.vr_eps(vr.vr_params("general", 1.0), 100, 1.0), "delta"),
    (lambda: vr.vr_eps(vr.vr_params("general", 1.0), 10.5, 1e-6), "n"),
    (lambda: C.eps_clones(1.0, 100, 0.0), "delta"),
    (lambda: C.eps_clones(501.0, 100, 1e-6), "eps0"),
    (lambda: C.delta_clones(1.0, 100, -1.0), "eps"),
    (lambda: B.eps_blanket(1.0, 1, 1e-6, mechanism="generic"), "n"),
    (lambda: B.eps_blanket(1.0, 100, 1e-6, mechanism="nope"), "mechanism"),
    (lambda: B.eps_blanket(1.0, 100, 1e-6, mechanism="krr", k=1), "k"),
    (lambda: P.personalized_eps("fv", [1.0, -1.0], 0.0, 1e-6), "eps-local"),
    (lambda: P.personalized_eps("fv", [1.0, 1.0], 0.0, 2.0), "delta"),
    (lambda: LB.krr_pair_eps(3, 1.0, 100, 1e-6, 100), "others"),
])
def test_outside_the_domain_one_error_type_naming_the_flag(call, flag):
    with pytest.raises(AccountantDomainError) as info:
        call()
    assert info.value.flag == flag and str(info.value) == f"--{flag}: {info.value.message}"
    assert isinstance(info.value, ValueError)
