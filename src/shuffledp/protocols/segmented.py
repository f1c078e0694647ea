"""Segmented multi-message shuffle protocol for set-valued data (Algorithms 1 and 2 of the paper).

Step 1 (lines 1-5): the level histogram ``n_hat`` through its own shuffler, exact by default or
from K-ary randomized response with ``epsilon_p`` (:mod:`shuffledp.mechanisms.level_histogram`).
Step 2 (line 6): ``m`` and ``lambda_1..lambda_K`` are *inputs* here; the workflow reads them from
the accountant tables (``shuffledp.accountants.special.segmented_optimizer``), a protocol run never
computes a privacy bound.
Step 3 (lines 7-21): Poisson randomizer plus random blanket messages
(:mod:`shuffledp.mechanisms.poisson_set`); the server debiases
``W_j = (C_j - n m / D) / sum_k n_hat_k lambda_k`` over the ``D`` items the messages are drawn from.

Padding (``padding=True``, the default): a user with fewer than ``s`` items holds items of the
padding domain ``{d..d+s-1}`` in their place, sent like any item; blankets are uniform over the
``D = d + s`` items and the padding bins' estimates are dropped after debiasing. Every user then
holds exactly ``s`` items and the protocol's neighbouring relation (any two sets of at most ``s``
items) is a substitution of at most ``s`` items, which the accountant covers over ``d + s`` items.
``padding=False`` is the paper's protocol over ``d`` items for data in which every user holds
exactly ``s`` items (a short set is refused). :func:`run_segmented` is the entry point the
experiments call.

The data messages are item indices only; the level messages go through a separate shuffler, so no
data message carries its sender's level (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shuffledp.mechanisms import level_histogram as lh
from shuffledp.mechanisms import poisson_set as ps


@dataclass
class SegmentedRun:
    estimate: np.ndarray      # W_hat, length d
    n_hat: np.ndarray         # level histogram the server used
    counts: np.ndarray        # C_j over the D items messages are drawn from (padding bins last)
    n_messages: int           # data messages the shuffler received


def segmented_estimate(counts: np.ndarray, n: int, m: float, n_hat, lambdas) -> np.ndarray:
    """Line 21: ``(C_j - n m / d) / sum_k n_hat_k lambda_k``."""
    counts = np.asarray(counts, dtype=float)
    d = counts.size
    denom = float(np.dot(np.asarray(n_hat, dtype=float), np.asarray(lambdas, dtype=float)))
    if denom <= 0:
        raise ValueError(f"n_hat, lambdas: sum_k n_hat_k lambda_k = {denom} must be > 0")
    return (counts - n * float(m) / d) / denom


@dataclass(frozen=True)
class Held:
    """What a repetition's users hold, the same for every ``m`` and every draw: the sets they send
    (:func:`shuffledp.mechanisms.poisson_set.protocol_sets`), the domain messages are drawn from
    and the count sampler's item-level counts ``c_jk`` (:func:`~shuffledp.mechanisms.poisson_set.item_level_counts`)."""

    source: np.ndarray       # the sets as given (padding entries < 0)
    sets: np.ndarray
    levels: np.ndarray
    d: int
    domain: int
    n_levels: int
    item_level: np.ndarray
    level_counts: np.ndarray  # n_1..n_K of ``levels`` (the exact level histogram)


def hold(sets: np.ndarray, levels: np.ndarray, d: int, n_levels: int, *, padding: bool = True) -> Held:
    """The :class:`Held` of ``sets`` and ``levels``: computed once per repetition and passed to
    :func:`run_segmented` at every ``m`` (it draws nothing, so the draws do not change)."""
    sets, levels = np.asarray(sets), np.asarray(levels)
    held, domain = ps.protocol_sets(sets, d, padding)
    return Held(sets, held, levels, int(d), domain, int(n_levels),
                ps.item_level_counts(held, levels, domain, int(n_levels)), lh.level_counts(levels, n_levels))


def run_segmented(sets: np.ndarray, levels: np.ndarray, lambdas, m: float, d: int,
                  rng: np.random.Generator, *, level_mode: str = "exact",
                  epsilon_p: float | None = None, sampler: str = "counts",
                  padding: bool = True, held: Held | None = None) -> SegmentedRun:
    """One execution of Algorithm 2 on ``sets`` (``(n, s)`` items of ``0..d-1``, entries < 0 for a
    user with fewer than ``s`` items) with user ``levels``; the estimate covers items ``0..d-1``.

    ``padding`` (module doc): the lambdas must come from an accountant over ``d + s`` items with
    padding, over ``d`` without. ``sampler='counts'`` draws the server's counts with the
    exactly-equivalent count-level sampler; ``'messages'`` generates and shuffles every message.
    ``held``: :func:`hold` of these ``sets``, ``levels``, ``d`` and ``padding`` computed beforehand
    (the same draws and estimate as without it; refused if computed for other arrays or settings).
    """
    lam = np.asarray(lambdas, dtype=float)
    n_levels = lam.size
    levels = np.asarray(levels)
    n = levels.size
    if held is None:
        held = hold(sets, levels, d, n_levels, padding=padding)
    elif (held.source is not np.asarray(sets) or held.levels is not levels or held.n_levels != n_levels
          or held.d != int(d) or held.domain != int(d) + (held.sets.shape[1] if padding else 0)):
        raise ValueError("held: computed for other sets, levels, d or padding (hold() these arrays)")
    n_hat = lh.level_histogram(levels, n_levels, rng, mode=level_mode, epsilon_p=epsilon_p,
                               counts=held.level_counts)
    domain = held.domain
    if sampler == "counts":
        counts = ps.sample_counts(held.item_level, lam, n, m, domain, rng)
        n_msgs = int(counts.sum())
    elif sampler == "messages":
        msgs = ps.simulate_messages(held.sets, levels, lam, m, domain, rng)
        counts = ps.counts_from_messages(msgs, domain)
        n_msgs = int(msgs.size)
    else:
        raise ValueError(f"sampler: {sampler!r} must be 'counts' or 'messages'")
    est = segmented_estimate(counts, n, m, n_hat, lam)[:d]  # the padding bins are dropped
    return SegmentedRun(est, n_hat, counts, n_msgs)


def mse_variance_terms(item_level: np.ndarray, n: int, m: float, n_levels_count, lambdas,
                       domain: int | None = None) -> float:
    """Exact ``sum_j Var[W_hat_j]`` over the real items ``j`` (the rows of ``item_level``) given the
    users' sets (conditional on them, exact level counts).

    ``Var[C_j] = sum_k c_jk lambda_k (1 - lambda_k) + Var[blanket count of j]`` where the blanket
    count of ``j`` is ``Binomial(n ceil(m), m / (D ceil(m)))``, ``D`` the ``domain`` blankets are
    drawn from (``d + s`` with padding; default the rows of ``item_level``).
    """
    lam = np.asarray(lambdas, dtype=float)
    cjk = np.asarray(item_level, dtype=float)
    d = cjk.shape[0] if domain is None else int(domain)
    trials, rate = ps.blanket_trials(m)
    pj = rate / d
    var_c = (cjk * lam * (1 - lam)).sum(axis=1) + n * trials * pj * (1 - pj)
    denom = float(np.dot(np.asarray(n_levels_count, dtype=float), lam))
    return float(var_c.sum() / denom**2)


def mse_bound(n: int, m: float, s: int, n_levels_count, lambdas) -> float:
    """The paper's Section 5.2 bound ``(n m + s sum_k n_k lambda_k) / (sum_k n_k lambda_k)^2``."""
    nl = float(np.dot(np.asarray(n_levels_count, dtype=float), np.asarray(lambdas, dtype=float)))
    return (n * float(m) + s * nl) / nl**2
