"""Per-user privacy accounting of Algorithm 1 (Theorem 2 of the per-user-histogram paper), its
utility bound (Theorem 3) and budget split (Theorem 4).

Theorem 2 made concrete. For user i in group G and any subset Q of G that contains i, with
``r(Q)`` the largest L1 distance between two normalised true histograms of Q, the second copies of
Q's members are ``eps0 = (1 + r(Q)/c) * eps2``-LDP with respect to each other (proof of Thm 2), and
shuffling them is ``(A(eps0, |Q|, delta), delta)``-DP by an amplification-by-shuffling bound A
(Theorem 6 = the closed form of Feldman-McMillan-Talwar 2021, or their tighter numerical bound).
The first copy costs ``eps1`` without amplification (Theorem 1). Hence

    eps'_i = eps1 + min(eps2, min_Q A((1 + r(Q)/c) eps2, |Q|, delta)).

The minimum over all subsets Q is out of reach for big groups; :func:`per_user_eps` searches the
nested balls around the group's centre (mean true histogram): Q_m = the m members closest to the
centre, ``r(Q_m) <= 2 t_m`` with ``t_m`` the m-th smallest distance to the centre (triangle
inequality; also bounded by the L1 size of Q_m's bounding box; an upper bound of the diameter,
hence a valid but possibly loose bound), m on a geometric grid and Q_m containing i.
:func:`exact_min_eps` enumerates every subset for small groups (used in the tests to check the
heuristic never goes below the exact minimum).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

Amplifier = Callable[[float, int, float], float]


# ----------------------------------------------------------------------------------------------
# amplification bounds (delegated to accountants.clones; no duplicate implementation here)


def clones_amplifier(bound: str, *, eps0_ratio: float = 1.02) -> Amplifier:
    """``bound`` "closed" (Theorem 6 as printed = FMT21's Theorem 3.1 closed form; it returns eps0
    outside its regime eps0 <= log(n / (16 log(2/delta)))) or "numeric" (FMT21's tighter numerical
    clones bound), both from :mod:`shuffledp.accountants.upper.clones`.

    The numerical bound costs milliseconds per call, so ``eps0`` is rounded UP to the grid
    ``eps0_ratio**k`` and the result cached; the bound grows with eps0, so rounding up can only
    loosen it (never optimistic).

    The amplifier takes an optional ``cap``: a caller that uses the value only where it lies below
    ``cap`` (:func:`per_user_eps`: a subset whose bound is not below eps2 amplifies nothing) may get
    ``inf`` instead of any value >= ``cap``. The numerical bound then checks its delta at ``cap``
    first and skips the eps search when the bound exceeds ``cap`` (remembered per key for any
    later cap at or below it); a value below ``cap`` is the same number as without it."""
    from shuffledp.accountants.upper.clones import eps_clones

    cache: dict[tuple[float, int, float], float] = {}
    above: dict[tuple[float, int, float], float] = {}   # key -> a cap the bound is known to exceed
    if bound == "closed":
        def amp(eps0: float, n: int, delta: float, cap: float | None = None) -> float:
            if n < 2:
                return math.inf
            return float(eps_clones(eps0, n, delta, variant="fmt21", closed_form=True,
                                    closed_form_version="theorem"))
    elif bound == "numeric":
        lr = math.log(eps0_ratio)

        def amp(eps0: float, n: int, delta: float, cap: float | None = None) -> float:
            if n < 2:
                return math.inf
            e0 = eps0_ratio ** math.ceil(math.log(eps0) / lr - 1e-12)
            key = (e0, int(n), delta)
            if key in cache:
                return cache[key]
            if cap is not None and above.get(key, -math.inf) >= cap:
                return math.inf
            v = float(eps_clones(e0, n, delta, variant="fmt21", closed_form=False, cap=cap))
            if v == math.inf and cap is not None:
                above[key] = max(above.get(key, -math.inf), float(cap))
                return v
            cache[key] = v
            return v
    else:
        raise ValueError(f"bound: {bound!r} (closed|numeric)")
    amp.takes_cap = True   # type: ignore[attr-defined]  (see _prefix_values)
    return amp


def local_eps(eps2: float, r: float, c: float) -> float:
    """LDP level of the second copies within a subset of diameter r (proof of Theorem 2)."""
    return (1.0 + r / c) * eps2


# ----------------------------------------------------------------------------------------------
# per-user eps'


def group_centre_distances(hbar: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """L1 distance of every user's true histogram to the mean true histogram of its group."""
    labels = np.asarray(labels)
    g = labels.max() + 1
    # per-group sums, each accumulated in user order (as np.add.at would, at a fraction of its cost)
    sums = np.stack([np.bincount(labels, weights=hbar[:, j], minlength=g) for j in range(hbar.shape[1])], axis=1)
    cnt = np.bincount(labels, minlength=g)
    centres = sums / np.maximum(cnt, 1)[:, None]
    return np.abs(hbar - centres[labels]).sum(axis=1)


def per_user_eps(hbar: np.ndarray, labels: np.ndarray, eps1: float, eps2: float, c: float,
                 delta: float, amplifier: Amplifier, *, grid_points: int = 16,
                 max_eps0: float = 60.0) -> dict[str, np.ndarray]:
    """eps' of every user (see the module docstring). ``labels``: the shuffler's groups.

    Candidates whose local level ``eps0`` exceeds ``max_eps0`` or ``log|Q| + 1`` are skipped
    (skipping a candidate can only raise a user's bound). Returns arrays ``eps_prime``,
    ``eps_shuffle`` (the amplified part, ``<= eps2``), ``group_size``, ``dist_centre``, ``q_size``
    and ``q_radius`` (the chosen subset's size and diameter bound; 1 and 0 where no subset amplifies).
    """
    return per_user_eps_bounds(hbar, labels, eps1, eps2, c, delta, {"": amplifier}, grid_points=grid_points,
                               max_eps0=max_eps0)[""]


def per_user_eps_bounds(hbar: np.ndarray, labels: np.ndarray, eps1: float, eps2: float, c: float,
                        delta: float, amplifiers: dict[str, Amplifier], *, grid_points: int = 16,
                        max_eps0: float = 60.0) -> dict[str, dict[str, np.ndarray]]:
    """:func:`per_user_eps` under each of several amplification bounds (``amplifiers``: name to
    amplifier), one result per name: the groups' geometry (distances to the centre, nested prefixes
    and their diameter bounds) does not depend on the bound, so it is computed once for all."""
    for name, v in (("eps2", eps2), ("c", c), ("delta", delta)):
        if not v > 0:
            raise ValueError(f"{name}: must be > 0, got {v!r}")
    if eps1 < 0:
        raise ValueError(f"eps1: must be >= 0, got {eps1!r}")
    labels = np.asarray(labels)
    n = len(labels)
    dist = group_centre_distances(hbar, labels)
    order = np.lexsort((dist, labels))
    sizes = np.bincount(labels)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = {}
    for b in amplifiers:
        out[b] = {"eps_shuffle": np.full(n, float(eps2)), "q_size": np.ones(n, dtype=np.int64), "q_radius": np.zeros(n)}
    caches: dict[str, dict[tuple[float, int], tuple[float, float | None]]] = {b: {} for b in amplifiers}
    for gi in np.flatnonzero(sizes >= 2):
        G = int(sizes[gi])
        members = order[starts[gi] : starts[gi] + G]      # sorted by distance to the centre
        grid, r = _prefix_geometry(hbar[members], dist[members], G, grid_points)
        idx = np.searchsorted(grid, np.arange(G), side="right")   # first grid m with m > rank
        ok = idx < len(grid)
        for b, amplifier in amplifiers.items():
            vals = _prefix_values(grid, r, eps2, c, delta, amplifier, max_eps0, caches[b], suffix_min=True)
            # suffix minimum: member at rank k lies in Q_m for every m > k
            suf = np.minimum.accumulate(vals[::-1])[::-1]
            arg = _suffix_argmin(vals)
            best = np.full(G, math.inf)
            best[ok] = suf[idx[ok]]
            better = best < eps2
            sel = members[better]
            o = out[b]
            o["eps_shuffle"][sel] = best[better]
            chosen = arg[idx[better]]
            o["q_size"][sel] = grid[chosen]
            o["q_radius"][sel] = r[chosen]
    group_size = sizes[labels]
    return {b: {"eps_prime": eps1 + o["eps_shuffle"], "eps_shuffle": o["eps_shuffle"], "group_size": group_size,
                "dist_centre": dist, "q_size": o["q_size"], "q_radius": o["q_radius"]} for b, o in out.items()}


def _prefix_bounds(hm: np.ndarray, t: np.ndarray, G: int, eps2: float, c: float, delta: float,
                   amplifier: Amplifier, grid_points: int, max_eps0: float,
                   cache: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(grid, r, vals)`` of one group of :func:`per_user_eps` (``hm``, ``t``: its members'
    histograms and distances to the centre, sorted by distance): the prefix sizes ``m``, the
    diameter bound of each prefix ``Q_m`` and its amplified eps (``inf`` where skipped).
    ``cache`` maps ``(eps0, m)`` to the amplifier's value and the cap it was asked with; filled here."""
    grid, r = _prefix_geometry(hm, t, G, grid_points)
    return grid, r, _prefix_values(grid, r, eps2, c, delta, amplifier, max_eps0, cache)


def _prefix_geometry(hm: np.ndarray, t: np.ndarray, G: int, grid_points: int) -> tuple[np.ndarray, np.ndarray]:
    """``(grid, r)`` of :func:`_prefix_bounds`: the prefix sizes and their diameter bounds."""
    grid = np.unique(np.round(np.geomspace(2, G, num=min(grid_points, G - 1))).astype(np.int64))
    # diameter bounds of the prefix Q_m: 2 t_m (triangle inequality through the centre) and the
    # L1 size of the prefix's bounding box (|u-v|_1 <= sum_j (max_j - min_j)); both are upper
    # bounds, so their minimum is one too
    box = (np.maximum.accumulate(hm, axis=0) - np.minimum.accumulate(hm, axis=0)).sum(axis=1)
    r = np.minimum(np.minimum(2.0 * t[grid - 1], box[grid - 1]), 2.0)
    return grid, r


def _prefix_values(grid: np.ndarray, r: np.ndarray, eps2: float, c: float, delta: float,
                   amplifier: Amplifier, max_eps0: float, cache: dict, suffix_min: bool = False) -> np.ndarray:
    """The amplified eps of each prefix of :func:`_prefix_bounds` (``inf`` where skipped, and where
    an amplifier that takes a cap finds it not below ``eps2``).

    ``suffix_min`` (what :func:`per_user_eps_bounds` uses: only the suffix minima of the values and
    their :func:`_suffix_argmin` matter): the prefixes are visited from the last and an amplifier
    that takes a cap gets as its cap ``eps2``, or the next double above the smallest value found after
    the prefix when that is smaller, so a value above a later one may be ``inf`` (its search skipped);
    the suffix minima and their arguments are those of the full values (a value below the cap is the
    amplifier's uncapped number; a tie keeps its value, so the earliest index still wins)."""
    # only values below eps2 are used (a member's eps_shuffle is min(eps2, the prefixes' values)), so
    # an amplifier that takes a cap (clones_amplifier's) may answer inf for any value >= eps2
    takes_cap = getattr(amplifier, "takes_cap", False)
    vals = np.full(len(grid), math.inf)
    cur = float(eps2)   # the cap: eps2, then just above the smallest value after the prefix (a tie keeps its value)
    for j in (range(len(grid) - 1, -1, -1) if suffix_min and takes_cap else range(len(grid))):
        m, rr = grid[j], r[j]
        e0 = local_eps(eps2, float(rr), c)
        if e0 > max_eps0 or e0 > math.log(m) + 1.0:
            continue   # e^eps0 > e*|Q|: (almost) no clone; skipping only raises the bound
        key = (e0, int(m))
        cap = cur if takes_cap else None
        got = cache.get(key)   # (value, the cap it was asked with): inf is an answer below that cap only
        if got is None or (got[0] == math.inf and cap is not None and got[1] is not None and got[1] < cap):
            got = (amplifier(e0, int(m), delta, **({} if cap is None else {"cap": cap})), cap)
            cache[key] = got
        vals[j] = got[0]
        if suffix_min and vals[j] < cur:
            cur = float(np.nextafter(vals[j], math.inf))
    return vals


def _suffix_argmin(vals: np.ndarray) -> np.ndarray:
    out = np.empty(len(vals), dtype=np.int64)
    best, bi = math.inf, len(vals) - 1
    for j in range(len(vals) - 1, -1, -1):
        if vals[j] <= best:
            best, bi = vals[j], j
        out[j] = bi
    return out


def exact_min_eps(hbar_group: np.ndarray, i: int, eps1: float, eps2: float, c: float, delta: float,
                  amplifier: Amplifier) -> float:
    """Theorem 2's eps' for member ``i`` of a small group, minimising over EVERY subset Q with i in Q
    and the exact diameter r(Q). Exponential in the group size (tests only, size <= 14)."""
    G = len(hbar_group)
    if G > 14:
        raise ValueError("hbar_group: exact enumeration limited to groups of at most 14")
    D = np.abs(hbar_group[:, None, :] - hbar_group[None, :, :]).sum(axis=2)
    others = [j for j in range(G) if j != i]
    best = float(eps2)
    for size in range(1, G):
        for sub in itertools.combinations(others, size):
            q = (i, *sub)
            rq = float(D[np.ix_(q, q)].max())
            best = min(best, amplifier(local_eps(eps2, rq, c), len(q), delta))
    return eps1 + best


# ----------------------------------------------------------------------------------------------
# Theorem 3 (utility) and Theorem 4 (budget split)


def column_orders(hbar: np.ndarray) -> np.ndarray:
    """The stable ascending order of every column of ``hbar`` (row ``j``: ``np.argsort(hbar[:, j],
    kind="stable")``): what :func:`mean_group_l1` sorts first, the same for every grouping of the
    same histograms, so a caller with many groupings computes it once."""
    return np.stack([np.argsort(hbar[:, j], kind="stable") for j in range(hbar.shape[1])])


def mean_group_l1(hbar: np.ndarray, labels: np.ndarray, col_orders: np.ndarray | None = None) -> np.ndarray:
    """For every user, the mean L1 distance of its true histogram to its group's members (itself
    included): Theorem 3's first term, exact, in O(n d log n) by sorting each coordinate.
    ``col_orders``: :func:`column_orders` of ``hbar`` (computed here when None)."""
    labels = np.asarray(labels)
    n, d = hbar.shape
    if col_orders is not None and col_orders.shape != (d, n):
        raise ValueError(f"col_orders: shape {col_orders.shape}, expected {(d, n)}")
    sizes = np.bincount(labels)
    total = np.zeros(n)
    starts_all = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # users sorted by group, whatever the column: the group of each sorted position and what follows
    grp = np.repeat(np.arange(len(sizes)), sizes)
    st = starts_all[grp]
    k = np.arange(n) - st                                                      # rank within group
    G = sizes[grp]
    rest = G - k - 1
    has_prev, prev, last = st > 0, np.maximum(st - 1, 0), st + G - 1
    # the order of np.lexsort((x, labels)), ties included (they decide which user gets which rank's
    # rounding): a stable sort by value, then a stable sort by group (radix on 16-bit labels)
    key = labels.astype(np.uint16) if len(sizes) <= 1 << 16 else labels
    for j in range(d):
        x = hbar[:, j]
        ox = np.argsort(x, kind="stable") if col_orders is None else col_orders[j]
        o = ox[np.argsort(key[ox], kind="stable")]
        xs = x[o]
        cs = np.cumsum(xs)
        first = np.where(has_prev, cs[prev], 0.0)
        before = cs - xs - first                                               # sum of earlier members
        gsum = cs[last] - first
        after = gsum - before - xs
        s = xs * k - before + after - xs * rest
        total[o] += s
    return total / sizes[labels]


def theorem3_noise_term(d: int, c: float, n: int, delta: float, eps1: float, eps2: float) -> float:
    """Theorem 3's second term 2 d c log(n/delta) / sqrt(eps1^2 + eps2^2)."""
    return 2.0 * d * c * math.log(n / delta) / math.sqrt(eps1 * eps1 + eps2 * eps2)


def theorem3_bound(hbar: np.ndarray, labels: np.ndarray, c: float, delta: float, eps1: float,
                   eps2: float, col_orders: np.ndarray | None = None) -> np.ndarray:
    """Theorem 3's per-user bound on E||H_hat - H_bar||_1 (``col_orders``: see :func:`mean_group_l1`)."""
    n, d = hbar.shape
    return mean_group_l1(hbar, labels, col_orders) + theorem3_noise_term(d, c, n, delta, eps1, eps2)


def theorem4_eps1(d: int, n: int, delta: float, R: float) -> float:
    """Theorem 4's split eps1 = 4 d log(n/delta) / R (R: separation in units of c)."""
    if not R > 0:
        raise ValueError(f"R: must be > 0, got {R!r}")
    return 4.0 * d * math.log(n / delta) / R


def separation_R(hbar: np.ndarray, clusters: np.ndarray, c: float) -> float:
    """A dataset-level prior for Theorem 4's R: the median over users of the L1 distance from the
    user's true histogram to the nearest centre of ANOTHER true cluster, in units of c."""
    clusters = np.asarray(clusters)
    g = clusters.max() + 1
    if g < 2:
        return 2.0 / c
    sums = np.zeros((g, hbar.shape[1]))
    np.add.at(sums, clusters, hbar)
    centres = sums / np.bincount(clusters, minlength=g)[:, None]
    D = np.stack([np.abs(hbar - centres[j]).sum(axis=1) for j in range(g)], axis=1)
    D[np.arange(len(hbar)), clusters] = np.inf
    return float(np.median(D.min(axis=1)) / c)
