"""Per-user histogram data: MSNBC sequences -> counts, synthetic Dirichlet mixtures."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shuffledp.datasets.peruser import dirichlet_mixture, msnbc_histograms


def _write(path, seqs):
    tab = pa.table({
        "user_id": pa.array(range(len(seqs)), pa.int32()),
        "seq": pa.array(seqs, pa.list_(pa.int8())),
        "n_views": pa.array([len(s) for s in seqs], pa.int32()),
    })
    pq.write_table(tab, path)


def test_msnbc_histograms_counts_and_filter(tmp_path):
    p = tmp_path / "msnbc_sequences.parquet"
    seqs = [[0, 0, 16], [1] * 12, [2, 3, 2, 3, 2, 3, 2, 3, 2, 16], [5]]
    _write(p, seqs)
    h = msnbc_histograms(str(p), min_views=10, n=None, rng=np.random.default_rng(0))
    assert h.counts.shape == (2, 17)
    assert h.counts[0, 1] == 12 and h.counts[0].sum() == 12
    assert list(h.counts[1, [2, 3, 16]]) == [5, 4, 1]
    assert h.clusters is None
    # sampling n users is seeded and without replacement
    seqs = [[i % 17] * (10 + i % 3) for i in range(50)]
    _write(p, seqs)
    a = msnbc_histograms(str(p), min_views=10, n=20, rng=np.random.default_rng(3)).counts
    b = msnbc_histograms(str(p), min_views=10, n=20, rng=np.random.default_rng(3)).counts
    assert a.shape == (20, 17) and np.array_equal(a, b)


def test_dirichlet_mixture():
    h = dirichlet_mixture(2000, 17, 5, np.random.default_rng(1), kind="separated", concentration=200,
                          views=(50, 200))
    tot = h.counts.sum(axis=1)
    assert tot.min() >= 50 and tot.max() <= 200
    # separated: a cluster's users put most views on the cluster's own category
    share = h.counts[np.arange(2000), h.clusters % 17] / tot
    assert np.median(share) > 0.7
    o = dirichlet_mixture(500, 8, 3, np.random.default_rng(1), kind="overlapping")
    assert o.counts.shape == (500, 8)
    with pytest.raises(ValueError, match="kind"):
        dirichlet_mixture(10, 8, 3, np.random.default_rng(1), kind="other")
