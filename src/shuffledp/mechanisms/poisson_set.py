"""The Poisson randomizer with random blanket counts (Algorithm 2, lines 7-17 of the segmented paper).

A user holding a set ``x`` of at most ``s`` items from ``{0..d-1}`` reports every item ``t`` of
``x`` independently with probability ``lambda`` (its level's sampling rate) and adds ``ceil(m)``
blanket trials, each of which sends one uniformly random item of ``{0..d-1}`` with probability
``m / ceil(m)``. Messages carry an item index only (no level, no user id).

Two samplers:

* :func:`simulate_messages` builds every user's messages explicitly and shuffles them (the
  protocol as written, vectorised over users);
* :func:`sample_counts` draws the server's item counts ``C_j`` directly: the count of item ``j``
  is a sum over levels of ``Binomial(c_jk, lambda_k)`` (``c_jk`` = number of level-``k`` users
  holding ``j``) plus the ``j``-th cell of ``Multinomial(N, uniform)`` with
  ``N ~ Binomial(n * ceil(m), m / ceil(m))``. This is exactly equal in distribution to counting the
  messages of :func:`simulate_messages` (sums of independent Bernoulli trials with a common rate
  are binomial; independent uniform draws are multinomial); a test checks the two agree.

Sets are ``(n, s)`` integer arrays; entries ``< 0`` mark a user with fewer than ``s`` items. The
samplers refuse them: a padding entry must first become an item of the padding domain
``{d..d+s-1}`` (:func:`pad_sets`), which is then sent like any item (with the user's rate) and
blankets are drawn over all ``d + s`` items. A padding entry that is never sent would make a
user's message count depend on how many real items it holds, a channel no single-item accountant
covers (docs/segmented.md, "Neighbouring relation and padding"); with padding sent, every user
holds exactly ``s`` items of ``d + s`` and substituting them covers every pair of sets.
"""

from __future__ import annotations

import math

import numpy as np

PAD = -1


def blanket_trials(m: float) -> tuple[int, float]:
    """``(ceil(m), m / ceil(m))``: number of blanket trials per user and their success rate."""
    m = float(m)
    if not (m >= 0.0 and math.isfinite(m)):
        raise ValueError(f"m: {m!r} must be a finite number >= 0")
    if m == 0.0:
        return 0, 0.0
    c = math.ceil(m)
    return c, m / c


def _check_lambdas(lambdas) -> np.ndarray:
    lam = np.asarray(lambdas, dtype=float)
    # 0 <= x <= 1 fails for NaN and infinities: finite rates in [0, 1] (K values, checked in Python)
    if lam.ndim != 1 or not all(0.0 <= x <= 1.0 for x in lam.tolist()):
        raise ValueError(f"lambdas: {lambdas!r} must be rates in [0, 1]")
    return lam


def pad_sets(sets: np.ndarray, d: int) -> np.ndarray:
    """``(n, s)`` sets with every padding entry (``< 0``) replaced by an item of the padding domain:
    the entry in column ``i`` becomes ``d + i`` (so a row's padding items are distinct; PrivSet's
    rule, as :func:`shuffledp.mechanisms.subset_exp.pad_sets`). Real items must lie in ``0..d-1``."""
    sets = np.asarray(sets, dtype=np.int64)
    if sets.ndim != 2:
        raise ValueError(f"sets: shape {sets.shape} must be (n, s)")
    if np.any(sets >= d):
        raise ValueError(f"sets: items must lie in 0..{d - 1} (padding entries < 0)")
    dummy = d + np.arange(sets.shape[1], dtype=np.int64)[None, :]
    return np.where(sets >= 0, sets, np.broadcast_to(dummy, sets.shape))


def protocol_sets(sets: np.ndarray, d: int, padding: bool = True) -> tuple[np.ndarray, int]:
    """``(sets the users hold, domain)``: with ``padding`` the padded sets over ``d + s`` items
    (:func:`pad_sets`); without, the sets as given over ``d`` items, which must hold exactly ``s``
    items each (the declared relation is then substitution of ``s``-sets; a short set is refused)."""
    sets = np.asarray(sets, dtype=np.int64)
    if sets.ndim != 2:
        raise ValueError(f"sets: shape {sets.shape} must be (n, s)")
    if padding:
        return pad_sets(sets, d), d + sets.shape[1]
    if np.any(sets < 0):
        raise ValueError("sets: a user holds fewer than s items; run with padding (its items then come "
                         "from the padding domain d..d+s-1 and are sent like any item)")
    if np.any(sets >= d):
        raise ValueError(f"sets: items must lie in 0..{d - 1}")
    return sets, d


def _check_items(sets: np.ndarray, d: int) -> None:
    if not sets.size:
        return
    if sets.min() < 0:
        raise ValueError("sets: padding entries (< 0) must be padded first (pad_sets / protocol_sets): a padding "
                         "item that is never sent reveals the set size through the message count")
    if sets.max() >= d:
        raise ValueError(f"sets: items must lie in 0..{d - 1}")


def item_level_counts(sets: np.ndarray, levels: np.ndarray, d: int, n_levels: int) -> np.ndarray:
    """``(d, K)`` array: number of users of level ``k`` whose set contains item ``j`` (``d`` the
    domain the sets are over: ``d + s`` for padded sets)."""
    sets = np.asarray(sets)
    levels = np.asarray(levels)
    _check_items(sets, d)
    # (n, s): item j, level k -> j K + k (int64 without a copy of arrays that already are)
    flat = np.asarray(sets, dtype=np.int64) * n_levels + np.asarray(levels, dtype=np.int64)[:, None]
    return np.bincount(flat.ravel(), minlength=d * n_levels).reshape(d, n_levels)


def sample_counts(
    counts_jk: np.ndarray, lambdas, n: int, m: float, d: int, rng: np.random.Generator
) -> np.ndarray:
    """Server item counts ``C`` (length ``d``) from the count-level sampler (see module docstring)."""
    lam = _check_lambdas(lambdas)
    counts_jk = np.asarray(counts_jk, dtype=np.int64)
    if counts_jk.shape != (d, lam.size):
        raise ValueError(f"counts_jk: shape {counts_jk.shape} must be (d, K) = ({d}, {lam.size})")
    signal = rng.binomial(counts_jk, lam[None, :]).sum(axis=1)
    trials, rate = blanket_trials(m)
    n_blanket = rng.binomial(int(n) * trials, rate) if trials else 0
    blanket = rng.multinomial(n_blanket, np.full(d, 1.0 / d))
    return (signal + blanket).astype(np.int64)


def simulate_messages(
    sets: np.ndarray, levels: np.ndarray, lambdas, m: float, d: int, rng: np.random.Generator
) -> np.ndarray:
    """All users' messages, each user's generated as in Algorithm 2, then uniformly shuffled.
    ``sets`` hold items of ``0..d-1`` only (padded sets: ``d`` is then the padded domain).

    Returns a 1-D int array of item indices (what the server sees): no level, no user id.
    """
    lam = _check_lambdas(lambdas)
    sets = np.asarray(sets)
    levels = np.asarray(levels)
    _check_items(sets, d)
    n, s = sets.shape
    # lines 9-12: each item of user i (padding items included) is kept with probability lambda_{k_i}
    keep = rng.random((n, s)) <= lam[levels][:, None]
    signal = sets[keep]
    # lines 13-16: ceil(m) trials per user, each sending a uniform item with probability m/ceil(m)
    trials, rate = blanket_trials(m)
    if trials:
        sent = rng.random((n, trials)) <= rate
        blanket = rng.integers(0, d, size=int(sent.sum()))
    else:
        blanket = np.empty(0, dtype=np.int64)
    msgs = np.concatenate([signal.astype(np.int64), blanket.astype(np.int64)])
    return msgs[rng.permutation(msgs.size)]  # line 18: the shuffler


def counts_from_messages(messages: np.ndarray, d: int) -> np.ndarray:
    """Line 20: ``C_j`` = number of messages equal to item ``j``."""
    return np.bincount(np.asarray(messages, dtype=np.int64), minlength=d)
