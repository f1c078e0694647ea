"""Synthetic set-valued data: n users, each holding ``set_size`` distinct items from a domain.

Items are drawn without replacement from a uniform distribution (the segmented paper's setting)
or a Zipf distribution over a random item order (an option). Sampling uses the Gumbel-top-k trick
(``argsort`` of log-weights plus Gumbel noise), which draws k items without replacement with the
successive-sampling probabilities, vectorised over all users.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def item_weights(domain: int, distribution: str, zipf_exponent: float = 1.0,
                 rng: np.random.Generator | None = None) -> np.ndarray:
    if distribution == "uniform":
        return np.full(domain, 1.0 / domain)
    if distribution == "zipf":
        w = 1.0 / np.arange(1, domain + 1) ** zipf_exponent
        if rng is not None:
            w = w[rng.permutation(domain)]
        return w / w.sum()
    raise ValueError(f"distribution: unknown {distribution!r} (uniform or zipf)")


def generate_sets(users: int, domain: int, set_size: int, distribution: str, rng: np.random.Generator,
                  zipf_exponent: float = 1.0, block: int = 50_000) -> np.ndarray:
    """An (users, set_size) int32 array; each row sorted and without repeats."""
    if not 1 <= set_size <= domain:
        raise ValueError(f"set_size: {set_size} must be in 1..domain ({domain})")
    logw = np.log(item_weights(domain, distribution, zipf_exponent, rng))
    out = np.empty((users, set_size), dtype=np.int32)
    for start in range(0, users, block):
        stop = min(users, start + block)
        keys = logw + rng.gumbel(size=(stop - start, domain))
        top = np.argpartition(-keys, set_size - 1, axis=1)[:, :set_size]
        out[start:stop] = np.sort(top, axis=1)
    return out


def sets_table(sets: np.ndarray) -> pa.Table:
    users, k = sets.shape
    offsets = np.arange(0, users * k + 1, k, dtype=np.int32)
    return pa.table(
        {
            "user_id": pa.array(np.arange(users, dtype=np.int32)),
            "items": pa.ListArray.from_arrays(pa.array(offsets), pa.array(sets.ravel())),
            "set_size": pa.array(np.full(users, k, dtype=np.int32)),
        }
    )
