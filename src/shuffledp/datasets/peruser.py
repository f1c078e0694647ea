"""Per-user histogram data for the per-user-histogram experiments.

* MSNBC: per-user page-view counts over the 17 categories, from ``msnbc_sequences.parquet``
  (bincount of each user's ``seq``), users with at least ``min_views`` views, at most ``n`` of them
  sampled without replacement with a seeded generator.
* Synthetic: a mixture of Dirichlet clusters. Cluster centres are points of the simplex; each user
  draws its category distribution from Dirichlet(``concentration`` * centre) around its cluster's
  centre and its views from that distribution (``views`` per user, multinomial). ``separated``
  centres put most mass on distinct categories; ``overlapping`` centres are broad random points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class HistogramData:
    counts: np.ndarray          # (n, d) int counts
    clusters: np.ndarray | None  # (n,) generating cluster (synthetic) or None
    note: str                   # "" for real data, else a stand-in/synthetic phrase for captions


def msnbc_histograms(path: str, *, min_views: int, n: int | None, rng: np.random.Generator,
                     d: int = 17) -> HistogramData:
    """Counts per category for MSNBC users with at least ``min_views`` views."""
    import pyarrow.parquet as pq

    tab = pq.read_table(path, columns=["seq", "n_views"])
    n_views = tab.column("n_views").to_numpy()
    keep = np.flatnonzero(n_views >= min_views)
    if n is not None and len(keep) > n:
        keep = np.sort(rng.choice(keep, size=n, replace=False))
    seq = tab.column("seq").take(keep).combine_chunks()
    offsets = seq.offsets.to_numpy()
    values = seq.values.to_numpy(zero_copy_only=False).astype(np.int64)
    if values.size and (values.min() < 0 or values.max() >= d):
        raise ValueError(f"{path}: categories outside 0..{d - 1}")
    users = np.repeat(np.arange(len(keep)), np.diff(offsets))
    counts = np.zeros((len(keep), d), dtype=np.int64)
    np.add.at(counts, (users, values[offsets[0] : offsets[-1]]), 1)
    note = ""
    try:
        from shuffledp.datasets.provenance import read_provenance, standin_note

        note = standin_note(read_provenance(path))
    except ImportError:  # pragma: no cover - provenance helper not merged yet
        note = ""
    return HistogramData(counts, None, note)


def dirichlet_mixture(n: int, d: int, k: int, rng: np.random.Generator, *, kind: str = "separated",
                      concentration: float = 50.0, views: tuple[int, int] = (10, 60)) -> HistogramData:
    """``n`` users' counts from a mixture of ``k`` Dirichlet clusters over ``d`` categories.

    ``kind`` "separated": centre j puts mass 0.85 on category ``j mod d`` and spreads the rest
    uniformly; "overlapping": centres drawn from Dirichlet(1,...,1). Users' view totals are uniform
    on ``views`` (inclusive)."""
    if n < 1 or d < 2 or k < 1:
        raise ValueError("n, d, k: need n >= 1, d >= 2, k >= 1")
    if kind == "separated":
        centres = np.full((k, d), 0.15 / (d - 1))
        centres[np.arange(k), np.arange(k) % d] = 0.85
    elif kind == "overlapping":
        centres = rng.dirichlet(np.ones(d), size=k)
    else:
        raise ValueError(f"kind: {kind!r} (separated|overlapping)")
    clusters = rng.integers(0, k, size=n)
    alpha = concentration * centres[clusters] + 1e-3
    p = rng.gamma(alpha)
    p /= p.sum(axis=1, keepdims=True)
    s = rng.integers(views[0], views[1] + 1, size=n)
    counts = rng.multinomial(s, p)
    return HistogramData(counts.astype(np.int64), clusters, f"synthetic Dirichlet mixture ({kind})")
