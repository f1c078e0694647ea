"""The per-user work of :func:`shuffledp.mechanisms.collision.collision_report` compiled with numba
(optional: without numba, or with ``SHUFFLEDP_NUMBA=0``, the numpy expressions run; the same uniforms
are drawn in the same order and turned into the same reports, which tests/test_multidim_mechanisms.py
checks).

numpy sorts every user's hashed values, marks the distinct ones, ranks them with a cumulative sum and
skips them column by column, each step a pass over an ``(n, m)`` array. Here no row is sorted: one pass
per user collects its distinct values (a bitmap over ``[0, g)``, cleared after the row), and the report
is found from counts over those values, which give the same integer as the sorted rule:

* inside ``HR`` the distinct value with exactly ``r`` distinct values below it (the ``r``-th smallest);
* outside ``HR`` the ``z``-th value of ``[0, g)`` not in ``HR``: the smallest ``x`` with
  ``x - #{v in HR : v <= x} = z``, reached from ``x = z`` by ``x <- z + #{v in HR : v <= x}`` (the
  iterates grow and never pass that ``x``, so the first repeat is it); the numpy rule, which adds one
  for every sorted distinct value at or below the running ``z``, gives that same ``x``.

Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

#: the largest ``g`` whose bitmap (``g`` bytes) is used; above it, or for a row with a value outside
#: ``[0, g)``, a row's values are compared pairwise (the same distinct values, in the same order)
BITMAP_MAX = 1 << 24


@numba.njit(cache=True, nogil=True)
def distinct(hashed, g, u, ell):  # pragma: no cover - compiled
    """``u[i, :ell[i]]``: the distinct values of row ``i`` of ``hashed`` in their first-seen order;
    ``ell[i]``: how many."""
    n, m = hashed.shape
    use_map = g <= BITMAP_MAX
    seen = np.zeros(g if use_map else 1, np.uint8)
    for i in range(n):
        inside = use_map
        for j in range(m):
            v = hashed[i, j]
            if v < 0 or v >= g:
                inside = False
        c = 0
        if inside:
            for j in range(m):
                v = hashed[i, j]
                u[i, c] = v
                c += 1 - seen[v]
                seen[v] = 1
            for j in range(m):
                seen[hashed[i, j]] = 0
        else:
            for j in range(m):
                v = hashed[i, j]
                dup = 0
                for k in range(c):
                    dup |= u[i, k] == v
                if not dup:
                    u[i, c] = v
                    c += 1
        ell[i] = c


@numba.njit(cache=True, nogil=True)
def pick(u, ell, in_hr, r_u, z_u, g, out):  # pragma: no cover - compiled
    """The reports: for the users in ``in_hr`` (in user order) the distinct value of rank
    ``floor(r_u * l)`` (the smallest when that rank rounds to ``l``), for the others the
    ``min(floor(z_u * (g - l)), g - l - 1)``-th value of ``[0, g)`` outside the distinct values."""
    n = u.shape[0]
    ir = 0
    iz = 0
    for i in range(n):
        el = ell[i]
        if in_hr[i]:
            r = np.int64(np.floor(r_u[ir] * el))
            ir += 1
            found = False
            for k in range(el):
                v = u[i, k]
                below = 0
                for q in range(el):
                    below += u[i, q] < v
                if below == r:
                    out[i] = v
                    found = True
                    break
            if not found:  # r == l: the smallest
                lo = u[i, 0]
                for k in range(1, el):
                    if u[i, k] < lo:
                        lo = u[i, k]
                out[i] = lo
        else:
            z = np.int64(np.floor(z_u[iz] * (g - el)))
            iz += 1
            if z > g - el - 1:
                z = g - el - 1
            x = z
            while True:
                c = 0
                for k in range(el):
                    c += u[i, k] <= x
                if z + c == x:
                    break
                x = z + c
            out[i] = x
