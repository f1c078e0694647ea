"""The support-count kernel of :func:`shuffledp.protocols.mhm.support_counts` compiled with numba (an
optional dependency: without numba, or with ``SHUFFLEDP_NUMBA=0``, the numpy loop runs; both give the
same integer counts, which tests/test_multidim_mechanisms.py checks).

One pass over the users per value, the linear hash updated in place and ``z mod g`` a multiply-shift
(:func:`shuffledp.mechanisms.hashing.mod_magic`): the loop over users compiles to vector instructions,
where numpy makes nine passes over the block per value. Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

from shuffledp.mechanisms._hashing_numba import _ONE, _index, _splitmix64


@numba.njit(cache=True, nogil=True)
def linear_counts(out, a, b, first, y, g, mult, shift):  # pragma: no cover - compiled
    prime = np.uint64(2147483647)
    n = a.size
    z = np.empty(n, np.uint64)
    au = np.empty(n, np.uint64)
    yu = np.empty(n, np.uint64)
    for i in range(n):
        z[i] = np.uint64((a[i] * first + b[i]) % 2147483647)
        au[i] = np.uint64(a[i])
        yu[i] = np.uint64(y[i])
    gu = np.uint64(g)
    for v in range(out.size):
        if v:
            for i in range(n):
                t = z[i] + au[i]
                z[i] = t - prime if t >= prime else t
        hits = 0
        for i in range(n):
            zi = z[i]
            hits += 1 if zi - gu * ((zi * mult) >> shift) == yu[i] else 0
        out[v] += hits


@numba.njit(cache=True, nogil=True)
def mix_counts_of(out, t, shift_t, size, key, first, y, g):  # pragma: no cover - compiled
    """The ``mix`` family's support counts: ``out[v] +=`` the number of users with
    ``SplitMix64(k_i XOR SplitMix64(first + v)) mod g == y[i]``, ``k_i`` the key of function
    ``(t[i] + shift_t) mod size`` (what ``HashFamily.apply`` gives, one value at a time)."""
    n = t.size
    k = np.empty(n, np.uint64)
    for i in range(n):
        k[i] = _splitmix64((_index(t[i] + shift_t, size) << _ONE) ^ key)
    gu = np.uint64(g)
    for v in range(out.size):
        hv = _splitmix64(np.uint64(first + v))
        hits = 0
        for i in range(n):
            hits += 1 if np.int64(_splitmix64(k[i] ^ hv) % gu) == y[i] else 0
        out[v] += hits
