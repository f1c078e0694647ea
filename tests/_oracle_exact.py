"""Exact worst-case shuffled epsilon of any small finite-output randomizer, for the tests only.

Independent of ``shuffledp`` (numpy only, with the helpers of ``_oracle`` and
``_oracle_decomposition``): :func:`exact_eps` enumerates EVERY ordered pair of the victim's inputs
and EVERY multiset of the other ``n - 1`` users' inputs, builds the law of the shuffled output
histogram (proportional output columns merged first: a sufficient statistic, see
``_oracle_decomposition.merge_columns``) and solves each pair's eps(delta) in closed form on its
sorted privacy losses (``_oracle.pair_eps``, both directions). The largest is the randomizer's
exact shuffled eps at ``delta``: every upper bound must lie at or above it, every lower bound at
or below it.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import _oracle
import _oracle_decomposition as O
import numpy as np


def krr_matrix(k: int, eps0: float) -> np.ndarray:
    """k-ary randomized response: the input reported with ``e^eps0 / (e^eps0 + k - 1)``."""
    e = math.exp(eps0)
    mat = np.full((k, k), 1.0)
    np.fill_diagonal(mat, e)
    return mat / (e + k - 1.0)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def exact_eps(matrix, n: int, delta: float, *, inputs=None) -> float:
    """Exact worst-case shuffled eps at ``delta`` of the randomizer ``matrix`` (rows: inputs) with
    ``n`` users: the largest eps over every ordered victim pair (both rows in ``inputs``, default
    all) and every multiset of the others' inputs (any row)."""
    return exact_eps_many(matrix, n, (delta,), inputs=inputs)[0]


def exact_eps_many(matrix, n: int, deltas, *, inputs=None) -> list[float]:
    """:func:`exact_eps` at each of ``deltas`` (the histogram laws built once)."""
    laws = _laws(_key(matrix), n, None if inputs is None else tuple(inputs))
    return [max((_oracle.pair_eps(lp, lq, float(dl)) for lp, lq in laws), default=0.0) for dl in deltas]


def _key(matrix) -> tuple:
    mat = O.merge_columns(matrix)
    return tuple(map(tuple, mat))


@lru_cache(maxsize=64)
def _laws(key: tuple, n: int, inputs) -> list:
    """(log P, log Q) of the shuffled histogram for every unordered victim pair and every multiset
    of the others' inputs (both directions are taken by ``_oracle.pair_eps``)."""
    mat = np.asarray(key)
    rows = mat.shape[0]
    victims = range(rows) if inputs is None else inputs
    out = []
    for others in itertools.combinations_with_replacement(range(rows), n - 1):
        base = O.histogram_law(mat, list(others), n)
        laws = {x: _log(O._add_user(mat, base, n - 1, x, n)) for x in victims}
        for x0, x1 in itertools.combinations(victims, 2):
            out.append((laws[x0], laws[x1]))
    return out
