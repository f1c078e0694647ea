"""Utility metrics for multidimensional frequency estimation (seed Section 6).

* :func:`frequency_mse`: ``(1/d) sum_i (1/|C_i|) sum_j (F*_ij - F_ij)^2``, the paper's per-attribute
  averaged MSE.
* :func:`topk_confusion`: the top-``k`` frequent (attribute, value) pairs among all
  ``sum_i |C_i|`` pairs: TP = true top-k pairs also in the estimated top-k, FP = estimated top-k
  pairs not truly top-k, FN = true top-k pairs missed, TN = the remaining pairs (in neither).
  Ties are broken by the pair's position (attribute order, then code), so results are deterministic.
"""

from __future__ import annotations

import numpy as np


def true_frequencies(data: np.ndarray, domains: list[int]) -> list[np.ndarray]:
    data = np.asarray(data)
    n = data.shape[0]
    return [np.bincount(data[:, j].astype(np.int64), minlength=c) / n for j, c in enumerate(domains)]


def frequency_mse(estimates: list[np.ndarray], truth: list[np.ndarray]) -> float:
    if len(estimates) != len(truth):
        raise ValueError("estimates: one array per attribute expected")
    return float(np.mean([np.mean((np.asarray(e) - t) ** 2) for e, t in zip(estimates, truth, strict=True)]))


def _topk(values: np.ndarray, k: int) -> np.ndarray:
    order = np.lexsort((np.arange(values.size), -values))
    return order[:k]


def topk_confusion(estimates: list[np.ndarray], truth: list[np.ndarray], k: int = 50) -> dict:
    est = np.concatenate([np.asarray(e, float) for e in estimates])
    tru = np.concatenate([np.asarray(t, float) for t in truth])
    if k > est.size:
        raise ValueError(f"k: {k} exceeds the {est.size} attribute values")
    te = np.zeros(est.size, bool)
    te[_topk(est, k)] = True
    tt = np.zeros(tru.size, bool)
    tt[_topk(tru, k)] = True
    return {"TP": int((te & tt).sum()), "FP": int((te & ~tt).sum()),
            "TN": int((~te & ~tt).sum()), "FN": int((~te & tt).sum())}
