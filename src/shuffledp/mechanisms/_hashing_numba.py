"""The parameter derivation of :class:`shuffledp.mechanisms.hashing.HashFamily` compiled with numba
(optional: without numba, or with ``SHUFFLEDP_NUMBA=0``, the numpy expressions run; both give the same
integers, which tests/test_multidim_mechanisms.py checks).

numpy evaluates ``SplitMix64`` and the reductions modulo ``P - 1`` and ``P`` in about fifteen passes
over the index array, each writing a temporary; here one pass per index, the reductions modulo
``P = 2**31 - 1`` and ``P - 1`` folds of the 31-bit halves (:func:`_mod_p`, :func:`_mod_p_m1`: the same
integers as ``%``, in shifts and additions that vectorise); :func:`linear_hash` and :func:`mix_hash`
also evaluate the functions in the same pass (what ``HashFamily.hash`` returns). Compiled once per
machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _ONE = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(1)
_PRIME = np.uint64(2147483647)
_PRIME_M1 = np.uint64(2147483646)
_LOW31 = np.uint64(0x7FFFFFFF)


@numba.njit(cache=True, nogil=True, inline="always")
def _splitmix64(x):  # pragma: no cover - compiled
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@numba.njit(cache=True, nogil=True, inline="always")
def _mod_p(x):  # pragma: no cover - compiled
    """``x mod P`` (``P = 2**31 - 1``) of any uint64 ``x`` by folding (``2**31 = 1 mod P``): shifts and
    additions, which vectorise, where ``%`` by a 64-bit constant is a scalar 128-bit multiply."""
    x = (x & _LOW31) + (x >> _S31)  # < 2**31 + 2**33
    x = (x & _LOW31) + (x >> _S31)  # < 2**31 + 5 < 2 P
    return x - _PRIME if x >= _PRIME else x


@numba.njit(cache=True, nogil=True, inline="always")
def _mod_p_m1(x):  # pragma: no cover - compiled
    """``x mod (P - 1)`` (``P - 1 = 2**31 - 2``) of any uint64 ``x`` by folding (``2**31 = 2 mod P - 1``)."""
    x = (x & _LOW31) + ((x >> _S31) << _ONE)  # < 2**31 + 2**34
    x = (x & _LOW31) + ((x >> _S31) << _ONE)  # < 2**31 + 19 < 2 (P - 1)
    return x - _PRIME_M1 if x >= _PRIME_M1 else x


@numba.njit(cache=True, nogil=True, inline="always")
def _index(t, size):  # pragma: no cover - compiled
    """``t mod size`` with Python's sign rule (a mask when ``size`` is a power of two)."""
    if size & (size - 1) == 0:
        return np.uint64(t & (size - 1))
    return np.uint64(t % size)


@numba.njit(cache=True, nogil=True)
def linear_params(t, size, key, a, b):  # pragma: no cover - compiled
    """``a[i], b[i]`` of function ``t[i] mod size`` (int64 ``t``, ``0 < size < 2**63``, uint64 ``key``)."""
    for i in range(t.size):
        base = (_index(t[i], size) << _ONE) ^ key
        a[i] = np.int64(_mod_p_m1(_splitmix64(base))) + 1
        b[i] = np.int64(_mod_p(_splitmix64(base ^ _ONE)))


@numba.njit(cache=True, nogil=True)
def mix_params(t, size, key, out):  # pragma: no cover - compiled
    """The key ``out[i]`` of function ``t[i] mod size`` of the ``mix`` family."""
    for i in range(t.size):
        out[i] = _splitmix64((_index(t[i], size) << _ONE) ^ key)


@numba.njit(cache=True, nogil=True)
def linear_hash(t, x, size, key, g, mult, shift, out):  # pragma: no cover - compiled
    """``out[i] = ((a x[i] + b) mod P) mod g`` with ``(a, b)`` of function ``t[i] mod size``
    (``0 <= x[i] < P``, checked by the caller; uint64 ``g < P``; ``z mod g = z - g ((z mult) >> shift)``
    for ``z < 2**31``, :func:`shuffledp.mechanisms.hashing.mod_magic`)."""
    for i in range(t.size):
        base = (_index(t[i], size) << _ONE) ^ key
        a = np.int64(_mod_p_m1(_splitmix64(base))) + 1
        b = np.int64(_mod_p(_splitmix64(base ^ _ONE)))
        z = _mod_p(np.uint64(a * x[i] + b))
        out[i] = np.int64(z - g * ((z * mult) >> shift))


@numba.njit(cache=True, nogil=True)
def mix_hash(t, x, size, key, g, out):  # pragma: no cover - compiled
    """``out[i] = SplitMix64(k XOR SplitMix64(x[i])) mod g`` with the key ``k`` of function ``t[i] mod
    size`` (``x[i] >= 0``, checked by the caller)."""
    gu = np.uint64(g)
    for i in range(t.size):
        k = _splitmix64((_index(t[i], size) << _ONE) ^ key)
        out[i] = np.int64(_splitmix64(k ^ _splitmix64(np.uint64(x[i]))) % gu)


@numba.njit(cache=True, nogil=True)
def linear_hash_rows(t, x, size, key, g, mult, shift, out):  # pragma: no cover - compiled
    """:func:`linear_hash` of function ``t[i] + j`` at ``x[i, j]`` (an ``(n, m)`` table), without the
    ``(n, m)`` array of indices."""
    n, m = x.shape
    for i in range(n):
        for j in range(m):
            base = (_index(t[i] + j, size) << _ONE) ^ key
            a = np.int64(_mod_p_m1(_splitmix64(base))) + 1
            b = np.int64(_mod_p(_splitmix64(base ^ _ONE)))
            z = _mod_p(np.uint64(a * x[i, j] + b))
            out[i, j] = np.int64(z - g * ((z * mult) >> shift))
