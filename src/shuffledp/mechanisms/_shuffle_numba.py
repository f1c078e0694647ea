"""The draws of numpy's ``Generator.permutation(n)`` without the permutation, compiled with numba
(optional: :func:`shuffledp.mechanisms.level_histogram.skip_permutation` falls back to
``rng.permutation(n)`` without numba or with ``SHUFFLEDP_NUMBA=0``).

numpy shuffles ``arange(n)`` by Fisher-Yates: for ``i = n-1, ..., 1`` it draws ``j`` uniform in
``0..i`` by masked rejection (``random_interval``: the 32-bit draws of the bit generator masked to
the smallest all-ones mask covering ``i``, redrawn while above ``i``). Here the same 32-bit draws
are read from a block of the generator's raw output and only *counted*; the caller then moves the
generator to where the shuffle leaves it (tests/test_skip_permutation.py checks the state and
the next draws against ``rng.permutation``). Compiled once per machine (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def count_interval_draws(stream, i):
    """Consume the 32-bit draws ``stream`` for the rejection steps ``i, i-1, ..., 1``: returns
    ``(i left, draws used)`` (``i left`` is 0 when done; else the step whose draw ran out).
    A draw is accepted when its masked value is at most ``i`` (then ``i`` moves down); the mask
    halves once ``i`` fits in its lower half, so the steps run in stretches of one mask each (the
    inner loop carries only ``i``)."""
    if i <= 0:
        return np.int64(0), np.int64(0)
    mask = np.uint32(i)
    mask |= mask >> np.uint32(1)
    mask |= mask >> np.uint32(2)
    mask |= mask >> np.uint32(4)
    mask |= mask >> np.uint32(8)
    mask |= mask >> np.uint32(16)
    bound = np.uint32(i)
    pos = 0
    size = stream.size
    while bound > 0 and pos < size:
        low = mask >> np.uint32(1)
        while bound > low and pos < size:
            bound -= np.uint32((stream[pos] & mask) <= bound)
            pos += 1
        if bound <= low:
            mask = low
    return np.int64(bound), np.int64(pos)
