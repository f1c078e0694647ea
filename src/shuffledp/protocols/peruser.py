"""Per-user histograms in the shuffle model: Algorithm 1 (two noisy copies, cluster, shuffle within
groups), the single-copy Algorithm 2, the server's re-clustering attack, and the baselines.

Conventions (see docs/peruser.md):

* ``hbar`` is an ``(n, d)`` array of normalised histograms (rows sum to 1). Two histograms are
  c-neighbouring when their counts differ by at most ``floor(c * s_H)``; on normalised histograms the
  L1 distance is then at most ``c``. The Laplace scale is ``2c/eps`` per coordinate as in the paper.
* ``W`` (budget ``eps1``) is seen by the shuffler only and drives the clustering; ``T`` (budget
  ``eps2 = eps - eps1``) is combined with ``W`` into the minimum-variance estimate
  ``R = (eps1^2 W + eps2^2 T) / (eps1^2 + eps2^2)`` (the weights of the paper's proof of Theorem 3;
  Algorithm 1's line 5 prints them swapped, which is not the minimum-variance choice).
* Groups are integer labels ``0..g-1``; DBSCAN noise points become singleton groups, as the paper's
  discussion of outliers suggests.
* The shuffler's output is ordered: position ``i`` (user ``i``'s slot) receives the value of a
  uniformly random member of ``i``'s group, through one uniform permutation per group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# ----------------------------------------------------------------------------------------------
# users' randomisers


def normalise_counts(counts: np.ndarray) -> np.ndarray:
    """Rows of counts -> normalised histograms. Every row needs a positive total."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2:
        raise ValueError("counts: need a 2-D array (users x categories)")
    tot = counts.sum(axis=1, keepdims=True)
    if np.any(tot <= 0):
        raise ValueError("counts: every user needs at least one count")
    return counts / tot


def laplace_scale(eps: float, c: float) -> float:
    """Per-coordinate Laplace scale 2c/eps of the paper's (eps, c)-hLDP randomiser."""
    if not eps > 0:
        raise ValueError(f"eps: must be > 0, got {eps!r}")
    if not 0 < c <= 1:
        raise ValueError(f"c: must lie in (0, 1], got {c!r}")
    return 2.0 * c / eps


def laplace_copy(hbar: np.ndarray, eps: float, c: float, rng: np.random.Generator) -> np.ndarray:
    """``hbar + Lap(2c/eps)`` coordinate-wise."""
    return hbar + rng.laplace(0.0, laplace_scale(eps, c), size=hbar.shape)


def combine(W: np.ndarray, T: np.ndarray, eps1: float, eps2: float) -> np.ndarray:
    """Minimum-variance unbiased combination of the two copies.

    ``W`` has per-coordinate variance ``8c^2/eps1^2`` and ``T`` ``8c^2/eps2^2``; inverse-variance
    weights give ``R = (eps1^2 W + eps2^2 T)/(eps1^2+eps2^2)`` with variance ``8c^2/(eps1^2+eps2^2)``.
    """
    a, b = eps1 * eps1, eps2 * eps2
    return (a * W + b * T) / (a + b)


def combined_variance(eps1: float, eps2: float, c: float) -> float:
    """Per-coordinate variance of :func:`combine`'s output (Laplace(b) has variance 2 b^2)."""
    return 8.0 * c * c / (eps1 * eps1 + eps2 * eps2)


def renormalise(X: np.ndarray) -> np.ndarray:
    """Clip negative entries to 0 and rescale rows to sum 1; an all-zero row becomes uniform."""
    out = np.clip(X, 0.0, None)
    s = out.sum(axis=1, keepdims=True)
    pos = s > 0
    out /= np.where(pos, s, 1.0)      # in place: the same quotients as a new array
    zero = ~pos[:, 0]
    if zero.any():
        out[zero] = 1.0 / X.shape[1]
    return out


# ----------------------------------------------------------------------------------------------
# shuffler: clustering


def canonical_order(X: np.ndarray) -> np.ndarray:
    """Row indices sorting ``X`` lexicographically: a clustering run in this order depends only on
    the multiset of rows, so a server that re-clusters the shuffled rows gets the same groups.

    The permutation of ``np.lexsort(X.T[::-1])`` (rows tied on every column keep their index order),
    computed column by column: a stable sort on the first column, then each later column sorts only
    the runs still tied on all earlier ones (about half the rows of renormalised noisy histograms
    at the second column, far fewer after), instead of ``d`` stable sorts of all ``n`` rows."""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2 or np.isnan(X).any():
        return np.lexsort(X.T[::-1])   # NaN: lexsort's own tie rule; nothing to gain on one column
    n, d = X.shape
    order = np.argsort(X[:, 0], kind="stable")
    col = X[order, 0]
    same = col[1:] == col[:-1]            # sorted position i ties with i + 1 on the columns so far
    for j in range(1, d):
        if not same.any():
            break
        in_run = np.zeros(n, dtype=bool)
        in_run[:-1] |= same
        in_run[1:] |= same
        pos = np.flatnonzero(in_run)      # the tied runs, each contiguous in ``order``
        start = np.ones(len(pos), dtype=bool)
        start[1:] = ~same[pos[1:] - 1]
        sub = order[pos]
        order[pos] = sub[np.lexsort((X[sub, j], np.cumsum(start)))]   # stable within each run
        col = X[order, j]
        same &= col[1:] == col[:-1]
    return order


def cluster_kmeans(X: np.ndarray, k: int, seed: int, *, canonical: bool = True,
                   order: np.ndarray | None = None) -> np.ndarray:
    """k-means labels (scikit-learn, k-means++ init, one run) of the rows of ``X`` (``order``: its
    :func:`canonical_order`, when the caller has it)."""
    n = X.shape[0]
    k = int(min(k, n))
    if order is None:
        order = canonical_order(X) if canonical else np.arange(n)
    lab = np.empty(n, dtype=np.int64)
    lab[order] = _kmeans_fit_predict(X[order], k, int(seed % (2**32)))
    return _relabel(lab)


_LAST_FIT: list = []   # [(rows, k, random_state, labels)] of the latest k-means fit (see below)


def _kmeans_fit_predict(Xs: np.ndarray, k: int, random_state: int) -> np.ndarray:
    """``KMeans(n_clusters=k, n_init=1, random_state=random_state, max_iter=100).fit_predict(Xs)``.

    The latest fit is remembered: the same rows (equal doubles, same order), ``k`` and seed give the
    same labels, so a second call with them (the single-copy server re-clustering the shuffled
    output with the shuffler's public seed: the same rows in canonical order) takes the labels of
    the first instead of fitting again. ``Xs`` is kept as it is (made read-only): pass a new array."""
    last = _LAST_FIT[0] if _LAST_FIT else None
    if (last is not None and last[1] == k and last[2] == random_state and last[0].shape == Xs.shape
            and np.array_equal(last[0][:1], Xs[:1]) and np.array_equal(last[0], Xs)):
        return last[3].copy()
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, n_init=1, random_state=random_state, max_iter=100)
    labels = km.fit_predict(Xs)
    Xs.flags.writeable = False   # kept, not copied: the callers pass a new array (rows in their order)
    _LAST_FIT[:] = [(Xs, k, random_state, labels.copy())]
    return labels


def js_distance(P: np.ndarray, Q: np.ndarray | None = None) -> np.ndarray:
    """Jensen-Shannon distance (square root of the base-2 JS divergence, in [0, 1]) between every
    row of ``P`` (m x d) and every row of ``Q`` (k x d); rows are probability vectors.

    ``Q`` None (or ``P`` itself): the pairwise distances of ``P``'s rows. Every entry is then
    computed from the same doubles as its mirror (``P_i + P_j`` commutes, and so does the sum of the
    two entropies), so only the blocks on and above the diagonal are computed and the rest mirrored."""
    symmetric = Q is None or Q is P
    P = np.asarray(P, dtype=float)
    Q = P if symmetric else np.asarray(Q, dtype=float)
    # JSD = H(M) - (H(P)+H(Q))/2 with entropies in bits; computed in chunks to bound memory
    def neg_ent(A):  # sum of A log2 A per row of the last axis (0 log 0 = 0), without temporary copies
        t = np.zeros_like(A)
        np.log2(A, out=t, where=A > 0)
        t *= A
        return t.sum(axis=-1)

    hp = -neg_ent(P)
    hq = hp if symmetric else -neg_ent(Q)
    out = np.empty((P.shape[0], Q.shape[0]))
    step = max(1, 2_000_000 // max(1, Q.shape[0] * P.shape[1]))
    for s in range(0, P.shape[0], step):
        c0 = s if symmetric else 0   # symmetric: the columns from the block's first row on
        M = P[s : s + step, None, :] + Q[None, c0:, :]
        M *= 0.5
        jsd = -neg_ent(M) - 0.5 * (hp[s : s + step, None] + hq[None, c0:])
        out[s : s + step, c0:] = np.sqrt(np.clip(jsd, 0.0, 1.0))
    if symmetric:
        low = np.tril_indices(P.shape[0], -1)
        out[low] = out.T[low]
    return out


@dataclass(frozen=True)
class DBSCANParams:
    """DBSCAN on Jensen-Shannon distance. ``eps`` None: the ``quantile`` of every fitted point's
    distance to its ``min_samples``-th neighbour (a data-driven choice made on the noisy copies)."""

    min_samples: int = 10
    eps: float | None = None
    quantile: float = 0.5
    fit_size: int = 3000
    candidates: int = 8


def cluster_dbscan_js(X: np.ndarray, params: DBSCANParams, seed: int) -> np.ndarray:
    """DBSCAN labels with the Jensen-Shannon distance on renormalised rows of ``X``.

    Exact DBSCAN on all n points needs all pairwise JS distances; for n > ``fit_size`` DBSCAN is
    fitted on a seeded uniform subsample of ``fit_size`` rows and every other row joins the cluster
    of its nearest core sample when that is within ``eps`` (else it is noise). Noise points become
    singleton groups. Rows are processed in their canonical (sorted) order, so the partition depends
    only on the multiset of rows (the clustering function ``f`` of Theorem 1 is order-free).
    """
    n = X.shape[0]
    # work in the canonical (sorted-rows) order so the result depends only on the multiset of rows
    order = canonical_order(X)
    X = X[order]
    rng = np.random.default_rng(seed)
    fit_idx = np.sort(rng.choice(n, size=min(n, params.fit_size), replace=False))
    Xf = X[fit_idx]
    lab = np.full(n, -1, dtype=np.int64)
    if params.min_samples > len(fit_idx):
        # no fitted point has min_samples points (itself included) within any eps: DBSCAN's labels are
        # all noise and it has no core sample, whatever eps (known without sklearn's import and fit)
        core, eps, lab_fit = np.arange(0), 0.0, lab[:0]
    else:
        lab_fit, core, eps = _dbscan_fit(Xf, params)
        lab[fit_idx] = lab_fit
    outside = np.ones(n, dtype=bool)
    outside[fit_idx] = False
    rest = np.flatnonzero(outside)   # np.setdiff1d(np.arange(n), fit_idx) without its sort
    if len(core) and len(rest):
        lab[rest] = _nearest_core_labels(X[rest], Xf[core], lab_fit[core], eps, params.candidates)
    # noise -> singleton groups
    noise = np.flatnonzero(lab < 0)
    base = lab.max() + 1 if (lab >= 0).any() else 0
    lab[noise] = base + np.arange(len(noise))
    out = np.empty(n, dtype=np.int64)
    out[order] = lab
    return _relabel(out)


def _dbscan_fit(Xf: np.ndarray, params: DBSCANParams) -> tuple[np.ndarray, np.ndarray, float]:
    """sklearn's DBSCAN on the JS distances of the fitted rows ``Xf``: ``(labels, core sample indices,
    eps)``, ``eps`` the data-driven one when ``params.eps`` is None."""
    from sklearn.cluster import DBSCAN

    D = js_distance(Xf)
    eps = params.eps
    if eps is None:
        kk = min(params.min_samples, len(Xf) - 1)
        kth = np.partition(D, kk, axis=1)[:, kk]   # the kk-th smallest of each row (as a full sort's)
        eps = float(np.quantile(kth, params.quantile))
        eps = max(eps, 1e-12)
    db = DBSCAN(eps=eps, min_samples=params.min_samples, metric="precomputed").fit(D)
    return db.labels_, db.core_sample_indices_, eps


def _nearest_core_labels(Xr: np.ndarray, C: np.ndarray, clab: np.ndarray, eps: float,
                         candidates: int) -> np.ndarray:
    """Label of each row of ``Xr``: that of its nearest core sample (rows ``C``, labels ``clab``)
    when it lies within JS distance ``eps``, else -1 (noise)."""
    # nearest core sample: candidates by Hellinger distance (Euclidean on square roots, a
    # BallTree query), then the exact JS distance to the candidates decides
    from sklearn.neighbors import NearestNeighbors

    kc = min(candidates, len(C))
    nn = NearestNeighbors(n_neighbors=kc).fit(np.sqrt(C))
    cand = nn.kneighbors(np.sqrt(Xr), return_distance=False)   # the same indices, no square roots
    hc = _entropy(C)
    hr = _entropy(Xr)
    cl = clab[cand]
    # a row whose candidates all lie in one cluster and whose nearest candidate (by Hellinger) is
    # within eps takes that cluster whatever candidate is nearest by JS (that one is within eps
    # too): only its first candidate's JS distance is needed (the same doubles as among all)
    D0 = _js_to_candidates(Xr, hr, C, hc, cand[:, :1])[:, 0]
    settled = (cl == cl[:, :1]).all(axis=1) & (D0 <= eps)
    out = np.where(settled, cl[:, 0], -1)
    todo = np.flatnonzero(~settled)
    # the JS distances to every candidate in blocks of rows (the (rows, candidates, d) mixtures of all
    # rows at once took about 100 MB per temporary at n = 1e5); row by row the same doubles
    step = max(1, (1 << 20) // max(1, kc * Xr.shape[1]))
    for s in range(0, len(todo), step):
        r = todo[s : s + step]
        cb = cand[r]
        Dr = _js_to_candidates(Xr[r], hr[r], C, hc, cb)
        rows = np.arange(len(cb))
        j = np.argmin(Dr, axis=1)
        out[r] = np.where(Dr[rows, j] <= eps, clab[cb[rows, j]], -1)
    return out


def _js_to_candidates(Xr: np.ndarray, hr: np.ndarray, C: np.ndarray, hc: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """JS distance of each row of ``Xr`` (entropies ``hr``) to its candidates ``C[cb[i]]`` (entropies
    ``hc``): an ``(rows, candidates)`` array, each entry computed from its pair's doubles alone."""
    mix = C[cb]
    mix += Xr[:, None, :]
    mix *= 0.5
    jsd = _entropy(mix, inplace=True) - 0.5 * (hr[:, None] + hc[cb])
    return np.sqrt(np.clip(jsd, 0.0, 1.0))


def _entropy(A: np.ndarray, inplace: bool = False) -> np.ndarray:
    """Shannon entropy in bits along the last axis (0 log 0 = 0); ``inplace``: ``A`` (a temporary of
    the caller's) is overwritten by ``xlogy(A, A)`` instead of a new array (the same doubles)."""
    from scipy.special import xlogy

    return -xlogy(A, A, out=A if inplace else None).sum(axis=-1) / np.log(2.0)


def _relabel(lab: np.ndarray) -> np.ndarray:
    """Labels renumbered 0..g-1 by first appearance in user order (a canonical numbering)."""
    _, first, inv = np.unique(lab, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.ravel()]


# ----------------------------------------------------------------------------------------------
# shuffler: within-group shuffle


def shuffle_within_groups(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation ``p`` of ``0..n-1`` with ``labels[p[i]] == labels[i]``, uniform within each
    group: the l-th member of a group (in index order) receives the value of member ``p[i]``."""
    labels = np.asarray(labels)
    n = len(labels)
    by_index = np.lexsort((np.arange(n), labels))          # members of each group in index order
    shuffled = np.lexsort((rng.random(n), labels))         # members of each group in random order
    p = np.empty(n, dtype=np.int64)
    p[by_index] = shuffled
    return p


# ----------------------------------------------------------------------------------------------
# protocols


@dataclass
class Alg1Output:
    output: np.ndarray      # (n, d) server's ordered output, renormalised (the paper's R-bar)
    raw: np.ndarray         # (n, d) the same before renormalisation (R of the assigned user)
    labels: np.ndarray      # (n,) shuffler's groups
    perm: np.ndarray        # (n,) position i received user perm[i]'s value
    W: np.ndarray
    R: np.ndarray


_PREPARED: list = []   # [(X, renormalise(X), its canonical order, a copy of X)] of the latest read-only X


def _prepared(X: np.ndarray, canonical: bool) -> tuple[np.ndarray, np.ndarray]:
    """``renormalise(X)`` and its canonical order (``arange`` when not ``canonical``). For an array
    that owns its data and is read-only (the job's true histograms, which the oracle clusters at
    every run with a new seed) both are kept and reused while ``X`` is the latest such input."""
    last = _PREPARED[0] if _PREPARED else None
    if (canonical and last is not None and last[0] is X and not X.flags.writeable
            and np.array_equal(last[3], X)):   # the flag can be set back: the contents decide
        return last[1], last[2]
    Xn = renormalise(X)
    order = canonical_order(Xn) if canonical else np.arange(X.shape[0])
    if canonical and isinstance(X, np.ndarray) and X.flags.owndata and not X.flags.writeable:
        Xn.flags.writeable = False
        order.flags.writeable = False
        _PREPARED[:] = [(X, Xn, order, X.copy())]
    return Xn, order


def cluster(X: np.ndarray, method: str, *, k: int, seed: int, dbscan: DBSCANParams | None = None,
            canonical: bool = True) -> np.ndarray:
    """Group labels of the rows of renormalised ``X`` with ``method`` in kmeans|dbscan."""
    if method == "kmeans":
        Xn, order = _prepared(X, canonical)
        return cluster_kmeans(Xn, k, seed, canonical=canonical, order=order)
    Xn = renormalise(X)
    if method == "dbscan":
        return cluster_dbscan_js(Xn, dbscan or DBSCANParams(), seed)
    raise ValueError(f"method: unknown clustering {method!r} (kmeans|dbscan)")


def algorithm1(hbar: np.ndarray, eps: float, eps1: float, c: float, rng: np.random.Generator, *,
               clustering: str = "kmeans", k: int = 10, dbscan: DBSCANParams | None = None,
               release: str = "R") -> Alg1Output:
    """Algorithm 1. ``release`` "R" (the paper: the combined estimate) or "T" (only the second copy,
    for which the composition argument of Theorem 2's proof applies verbatim)."""
    if not 0 < eps1 < eps:
        raise ValueError(f"eps1: must lie in (0, eps={eps}), got {eps1!r}")
    eps2 = eps - eps1
    W = laplace_copy(hbar, eps1, c, rng)
    T = laplace_copy(hbar, eps2, c, rng)
    if release == "R":
        R = combine(W, T, eps1, eps2)
    elif release == "T":
        R = T
    else:
        raise ValueError(f"release: {release!r} (R|T)")
    seed = int(rng.integers(2**62))
    labels = cluster(W, clustering, k=k, seed=seed, dbscan=dbscan)
    perm = shuffle_within_groups(labels, rng)
    raw = R[perm]
    return Alg1Output(renormalise(raw), raw, labels, perm, W, R)


@dataclass
class GroupShuffleOutput:
    output: np.ndarray
    raw: np.ndarray
    labels: np.ndarray
    perm: np.ndarray
    Z: np.ndarray


def single_copy(hbar: np.ndarray, eps: float, c: float, rng: np.random.Generator, *,
                clustering: str = "kmeans", k: int = 10, dbscan: DBSCANParams | None = None,
                cluster_seed: int = 0) -> GroupShuffleOutput:
    """Algorithm 2: one Laplace copy ``Z`` (whole eps) used both to cluster (with a fixed,
    order-independent clustering function ``f``) and, shuffled within groups, as the output."""
    Z = laplace_copy(hbar, eps, c, rng)
    labels = cluster(Z, clustering, k=k, seed=cluster_seed, dbscan=dbscan)
    perm = shuffle_within_groups(labels, rng)
    raw = Z[perm]
    return GroupShuffleOutput(renormalise(raw), raw, labels, perm, Z)


def recluster_attack(output_raw: np.ndarray, *, clustering: str = "kmeans", k: int = 10,
                     dbscan: DBSCANParams | None = None, cluster_seed: int = 0) -> np.ndarray:
    """The server's attack (Theorem 1): run the shuffler's clustering function on the shuffled
    output. Returns a label for every output position (= user slot)."""
    return cluster(output_raw, clustering, k=k, seed=cluster_seed, dbscan=dbscan)


def partition_agreement(a: np.ndarray, b: np.ndarray) -> dict:
    """Adjusted Rand index and exact equality of two partitions of the same positions."""
    a, b = _relabel(np.asarray(a)), _relabel(np.asarray(b))
    return {"ari": adjusted_rand_index(a, b), "identical": bool(np.array_equal(a, b))}


def adjusted_rand_index(a, b) -> float:
    """``sklearn.metrics.adjusted_rand_score(a, b)``, the same double, without importing scikit-learn
    (its start-up in a job that needs nothing else of it): the same pair counts (the pair confusion
    matrix, exact integers) and the same float expression on Python integers."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"labels: two 1-D arrays of one length needed, got shapes {a.shape} and {b.shape}")
    n = len(a)
    if n == 0:
        return 1.0
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    ia, ib = ia.ravel().astype(np.int64), ib.ravel().astype(np.int64)
    nij = np.unique(ia * (int(ib.max()) + 1) + ib, return_counts=True)[1].astype(np.int64)  # contingency
    ss = int((nij * nij).sum())
    na, nb = np.bincount(ia).astype(np.int64), np.bincount(ib).astype(np.int64)
    fp = int((nb * nb).sum()) - ss          # pairs together in b only
    fn = int((na * na).sum()) - ss          # pairs together in a only
    tp = ss - n                             # ordered pairs together in both
    tn = n * n - fp - fn - ss
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def ldp_baseline(hbar: np.ndarray, eps: float, c: float, rng: np.random.Generator) -> GroupShuffleOutput:
    """Laplace local DP with the whole eps, no shuffle (every user its own group)."""
    Z = laplace_copy(hbar, eps, c, rng)
    n = len(hbar)
    return GroupShuffleOutput(renormalise(Z), Z, np.arange(n), np.arange(n), Z)


def global_shuffle(hbar: np.ndarray, eps: float, c: float, rng: np.random.Generator) -> GroupShuffleOutput:
    """One Laplace copy with the whole eps, one uniform shuffle of all users (one group)."""
    Z = laplace_copy(hbar, eps, c, rng)
    labels = np.zeros(len(hbar), dtype=np.int64)
    perm = shuffle_within_groups(labels, rng)
    return GroupShuffleOutput(renormalise(Z[perm]), Z[perm], labels, perm, Z)


def oracle_clusters(hbar: np.ndarray, eps: float, c: float, rng: np.random.Generator, *,
                    clustering: str = "kmeans", k: int = 10,
                    dbscan: DBSCANParams | None = None) -> GroupShuffleOutput:
    """NON-PRIVATE utility upper bound: groups from the TRUE histograms, one Laplace copy with the
    whole eps shuffled within them. The grouping leaks the data; no privacy claim is made."""
    Z = laplace_copy(hbar, eps, c, rng)
    seed = int(rng.integers(2**62))
    labels = cluster(hbar, clustering, k=k, seed=seed, dbscan=dbscan)
    perm = shuffle_within_groups(labels, rng)
    return GroupShuffleOutput(renormalise(Z[perm]), Z[perm], labels, perm, Z)


# ----------------------------------------------------------------------------------------------
# utility metrics


def l1_error(est: np.ndarray, hbar: np.ndarray) -> np.ndarray:
    """Per-user L1 distance between an estimate and the true normalised histogram."""
    return np.abs(est - hbar).sum(axis=1)


def top_k_truth(hbar: np.ndarray, k: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """``(true_set, denom)`` of :func:`top3_accuracy`: which categories are each user's true top-k
    ones and the denominator; they depend on the true histograms only (a job computes them once)."""
    kth = -np.partition(-hbar, k - 1, axis=1)[:, k - 1 : k]
    true_set = (hbar >= kth) & (hbar > 0)
    denom = np.minimum(k, (hbar > 0).sum(axis=1))
    return true_set, denom


def top3_accuracy(est: np.ndarray, hbar: np.ndarray, k: int = 3,
                  truth: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per-user share of the estimate's top-k categories that are among the user's true top-k.

    Ties: a category counts as a true top-k one when its true share is positive and at least the
    k-th largest true share; the denominator is min(k, number of positive categories).
    ``truth``: :func:`top_k_truth` of ``hbar`` and ``k`` (computed here when None)."""
    top_est = np.argpartition(-est, k - 1, axis=1)[:, :k]
    true_set, denom = top_k_truth(hbar, k) if truth is None else truth
    hits = np.take_along_axis(true_set, top_est, axis=1).sum(axis=1)
    return np.minimum(hits / denom, 1.0)
