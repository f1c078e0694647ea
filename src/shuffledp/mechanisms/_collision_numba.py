"""The per-user work of :func:`shuffledp.mechanisms.collision.collision_report` compiled with numba
(optional: without numba, or with ``SHUFFLEDP_NUMBA=0``, the numpy expressions run; the same uniforms
are drawn in the same order and turned into the same reports, which tests/test_multidim_mechanisms.py
checks).

numpy sorts every user's hashed values, marks the distinct ones, ranks them with a cumulative sum and
skips them column by column, each step a pass over an ``(n, m)`` array; here one pass per user over
its ``m`` values. Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def sorted_distinct(hashed, s, ell):  # pragma: no cover - compiled
    """``s[i]``: row ``i`` of ``hashed`` sorted (insertion sort: rows are short); ``ell[i]``: its number
    of distinct values."""
    n, m = hashed.shape
    for i in range(n):
        for j in range(m):
            v = hashed[i, j]
            k = j - 1
            while k >= 0 and s[i, k] > v:
                s[i, k + 1] = s[i, k]
                k -= 1
            s[i, k + 1] = v
        c = 1
        for j in range(1, m):
            if s[i, j] != s[i, j - 1]:
                c += 1
        ell[i] = c


@numba.njit(cache=True, nogil=True)
def pick(s, ell, in_hr, r_u, z_u, g, out):  # pragma: no cover - compiled
    """The reports: for the users in ``in_hr`` (in user order) the distinct value of rank
    ``floor(r_u * l)`` (the smallest when that rank rounds to ``l``), for the others
    ``min(floor(z_u * (g - l)), g - l - 1)`` moved past each distinct hashed value at or below it."""
    n, m = s.shape
    ir = 0
    iz = 0
    for i in range(n):
        el = ell[i]
        if in_hr[i]:
            r = np.int64(np.floor(r_u[ir] * el))
            ir += 1
            out[i] = s[i, 0]
            rank = -1
            for j in range(m):
                if j == 0 or s[i, j] != s[i, j - 1]:
                    rank += 1
                    if rank == r:
                        out[i] = s[i, j]
                        break
        else:
            z = np.int64(np.floor(z_u[iz] * (g - el)))
            iz += 1
            if z > g - el - 1:
                z = g - el - 1
            for j in range(m):
                if (j == 0 or s[i, j] != s[i, j - 1]) and z >= s[i, j]:
                    z += 1
            out[i] = z
