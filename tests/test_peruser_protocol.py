"""Algorithm 1's pieces: the combination R, the within-group shuffle, clustering, the attack."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import jensenshannon

from shuffledp.datasets.peruser import dirichlet_mixture
from shuffledp.protocols import peruser as P


def test_combination_unbiased_with_stated_variance():
    rng = np.random.default_rng(7)
    eps, eps1, c = 2.0, 0.6, 0.1
    eps2 = eps - eps1
    h = np.array([[0.5, 0.3, 0.2, 0.0]])
    N = 200_000
    H = np.repeat(h, N, axis=0)
    W = P.laplace_copy(H, eps1, c, rng)
    T = P.laplace_copy(H, eps2, c, rng)
    R = P.combine(W, T, eps1, eps2)
    var = P.combined_variance(eps1, eps2, c)
    assert var == pytest.approx(8 * c * c / (eps1**2 + eps2**2))
    # unbiased: every coordinate's mean within 4 standard errors
    se = math.sqrt(var / N)
    assert np.all(np.abs(R.mean(axis=0) - h[0]) < 4 * se)
    # variance: the sample variance of a Laplace mixture has relative s.e. <= sqrt((kurt-1)/N),
    # kurtosis <= 6 (Laplace); allow 5 of those
    rel = np.abs(R.var(axis=0) / var - 1)
    assert np.all(rel < 5 * math.sqrt(5 / N))
    # minimum variance: below either copy, and below Algorithm 1's printed (swapped) weights
    assert var < 8 * c * c / eps2**2
    swapped = (eps1**2 * T + eps2**2 * W) / (eps1**2 + eps2**2)
    assert swapped.var(axis=0).min() > 1.5 * var


def test_within_group_shuffle_is_uniform():
    rng = np.random.default_rng(11)
    labels = np.array([0, 1, 0, 2, 0, 1, 0, 2, 2])     # group 0 has 4 members, interleaved
    g0 = np.flatnonzero(labels == 0)
    perms = list(itertools.permutations(range(4)))
    index = {p: i for i, p in enumerate(perms)}
    draws = 24_000
    counts = np.zeros(len(perms))
    for _ in range(draws):
        p = P.shuffle_within_groups(labels, rng)
        assert np.array_equal(labels[p], labels)              # stays inside the group
        assert np.array_equal(np.sort(p), np.arange(len(labels)))
        local = tuple(int(np.searchsorted(g0, x)) for x in p[g0])
        counts[index[local]] += 1
    chi2 = stats.chisquare(counts)
    assert chi2.pvalue > 1e-3


def test_shuffle_singletons_fixed():
    p = P.shuffle_within_groups(np.arange(6), np.random.default_rng(0))
    assert np.array_equal(p, np.arange(6))


def test_js_distance_matches_scipy():
    rng = np.random.default_rng(3)
    A = rng.dirichlet(np.ones(5) * 0.5, size=6)
    B = rng.dirichlet(np.ones(5) * 0.5, size=4)
    A[0, :2] = [0.0, 0.0]
    A[0] /= A[0].sum()
    D = P.js_distance(A, B)
    ref = np.array([[jensenshannon(a, b, base=2) for b in B] for a in A])
    np.testing.assert_allclose(D, ref, atol=1e-7)


def test_canonical_order_is_lexsort():
    """The column-by-column canonical order is np.lexsort's permutation: noisy renormalised rows
    (many exact zeros), discrete rows with many duplicates, signed zeros, one column, NaN."""
    rng = np.random.default_rng(3)
    hbar = rng.dirichlet(np.ones(17) * 0.3, size=4000)
    cases = [P.renormalise(hbar + rng.laplace(0.0, 2.0, size=hbar.shape)), hbar,
             rng.integers(0, 3, size=(3000, 6)).astype(float), np.repeat(hbar[:300], 4, axis=0)[rng.permutation(1200)],
             np.where(rng.random((500, 4)) < 0.5, -0.0, 0.0), hbar[:, :1], np.zeros((1, 3)),
             np.where(rng.random((50, 3)) < 0.2, np.nan, rng.integers(0, 2, (50, 3)))]
    for X in cases:
        assert np.array_equal(P.canonical_order(X), np.lexsort(X.T[::-1]))


def test_js_distance_pairwise_mirrors_the_full_computation():
    """The pairwise distances computed on and above the diagonal and mirrored equal, to the last bit,
    the full computation against a copy (noisy renormalised rows, many exact zeros; several blocks)."""
    rng = np.random.default_rng(8)
    for n, scale in ((700, 2.0), (300, 0.05)):
        hbar = rng.dirichlet(np.ones(17) * 0.4, size=n)
        X = P.renormalise(hbar + rng.laplace(0.0, scale, size=hbar.shape))
        D = P.js_distance(X)
        assert D.tobytes() == P.js_distance(X, X.copy()).tobytes()
        assert np.array_equal(D, D.T)


def test_renormalise_and_metrics():
    X = np.array([[0.5, -0.2, 0.7], [-1.0, -1.0, -1.0]])
    Y = P.renormalise(X)
    np.testing.assert_allclose(Y, [[0.5 / 1.2, 0, 0.7 / 1.2], [1 / 3, 1 / 3, 1 / 3]])
    h = np.array([[0.5, 0.3, 0.2, 0.0], [1.0, 0.0, 0.0, 0.0]])
    est = np.array([[0.1, 0.6, 0.0, 0.3], [0.9, 0.05, 0.05, 0.0]])
    np.testing.assert_allclose(P.l1_error(est, h), [0.4 + 0.3 + 0.2 + 0.3, 0.2])
    # user 0: true top-3 {0,1,2}, estimate's top-3 {1,3,0} -> 2/3; user 1: one positive category
    np.testing.assert_allclose(P.top3_accuracy(est, h), [2 / 3, 1.0])


def test_renormalise_is_the_new_array_formula():
    """The in-place renormalisation gives the doubles of the expression it replaced (clip, row sums,
    one division; zero and NaN rows uniform), leaves its input alone and keeps float32 float32."""
    rng = np.random.default_rng(8)
    cases = [rng.laplace(0.0, 1.0, size=(3000, 17)), np.array([[1.0, 2.0, -3.0], [0.0, 0.0, 0.0], [-1.0, -1.0, 5.0]]),
             np.array([[np.nan, 1.0], [0.0, -1.0], [2.0, 2.0]]), rng.laplace(0.0, 1.0, size=(40, 4)).astype(np.float32)]
    for X in cases:
        before = X.copy()
        Y = np.clip(X, 0.0, None)
        s = Y.sum(axis=1, keepdims=True)
        expected = np.where(s > 0, Y / np.where(s > 0, s, 1.0), 1.0 / X.shape[1])
        got = P.renormalise(X)
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes()
        assert np.array_equal(X, before, equal_nan=True)


def test_top3_with_the_truth_given_is_the_same():
    """The true top-3 sets computed once per job (top_k_truth) give top3_accuracy's values of the
    computation from scratch, ties and all-zero rows included."""
    rng = np.random.default_rng(9)
    hbar = np.round(rng.dirichlet(np.ones(8) * 0.3, size=2000), 1)
    hbar[:3] = 0.0
    est = P.renormalise(hbar + rng.laplace(0.0, 0.2, size=hbar.shape))
    truth = P.top_k_truth(hbar, 3)
    with np.errstate(invalid="ignore", divide="ignore"):
        a, b = P.top3_accuracy(est, hbar, truth=truth), P.top3_accuracy(est, hbar)
    assert a.tobytes() == b.tobytes() and 0.0 < np.nanmean(a) < 1.0


def test_algorithm1_output_is_group_shuffled_R():
    data = dirichlet_mixture(600, 6, 3, np.random.default_rng(5), kind="separated", concentration=100)
    hbar = P.normalise_counts(data.counts)
    out = P.algorithm1(hbar, 4.0, 2.0, 0.1, np.random.default_rng(6), clustering="kmeans", k=3)
    assert np.array_equal(out.labels[out.perm], out.labels)
    np.testing.assert_array_equal(out.raw, out.R[out.perm])
    np.testing.assert_allclose(out.output.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="eps1"):
        P.algorithm1(hbar, 1.0, 1.0, 0.1, np.random.default_rng(0))


@pytest.mark.slow
def test_recluster_attack_recovers_single_copy_groups():
    data = dirichlet_mixture(3000, 17, 6, np.random.default_rng(21), kind="separated", concentration=200,
                             views=(50, 200))
    hbar = P.normalise_counts(data.counts)
    rng = np.random.default_rng(22)
    out = P.single_copy(hbar, 4.0, 0.1, rng, clustering="kmeans", k=6, cluster_seed=99)
    assert P.partition_agreement(out.labels, data.clusters)["ari"] > 0.9    # separated, found
    server = P.recluster_attack(out.raw, clustering="kmeans", k=6, cluster_seed=99)
    agree = P.partition_agreement(out.labels, server)
    assert agree["identical"] and agree["ari"] == 1.0
    # DBSCAN with Jensen-Shannon distance, too
    db = P.DBSCANParams(min_samples=10, quantile=0.9, fit_size=1000)
    out = P.single_copy(hbar, 4.0, 0.1, rng, clustering="dbscan", dbscan=db, cluster_seed=5)
    server = P.recluster_attack(out.raw, clustering="dbscan", dbscan=db, cluster_seed=5)
    assert P.partition_agreement(out.labels, server)["identical"]


def _fresh_kmeans(X, k, seed):
    P._LAST_FIT.clear()
    P._PREPARED.clear()
    return P.cluster(X, "kmeans", k=k, seed=seed)


def test_kmeans_remembered_fit_gives_the_labels_of_a_new_fit():
    """The latest k-means fit is reused only for the same rows (in canonical order), k and seed:
    the single-copy server's re-clustering of the shuffled copy then gets the shuffler's groups,
    as a new fit does; another seed, k or copy is fitted again."""
    data = dirichlet_mixture(600, 6, 4, np.random.default_rng(3), kind="overlapping")
    hbar = P.normalise_counts(data.counts)
    rng = np.random.default_rng(11)
    Z = P.laplace_copy(hbar, 2.0, 0.5, rng)
    Z2 = P.laplace_copy(hbar, 2.0, 0.5, rng)
    perm = rng.permutation(len(Z))
    for X, k, seed in ((Z, 5, 7), (Z[perm], 5, 7), (Z[perm], 5, 8), (Z[perm], 4, 8), (Z2, 4, 8), (Z, 5, 7)):
        got = P.cluster(X, "kmeans", k=k, seed=seed)
        assert np.array_equal(got, _fresh_kmeans(X, k, seed))
    labels = P.cluster(Z, "kmeans", k=5, seed=7)
    server = P.cluster(Z[perm], "kmeans", k=5, seed=7)
    assert np.array_equal(server, P._relabel(labels[perm]))


def test_kmeans_prepared_read_only_input_is_reused_and_gives_the_same_labels():
    """The oracle clusters the job's read-only true histograms at every run: their renormalised
    rows and canonical order are kept while they are the latest such input; a writable array is
    prepared again each time (it may have changed), and the labels equal a fresh computation."""
    data = dirichlet_mixture(400, 5, 3, np.random.default_rng(4), kind="separated")
    hbar = P.normalise_counts(data.counts)
    P._PREPARED.clear()
    first = P._prepared(hbar, True)
    assert not P._PREPARED    # writable: nothing kept
    hbar.flags.writeable = False
    a = P._prepared(hbar, True)
    assert P._prepared(hbar, True)[1] is a[1]
    assert np.array_equal(a[0], first[0]) and np.array_equal(a[1], first[1])
    for seed in (1, 2, 3):
        got = P.cluster(hbar, "kmeans", k=3, seed=seed)
        assert np.array_equal(got, _fresh_kmeans(hbar.copy(), 3, seed))
    w = hbar.copy()
    P.cluster(w, "kmeans", k=3, seed=1)
    w[:] = w[::-1]
    assert np.array_equal(P.cluster(w, "kmeans", k=3, seed=1), _fresh_kmeans(w.copy(), 3, 1))
    # a kept input made writable, changed and made read-only again is prepared anew
    P._prepared(hbar, True)
    assert P._PREPARED
    hbar.flags.writeable = True
    hbar[:200] = hbar[200:].copy()   # other rows, not the same rows in another order
    hbar.flags.writeable = False
    assert np.array_equal(P._prepared(hbar, True)[0], P.renormalise(hbar))
    assert np.array_equal(P.cluster(hbar, "kmeans", k=3, seed=1), _fresh_kmeans(hbar.copy(), 3, 1))


def test_dbscan_js_finds_separated_clusters():
    data = dirichlet_mixture(2000, 17, 4, np.random.default_rng(2), kind="separated", concentration=200,
                             views=(50, 200))
    hbar = P.normalise_counts(data.counts)
    lab = P.cluster(hbar, "dbscan", k=0, seed=1, dbscan=P.DBSCANParams(fit_size=800, quantile=0.9))
    sizes = np.bincount(lab)
    assert P.partition_agreement(lab[sizes[lab] > 1], data.clusters[sizes[lab] > 1])["ari"] > 0.95
    assert (sizes == 1).sum() < 0.2 * len(lab)


def test_adjusted_rand_index_is_sklearns_double():
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(7)
    cases = [(np.zeros(5, int), np.zeros(5, int)), (np.arange(6), np.arange(6)), (np.arange(6), np.zeros(6, int)),
             (np.array([3]), np.array([-1])), (np.array([0, 0, 1, 2]), np.array([0, 0, 1, 1])),
             (np.array([5, 5, 9, 9]), np.array([9, 9, 5, 5]))]
    for n in (2, 3, 10, 257, 5000):
        for ka, kb in ((1, 2), (2, 2), (3, 8), (8, 8), (n, 4), (n, n)):
            a = rng.integers(0, ka, n) * 3 - 7      # non-contiguous, negative labels
            b = rng.integers(0, kb, n)
            cases.append((a, b))
            cases.append((a, np.where(rng.random(n) < 0.1, b, a)))   # mostly agreeing
    for a, b in cases:
        want = adjusted_rand_score(a, b)
        got = P.adjusted_rand_index(a, b)
        assert type(got) is float and got == want, (a, b, got, want)   # the same double, not close
    with pytest.raises(ValueError):
        P.adjusted_rand_index(np.zeros(3), np.zeros(4))


def _nearest_core_reference(Xr, C, clab, eps, candidates):
    """_nearest_core_labels as written before: every row's JS distance to every candidate."""
    from scipy.special import xlogy
    from sklearn.neighbors import NearestNeighbors

    def ent(A):
        return -xlogy(A, A).sum(axis=-1) / np.log(2.0)

    _, cand = NearestNeighbors(n_neighbors=min(candidates, len(C))).fit(np.sqrt(C)).kneighbors(np.sqrt(Xr))
    jsd = ent(0.5 * (C[cand] + Xr[:, None, :])) - 0.5 * (ent(Xr)[:, None] + ent(C)[cand])
    Dr = np.sqrt(np.clip(jsd, 0.0, 1.0))
    j = np.argmin(Dr, axis=1)
    rows = np.arange(len(Xr))
    return np.where(Dr[rows, j] <= eps, clab[cand[rows, j]], -1)


def test_nearest_core_labels_settles_one_cluster_rows_as_the_full_computation():
    rng = np.random.default_rng(5)
    C = rng.dirichlet(np.full(6, 0.5), size=40)
    Xr = rng.dirichlet(np.full(6, 0.5), size=4000)
    clab = (rng.random(40) < 0.15).astype(np.int64)   # most rows' candidates in one cluster, some mixed
    for eps in (0.15, 0.3, 1.0):
        want = _nearest_core_reference(Xr, C, clab, eps, 8)
        assert np.array_equal(P._nearest_core_labels(Xr, C, clab, eps, 8), want)
        assert 0 < (want >= 0).sum() and (eps == 1.0 or (want < 0).any())


def _dbscan_js_sklearn(X, params, seed):
    """cluster_dbscan_js as written before its rest rows came from a mask (np.setdiff1d), its
    nearest-core entropies were computed in place, rows whose candidates share one cluster were settled
    by their first candidate and a fit without a possible core point was skipped: sklearn's DBSCAN
    fitted whatever ``min_samples`` (the rows of no cluster stay noise; ``params.eps`` used when given),
    every row's JS distance to every candidate."""
    from sklearn.cluster import DBSCAN

    n = X.shape[0]
    order = P.canonical_order(X)
    X = X[order]
    fit_idx = np.sort(np.random.default_rng(seed).choice(n, size=min(n, params.fit_size), replace=False))
    D = P.js_distance(X[fit_idx])
    kk = min(params.min_samples, len(fit_idx) - 1)
    eps = params.eps if params.eps is not None else max(
        float(np.quantile(np.partition(D, kk, axis=1)[:, kk], params.quantile)), 1e-12)
    db = DBSCAN(eps=eps, min_samples=params.min_samples, metric="precomputed").fit(D)
    lab = np.full(n, -1, dtype=np.int64)
    lab[fit_idx] = db.labels_
    core = db.core_sample_indices_
    rest = np.setdiff1d(np.arange(n), fit_idx)
    if len(core):
        lab[rest] = _nearest_core_reference(X[rest], X[fit_idx][core], db.labels_[core], eps, params.candidates)
    noise = np.flatnonzero(lab < 0)
    lab[noise] = (lab.max() + 1 if (lab >= 0).any() else 0) + np.arange(len(noise))
    out = np.empty(n, dtype=np.int64)
    out[order] = lab
    return P._relabel(out)


def test_dbscan_js_is_the_setdiff_and_new_array_computation():
    data = dirichlet_mixture(3000, 17, 4, np.random.default_rng(3), kind="overlapping", concentration=50,
                             views=(20, 80))
    hbar = P.normalise_counts(data.counts)
    rng = np.random.default_rng(4)
    for eps in (0.5, 4.0):
        X = P.renormalise(P.laplace_copy(hbar, eps, 1.0, rng))
        params = P.DBSCANParams(fit_size=700, quantile=0.9)
        assert np.array_equal(P.cluster_dbscan_js(X, params, 11), _dbscan_js_sklearn(X, params, 11))
    A = rng.random((50, 8, 17))
    A[A < 0.3] = 0.0
    want = P._entropy(A)
    assert np.array_equal(P._entropy(A.copy(), inplace=True), want)


def test_dbscan_js_without_possible_core_is_sklearns_all_noise():
    """With ``min_samples`` above the fitted rows (the audits' every-point-noise setting) no row can be a
    core sample: the labels (all singletons) are those of sklearn's fit, which is then skipped; at
    ``min_samples`` equal to the fitted rows (sklearn runs; a wide eps makes them one cluster) too."""
    data = dirichlet_mixture(400, 17, 4, np.random.default_rng(5), kind="overlapping", concentration=50,
                             views=(20, 80))
    X = P.renormalise(P.normalise_counts(data.counts))
    for params in (P.DBSCANParams(min_samples=10**9, eps=1e-300, fit_size=2), P.DBSCANParams(min_samples=31,
                   fit_size=30), P.DBSCANParams(min_samples=30, eps=10.0, fit_size=30),
                   P.DBSCANParams(min_samples=30, fit_size=30, quantile=1.0)):
        got = P.cluster_dbscan_js(X, params, 3)
        assert np.array_equal(got, _dbscan_js_sklearn(X, params, 3))
    assert np.bincount(P.cluster_dbscan_js(X, P.DBSCANParams(min_samples=31, fit_size=30), 3)).max() == 1
    assert np.bincount(P.cluster_dbscan_js(X, P.DBSCANParams(min_samples=30, eps=10.0, fit_size=30), 3)).max() > 30
