"""A memo of an elementwise function of integer pairs ``(i, j)`` that keeps the previous call's
values: the accountants' searches evaluate the same binomial cdf and pmf at many of the same pairs
from one evaluation to the next (a bisection on lambda keeps the clone-count window and most of
the thresholds), so a call looks its pairs up among the previous call's (sorted keys and
``searchsorted``, vectorised) and computes only the others, in one call. scipy's binomial laws
and ``betainc`` are elementwise: a value taken from the memo has the bits a fresh evaluation would
give (``tests/test_pair_memo.py``). Only the last call is kept, so the memo's size and cost are
those of one call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_SHIFT = np.int64(1 << 32)
_OFFSET = np.int64(1 << 31)
_LIMIT = 1 << 31


class PairMemo:
    """``fn(i, j) -> tuple of n_out float arrays`` (elementwise in the pairs), with the previous
    call's pairs remembered. Pairs with ``0 <= i < 2**31`` and ``|j| < 2**31`` are memoised; a call
    with any pair outside that range is computed directly (and forgets the memo)."""

    def __init__(self, fn: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]], n_out: int):
        self.fn = fn
        self.n_out = n_out
        self.keys = np.empty(0, dtype=np.int64)
        self.values = [np.empty(0, dtype=float) for _ in range(n_out)]

    def __call__(self, i: np.ndarray, j: np.ndarray) -> tuple[np.ndarray, ...]:
        i = np.asarray(i, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        if i.size == 0 or i.min() < 0 or i.max() >= _LIMIT or np.abs(j).max() >= _LIMIT:
            self.keys = np.empty(0, dtype=np.int64)
            return tuple(np.asarray(v, dtype=float) for v in self.fn(i, j))
        key = i * _SHIFT + (j + _OFFSET)
        order = np.argsort(key, kind="stable")
        sk = key[order]
        first = np.empty(sk.size, dtype=bool)
        first[0] = True
        np.not_equal(sk[1:], sk[:-1], out=first[1:])
        uk, uidx = sk[first], order[first]
        vals = self._lookup_or_compute(uk, i[uidx], j[uidx])
        self.keys, self.values = uk, vals
        inverse = np.cumsum(first) - 1
        out = []
        for v in vals:
            o = np.empty(key.size, dtype=float)
            o[order] = v[inverse]
            out.append(o)
        return tuple(out)

    def _lookup_or_compute(self, uk, ui, uj) -> list[np.ndarray]:
        """The values at the sorted distinct keys ``uk`` (pairs ``ui, uj``): the remembered ones
        looked up, the others computed in one call of ``fn``."""
        pos = np.searchsorted(self.keys, uk)
        hit = pos < self.keys.size
        hit[hit] = self.keys[pos[hit]] == uk[hit]
        vals = [np.empty(uk.size, dtype=float) for _ in range(self.n_out)]
        for v, old in zip(vals, self.values, strict=True):
            v[hit] = old[pos[hit]]
        miss = ~hit
        if miss.any():
            fresh = self.fn(ui[miss], uj[miss])
            for v, f in zip(vals, fresh, strict=True):
                v[miss] = f
        return vals
