"""The support-count kernel of :func:`shuffledp.protocols.mhm.support_counts` compiled with numba (an
optional dependency: without numba, or with ``SHUFFLEDP_NUMBA=0``, the numpy loop runs; both give the
same integer counts, which tests/test_multidim_mechanisms.py checks).

One pass over the users per value (``CHUNK`` users at a time, so the work arrays stay in cache), the
linear hash updated in place and ``z mod g`` a multiply-shift (:func:`shuffledp.mechanisms.hashing.mod_magic`):
the loop over users compiles to vector instructions, where numpy makes nine passes over the block per value.
Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

from shuffledp.mechanisms._hashing_numba import _ONE, _index, _mod_p, _mod_p_m1, _splitmix64

#: users per pass of :func:`linear_counts_units`: its three work arrays (24 KB) stay in the L1 cache while every
#: value is counted (one pass over the whole block per value streamed them from memory)
CHUNK = 1024


@numba.njit(cache=True, nogil=True)
def linear_counts_units(out, ends, firsts, shifts, t, size, key, y, g, mult, shift):  # pragma: no cover - compiled
    """Every unit's support counts in one call (the linear family): unit ``j`` owns ``out[ends[j-1]:ends[j]]``
    (``ends[-1] = 0``), its values ``firsts[j] + v`` hashed by function ``(t[i] + shifts[j]) mod size``;
    ``out[ends[j-1] + v] +=`` the users with ``((a (firsts[j] + v) + b) mod P) mod g == y``. The functions'
    ``(a, b)`` are derived here (``HashFamily.params``' integers, as :func:`linear_hash_rows` derives them), the
    values counted in one pass per value, ``CHUNK`` users at a time: the same integer counts
    without a call, and two arrays of parameters, per unit."""
    prime = np.uint64(2147483647)
    n = t.size
    z = np.empty(CHUNK, np.uint64)
    au = np.empty(CHUNK, np.uint64)
    yu = np.empty(CHUNK, np.uint64)
    gu = np.uint64(g)
    for s in range(0, n, CHUNK):
        m = min(CHUNK, n - s)
        for i in range(m):
            yu[i] = np.uint64(y[s + i])
        start = 0
        for j in range(ends.size):
            end = ends[j]
            first = firsts[j]
            for i in range(m):
                base = (_index(t[s + i] + shifts[j], size) << _ONE) ^ key
                a = np.int64(_mod_p_m1(_splitmix64(base))) + 1
                b = np.int64(_mod_p(_splitmix64(base ^ _ONE)))
                z[i] = _mod_p(np.uint64(a * first + b))  # a first + b < 2**62: the integer of % P
                au[i] = np.uint64(a)
            if end > start:
                hits = 0
                for i in range(m):
                    zi = z[i]
                    hits += 1 if zi - gu * ((zi * mult) >> shift) == yu[i] else 0
                out[start] += hits
            for v in range(start + 1, end):
                hits = 0
                for i in range(m):
                    q = z[i] + au[i]
                    zi = q - prime if q >= prime else q
                    z[i] = zi
                    hits += 1 if zi - gu * ((zi * mult) >> shift) == yu[i] else 0
                out[v] += hits
            start = end


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
