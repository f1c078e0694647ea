"""``account best`` over its whole documented domain (issue 25, item 3): the blanket bound in log
space against an exact computation, the O(1) count-statistic lower bound, and a sweep of the
domain's corners through the CLI (exit 0 with finite values in order, or exit 2 with one line
naming the flag)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special, stats

from shuffledp.accountants import best
from shuffledp.accountants.lower import lower_bounds as lbm
from shuffledp.accountants.upper import blanket


def _binary_rr_divergences(n: int, eps0: float, eps: float) -> np.ndarray:
    """Exact ``max(D(P||Q), D(Q||P))`` of the count of ones of shuffled binary randomized response,
    for every split ``m`` of the other ``n - 1`` users (``m`` hold 1), by direct convolution of
    the binomial pmfs (scipy.stats directly, nothing from the package). The count is a sufficient
    statistic of the shuffled binary reports, so the largest of these is the exact delta(eps)."""
    ph = math.exp(eps0) / (1.0 + math.exp(eps0))
    N = n - 1
    ee = math.exp(eps)
    out = np.empty(N + 1)
    for m in range(N + 1):
        others = np.convolve(stats.binom.pmf(np.arange(m + 1), m, ph),
                             stats.binom.pmf(np.arange(N - m + 1), N - m, 1.0 - ph))
        pad, base = np.concatenate([[0.0], others]), np.concatenate([others, [0.0]])
        P = (1.0 - ph) * pad + ph * base   # victim holds 0: its report is 1 w.p. 1 - ph
        Q = ph * pad + (1.0 - ph) * base   # victim holds 1
        out[m] = max(np.maximum(P - ee * Q, 0.0).sum(), np.maximum(Q - ee * P, 0.0).sum())
    return out


def test_blanket_krr_not_below_exact_at_tiny_delta():
    """Binary RR, n = 1000, eps0 = 1, delta = 1e-41: the blanket bounds (whose mixture underflowed
    in the product form, giving 0.495751 below the exact 0.496838) certify an eps at which the
    exact divergence of every configuration is at most delta; and the exact eps is 0.496838."""
    n, eps0, delta = 1000, 1.0, 1e-41
    for bound in ("hoeffding", "bennett"):
        eps = blanket.eps_blanket(eps0, n, delta, mechanism="krr", k=2, bound=bound)
        assert eps >= 0.496838
        assert _binary_rr_divergences(n, eps0, eps).max() <= delta * (1 + 1e-9)
    # the exact eps: where the worst configuration's divergence crosses delta
    lo, hi = 0.49, 0.51
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _binary_rr_divergences(n, eps0, mid).max() > delta else (lo, mid)
    assert hi == pytest.approx(0.496838, abs=2e-6)
    res = best.best_eps("krr", eps0, n, delta, k=2)   # used to exit on its lower <= upper check
    assert res["eps_lower"] <= hi <= res["eps"]


@pytest.mark.parametrize("n,gamma,x", [(1000, 0.9, 0.3), (10**6, 0.5, 0.999), (10**9, 1e-3, 0.5),
                                       (50, 1e-12, 0.7), (10**15, 0.2, 1e-30), (10, 0.3, 1.0)])
def test_log_mixture_matches_a_direct_sum(n, gamma, x):
    """``log(E[x^M] - Pr[M = 0])``, ``M ~ Bin(n, gamma)``, against a log-sum-exp over scipy's
    binomial log pmf (on the window holding the mass), including where ``(1 - gamma)^n``
    underflows (n |log(1 - gamma)| > 745)."""
    mean = n * gamma * x / (1 - gamma + gamma * x)
    sd = math.sqrt(max(mean, 1.0))
    lo, hi = max(1, int(mean - 40 * sd)), min(n, int(mean + 40 * sd) + 40)
    m = np.arange(lo, hi + 1, dtype=float)
    direct = special.logsumexp(stats.binom.logpmf(m, n, gamma) + m * math.log(x))
    assert blanket._log_mixture(n, gamma, x) == pytest.approx(direct, rel=1e-9, abs=1e-9)


def test_group_count_lower_bound_is_a_real_pair_divergence():
    """The O(1) lower bound used at every n equals, at small n, the exact divergence of the count
    of group-1 reports computed by convolution (others all at the victim's second input), and is
    never above the expensive pair-group-counts bound's statistic-rich value by more than rtol."""
    from shuffledp.accountants.randomizers import standard as rz

    eps0, n, delta = 2.0, 200, 1e-4
    vic, vicq, configs = rz.real_pair_configs("oue", eps0, d=10)
    eps = best.group_count_lower_eps(vic, vicq, {"x'": configs["others_at_x'"]}, n, delta, eps0)
    b = configs["others_at_x'"][0]
    others = stats.binom.pmf(np.arange(n), n - 1, b)
    pad, base = np.concatenate([[0.0], others]), np.concatenate([others, [0.0]])

    def div(e):
        P = vic[0] * pad + (1 - vic[0]) * base
        Q = vicq[0] * pad + (1 - vicq[0]) * base
        return max(np.maximum(P - math.exp(e) * Q, 0).sum(), np.maximum(Q - math.exp(e) * P, 0).sum())

    assert div(eps) > delta                 # a lower bound: the pair still exceeds delta there
    assert div(eps * (1 + 1e-4)) <= delta * (1 + 1e-6)   # and it is the crossing (rtol 1e-5)
    full = best.best_eps("oue", eps0, n, delta, d=10)
    assert eps <= full["eps"]


def test_count_pair_delta_is_o1_at_huge_n():
    """The closed form the huge-n lower bounds use answers at n = 1e15 (no window over counts)."""
    v = lbm.count_pair_delta(0.7, 0.3, 0.3, 10**15 - 1, 1e-7)
    assert 0.0 <= v < 1.0


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shuffledp", "account", "best", *args],
                          capture_output=True, text=True, timeout=timeout)


CORNER_MECHS = [
    ["--mechanism", "krr", "--k", "2"],
    ["--mechanism", "krr", "--k", "1000000000"],
    ["--mechanism", "general"],
    ["--mechanism", "oue", "--d", "2"],
    ["--mechanism", "olh", "--g", "2"],
    ["--mechanism", "olh"],
    ["--mechanism", "subset-exp", "--d", "1000", "--s", "1000", "--k", "1"],
    ["--mechanism", "subset-exp", "--d", "20000", "--s", "20000", "--k", "19999"],
]


@pytest.mark.parametrize("mech", CORNER_MECHS, ids=lambda m: "-".join(m[1::2]))
def test_domain_corners_answer_through_the_cli(mech):
    """Every corner of the documented domain (n in {2, 1e15}, eps0 in {0.01, 50}, delta in
    {1e-300, 0.999}) answers with exit 0, finite values and lower <= upper <= eps0 (one process
    per randomizer, the corners as a grid; bounded by the subprocess timeout)."""
    proc = _cli(*mech, "--n", "2,1e15", "--eps0", "0.01,50", "--delta", "1e-300,0.999")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 8
    for row in rows:
        assert math.isfinite(row["eps"]) and math.isfinite(row["eps_lower"]), row
        assert 0.0 <= row["eps_lower"] <= row["eps"] * (1 + 1e-9) <= row["eps0"] * (1 + 1e-9), row
        assert row["ratio"] == "inf" or row["ratio"] >= 1 - 1e-9


@pytest.mark.parametrize("args,flag", [
    (["--mechanism", "krr", "--k", "2", "--eps0", "50.5", "--n", "1000", "--delta", "1e-6"], "--eps0"),
    (["--mechanism", "krr", "--k", "2", "--eps0", "1", "--n", "1000", "--delta", "5e-324"], "--delta"),
    (["--mechanism", "krr", "--k", "2", "--eps0", "1", "--n", "1e16", "--delta", "1e-6"], "--n"),
    (["--mechanism", "krr", "--k", "2", "--eps0", "1", "--n", "1", "--delta", "1e-6"], "--n"),
    (["--mechanism", "subset-exp", "--d", "1000", "--s", "1000", "--eps0", "1", "--n", "1000",
      "--delta", "1e-6"], "--k"),
    (["--mechanism", "krr", "--k", "1e10", "--eps0", "1", "--n", "1000", "--delta", "1e-6"], "--k"),
])
def test_outside_the_domain_one_line_naming_the_flag(args, flag):
    proc = _cli(*args, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0], proc.stderr


@pytest.mark.parametrize("mech,eps0,n,delta", [("laplace", 500.0, 1000, 1e-6), ("generic", 500.0, 10**15, 1e-300),
                                               ("krr", 50.0, 2, 1e-300), ("generic", 1e-3, 10**15, 0.999)])
def test_blanket_answers_at_the_edges(mech, eps0, n, delta):
    """Where the lemma's constants overflow (Laplace at eps0 = 500 divided by zero) or the rate
    underflows, the blanket bound answers a finite eps in [0, eps0] (eps0: nothing certified)."""
    kw = {"k": 2} if mech == "krr" else {}
    for bound in ("hoeffding", "bennett"):
        eps = blanket.eps_blanket(eps0, n, delta, mechanism=mech, bound=bound, **kw)
        assert math.isfinite(eps) and 0.0 <= eps <= eps0


def test_edge_of_numerics_answers_trivially_with_a_note():
    """OUE at eps0 = 45: the pair-group-counts lower bound's group split rounds to 0/1; it answers
    0 with a note, the O(1) count bound and every upper bound still answer, lower <= upper."""
    res = best.best_eps("oue", 45.0, 1000, 1e-6, d=10, parallel=False)
    entry = res["bounds"]["pair-group-counts"]
    assert entry["eps"] == 0.0 and "degenerate group split" in entry["note"]
    assert 0.0 < res["eps_lower"] <= res["eps"] <= 45.0
    assert res["ratio"] == pytest.approx(res["eps"] / res["eps_lower"])


def test_huge_n_skips_the_sqrt_n_bounds():
    """Above HEAVY_N_MAX only bounds of fixed cost run: no pair-group-counts, but the decomposition
    (its counts in blocks: a cost independent of n) for every randomizer that has one."""
    for mech, kw in (("oue", {"d": 10}), ("subset-exp", {"d": 10, "s": 2}), ("krr", {"k": 10}),
                     ("olh", {}), ("mhm", {"d": 3})):
        n = best.HEAVY_N_MAX[mech] + 1
        assert "decomposition" in best.upper_bounds(mech, 1.0, n, 1e-6, **kw)
        assert "decomposition" in best.upper_bounds(mech, 1.0, 10**15, 1e-6, **kw)
    n = best.HEAVY_N_MAX["oue"] + 1
    assert set(best.lower_bounds("oue", 1.0, n, 1e-6, d=10)) == {"group-one-count", "third-input-blocked"}
    assert "pair-group-counts" in best.lower_bounds("oue", 1.0, n - 1, 1e-6, d=10)


def test_a_certified_eps_of_zero_is_exact():
    """At 1e12 users k-RR at eps0 = 0.5 is (0, 1e-6)-DP (its total variation is below delta): eps = 0
    is certified and no lower bound can be higher, so the answer is exact (ratio 1, gap 0), not
    an infinite gap."""
    res = best.best_eps("krr", 0.5, 10**12, 1e-6, k=10, parallel=False)
    assert res["eps"] == 0.0 and res["eps_lower"] == 0.0
    assert res["ratio"] == 1.0 and res["gap"] == 0.0
    res = best.best_eps("krr", 0.5, 10**9, 1e-6, k=10, parallel=False)
    assert res["eps"] > 0 and res["ratio"] == pytest.approx(res["eps"] / res["eps_lower"])


@pytest.mark.parametrize("parallel", [False, True])
def test_once_eps_zero_is_certified_the_rest_is_skipped(parallel):
    """subset-exp at 1e15 users, eps0 = 0.5: the decomposition certifies eps = 0; the other upper
    bounds are then left out (none can do better), each entry saying so; without the skip every
    one of them also answers 0 (same answer either way)."""
    res = best.best_eps("subset-exp", 0.5, 10**15, 1e-6, d=100, s=4, parallel=parallel)
    assert res["eps"] == 0.0 and res["upper_by"] == "decomposition" and res["ratio"] == 1.0
    uppers = {nm: b for nm, b in res["bounds"].items() if b["kind"] == "upper"}
    skipped = {nm for nm, b in uppers.items() if b["eps"] is None}
    assert all("certifies eps = 0" in uppers[nm]["note"] for nm in skipped)
    if not parallel:  # (the closed forms run first, instantly: the decomposition's ceiling)
        assert skipped == set(uppers) - {"decomposition"} - set(best.CEILING_BOUNDS)
    full = best.best_eps("subset-exp", 0.5, 10**15, 1e-6, d=100, s=4, parallel=False,
                         bounds=["variation-ratio", "fmt23"])
    assert full["eps"] == 0.0
