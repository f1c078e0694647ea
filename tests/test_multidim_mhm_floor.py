"""MHM's flat MSE in eps_s (Fig. 3, issue 24): where the floor comes from, pinned with numbers.

Findings (docs/multidim.md, "Why MHM's MSE is flat in eps_s"): the floor is the sampling design
(one report names one of the d hashed values: ``p <= 1/d``, and Eq. (3)'s g makes ``p d -> 1/2``),
not the eps_s -> eps_l inversion (eps_l already reaches the floor's region at eps_s = 0.1) and not
the estimator (measured MSE = Lemma 4's expectation). The paper's printed p and accountant give a
flat curve too, on a floor about half as high, with a randomizer that is not eps_l-LDP.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accountants.upper.blanket import max_eps_local, mhm_printed_ldp_eps, mhm_printed_p
from shuffledp.mechanisms.collision import collision_pmf
from shuffledp.protocols import mhm
from shuffledp.tasks.multidim import frequency_mse, true_frequencies

DOMAINS = [2, 20, 5, 8, 5, 4, 5, 12, 17, 8]  # the configured BR attributes
N = 20_000


def _data(seed=0):
    rng = np.random.default_rng(seed)
    cols = [rng.choice(c, size=N, p=rng.dirichlet(np.ones(c))) for c in DOMAINS]
    return np.stack(cols, axis=1)


def test_p_times_d_tends_to_half_with_eq3_g():
    d = len(DOMAINS)
    for eps_l in (4.0, 6.0, 10.0, 20.0):
        p, q = mhm.mhm_pq(eps_l, d, mhm.g_int(eps_l, d))
        assert 0.45 < p * d < 0.5 and q < 0.02
    # the paper's printed p: p d -> d / (d + 1)
    g = mhm.g_int(10.0, d)
    assert abs(mhm_printed_p(10.0, d, g) * d - d / (d + 1)) < 0.01


@pytest.mark.parametrize("variant", ["ours", "paper"])
def test_estimator_at_large_eps_l_sits_on_the_design_floor(variant):
    """eps_l fixed large (no accountant involved): measured MSE = Lemma 4 = the floor, within noise."""
    data = _data()
    d = len(DOMAINS)
    truth = true_frequencies(data, DOMAINS)
    floor = mhm.mse_floor(d, DOMAINS, variant) / N
    for eps_l in (8.0, 12.0):
        st = mhm.MHMSetting(eps_l, mhm.g_int(eps_l, d, variant), True, variant)
        rng = np.random.default_rng(7)
        ms = [frequency_mse(mhm.run_mhm(data, DOMAINS, 1.0, 1e-5, rng, setting=st).estimates, truth)
              for _ in range(40)]
        exp = mhm.expected_mse(eps_l, d, st.g, N, DOMAINS, variant)
        se = np.std(ms, ddof=1) / math.sqrt(len(ms))
        assert se < 0.08 * exp                           # informative: 4 SE < 1/3 of the value
        assert abs(np.mean(ms) - exp) < 4 * se           # the estimator is Lemma 4's
        assert abs(exp / floor - 1) < 0.1                # and Lemma 4 is on the floor at large eps_l


def test_inversion_reaches_the_floor_already_at_small_eps_s():
    """eps_l(eps_s) grows (3 -> 6.7 on BR's d, n = 20,000), yet the expected MSE moves < 2x: the floor."""
    d = len(DOMAINS)
    sets = [mhm.mhm_eps_local(e, 1 / N, N, d) for e in (0.1, 0.4, 1.0)]
    eps_l = [s.eps_l for s in sets]
    assert eps_l == sorted(eps_l) and eps_l[0] > 2.5 and eps_l[-1] > 6
    mse = [mhm.expected_mse(s.eps_l, d, s.g, N, DOMAINS) for s in sets]
    floor = mhm.mse_floor(d, DOMAINS) / N
    assert mse[0] / mse[-1] < 2.0 and mse[-1] / floor < 1.05
    slope = np.polyfit(np.log([0.1, 0.4, 1.0]), np.log(mse), 1)[0]
    assert -0.35 < slope < -0.1  # far from the paper's "inversely proportional" (-1)


def test_paper_variant_flat_too_and_not_eps_l_ldp():
    d = len(DOMAINS)
    ours = [mhm.mhm_eps_local(e, 1 / N, N, d) for e in (0.4, 1.0)]
    paper = [mhm.mhm_eps_local(e, 1 / N, N, d, variant="paper") for e in (0.4, 1.0)]
    for o, p in zip(ours, paper, strict=True):
        assert p.eps_l > o.eps_l + 2  # the printed accountant is optimistic
        # the printed p is not eps_l-LDP: exact pmf ratio of two inputs with disjoint hashed sets
        pr = mhm_printed_p(p.eps_l, d, p.g)
        a = collision_pmf(np.arange(d), pr, p.g)
        b = collision_pmf(np.arange(d, 2 * d), pr, p.g)
        ratio = math.log(max(np.max(a / b), np.max(b / a)))
        assert abs(ratio - mhm_printed_ldp_eps(p.eps_l, d, p.g)) < 1e-9
        assert ratio > p.eps_l + 2
        # and its certified budget by our accountant at that true LDP budget is not (eps_s, 1/n)
    mse = [mhm.expected_mse(s.eps_l, d, s.g, N, DOMAINS, "paper") for s in paper]
    floor = mhm.mse_floor(d, DOMAINS, "paper") / N
    assert abs(mse[0] / mse[1] - 1) < 0.05 and abs(mse[1] / floor - 1) < 0.1
    assert floor < 0.6 * mhm.mse_floor(d, DOMAINS) / N


def test_ours_is_certified_by_the_exact_accountant():
    d = len(DOMAINS)
    s = mhm.mhm_eps_local(0.4, 1 / N, N, d)
    assert s.eps_l <= max_eps_local(0.4, 1 / N, N, mechanism="mhm", bound="bennett", d=d, g=s.g) + 1e-12
