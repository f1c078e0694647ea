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


def run_segmented(sets: np.ndarray, levels: np.ndarray, lambdas, m: float, d: int,
                  rng: np.random.Generator, *, level_mode: str = "exact",
                  epsilon_p: float | None = None, sampler: str = "counts",
                  padding: bool = True) -> SegmentedRun:
    """One execution of Algorithm 2 on ``sets`` (``(n, s)`` items of ``0..d-1``, entries < 0 for a
    user with fewer than ``s`` items) with user ``levels``; the estimate covers items ``0..d-1``.

    ``padding`` (module doc): the lambdas must come from an accountant over ``d + s`` items with
    padding, over ``d`` without. ``sampler='counts'`` draws the server's counts with the
    exactly-equivalent count-level sampler; ``'messages'`` generates and shuffles every message.
    """
    lam = np.asarray(lambdas, dtype=float)
    n_levels = lam.size
    levels = np.asarray(levels)
    n = levels.size
    held, domain = ps.protocol_sets(sets, d, padding)
    n_hat = lh.level_histogram(levels, n_levels, rng, mode=level_mode, epsilon_p=epsilon_p)
    if sampler == "counts":
        cjk = ps.item_level_counts(held, levels, domain, n_levels)
        counts = ps.sample_counts(cjk, lam, n, m, domain, rng)
        n_msgs = int(counts.sum())
    elif sampler == "messages":
        msgs = ps.simulate_messages(held, levels, lam, m, domain, rng)
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
