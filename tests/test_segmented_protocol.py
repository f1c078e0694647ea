"""Statistical tests of the segmented protocol, its samplers and its baselines (fixed seeds).

Tolerances: each test averages R independent runs; the standard error of a mean of R runs is
sd / sqrt(R), estimated from the runs themselves, and we allow 4 standard errors per item
(two-sided false-alarm probability ~6e-5 per item), which with a fixed seed makes the test
deterministic and still able to fail on a bias of a few percent.
"""

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.mechanisms import level_histogram as lh
from shuffledp.mechanisms import poisson_set as ps
from shuffledp.mechanisms import subset_exp as se
from shuffledp.protocols import mm, segmented, subexp


def _sets(n, d, s, rng, pad_frac=0.3):
    keys = rng.random((n, d)) ** np.linspace(1, 3, d)[None, :]  # skewed item popularity
    sets = np.argsort(keys, axis=1)[:, :s].astype(np.int64)
    short = rng.random(n) < pad_frac  # some users hold fewer than s items
    sets[short, s - 1] = ps.PAD
    return sets


def _truth(sets, d):
    return np.bincount(sets[sets >= 0], minlength=d) / sets.shape[0]


def _levels(n, shares, rng):
    counts = np.floor(np.asarray(shares) * n).astype(int)
    counts[-1] = n - counts[:-1].sum()
    return rng.permutation(np.repeat(np.arange(len(shares)), counts))


def _assert_unbiased(estimates, truth, z=4.0):
    est = np.asarray(estimates)
    mean = est.mean(axis=0)
    se_ = est.std(axis=0, ddof=1) / math.sqrt(est.shape[0])
    assert np.all(np.abs(mean - truth) <= z * se_ + 1e-12), (mean - truth, se_)


def test_estimator_unbiased_with_exact_level_counts():
    rng = np.random.default_rng(1)
    n, d, s = 3000, 17, 4
    sets = _sets(n, d, s, rng)
    levels = _levels(n, [0.25, 0.5, 0.25], rng)
    lam, m = [0.3, 0.6, 1.0], 1.7
    truth = _truth(sets, d)
    # the estimator is unbiased over the users' (data-independent) level choices: redraw them per run
    ests = [segmented.run_segmented(sets, rng.permutation(levels), lam, m, d, rng).estimate
            for _ in range(3000)]
    _assert_unbiased(ests, truth)


def test_measured_mse_matches_variance_terms_and_bound():
    rng = np.random.default_rng(2)
    n, d, s = 2000, 17, 4
    sets = _sets(n, d, s, rng)
    levels = _levels(n, [0.5, 0.25, 0.25], rng)
    lam, m = [0.2, 0.5, 0.9], 0.6
    truth = _truth(sets, d)
    errs = np.array([np.sum((segmented.run_segmented(sets, levels, lam, m, d, rng).estimate - truth) ** 2)
                     for _ in range(4000)])
    nk = np.bincount(levels, minlength=3)
    # padding items are sent and blankets drawn over d + s items; the variance over the real items
    held, domain = ps.protocol_sets(sets, d)
    assert domain == d + s and held.min() >= 0 and held.max() < d + s
    cjk = ps.item_level_counts(held, levels, domain, 3)[:d]
    var = segmented.mse_variance_terms(cjk, n, m, nk, lam, domain=domain)
    # with the levels held fixed the estimator has a small exact bias (it vanishes on average over
    # the level choices): MSE = variance terms + bias^2
    bias2 = float(np.sum(((cjk * lam).sum(1) / np.dot(nk, lam) - truth) ** 2))
    exact = var + bias2
    # relative standard error of the mean of 4000 squared-error sums, estimated from the runs
    rel_se = errs.std(ddof=1) / math.sqrt(errs.size) / errs.mean()
    assert abs(errs.mean() / exact - 1) < 4 * rel_se
    assert exact <= segmented.mse_bound(n, m, s, nk, lam)
    # over random level choices (as in the experiments) the paper's bound holds for the measured MSE
    errs_r = np.array([np.sum((segmented.run_segmented(sets, rng.permutation(levels), lam, m, d, rng)
                               .estimate - truth) ** 2) for _ in range(2000)])
    assert errs_r.mean() <= segmented.mse_bound(n, m, s, nk, lam)


def test_count_sampler_agrees_with_message_simulation():
    rng = np.random.default_rng(3)
    n, d, s = 400, 6, 3
    sets = _sets(n, d, s, rng)
    levels = _levels(n, [0.25, 0.25, 0.5], rng)
    lam, m = [0.25, 0.5, 0.8], 2.3
    sets, d = ps.protocol_sets(sets, d)  # padded: the padding bins are counts like the others
    cjk = ps.item_level_counts(sets, levels, d, 3)
    a = np.array([ps.sample_counts(cjk, lam, n, m, d, rng) for _ in range(3000)])
    b = np.array([ps.counts_from_messages(ps.simulate_messages(sets, levels, lam, m, d, rng), d)
                  for _ in range(3000)])
    for j in range(d):  # marginal distributions of each count agree (two-sample KS)
        assert stats.ks_2samp(a[:, j], b[:, j]).pvalue > 1e-3
    # total message count and the cross-item covariance (the multinomial structure) agree
    assert stats.ks_2samp(a.sum(1), b.sum(1)).pvalue > 1e-3
    ca, cb = np.cov(a.T), np.cov(b.T)
    off = ~np.eye(d, dtype=bool)
    assert np.allclose(ca[off], cb[off], atol=4 * np.sqrt(np.diag(ca).max() ** 2 * 2 / 3000))


def test_blanket_trials():
    assert ps.blanket_trials(0.3) == (1, pytest.approx(0.3))
    assert ps.blanket_trials(2.5) == (3, pytest.approx(2.5 / 3))
    assert ps.blanket_trials(0) == (0, 0.0)
    with pytest.raises(ValueError, match="m"):
        ps.blanket_trials(-1)


def test_data_messages_carry_no_level():
    rng = np.random.default_rng(4)
    n, d, s = 500, 10, 3
    sets, d = ps.protocol_sets(_sets(n, d, s, rng), d)
    lam = [0.7, 0.7, 0.7]  # equal rates: the data messages must not depend on the levels at all
    lv1 = _levels(n, [0.2, 0.3, 0.5], rng)
    lv2 = rng.permutation(lv1)
    m1 = ps.simulate_messages(sets, lv1, lam, 1.5, d, np.random.default_rng(9))
    m2 = ps.simulate_messages(sets, lv2, lam, 1.5, d, np.random.default_rng(9))
    assert m1.ndim == 1 and m1.dtype.kind == "i"  # bare item indices: no level, no user id
    assert np.array_equal(m1, m2)
    assert m1.min() >= 0 and m1.max() < d
    # the shuffler's output order is uniform: the first message is not tied to user 0's items
    firsts = [ps.simulate_messages(sets, lv1, [1, 1, 1], 0, d, np.random.default_rng(i))[0]
              for i in range(300)]
    assert len(set(firsts)) > 3
    # level messages are a separate shuffled stream containing level indices only
    lm = lh.level_messages_exact(lv1, rng)
    assert np.array_equal(np.sort(lm), np.sort(lv1)) and not np.array_equal(lm, lv1)


def test_exact_level_histogram_counts_the_shuffled_messages_and_draws_the_shuffle():
    """The exact level histogram is the count of the shuffled level messages, and the generator is
    left where drawing those messages leaves it (the protocol's later draws are unchanged)."""
    levels = _levels(5000, [0.2, 0.3, 0.5], np.random.default_rng(3))
    for seed in range(3):
        g1, g2 = np.random.default_rng(seed), np.random.default_rng(seed)
        got = lh.level_histogram(levels, 4, g1)
        ref = np.bincount(lh.level_messages_exact(levels, g2), minlength=4).astype(float)
        assert got.dtype == ref.dtype and np.array_equal(got, ref) and got[3] == 0
        assert np.array_equal(g1.integers(0, 2**62, 8), g2.integers(0, 2**62, 8))


def test_dp_level_histogram_unbiased():
    rng = np.random.default_rng(5)
    levels = _levels(2000, [0.25, 0.5, 0.25], rng)
    ests = [lh.level_histogram(levels, 3, rng, mode="grr", epsilon_p=1.0) for _ in range(2000)]
    _assert_unbiased(ests, np.bincount(levels, minlength=3))


def test_estimator_with_dp_level_histogram_close():
    rng = np.random.default_rng(6)
    n, d, s = 3000, 17, 4
    sets = _sets(n, d, s, rng)
    levels = _levels(n, [0.25, 0.5, 0.25], rng)
    truth = _truth(sets, d)
    ests = np.array([segmented.run_segmented(sets, rng.permutation(levels), [0.3, 0.6, 1.0], 1.0, d, rng,
                                             level_mode="grr",
                                             epsilon_p=2.0).estimate for _ in range(1500)])
    # ratio estimator: bias O(1/n_hat); allow 4 standard errors plus 1% relative
    se_ = ests.std(0, ddof=1) / math.sqrt(len(ests))
    assert np.all(np.abs(ests.mean(0) - truth) <= 4 * se_ + 0.01 * truth)


def test_subset_exp_rates_by_enumeration():
    d, s, eps, k = 5, 2, 1.0, 2
    r = se.subset_exp_rates(d, s, eps, k)
    import itertools
    x = {0, 1}
    tot, hit_in, hit_out = 0.0, 0.0, 0.0
    for z in itertools.combinations(range(d + s), k):
        w = math.exp(eps) if x & set(z) else 1.0
        tot += w
        hit_in += w * (0 in z)
        hit_out += w * (3 in z)
    assert r.omega == pytest.approx(tot)
    assert r.t == pytest.approx(hit_in / tot)
    assert r.f == pytest.approx(hit_out / tot)
    # eps-LDP: the largest output-probability ratio is e^eps
    assert (math.exp(eps) / r.omega) / (1 / r.omega) == pytest.approx(math.exp(eps))


@pytest.mark.parametrize("d,k", [(6, 3), (20, 2)])  # argsort path and rejection path
def test_subset_exp_randomize_distribution(d, k):
    rng = np.random.default_rng(7)
    s, eps, n = 2, 1.0, 20000
    r = se.subset_exp_rates(d, s, eps, k)
    padded = np.tile(np.array([[1, 4]]), (n, 1))
    out = se.randomize(padded, r, rng)
    assert np.all(np.sort(out, 1)[:, 1:] != np.sort(out, 1)[:, :-1])  # distinct items
    h = se.hits(out, d, s) / n
    tol = 4 * math.sqrt(0.25 / n)  # 4 binomial standard errors
    assert h[1] == pytest.approx(r.t, abs=tol) and h[4] == pytest.approx(r.t, abs=tol)
    for j in set(range(d + s)) - {1, 4}:
        assert h[j] == pytest.approx(r.f, abs=tol)
    # the intersection size follows its pmf
    inter = np.isin(out, [1, 4]).sum(1)
    assert np.allclose(np.bincount(inter, minlength=3)[:3] / n, se.intersection_pmf(r)[:3], atol=tol)


@pytest.mark.parametrize("eps", [2.0, 0.8])
def test_subexp_unbiased(eps):
    rng = np.random.default_rng(8)
    n, d, s = 1000, 17, 4
    sets = _sets(n, d, s, rng)
    truth = _truth(sets, d)
    k = se.best_subset_size(d, s, eps)
    ests = [subexp.run_subexp(sets, d, s, eps, rng, k=k)[0] for _ in range(600)]
    _assert_unbiased(ests, truth)


def test_mm_and_sepmm_unbiased():
    rng = np.random.default_rng(10)
    n, d, s = 3000, 17, 4
    sets = _sets(n, d, s, rng)
    levels = _levels(n, [0.25, 0.5, 0.25], rng)
    truth = _truth(sets, d)
    _assert_unbiased([mm.run_mm(sets, 2.0, d, rng) for _ in range(1500)], truth)
    # SepMM: each per-level estimator is unbiased for its group's frequencies
    w = mm.wsepmm_weights(np.bincount(levels), [0.5, 1, 2], d, s, 1e-6)
    assert w.sum() == pytest.approx(1.0) and w[2] > w[0]
    runs = [mm.run_sepmm(sets, levels, [3.0, 1.0, 0.3], d, rng, weights=w) for _ in range(1500)]
    group_truth = np.array([_truth(sets[levels == k], d) for k in range(3)])
    _assert_unbiased([r[1].ravel() for r in runs], group_truth.ravel())
    _assert_unbiased([r[0] for r in runs], w @ group_truth)
