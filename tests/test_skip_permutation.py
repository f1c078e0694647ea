"""``skip_permutation`` (issue 36): the exact level histogram draws the shuffle of the level
messages without applying it; counting its draws instead of shuffling must leave the generator
exactly where ``rng.permutation(n)`` leaves it, so every later draw of a run is unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.environment import compiled_kernels
from shuffledp.mechanisms import level_histogram as lh

KERNELS = compiled_kernels("shuffledp.mechanisms._shuffle_numba", "count_interval_draws")


def _pair(seed: int, pre: int):
    out = []
    for _ in range(2):
        g = np.random.default_rng(seed)
        g.random()
        g.integers(0, 5, size=pre)  # an odd count of 32-bit draws leaves half a raw draw buffered
        out.append(g)
    return out


@pytest.mark.skipif(KERNELS is None, reason="numba off: skip_permutation calls rng.permutation")
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 17, 256, 257, 4099, 50001])
@pytest.mark.parametrize("pre", [0, 1, 2])
def test_same_state_and_next_draws_as_permutation(monkeypatch, n, pre):
    monkeypatch.setattr(lh, "SKIP_MIN", 0)
    monkeypatch.setattr(lh, "SKIP_AFTER", 0)
    a, b = _pair(n + 7 * pre, pre)
    a.permutation(n)
    lh.skip_permutation(b, n)
    assert a.bit_generator.state == b.bit_generator.state
    assert np.array_equal(a.integers(0, 2**31, size=9), b.integers(0, 2**31, size=9))


@pytest.mark.parametrize("skip_after", [0, 10**18])
def test_level_histogram_keeps_the_stream(monkeypatch, skip_after):
    monkeypatch.setattr(lh, "SKIP_AFTER", skip_after)
    levels = np.random.default_rng(1).integers(0, 3, size=lh.SKIP_MIN + 5)
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    got = lh.level_histogram(levels, 3, a)
    b.permutation(levels.size)
    assert np.array_equal(got, np.bincount(levels, minlength=3).astype(float))
    assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.skipif(KERNELS is None, reason="numba off")
def test_kernel_counts_rejected_draws():
    (count,) = KERNELS
    # i = 5 (mask 7): 6 and 7 are rejected, 5 accepted; i = 4 (mask 7): 0 accepted; i = 3 (mask 3): ...
    stream = np.array([6, 7, 5, 0, 3, 2, 1], dtype=np.uint32)
    assert count(stream, 5) == (0, 7)
    assert count(stream[:2], 5) == (5, 2)
