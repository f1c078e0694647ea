"""Multi-dimensional range queries through HDG (Yang, Wang, Li, Cheng, Su, PVLDB 14(3), 2020) with a
pluggable frequency component.

HDG summarises ``d`` ordinal attributes (common domain ``c``, a power of two) by ``d`` one-dimensional
grids (each attribute cut into ``g1`` equal intervals) and ``C(d, 2)`` two-dimensional grids (each
attribute pair cut into ``g2 x g2`` equal cells). The multidimensional seed (Sec. 6.1.3) keeps the
framework and swaps its frequency oracle: each grid is one "dimension" with ``g1`` or ``g2^2`` values,
collected by MHM or FLAME (:mod:`shuffledp.tasks.frequency`).

Steps:

1. :func:`granularities`: HDG's guideline, ``g1 = (n (e^eps - 1)^2 alpha1^2 / (2 m e^eps))^(1/3)`` and
   ``g2 = sqrt(2 alpha2 (e^eps - 1) sqrt(n / (m e^eps)))`` with ``m = d + C(d, 2)`` grids,
   ``alpha1 = 0.7``, ``alpha2 = 0.03``, each rounded to the nearest power of two (at least 2, at most
   ``c``); we also keep ``g2 <= g1`` so a 1-D cell is a union of 2-D rows. HDG derives the guideline from
   its LDP oracle's cell variance ``V = 4 m e^eps / (n (e^eps - 1)^2)``; written with ``V`` it reads
   ``g1 = (2 alpha1^2 / V)^(1/3)``, ``g2 = (4 alpha2 / sqrt(V))^(1/2)`` (:func:`granularities_from_variance`).
   The experiments use the published formula at ``eps_s`` by default (same grids for every component)
   or, optionally, the component's own cell variance (:func:`choose_granularities`);
   docs/multidim_frameworks.md.
2. :func:`encode_grids`: every user's cell in each grid.
3. the frequency component estimates every grid's cell frequencies.
4. :func:`postprocess`: HDG's post-processing: Norm-Sub each grid, then for each attribute make all
   grids containing it agree on its ``g2``-level marginal (inverse-variance weighted mean, the difference
   spread evenly over the cells; :func:`attribute_consistency`), repeated, ending with Norm-Sub.
5. :func:`response_matrices`: for each pair, a ``c x c`` matrix fitted to the pair's 2-D grid and the two
   1-D grids by iterative scaling from uniform (HDG's "weighted update").
6. :func:`answer_query`: a 2-D query sums the response matrix over the rectangle; a ``lambda``-D query
   (``lambda > 2``) is the maximum-entropy ``2^lambda`` in/out table matching every pair's 2 x 2
   in/out table from the response matrices (iterative proportional fitting), read at "all inside".
   (The authors' code fits only each pair's in/in cell; fitting the whole 2 x 2 table is our choice.)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shuffledp.tasks.marginals import ipf, ipf_many, norm_sub

ALPHA1 = 0.7
ALPHA2 = 0.03


def _pow2(x: float, cap: int) -> int:
    """Nearest power of two to ``x`` (ties down), between 2 and ``cap``."""
    if x <= 2:
        return min(2, cap)
    lo = 2 ** int(math.floor(math.log2(x)))
    hi = lo * 2
    g = lo if x - lo <= hi - x else hi
    return int(min(max(g, 2), cap))


def granularities(n: int, d: int, eps: float, c: int, *, alpha1: float = ALPHA1,
                  alpha2: float = ALPHA2) -> tuple[int, int]:
    if c < 2 or c & (c - 1):
        raise ValueError(f"domain: HDG needs a power of two, got {c}")
    m = d + d * (d - 1) // 2
    e = math.exp(eps)
    g1 = (n * (e - 1) ** 2 * alpha1**2 / (2 * m * e)) ** (1 / 3)
    g2 = math.sqrt(2 * alpha2 * (e - 1) * math.sqrt(n / (m * e)))
    G1 = _pow2(g1, c)
    G2 = min(_pow2(g2, c), G1)
    return G1, G2


def granularities_from_variance(variance: float, c: int, *, alpha1: float = ALPHA1,
                                alpha2: float = ALPHA2) -> tuple[int, int]:
    """HDG's guideline in terms of the frequency oracle's variance of one cell's estimate."""
    if c < 2 or c & (c - 1):
        raise ValueError(f"domain: HDG needs a power of two, got {c}")
    v = max(float(variance), 1e-300)
    G1 = _pow2((2 * alpha1**2 / v) ** (1 / 3), c)
    G2 = min(_pow2(math.sqrt(4 * alpha2 / math.sqrt(v)), c), G1)
    return G1, G2


def choose_granularities(component, n: int, d: int, c: int, eps_s: float, delta_s: float,
                         rounds: int = 4) -> tuple[int, int]:
    """Granularities for ``component``: start from HDG's LDP guideline at ``eps_s``, then iterate with the
    component's mean cell variance for the grids' domains (data-independent, from its accountant)."""
    g1, g2 = granularities(n, d, eps_s, c)
    for _ in range(rounds):
        doms = Grids(d, c, g1, g2).domains
        var = component.cell_variances(n, doms, eps_s, delta_s)
        new = granularities_from_variance(float(np.mean(var)), c)
        if new == (g1, g2):
            break
        g1, g2 = new
    return g1, g2


@dataclass(frozen=True)
class Grids:
    d: int
    c: int
    g1: int
    g2: int

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return list(itertools.combinations(range(self.d), 2))

    @property
    def domains(self) -> list[int]:
        return [self.g1] * self.d + [self.g2 * self.g2] * len(self.pairs)

    @property
    def count(self) -> int:
        return self.d + len(self.pairs)


def encode_grids(data: np.ndarray, grids: Grids) -> np.ndarray:
    """``(n, d + C(d, 2))``: each user's cell in every 1-D then 2-D grid."""
    x = np.asarray(data, dtype=np.int64)
    if x.min() < 0 or x.max() >= grids.c:
        raise ValueError(f"data: codes must lie in 0..{grids.c - 1}")
    one = x * grids.g1 // grids.c
    two = x * grids.g2 // grids.c
    cols = [one[:, a] for a in range(grids.d)] + [two[:, a] * grids.g2 + two[:, b] for a, b in grids.pairs]
    return np.stack(cols, axis=1)


def true_grids(data: np.ndarray, grids: Grids, codes: np.ndarray | None = None) -> list[np.ndarray]:
    """Every grid's true cell frequencies (``codes``: :func:`encode_grids` of ``data``, when at hand)."""
    codes = encode_grids(data, grids) if codes is None else codes
    n = codes.shape[0]
    return [np.bincount(codes[:, j], minlength=k) / n for j, k in enumerate(grids.domains)]


def _attr_marginal(table: np.ndarray, j: int, attr: int, grids: Grids) -> np.ndarray:
    """Grid ``j``'s marginal on ``attr`` at the ``g2`` level."""
    if j < grids.d:
        return table.reshape(grids.g2, grids.g1 // grids.g2).sum(axis=1)
    a, b = grids.pairs[j - grids.d]
    t = table.reshape(grids.g2, grids.g2)
    return t.sum(axis=1) if attr == a else t.sum(axis=0)


def _add_attr(table: np.ndarray, j: int, attr: int, delta: np.ndarray, grids: Grids) -> np.ndarray:
    """Add ``delta`` (one value per ``g2``-level cell of ``attr``) spread evenly over grid ``j``'s cells."""
    if j < grids.d:
        r = grids.g1 // grids.g2
        return (table.reshape(grids.g2, r) + (delta / r)[:, None]).ravel()
    a, _ = grids.pairs[j - grids.d]
    t = table.reshape(grids.g2, grids.g2)
    t = t + ((delta / grids.g2)[:, None] if attr == a else (delta / grids.g2)[None, :])
    return t.ravel()


def attribute_consistency(tables: list[np.ndarray], grids: Grids,
                          cell_variance: Sequence[float] | None = None) -> list[np.ndarray]:
    """All grids containing an attribute get the same ``g2``-level marginal of it (weights: inverse of
    cell variance times cells summed); grid totals are first made equal the same way."""
    out = [np.asarray(t, float).copy() for t in tables]
    var = np.ones(grids.count) if cell_variance is None else np.maximum(np.asarray(cell_variance, float), 1e-300)
    doms = grids.domains
    # common total
    w = np.array([1.0 / (var[j] * doms[j]) for j in range(grids.count)])
    tot = np.array([t.sum() for t in out])
    target = float(np.sum(w * tot) / w.sum())
    out = [t + (target - s) / t.size for t, s in zip(out, tot, strict=True)]
    for attr in range(grids.d):
        members = [attr] + [grids.d + i for i, p in enumerate(grids.pairs) if attr in p]
        margs = [_attr_marginal(out[j], j, attr, grids) for j in members]
        summed = [doms[j] / grids.g2 for j in members]
        w = np.array([1.0 / (var[j] * s) for j, s in zip(members, summed, strict=True)])
        w = w / w.sum()
        tgt = sum(wi * m for wi, m in zip(w, margs, strict=True))
        for j, m in zip(members, margs, strict=True):
            out[j] = _add_attr(out[j], j, attr, tgt - m, grids)
    return out


def postprocess(estimates: list[np.ndarray], grids: Grids, cell_variance: Sequence[float] | None = None,
                rounds: int = 5) -> list[np.ndarray]:
    tables = [norm_sub(np.asarray(e, float)) for e in estimates]
    for _ in range(rounds):
        tables = attribute_consistency(tables, grids, cell_variance)
        tables = [norm_sub(t) for t in tables]
    return tables


def response_matrices(tables: list[np.ndarray], grids: Grids, *, iters: int = 100,
                      tol: float = 1e-7) -> dict[tuple[int, int], np.ndarray]:
    """A ``c x c`` matrix per attribute pair, fitted to its 2-D grid and both 1-D grids."""
    c, g1, g2 = grids.c, grids.g1, grids.g2
    r1, r2 = c // g1, c // g2
    out = {}
    for i, (a, b) in enumerate(grids.pairs):
        one_a, one_b = tables[a], tables[b]
        two = tables[grids.d + i].reshape(g2, g2)
        m = np.full((c, c), 1.0 / (c * c))
        for _ in range(iters):
            before = m.copy()
            for axis, one in ((0, one_a), (1, one_b)):
                mm = m if axis == 0 else m.T
                s = mm.reshape(g1, r1, c).sum(axis=(1, 2))
                ratio = np.divide(one, s, out=np.ones_like(s), where=s > 0)
                mm = (mm.reshape(g1, r1, c) * ratio[:, None, None]).reshape(c, c)
                m = mm if axis == 0 else mm.T
            blocks = m.reshape(g2, r2, g2, r2)
            s = blocks.sum(axis=(1, 3))
            ratio = np.divide(two, s, out=np.ones_like(s), where=s > 0)
            m = (blocks * ratio[:, None, :, None]).reshape(c, c)
            tot = m.sum()
            if tot > 0:
                m = m / tot
            if np.abs(m - before).sum() < tol:
                break
        out[(a, b)] = m
    return out


@dataclass(frozen=True)
class RangeQuery:
    attrs: tuple[int, ...]
    lo: tuple[int, ...]
    hi: tuple[int, ...]  # inclusive


def random_queries(d: int, c: int, dim: int, count: int, volume: float, rng: np.random.Generator) -> list[RangeQuery]:
    """``count`` queries over ``dim`` random attributes, each interval ``volume * c`` long (at least 1)."""
    if dim > d:
        raise ValueError(f"query dimension {dim} exceeds the {d} attributes")
    length = max(1, int(round(volume * c)))
    out = []
    for _ in range(count):
        attrs = tuple(sorted(rng.choice(d, size=dim, replace=False).tolist()))
        lo = tuple(int(rng.integers(0, c - length + 1)) for _ in attrs)
        out.append(RangeQuery(attrs, lo, tuple(x + length - 1 for x in lo)))
    return out


def true_answer(data: np.ndarray, q: RangeQuery) -> float:
    x = np.asarray(data)
    inside = np.ones(x.shape[0], bool)
    for a, lo, hi in zip(q.attrs, q.lo, q.hi, strict=True):
        inside &= (x[:, a] >= lo) & (x[:, a] <= hi)
    return float(inside.mean())


def _query_constraints(mats: dict[tuple[int, int], np.ndarray], q: RangeQuery):
    """A 2-D query's answer (a float), or the 2 x 2 in/out tables of every attribute pair of a
    ``lambda``-D query (``lambda > 2``) as :func:`ipf` constraints."""
    lam = len(q.attrs)
    if lam < 2:
        raise ValueError("answer_query: HDG answers queries over two or more attributes")
    rng_of = {a: (lo, hi) for a, lo, hi in zip(q.attrs, q.lo, q.hi, strict=True)}
    cons = []
    for i, j in itertools.combinations(range(lam), 2):
        a, b = q.attrs[i], q.attrs[j]
        m = mats[(a, b)]
        (la, ha), (lb, hb) = rng_of[a], rng_of[b]
        tot = m.sum()
        rows = m[la:ha + 1, :].sum()
        cols = m[:, lb:hb + 1].sum()
        ii = m[la:ha + 1, lb:hb + 1].sum()
        t = np.array([[ii, rows - ii], [cols - ii, tot - rows - cols + ii]])
        if lam == 2:
            return float(ii)
        cons.append(((i, j), t))
    return cons


def answer_query(mats: dict[tuple[int, int], np.ndarray], q: RangeQuery) -> float:
    cons = _query_constraints(mats, q)
    if isinstance(cons, float):
        return cons
    lam = len(q.attrs)
    return float(ipf([2] * lam, cons)[(0,) * lam])


def answer_queries(mats: dict[tuple[int, int], np.ndarray], queries: Sequence[RangeQuery]) -> list[float]:
    """:func:`answer_query` of every query, the same numbers, the maximum-entropy fits of the queries of
    one dimension run together (:func:`shuffledp.tasks.marginals.ipf_many`)."""
    return answer_queries_many([mats], queries)[0]


def answer_queries_many(mats_of: Sequence[dict[tuple[int, int], np.ndarray]],
                        queries: Sequence[RangeQuery]) -> list[list[float]]:
    """:func:`answer_queries` for several sets of response matrices (a job's repetitions), each answer
    the one :func:`answer_query` gives it alone: the maximum-entropy fits of one query dimension, every
    set's, run together (:func:`shuffledp.tasks.marginals.ipf_many`)."""
    out: list[list[float | None]] = [[None] * len(queries) for _ in mats_of]
    by_dim: dict[int, list[tuple[int, int, list]]] = {}
    for r, mats in enumerate(mats_of):
        for k, q in enumerate(queries):
            cons = _query_constraints(mats, q)
            if isinstance(cons, float):
                out[r][k] = cons
            else:
                by_dim.setdefault(len(q.attrs), []).append((r, k, cons))
    for lam, items in by_dim.items():
        fits = ipf_many([2] * lam, [cons for _, _, cons in items])
        for (r, k, _), x in zip(items, fits, strict=True):
            out[r][k] = float(x[(0,) * lam])
    return out


def grid_mse(tables: list[np.ndarray], truth: list[np.ndarray]) -> float:
    """Mean over grids of the mean squared cell error (the seed's marginal MSE applied to grids)."""
    return float(np.mean([np.mean((np.asarray(t) - u) ** 2) for t, u in zip(tables, truth, strict=True)]))
