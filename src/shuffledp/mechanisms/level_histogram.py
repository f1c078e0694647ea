"""Step 1 of Algorithm 1: the server's (estimated) histogram of privacy levels.

``exact``: every user sends its level index to a shuffler of its own (separate from the data
shuffler); the server sees the shuffled multiset, i.e. the exact counts ``n_1..n_K`` and nothing
that links a level to a user or to any data message.

``grr``: every user first applies K-ary randomized response with ``epsilon_p`` (an
``epsilon_p``-LDP randomizer, hence ``epsilon_p``-DP after shuffling as well) and the server
debiases the shuffled counts: ``n_hat_k = (c_k - n q) / (p - q)`` with ``p = e^eps/(e^eps+K-1)``,
``q = 1/(e^eps+K-1)``; unbiased for ``n_k`` (possibly negative, no projection, so the data
estimator's denominator stays unbiased as Section 5 of the paper asks).
"""

from __future__ import annotations

import math
import threading

import numpy as np


def level_messages_exact(levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The shuffled level messages (a permutation of the users' level indices)."""
    levels = np.asarray(levels)
    return levels[rng.permutation(levels.size)]


def level_messages_grr(levels: np.ndarray, n_levels: int, epsilon_p: float,
                       rng: np.random.Generator) -> np.ndarray:
    """Shuffled K-ary randomized-response reports of the users' levels."""
    if not (epsilon_p > 0 and math.isfinite(epsilon_p)):
        raise ValueError(f"epsilon_p: {epsilon_p!r} must be a finite number > 0")
    levels = np.asarray(levels)
    k = int(n_levels)
    p = math.exp(epsilon_p) / (math.exp(epsilon_p) + k - 1)
    flip = rng.random(levels.size) > p
    other = rng.integers(0, k - 1, size=levels.size)
    other = other + (other >= levels)  # uniform over the K-1 other levels
    out = np.where(flip, other, levels)
    return out[rng.permutation(out.size)]


SKIP_MIN = 16384  # the smallest n whose permutation skip_permutation counts instead of drawing
# numba's import (about 1.5 s) costs what counting instead of shuffling saves on a few times this
# many elements: until a process has asked for that many (in permutations of n >= SKIP_MIN) the
# kernel is used only if numba is already loaded
SKIP_AFTER = 100_000_000
_asked = [0]
_LOADED: dict[bool, tuple | None] = {}


def _kernels(n: int):
    """The counting kernel when :func:`skip_permutation` should use it for ``n`` (else None)."""
    import sys

    from shuffledp.environment import compiled_kernels, numba_enabled

    if n < SKIP_MIN:
        return None
    _asked[0] += n
    if _asked[0] < SKIP_AFTER and "numba" not in sys.modules:
        return None
    on = numba_enabled()  # looked up once per value of the switch (an import per call costs what counting saves)
    if on not in _LOADED:
        _LOADED[on] = compiled_kernels("shuffledp.mechanisms._shuffle_numba", "count_interval_draws")
    return _LOADED[on]


_SPARE = threading.local()


def _spare() -> np.random.PCG64:
    """This thread's PCG64 that :func:`skip_permutation` copies a generator's state into (made
    once: a new PCG64 seeds itself from the OS's entropy, which costs what the copy saves)."""
    spare = getattr(_SPARE, "bit_generator", None)
    if spare is None:
        spare = _SPARE.bit_generator = np.random.PCG64(0)
    return spare


def skip_permutation(rng: np.random.Generator, n: int) -> None:
    """Move ``rng`` exactly as ``rng.permutation(n)`` does (the same draws consumed, the same state
    after), without building the permutation: its 32-bit draws are counted by
    :mod:`shuffledp.mechanisms._shuffle_numba` from a copy of the generator and the generator is
    then advanced past them. Without numba, for another bit generator than PCG64, for ``n`` below
    :data:`SKIP_MIN` (the generator's state handling costs what counting saves) and until numba's
    import pays (:data:`SKIP_AFTER`), it calls ``rng.permutation(n)``: the same draws either way."""
    import sys

    n = int(n)
    bg = rng.bit_generator
    kernels = _kernels(n)
    if kernels is None or type(bg) is not np.random.PCG64 or sys.byteorder != "little" or n > 1 << 32:
        rng.permutation(n)
        return
    if n <= 1:
        return  # no draw
    (count,) = kernels
    state = bg.state
    i, halves, last_high = n - 1, 0, int(state["uinteger"])
    if state["has_uint32"]:
        i, _ = count(np.array([state["uinteger"]], dtype=np.uint32), i)
    copy = _spare()
    copy.state = state
    while i > 0:
        block = copy.random_raw((3 * i) // 4 + 64)
        i, used = count(block.view(np.uint32), i)
        halves += used
        last_high = int(block[(used - 1) // 2] >> np.uint64(32)) if used else last_high
    bg.advance((halves + 1) // 2)
    state = bg.state
    state["has_uint32"], state["uinteger"] = halves % 2, last_high
    bg.state = state


def level_counts(levels: np.ndarray, n_levels: int) -> np.ndarray:
    """The exact histogram ``n_1..n_K`` of the users' ``levels`` (what the exact mode reports)."""
    return np.bincount(np.asarray(levels), minlength=int(n_levels))


def level_histogram(levels: np.ndarray, n_levels: int, rng: np.random.Generator, *,
                    mode: str = "exact", epsilon_p: float | None = None,
                    counts: np.ndarray | None = None) -> np.ndarray:
    """``n_hat`` (float array of length K) as the server obtains it in Step 1. ``counts``: the
    :func:`level_counts` of these ``levels``, computed beforehand (exact mode; the same draws and
    histogram as without it)."""
    k = int(n_levels)
    if mode == "exact":
        # the counts of the shuffled messages are those of the levels (a permutation moves no count),
        # so the shuffle is drawn (the generator's later draws stay the same) but not applied:
        # np.bincount(level_messages_exact(levels, rng)) without gathering n messages
        levels = np.asarray(levels)
        skip_permutation(rng, levels.size)
        return (level_counts(levels, k) if counts is None else counts).astype(float)
    if mode == "grr":
        if epsilon_p is None:
            raise ValueError("epsilon_p: required when mode is 'grr'")
        msgs = level_messages_grr(levels, k, float(epsilon_p), rng)
        c = np.bincount(msgs, minlength=k).astype(float)
        e = math.exp(float(epsilon_p))
        p, q = e / (e + k - 1), 1.0 / (e + k - 1)
        return (c - len(msgs) * q) / (p - q)
    raise ValueError(f"mode: {mode!r} must be 'exact' or 'grr'")
