"""HDG's granularity rule with the component's own noise (issue 24, Figs 8/9).

HDG's published guideline is its error-balancing rule evaluated with OUE's cell variance at eps with
n/m users per grid; evaluated at eps_s it gives 2-4-cell grids for the shuffled components, whose
noise is far lower, so coarse-grid bias dominated Figs 8/9. The rule with the component's variance
(``granularity: component``, the paper scale's setting) gives finer grids and a lower query error.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.protocols.mhm import approx_variance, lemma4_variance
from shuffledp.tasks import range_queries as R
from shuffledp.tasks.frequency import make_component

SPEC = dict(bound="bennett", hash_family_bits=32, flame_np_fraction=1 / 3, flame_variant="balle")


def test_published_rule_is_the_variance_rule_with_oue():
    for n, d, eps in [(10_000, 5, 0.2), (48_842, 5, 1.0), (200_000, 10, 0.4)]:
        m = d + d * (d - 1) // 2
        v = 4 * math.exp(eps) / ((n / m) * (math.exp(eps) - 1) ** 2)
        assert R.granularities(n, d, eps, 16) == R.granularities_from_variance(v, 16)


def test_mhm_cell_variance_includes_lemma4_frequency_term():
    comp = make_component("mhm", **SPEC)
    doms = [8] * 5 + [4] * 10
    n = 10_000
    st = comp.setting(n, doms, 0.4, 1 / n)
    var = comp.cell_variances(n, doms, 0.4, 1 / n)
    eq2 = approx_variance(st.eps_l, len(doms), st.g, n)
    for v, k in zip(var, doms, strict=True):
        assert v == float(lemma4_variance(st.eps_l, len(doms), st.g, n, 1 / k))
        assert v > 3 * eq2  # the frequency term dominates at MHM's amplified eps_l


def _ordinal(n=10_000, d=5, c=16, seed=3):
    rng = np.random.default_rng(seed)
    z = rng.multivariate_normal(np.zeros(d), 0.6 * np.ones((d, d)) + 0.4 * np.eye(d), size=n)
    return np.clip(np.floor((z + 3) / 6 * c), 0, c - 1).astype(np.int64)


def _query_mse(data, g1, g2, comp, eps, queries, reps=2):
    n, d = data.shape
    grids = R.Grids(d, 16, g1, g2)
    codes = R.encode_grids(data, grids)
    truth = [R.true_answer(data, q) for q in queries]
    out = []
    for rep in range(reps):
        fe = comp.estimate(codes, grids.domains, eps, 1 / n, np.random.default_rng(100 + rep))
        mats = R.response_matrices(R.postprocess(fe.estimates, grids, fe.cell_variance, rounds=5), grids)
        out.append(np.mean([(R.answer_query(mats, q) - t) ** 2 for q, t in zip(queries, truth, strict=True)]))
    return float(np.mean(out))


def test_component_grids_are_finer_and_answer_better_at_small_eps():
    data = _ordinal()
    n, d = data.shape
    comp = make_component("mhm", **SPEC)
    eps = 0.2
    coarse = R.granularities(n, d, eps, 16)
    fine = R.choose_granularities(comp, n, d, 16, eps, 1 / n)
    assert coarse == (2, 2) and fine[0] >= 8
    queries = R.random_queries(d, 16, 2, 40, 0.5, np.random.default_rng(9))
    assert _query_mse(data, *fine, comp, eps, queries) < 0.5 * _query_mse(data, *coarse, comp, eps, queries)
