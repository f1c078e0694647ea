"""k-way marginals through CALM (Zhang, Wang, Li, He, Chen, CCS 2018) with a pluggable frequency component.

CALM publishes a set of *views* (attribute subsets), makes them consistent and answers any marginal
from them. The multidimensional seed (Sec. 6.1.2) keeps the framework and swaps its frequency oracle:
each view is one "dimension" whose domain is the product of its attributes' domains, and the views'
joint frequencies are collected by MHM or FLAME (:mod:`shuffledp.tasks.frequency`).

Steps (each a function here):

1. :func:`select_views`: views of ``view_size`` attributes chosen greedily to cover every attribute
   pair (CALM covers all pairs; CALM picks the size from its error model, the seed gives no sizes: the
   size and the greedy rule are our choice, see docs/multidim_frameworks.md). Ties go to the view with
   the smallest domain, then lexicographically; views above ``max_cells`` cells are not used.
2. :func:`encode_views`: each user's cell of every view (mixed-radix code, ``numpy.ravel_multi_index``).
3. the frequency component estimates every view's cell frequencies.
4. :func:`postprocess`: CALM's post-processing, alternating Norm-Sub (:func:`norm_sub`, non-negative and
   summing to one) and overall consistency (:func:`consistency`), ending with consistency so that all
   views agree on every shared attribute subset and the total stays 1.
5. :func:`answer_marginal`: a marginal inside a view is its projection; otherwise the maximum-entropy
   distribution matching the views' projections on their intersections with the marginal's attributes,
   found by iterative proportional fitting (IPF converges to the maximum-entropy table with those margins).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence

import numpy as np

View = tuple[int, ...]


def view_domain(view: Sequence[int], domains: Sequence[int]) -> int:
    return int(math.prod(int(domains[a]) for a in view))


def select_views(domains: Sequence[int], view_size: int, max_cells: int | None = None) -> list[View]:
    """Greedy cover of all attribute pairs with ``view_size``-subsets (deterministic)."""
    d = len(domains)
    if d < 2:
        raise ValueError("select_views: need at least two attributes")
    size = min(int(view_size), d)
    if size < 2:
        raise ValueError("view_size: must be at least 2")
    cands = [v for v in itertools.combinations(range(d), size)
             if max_cells is None or view_domain(v, domains) <= max_cells]
    uncovered = set(itertools.combinations(range(d), 2))
    views: list[View] = []
    while uncovered:
        best, best_key = None, None
        for v in cands:
            gain = sum(1 for p in itertools.combinations(v, 2) if p in uncovered)
            if gain == 0:
                continue
            key = (-gain, view_domain(v, domains), v)
            if best_key is None or key < best_key:
                best, best_key = v, key
        if best is None:  # some pair fits in no view under max_cells: cover it by the pair itself
            pair = min(uncovered)
            if max_cells is not None and view_domain(pair, domains) > max_cells:
                raise ValueError(f"max_cells: {max_cells} is below the domain of attribute pair {pair}")
            best = pair
        views.append(best)
        uncovered -= set(itertools.combinations(best, 2))
    return views


def encode_views(data: np.ndarray, domains: Sequence[int], views: Sequence[View]) -> tuple[np.ndarray, list[int]]:
    """``(codes (n, m), view domains)``: each user's cell index in every view."""
    data = np.asarray(data, dtype=np.int64)
    cols = [np.ravel_multi_index(tuple(data[:, a] for a in v), tuple(int(domains[a]) for a in v)) for v in views]
    return np.stack(cols, axis=1).astype(np.int64), [view_domain(v, domains) for v in views]


def true_marginal(data: np.ndarray, domains: Sequence[int], attrs: Sequence[int]) -> np.ndarray:
    """Exact frequency table of ``attrs`` (shape = their domains), by counting."""
    data = np.asarray(data, dtype=np.int64)
    shape = tuple(int(domains[a]) for a in attrs)
    code = np.ravel_multi_index(tuple(data[:, a] for a in attrs), shape)
    return (np.bincount(code, minlength=int(math.prod(shape))) / data.shape[0]).reshape(shape)


def norm_sub(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """CALM's Norm-Sub: the non-negative vector summing to ``total`` obtained by zeroing negatives and
    subtracting one common amount from the positive cells (= Euclidean projection onto the simplex)."""
    x = np.asarray(v, dtype=float).ravel()
    if total <= 0:
        return np.zeros_like(x).reshape(np.shape(v))
    u = np.sort(x)[::-1]
    css = np.cumsum(u) - total
    ind = np.arange(1, x.size + 1)
    rho = np.nonzero(u - css / ind > 0)[0][-1]
    theta = css[rho] / (rho + 1)
    return np.maximum(x - theta, 0.0).reshape(np.shape(v))


def project(table: np.ndarray, view: View, sub: Sequence[int]) -> np.ndarray:
    """Marginal of ``table`` (axes = ``view``) on ``sub`` (a subset of ``view``, in ``sub``'s order)."""
    axes = tuple(i for i, a in enumerate(view) if a not in sub)
    out = table.sum(axis=axes) if axes else table
    kept = [a for a in view if a in sub]
    return np.transpose(out, [kept.index(a) for a in sub]) if list(sub) != kept else out


def _subsets_in_order(views: Sequence[View]) -> list[tuple[int, ...]]:
    """All non-empty intersections of two or more views, smaller sets first (CALM's order)."""
    sets = set()
    frontier = {frozenset(v) for v in views}
    for a, b in itertools.combinations(list(frontier), 2):
        s = a & b
        if s:
            sets.add(s)
    # intersections of intersections
    changed = True
    while changed:
        changed = False
        for a, b in itertools.combinations(list(sets), 2):
            s = a & b
            if s and s not in sets:
                sets.add(s)
                changed = True
    return sorted((tuple(sorted(s)) for s in sets), key=lambda s: (len(s), s))


def consistency(tables: list[np.ndarray], views: Sequence[View], domains: Sequence[int],
                cell_variance: Sequence[float] | None = None, *, total: bool = True) -> list[np.ndarray]:
    """CALM's overall consistency: every view gets the same marginal on every shared attribute subset.

    For a subset ``A`` (processed from small to large), each view ``V`` containing ``A`` has a projection
    whose cells sum ``|V|/|A|`` cells; the common target is the inverse-variance weighted mean of the
    projections (a cell of view ``V`` has variance ``cell_variance[V]``; the projection's variance is that
    times the cells summed), and the difference is spread evenly over the cells of ``V`` mapping to each
    cell of ``A``. With ``total`` the empty subset is included first (all views get the same total).
    Processing subsets in this order keeps earlier subsets consistent (a later adjustment sums to zero on
    them). Returns new arrays. (The subsets, their members and shapes depend on the views only:
    :func:`_consistency_plan`, computed once per set of views.)
    """
    out = [np.array(t, dtype=float).reshape([int(domains[a]) for a in v]) for t, v in zip(tables, views, strict=True)]
    var = np.ones(len(views)) if cell_variance is None else np.maximum(np.asarray(cell_variance, float), 1e-300)
    if np.all(np.asarray(var) <= 1e-300):
        var = np.ones(len(views))
    plan = _consistency_plan(tuple(tuple(int(a) for a in v) for v in views), tuple(int(c) for c in domains),
                             bool(total))
    for sub, members in plan:
        projs, weights = [], []
        for i, summed, _, _ in members:
            projs.append(project(out[i], views[i], sub) if sub else np.asarray(out[i].sum()))
            weights.append(1.0 / (var[i] * summed))
        w = np.asarray(weights) / np.sum(weights)
        target = sum(wi * p for wi, p in zip(w, projs, strict=True))
        for (i, summed, shape, perm), p in zip(members, projs, strict=True):
            diff = (target - p) / summed
            # broadcast diff (axes = sub) over the view's axes
            diff_t = np.transpose(diff, perm) if sub else diff
            out[i] = out[i] + np.reshape(diff_t, shape)
    return out


@functools.lru_cache(maxsize=64)
def _consistency_plan(views: tuple[View, ...], domains: tuple[int, ...], total: bool) -> tuple:
    """:func:`consistency`'s loop invariants: per subset with two or more member views (in CALM's order),
    each member's ``(index, cells summed, broadcast shape, axes order of the subset in the view)``."""
    plan = []
    for sub in ([()] if total else []) + _subsets_in_order(views):
        members = [i for i, v in enumerate(views) if set(sub) <= set(v)]
        if len(members) < 2:
            continue
        sub_cells = view_domain(sub, domains) if sub else 1
        rows = []
        for i in members:
            v = views[i]
            shape = [int(domains[a]) if a in sub else 1 for a in v]
            order = [a for a in v if a in sub]
            rows.append((i, view_domain(v, domains) / sub_cells, shape, [list(sub).index(a) for a in order]))
        plan.append((sub, rows))
    return tuple(plan)


def postprocess(estimates: list[np.ndarray], views: Sequence[View], domains: Sequence[int],
                cell_variance: Sequence[float] | None = None, rounds: int = 5) -> list[np.ndarray]:
    """CALM's post-processing: ``rounds`` of (Norm-Sub on each view, overall consistency)."""
    tables = [np.asarray(e, float).reshape([int(domains[a]) for a in v]) for e, v in zip(estimates, views, strict=True)]
    tables = consistency(tables, views, domains, cell_variance)
    for _ in range(rounds):
        tables = [norm_sub(t) for t in tables]
        tables = consistency(tables, views, domains, cell_variance)
    return tables


def ipf(shape: Sequence[int], constraints: list[tuple[tuple[int, ...], np.ndarray]], *, iters: int = 1000,
        tol: float = 1e-10) -> np.ndarray:
    """Maximum-entropy table of ``shape`` whose marginals on the given axes match the targets
    (iterative proportional fitting from the uniform table; targets are clipped at 0 and scaled to
    the common total)."""
    shape = tuple(int(s) for s in shape)
    x = np.full(shape, 1.0 / math.prod(shape))
    # each constraint's summed axes and broadcast shape, once (the loop is short arrays: its Python
    # overhead is most of its cost)
    plan = [(t, tuple(i for i in range(len(shape)) if i not in axes),
             tuple(shape[i] if i in axes else 1 for i in range(len(shape)))) for axes, t in _ipf_targets(constraints)]
    for _ in range(iters):
        worst = 0.0
        for t, other, bshape in plan:
            cur = x.sum(axis=other) if other else x
            worst = max(worst, float(np.abs(cur - t).max()))
            ratio = np.divide(t, cur, out=np.zeros(t.shape), where=cur > 0)
            x = x * ratio.reshape(bshape)
        if worst < tol:
            break
    return x


def _ipf_targets(constraints) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """:func:`ipf`'s constraints with their targets clipped at 0 and scaled to total 1."""
    cons = []
    for axes, tgt in constraints:
        if list(axes) != sorted(set(axes)):
            raise ValueError("ipf: constraint axes must be increasing")
        t = np.maximum(np.asarray(tgt, float), 0.0)
        s = t.sum()
        cons.append((tuple(axes), t / s if s > 0 else np.full(t.shape, 1.0 / t.size)))
    return cons


def ipf_many(shape: Sequence[int], problems: list[list[tuple[tuple[int, ...], np.ndarray]]], *, iters: int = 1000,
             tol: float = 1e-10) -> list[np.ndarray]:
    """:func:`ipf` of many problems of one ``shape`` at once, each problem's result bit for bit the
    result :func:`ipf` gives it alone (each stops at its own iteration; the arithmetic is elementwise
    except the margins). Batched where every problem has the same constraint axes; otherwise one at a
    time. A margin of the batch sums each problem's cells in the order :func:`ipf` sums them: the
    batch is a leading axis, outermost in the table and in the margin and never summed, so numpy's
    loops over the summed axes (sequential over an outer axis, pairwise along the innermost) are those
    of one problem (tests/test_multidim_frameworks.py checks ``==`` against :func:`ipf` on random
    shapes, axes, batch sizes and long innermost axes)."""
    shape = tuple(int(s) for s in shape)
    if not problems:
        return []
    axes_of = [tuple(tuple(a) for a, _ in p) for p in problems]
    if len(set(axes_of)) != 1:
        return [ipf(shape, p, iters=iters, tol=tol) for p in problems]
    cons = [_ipf_targets(p) for p in problems]
    q, ndim = len(problems), len(shape)
    targets = [np.stack([c[k][1] for c in cons]) for k in range(len(axes_of[0]))]
    plan = [(tuple(1 + i for i in range(ndim) if i not in axes),
             tuple(shape[i] if i in axes else 1 for i in range(ndim))) for axes in axes_of[0]]
    x = np.full((q, *shape), 1.0 / math.prod(shape))
    active = np.arange(q)
    xa = x.copy()  # the active problems' tables, and their targets (shrunk only when a problem stops)
    for _ in range(iters):
        worst = np.zeros(active.size)
        for (other, bshape), ta in zip(plan, targets, strict=True):
            cur = xa.sum(axis=other) if other else xa
            # ipf's max(worst, float(max |cur - t|)): a NaN deviation is ignored, as Python's max ignores it
            worst = np.fmax(worst, np.abs(cur - ta).reshape(active.size, -1).max(axis=1))
            ratio = np.divide(ta, cur, out=np.zeros_like(ta), where=cur > 0)
            np.multiply(xa, ratio.reshape((active.size, *bshape)), out=xa)  # in place: no new table per step
        done = worst < tol
        if done.any():
            x[active[done]] = xa[done]
            keep = ~done
            active, xa = active[keep], xa[keep]
            targets = [t[keep] for t in targets]
            if not active.size:
                break
    x[active] = xa
    return list(x)


def answer_marginal(tables: list[np.ndarray], views: Sequence[View], domains: Sequence[int],
                    attrs: Sequence[int]) -> np.ndarray:
    """The marginal on ``attrs`` (axes in that order) from post-processed view tables."""
    attrs = tuple(int(a) for a in attrs)
    for t, v in zip(tables, views, strict=True):
        if set(attrs) <= set(v):
            return project(t, v, attrs)
    return ipf([int(domains[a]) for a in attrs], _maxent_constraints(tables, views, attrs))


def _maxent_constraints(tables, views, attrs: tuple[int, ...]) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """The maximum-entropy fit's constraints: the views' projections on their (maximal) intersections
    with ``attrs``, axes numbered in ``attrs``."""
    inter = {}
    for t, v in zip(tables, views, strict=True):
        s = tuple(a for a in attrs if a in v)
        if s and s not in inter:
            inter[s] = project(t, v, s)
    keys = [s for s in inter if not any(set(s) < set(o) for o in inter)]
    return [(tuple(attrs.index(a) for a in s), inter[s]) for s in keys]


def answer_marginal_many(tables_of: Sequence[list[np.ndarray]], views: Sequence[View], domains: Sequence[int],
                         attrs: Sequence[int]) -> list[np.ndarray]:
    """:func:`answer_marginal` of one marginal for several sets of view tables (a job's repetitions),
    each answer bit for bit the one :func:`answer_marginal` gives that set alone: the maximum-entropy
    fits share their constraint axes and run batched (:func:`ipf_many`)."""
    attrs = tuple(int(a) for a in attrs)
    if any(set(attrs) <= set(v) for v in views) or len(tables_of) < 2:
        return [answer_marginal(t, views, domains, attrs) for t in tables_of]
    return ipf_many([int(domains[a]) for a in attrs], [_maxent_constraints(t, views, attrs) for t in tables_of])


def marginal_mse(est: np.ndarray, truth: np.ndarray) -> float:
    """The seed's per-marginal error: mean over cells of the squared error."""
    return float(np.mean((np.asarray(est) - np.asarray(truth)) ** 2))


def random_marginals(d: int, k: int, count: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``count`` distinct random ``k``-attribute sets (all of them when fewer exist), sorted attributes."""
    allsets = list(itertools.combinations(range(d), k))
    if count >= len(allsets):
        return allsets
    idx = rng.choice(len(allsets), size=count, replace=False)
    return [allsets[i] for i in sorted(idx)]
