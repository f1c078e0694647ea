"""Local randomizers for multidimensional categorical data (vectorised, no per-user loops).

* :func:`collision_report`: the selection distribution of Eq. (1) of the multidimensional seed
  (the collision mechanism of Wang et al., IJCAI 2021, reused by MHM's Algorithm 1): a user whose
  hashed values form the set ``HR`` (``l = |HR|`` distinct values in [g]) reports each value of
  ``HR`` with probability ``p`` and each other value of [g] with probability
  ``(1 - l p) / (g - l)``. With ``p = e^eps / (m e^eps + g - m)`` (``m`` = number of hashed
  values, ``l <= m``) the largest probability is ``p`` and the smallest ``1 / (m e^eps + g - m)``,
  so the report is eps-LDP whatever the hashes.
* :func:`krr`: k-ary randomized response.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from shuffledp.environment import compiled_kernels

# untimed runs of a protocol's users' side before a timed one (``warm_up`` of run_mhm, run_tcm and
# run_flame, whose users randomize with these functions): the first run in a process loads the compiled
# kernels, and the first runs at a given size also pay for the memory they touch first (fresh pages, the
# allocator's thresholds); benchmarks/multidim_user_time_order.py measures it (docs/multidim.md, choice 13)
WARM_UP_RUNS = 2


def collision_p(eps: float, m: int, g: int) -> float:
    """``p = e^eps / (m e^eps + g - m)``: probability of each hashed value (Eq. (1) with m values)."""
    if not eps >= 0 or math.isinf(eps):
        raise ValueError(f"eps: need a finite eps >= 0, got {eps}")
    if m < 1 or g < m:
        raise ValueError(f"g: need g >= m >= 1, got g={g}, m={m}")
    e = math.exp(eps)
    return e / (m * e + g - m)


def collision_pmf(hashed: np.ndarray, p: float, g: int) -> np.ndarray:
    """Exact output pmf over [g] for one user's hashed values (testing and audits)."""
    hr = np.unique(np.asarray(hashed))
    l = hr.size
    out = np.full(g, (1.0 - l * p) / (g - l) if g > l else 0.0)
    out[hr] = p
    return out


def collision_report(hashed: np.ndarray, p: float, g: int, rng: np.random.Generator) -> np.ndarray:
    """One report in [g] per row of ``hashed`` (shape (n, m), values in [g]) following Eq. (1)."""
    hashed = np.asarray(hashed, dtype=np.int64)
    if hashed.ndim != 2:
        raise ValueError("hashed: need a 2-D array (users x hashed values)")
    n, m = hashed.shape
    if m * p > 1.0 + 1e-12:
        raise ValueError(f"p: m*p = {m * p} exceeds 1")
    kernels = _compiled()
    if kernels is not None and m >= 1:
        # compiled: the same uniforms in the same order (u; ranks inside HR; positions outside)
        s = np.empty((n, m), dtype=np.int64)  # each row's distinct values (first ell[i] entries)
        ell = np.empty(n, dtype=np.int64)
        kernels[0](np.ascontiguousarray(hashed), np.int64(g), s, ell)
        in_hr = rng.random(n) < p * ell
        n_in = int(np.count_nonzero(in_hr))
        r_u = rng.random(n_in) if n_in else np.empty(0)
        z_u = rng.random(n - n_in) if n_in < n else np.empty(0)
        out = np.empty(n, dtype=np.int64)
        kernels[1](s, ell, in_hr, r_u, z_u, np.int64(g), out)
        return out
    s = np.sort(hashed, axis=1)
    distinct = np.ones_like(s, dtype=bool)
    distinct[:, 1:] = s[:, 1:] != s[:, :-1]
    ell = distinct.sum(axis=1)
    u = rng.random(n)
    in_hr = u < p * ell
    out = np.empty(n, dtype=np.int64)
    # inside HR: uniform among the l distinct values (rank r among the distinct positions)
    if in_hr.any():
        si, di, el = s[in_hr], distinct[in_hr], ell[in_hr]
        r = np.floor(rng.random(si.shape[0]) * el).astype(np.int64)
        rank = np.cumsum(di, axis=1) - 1
        pick = di & (rank == r[:, None])
        out[in_hr] = si[np.arange(si.shape[0]), pick.argmax(axis=1)]
    # outside HR: uniform on [g] \ HR: draw z in [0, g - l), then skip the sorted distinct values
    out_mask = ~in_hr
    if out_mask.any():
        so, do, el = s[out_mask], distinct[out_mask], ell[out_mask]
        z = np.floor(rng.random(so.shape[0]) * (g - el)).astype(np.int64)
        z = np.minimum(z, g - el - 1)
        for col in range(m):
            z += (do[:, col] & (z >= so[:, col])).astype(np.int64)
        out[out_mask] = z
    return out


@functools.lru_cache(maxsize=1)
def _compiled():
    """``(distinct, pick)`` of :mod:`shuffledp.mechanisms._collision_numba`, or None without numba
    or with ``SHUFFLEDP_NUMBA=0`` (then numpy runs: the same reports)."""
    return compiled_kernels("shuffledp.mechanisms._collision_numba", "distinct", "pick")


def krr_p(eps: float, k: int) -> tuple[float, float]:
    """k-RR probabilities ``(p, q)``: keep with p = e^eps/(e^eps+k-1), each other value q."""
    e = math.exp(eps)
    return e / (e + k - 1), 1.0 / (e + k - 1)


def krr(x: np.ndarray, eps: np.ndarray | float, k: np.ndarray | int, rng: np.random.Generator) -> np.ndarray:
    """k-ary randomized response of ``x`` (values in [0, k)); ``eps`` and ``k`` may be per-user arrays."""
    x = np.asarray(x, dtype=np.int64)
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), x.shape)
    e = np.exp(np.broadcast_to(np.asarray(eps, dtype=float), x.shape))
    keep = rng.random(x.shape) < e / (e + k - 1)
    z = np.floor(rng.random(x.shape) * (k - 1)).astype(np.int64)
    z = np.minimum(z, k - 2)
    z += (z >= x).astype(np.int64)
    return np.where(keep | (k == 1), x, z)
