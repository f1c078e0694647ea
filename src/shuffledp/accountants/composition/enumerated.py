"""One shuffle round's exact privacy profile at tiny n: every neighbouring pair of datasets enumerated.

The pair family
---------------
Datasets of ``n`` users with inputs in the randomizer's whole input domain (``D`` values); two are
neighbours when they differ in one user's input (the victim holds ``x`` in one, ``x'`` in the
other; the other ``n - 1`` users hold the same inputs in both). The shuffled output is the multiset
of the ``n`` reports. :func:`exact_profile` returns ``eps -> max`` over *every* such pair, in both
directions, of the hockey-stick divergence of the two shuffled outputs: the exact largest delta at
``eps`` of one round, no bound involved. Every pair is evaluated (no worst case is assumed), up to
the two exact reductions below.

Where it applies (the condition)
--------------------------------
A randomizer with a finite output whose law is symmetric under every permutation of the domain
that fixes ``x`` and ``x'``, and a known domain: k-RR (``D = k``), OUE (``D = d``), OLH over all
functions ``[D] -> [g]`` with ``--domain D`` given, subset-exp with ``s = 1`` (``D = d + 1`` items).
OLH without a domain is covered too, as ``D = n + 1`` (below). Elsewhere (general, mhm, subset-exp
with ``s >= 2``) :func:`applies` is False. It is also False beyond the enumeration budget:
:data:`CONFIGS_MAX` datasets of the others or :data:`GRID_CELLS_MAX` output multisets in all, more
than :data:`N_MAX` users or more than 12 inputs in use; there the caller does not use it (no
fallback). Up to :data:`CELLS_MAX` multisets every dataset's laws are kept and
:func:`exact_profile` answers at any eps; beyond, up to :data:`GRID_CELLS_MAX`,
:func:`profile_on_grid` evaluates the same largest divergence at a fixed set of eps (one dataset's
laws in memory at a time; a few CPU seconds at the top of that budget, e.g. subset-exp ``d = 4``,
``s = 1`` at eps0 = 0.5 and n = 12: 192 datasets, 56M multisets).

OLH without a domain (the neighbouring relation: every domain size ``D >= 2``). A pair of datasets
of ``n`` users uses at most ``n + 1`` inputs (the others' ``n - 1``, ``x`` and ``x'``). A report's
class given its input in use does not depend on ``D`` (the hash at every input is an independent
uniform value; "Sufficient reports" below), so a pair over any ``D`` is, up to renaming the inputs,
a pair over ``n + 1`` inputs with the same divergences, and every pair over ``n + 1`` inputs exists
wherever ``D >= n + 1``. The largest divergence over every domain is therefore that at
``D = n + 1`` (the profile is non-decreasing in ``D``: a smaller domain's pairs are among a larger
one's). Within the budget this reaches ``n <= 4`` only (``2^(n+1)`` classes).

Open (not used): whether the largest divergence is always attained with the others on at most one
value besides ``x`` and ``x'`` (then ``D = 3`` would do for every ``D``, and OLH without a domain
would be enumerated at n = 12). Exhaustive enumeration found no counterexample (OLH
``g = 3``: ``D = 4`` up to n = 8, ``D = 5`` at n = 5; OUE ``d = 4`` up to n = 8; subset-exp
``d = 4``, ``s = 1`` up to n = 7, and at n = 12, eps0 = 0.5 on 12 eps: equal;
pinned in ``tests/test_composition_enumerated.py``; a sweep of
OLH ``g = 2, 3, 5``, OUE ``d = 4``, k-RR ``k = 5``, subset-exp ``d = 4, 5`` at eps0 0.25 to 4 and
n = 4 to 8, 72 points: at most 7e-15 relative above, rounding; OLH without a domain, ``D = n + 1``
at n = 2, 3, 4, ``g = 2, 3, 5``, eps0 0.25 to 4, 100 eps each: at most 4.4e-16 above). A stronger
form holds at every point measured: for the same ``a`` and ``b``, the others' rest spread over two
or more third values is never above the same rest on one third value, at any eps in both
directions (OLH ``g = 2, 3, 5`` with ``D = 4`` up to n = 8 and ``D = n + 1`` up to n = 4, eps0
0.25 to 4; tested at a few points, OUE ``d = 4`` and subset-exp ``d = 4`` too), and the two are
equal (to 4e-15) near eps0, where only the outputs of the largest loss count: there is no slack to
spend at the top.

Why it is not used. By Blackwell's theorem for a pair of laws, that per-``(a, b)`` comparison at
every eps is equivalent to a channel, the same under ``x`` and ``x'``, from the outputs with the
rest on one value to those with the rest spread; none is known. The natural proof does not go
through: the others' marks on two values (one user each) are not a garbling of their marks on one
value as an experiment about which reports are theirs (the garbling's linear program is infeasible
at n = 4 for every OLH/OUE ``(p, q)`` tried), so such a channel would have to read the reports'
marks at ``x`` and ``x'`` too, except with the victim alone there (``a = b = 0``): then "which
report is the victim's" with the rest spread is a garbling of the same with the rest on one value at
every case tried (linear program; n = 3, 4, every partition, OLH ``g = 3`` at eps0 0.5 and 1,
``g = 2`` at 1; n = 5, parts 2 + 2 and 3 + 1, ``g = 3``, eps0 = 1; and not the other way round), so
those pairs are dominated there; a construction for every n is not known. That case matters: at OLH
``g = 3``, eps0 = 1, n = 12 the restricted profile's largest pair has ``a = b = 0`` and the rest on
one value up to eps between 0.54 and 0.60, and all the others at ``x`` above. (An observation for
such a proof: an OLH report is the OR of independent ``Bern(1/g)`` marks with a mark forced at its
user's input with probability ``(p - q) / (1 - q)``, so the shuffled output is a garbling, the same
for every dataset, of the forced marks' counts per input; the third values' counts sum to the same
binomial law whether the rest is on one value or spread, only their placement over the inputs
differs.) Nor does a clone bound close the gap: writing each user on a value ``t`` beyond the
largest third one as a mixture of a report that carries ``t`` and pure noise (OLH: the bit at ``t``
set with probability ``(p - q) / (1 - q)``; subset-exp: a subset holding ``t``), revealing the first
kind and enumerating the rest exactly over ``x``, ``x'`` and one third value is sound, but above the
largest restricted pair's delta at some eps: 1.09x at eps = 0 to 10.8x at eps = 0.9 (OLH ``g = 3``,
eps0 = 1, n = 12), up to 1.87x (subset-exp ``d = 4``, eps0 = 0.5, n = 12), so it cannot stand in for
the datasets it bounds. The published decompositions (clones, the privacy blanket and the optimal
one among them, Su, Cheng and Wang) bound every dataset at once from the randomizer alone, and
:func:`shuffledp.accountants.best.round_delta` already evaluates the optimal one, so none is below
the curve's profile for OLH without a domain.

What a proof would need (OLH; the reduction is proved, the lemma it leaves is open). Read a report
as the set of inputs in use that its hash maps to the reported value, and the output as the rows
in a uniformly random order (equivalent to the multiset). Split each row into ``alpha``, its bits at
``x`` and ``x'``, and ``beta``, its bits at the third values. The victim and the others at ``x`` or
``x'`` have ``beta`` iid ``Bern(1/g)``; the others on third values have ``alpha`` iid
``Bern(1/g)``, independent of their ``beta``. Hence (1) the rows' ``beta`` have the same law under
``x`` and ``x'``; (2) given ``beta``, the set ``R`` of rows that hold the others on third values
has a posterior ``rho`` that depends on the partition ``lambda`` and not on ``(a, b)``, and given
``R`` the ``alpha`` have a law ``P^R`` (``Q^R``) that depends on ``(a, b)`` and not on
``lambda`` (``R``'s rows ``Bern(1/g)``, the victim, ``a`` at ``x`` and ``b`` at ``x'`` in a random
order on the other rows). The hockey-stick divergence of a pair whose second part has the same law
under both is the expectation of the conditional divergences, so, exactly,

    delta_{a, b, lambda}(eps) = E_beta[ phi_eps^{a, b}(rho_lambda(beta)) ],
    phi_eps^{a, b}(rho) = H_eps( sum_R rho(R) P^R || sum_R rho(R) Q^R ),

both directions alike, ``phi`` convex in ``rho`` (the hockey stick is jointly convex) and symmetric
under permutations of the rows (pinned against ``pair_laws`` at n = 4 in
``tests/test_composition_enumerated.py``). At ``a = b = 0`` (the victim alone off third values,
``R`` the rows other than the victim's) ``phi(rho) = E[(sum_j rho_j Z_j)_+]`` with ``Z_j`` iid
(``Z = (f_x - e^eps f_x') / f_0`` at a row's ``alpha`` drawn from ``f_0 = Bern(1/g)^2``): a
Schur-convex function of the victim-row posterior. Consequences. (i) A sufficient condition for the
per-``(a, b)`` form is Blackwell's order of the ``beta``-experiments about ``R`` (rest on one value
more informative than spread); at ``a = b = 0`` this is the victim-row garbling above (feasible at
n <= 5), but for ``a + b >= 1`` it is false: at n = 4, ``l = 2`` (OLH ``g = 3``, eps0 = 0.5) it
is the marks garbling whose program is infeasible (``test_open_natural_proof_fails_at_four_users``).
A proof for ``a + b >= 1`` must therefore use the particular functions ``phi^{a, b}``, not the
``beta``-experiment alone. (ii) The missing lemma, in its weakest form that would license enumerating OLH without a
domain at ``D = 3``: for every n, eps >= 0 and ``(a, b, lambda)`` with ``lambda`` of two or more
parts, ``E[phi_eps^{a, b}(rho_lambda)] <= max over (a', b', l') of E[phi_eps^{a', b'}(rho_(l'))]``
(the right side is the restricted profile). Neither it nor the per-``(a, b)`` form is proved here;
no bound uses either. (iii) Bounds that are proved for every n -- reveal the others on third values
that carry a forced mark outside one kept part, joint convexity over which carry one, enumerate the
rest over ``x``, ``x'``, the kept value and pure-noise rows -- are the clone bound above: at OLH
``g = 3``, eps0 = 1, n = 12, the largest over every partition of the best kept part is 1.09x the
restricted profile at eps = 0 and 11x at eps = 0.9 (the worst partition: the rest all on different
values), so they cannot stand in for the spread datasets. Nor does the sound combination close the
point: the exact profile for the datasets with at most one third value and, for the others, the
smaller of that bound and :func:`shuffledp.accountants.best.round_delta` composes at T = 10,
delta = 1e-6 to 1.17 of the exact worst pair (1.21 with ``round_delta`` alone, 1.03 with the
restricted profile), short of 1.10 and at about 25 CPU s for its 1,013 laws; not implemented.

Exact reductions
----------------
* **Symmetry.** Only which others share an input matters, not the input's name: the others are
  ``a`` at ``x``, ``b`` at ``x'`` and the rest at third values in a non-increasing partition
  ``l1 >= l2 >= ...`` (at most ``D - 2`` parts); the permutation that renames the third values maps
  the outputs of one dataset onto those of any other with the same counts. Renaming ``x`` and
  ``x'`` maps ``(a, b, l)`` to ``(b, a, l)`` with the two directions exchanged; both directions
  are evaluated, so ``b <= a`` suffices.
* **Sufficient reports.** Only ``u = 2 + min(D - 2, n - 1)`` inputs can be in use. A report is
  replaced by its class: k-RR: the value when it is in use, else "another value"; OUE: the bits of
  the inputs in use; OLH: which inputs in use the hash maps to the reported value; subset-exp: which
  items in use the reported subset meets. In each case the report's law given its class is the same
  for every input in use (the rest of the report is independent noise: the bits of other values,
  the hash at other values, the subset's other items), so the multiset of classes is sufficient
  for every pair of datasets using those inputs and the divergences are unchanged.

The law of the multiset of classes is the exact convolution of the users' class laws over
compositions of ``n`` (sums of positive terms; relative rounding of a few ulps per user).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

__all__ = ["CONFIGS_MAX", "CELLS_MAX", "GRID_CELLS_MAX", "GRID_POINTS", "N_MAX", "domain_size", "class_matrix",
           "configurations", "size", "applies", "stored", "pair_laws", "exact_profile", "profile_on_grid"]

CONFIGS_MAX = 1_000     # datasets of the others (up to symmetry) enumerated at most (~1 ms each)
N_MAX = 200             # users at most (the depth-first walk adds ~n^3 / 6 users where D = 2, 3)
CELLS_MAX = 5_000_000   # output multisets, summed over those datasets, kept for exact_profile (memory: ~120 MB)
GRID_CELLS_MAX = 60_000_000   # ... one dataset at a time on a grid (profile_on_grid): 3-10 CPU s, 0.1-0.5 GB
#                                 at the top (measured under load 12: subset-exp d = 4, n = 12; OUE d = 5, n = 6)
GRID_POINTS = 129       # profile_on_grid's points: evenly spaced on [0, eps0]
DELTA_RTOL = 1e-12      # every delta raised by this relative amount (convolution rounding: ~n ulps)
LOSS_SLACK = 1e-12      # the delta at eps is evaluated at eps - this (the losses' rounding: ~1e-15)


def domain_size(mechanism: str, params: dict, n: int | None = None) -> int | None:
    """``D``, the number of inputs (module docstring), or None where the profile does not apply.
    OLH without a domain: ``n + 1`` (every domain's pairs, module docstring), None without ``n``."""
    if mechanism == "krr":
        return int(params["k"])
    if mechanism == "oue":
        return int(params["d"])
    if mechanism == "olh":
        if params.get("domain") is not None:
            return int(params["domain"])
        return None if n is None else int(n) + 1
    if mechanism == "subset-exp" and params.get("s") == 1:
        return int(params["d"]) + 1
    return None


def class_matrix(mechanism: str, eps0: float, params: dict, u: int) -> np.ndarray:
    """``(u, classes)``: row ``v`` the law of a report's class (module docstring) given input ``v``
    of the ``u`` inputs in use (0 is ``x``, 1 is ``x'``, the rest third values)."""
    e = math.exp(eps0)
    big = domain_size(mechanism, params)
    if mechanism == "krr":
        hi, lo = e / (e + big - 1.0), 1.0 / (e + big - 1.0)
        mat = np.full((u, u), lo)
        np.fill_diagonal(mat, hi)
        return mat if big == u else np.hstack([mat, np.full((u, 1), (big - u) * lo)])
    pats = np.array(list(itertools.product((0, 1), repeat=u)), dtype=bool)   # classes: subsets of the inputs
    size_t = pats.sum(axis=1)
    mat = np.empty((u, len(pats)))
    if mechanism == "oue":
        p, q = 0.5, 1.0 / (e + 1.0)
        for v in range(u):
            bit = np.where(pats, q, 1.0 - q)
            bit[:, v] = np.where(pats[:, v], p, 1.0 - p)
            mat[v] = bit.prod(axis=1)
    elif mechanism == "olh":
        g = int(params["g"])
        hi = e / (e + g - 1.0)
        for v in range(u):   # y = h(v) w.p. hi; the hash at other inputs in use: iid uniform
            rest = size_t - pats[:, v]
            others = (1.0 / g) ** rest * (1.0 - 1.0 / g) ** (u - 1 - rest)
            mat[v] = np.where(pats[:, v], hi, 1.0 - hi) * others
    elif mechanism == "subset-exp":
        k = int(params["k"])
        omega = math.comb(big - 1, k) + (math.comb(big, k) - math.comb(big - 1, k)) * e
        count = np.array([math.comb(big - u, k - int(t)) if 0 <= k - t <= big - u else 0 for t in size_t], float)
        for v in range(u):
            mat[v] = count * np.where(pats[:, v], e, 1.0) / omega
    else:
        raise ValueError(f"no class matrix for {mechanism!r}")
    keep = mat.sum(axis=0) > 0
    return mat[:, keep]


def _partitions(total: int, parts: int, cap: int):
    """Non-increasing partitions of ``total`` into at most ``parts`` parts, each at most ``cap``."""
    if total == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(min(total, cap), 0, -1):
        for rest in _partitions(total - first, parts - 1, first):
            yield (first, *rest)


def configurations(n: int, big: int):
    """Every dataset of the others up to symmetry: ``(a, b, partition)`` (module docstring)."""
    for a in range(n):
        for rest in range(n - a if big > 2 else 1):   # the others at third values
            if n - 1 - a - rest <= a:   # b <= a: the mirror image (module docstring)
                yield from ((a, n - 1 - a - rest, part) for part in _partitions(rest, big - 2, n))


def _in_use(n: int, big: int) -> int:
    return 2 + min(big - 2, n - 1)


def size(mechanism: str, eps0: float, n: int, params: dict) -> tuple[int, int] | None:
    """``(configurations, output multisets in all)``, or None where the profile does not apply."""
    big = domain_size(mechanism, params, n)
    if big is None or big < 2 or not 1 <= n <= N_MAX:
        return None
    u = _in_use(n, big)
    if u > 12:
        return None
    configs = sum(1 for _ in itertools.islice(configurations(n, big), CONFIGS_MAX + 1))
    classes = class_matrix(mechanism, eps0, params, u).shape[1]
    return configs, configs * math.comb(n + classes - 1, classes - 1)


def applies(mechanism: str, eps0: float, n: int, params: dict) -> bool:
    """The profile is exact and within the budget here (module docstring): :func:`exact_profile`
    where :func:`stored`, else :func:`profile_on_grid` (up to :data:`GRID_CELLS_MAX`)."""
    got = size(mechanism, eps0, n, params)
    return got is not None and got[0] <= CONFIGS_MAX and got[1] <= GRID_CELLS_MAX


def stored(mechanism: str, eps0: float, n: int, params: dict) -> bool:
    """Within :data:`CELLS_MAX`: every configuration's laws kept, the profile at any eps
    (:func:`exact_profile`)."""
    got = size(mechanism, eps0, n, params)
    return got is not None and got[0] <= CONFIGS_MAX and got[1] <= CELLS_MAX


class _Lattice:
    """Compositions of ``j = 0 .. n`` into ``m`` parts (codes in base ``n + 1``, sorted) and the
    index of ``c + e_y`` for each composition ``c`` of ``j``."""

    def __init__(self, n: int, m: int):
        powers = (n + 1) ** np.arange(m, dtype=np.int64)
        self.codes = [np.zeros(1, dtype=np.int64)]
        self.succ = []
        for _ in range(n):
            nxt = np.unique((self.codes[-1][:, None] + powers[None, :]).ravel())
            self.succ.append(np.searchsorted(nxt, self.codes[-1][:, None] + powers[None, :]))
            self.codes.append(nxt)

    def add(self, pmf: np.ndarray, j: int, law: np.ndarray) -> np.ndarray:
        """The law after one more user (``pmf`` over compositions of ``j``; ``law`` over classes)."""
        return np.bincount(self.succ[j].ravel(), weights=(pmf[:, None] * law[None, :]).ravel(),
                           minlength=self.codes[j + 1].size)


def pair_laws(mechanism: str, eps0: float, n: int, params: dict):
    """Yield ``((a, b, partition), P, Q)`` for every configuration: the exact laws of the multiset
    of classes with the victim at ``x`` (``P``) and at ``x'`` (``Q``). Shared prefixes of the
    configurations are convolved once (depth-first)."""
    big = domain_size(mechanism, params, n)
    u = _in_use(n, big)
    mat = class_matrix(mechanism, eps0, params, u)
    lat = _Lattice(n, mat.shape[1])

    def walk(pmf, j, slot, cap, counts):
        if j == n - 1:
            full = [*counts, 0, 0][:max(2, len(counts))]
            yield (full[0], full[1], tuple(full[2:])), lat.add(pmf, j, mat[0]), lat.add(pmf, j, mat[1])
            return
        if slot >= u:
            return
        if slot < 2:   # b <= a (the mirror image), the third values' counts non-increasing
            yield from walk(pmf, j, slot + 1, 0 if slot == 0 else n, [*counts, 0])
        top = min(n - 1 - j, cap)
        for c in range(1, top + 1):
            pmf = lat.add(pmf, j + c - 1, mat[slot])
            yield from walk(pmf, j + c, slot + 1, n if slot == 1 else c, [*counts, c])

    yield from walk(np.ones(1), 0, 0, n, [])


def _sums(P: np.ndarray, Q: np.ndarray):
    """``(losses log P/Q sorted, P-mass and Q-mass at positions >= i, at positions < i, allowance)``:
    the allowance ``2 N u`` bounds the relative rounding of the ``N``-term cumulative sums."""
    L = np.log(P) - np.log(Q)
    order = np.argsort(L)
    L, P, Q = L[order], P[order], Q[order]
    zero = np.zeros(1)
    up = (np.concatenate([np.cumsum(P[::-1])[::-1], zero]), np.concatenate([np.cumsum(Q[::-1])[::-1], zero]))
    down = (np.concatenate([zero, np.cumsum(P)]), np.concatenate([zero, np.cumsum(Q)]))
    return L, up, down, 2.0 * L.size * np.finfo(float).eps


def exact_profile(mechanism: str, eps0: float, n: int, params: dict) -> Callable[[float], float]:
    """``eps -> `` the largest delta at ``eps`` over every neighbouring pair and both directions
    (module docstring), raised by :data:`DELTA_RTOL` of itself and read at ``eps -``
    :data:`LOSS_SLACK`; refuses outside :func:`applies`."""
    if not stored(mechanism, eps0, n, params):
        raise ValueError(f"the exact profile of {mechanism} at n = {n} ({params}) is not enumerated here")
    data = []
    for _, P, Q in pair_laws(mechanism, eps0, n, params):
        if np.any(P <= 0) or np.any(Q <= 0):
            raise ValueError("an output class without mass: the class matrix is not positive")
        data.append(_sums(P, Q))

    def delta_at(eps: float) -> float:
        eps = eps - LOSS_SLACK   # a smaller eps: a larger delta, covering the losses' rounding
        w = math.exp(eps)
        best = 0.0
        for L, (ap, aq), (bp, bq), allow in data:
            i = int(np.searchsorted(L, eps, side="right"))    # P || Q: the losses above eps
            j = int(np.searchsorted(L, -eps, side="left"))    # Q || P: the losses below -eps
            best = max(best, ap[i] - w * aq[i] + allow * (ap[i] + w * aq[i]),
                       bq[j] - w * bp[j] + allow * (bq[j] + w * bp[j]))
        return min(1.0, best * (1.0 + DELTA_RTOL))

    return delta_at


def _edges_below(edges: np.ndarray, loss: np.ndarray) -> np.ndarray:
    """How many ``edges`` (increasing) are strictly below each loss: ``searchsorted(edges, loss,
    "left")``; evenly spaced edges by one division, then moved until exact (checked)."""
    step = (edges[-1] - edges[0]) / (edges.size - 1) if edges.size > 1 else 0.0
    if not step > 0 or not np.allclose(np.diff(edges), step, rtol=1e-9, atol=0.0):
        return np.searchsorted(edges, loss, side="left")
    ext = np.concatenate([[-np.inf], edges, [np.inf]])   # ext[i] = edges[i - 1]
    idx = np.clip(np.ceil((loss - edges[0]) / step), 0, edges.size).astype(np.int64)
    for _ in range(4):   # the division's rounding: at most one position off
        up = ext[idx + 1] < loss          # edges[idx] below the loss: one more
        down = ext[idx] >= loss           # edges[idx - 1] not below: one fewer
        if not (up.any() or down.any()):
            return idx
        idx += up.astype(np.int64) - down.astype(np.int64)
    return np.searchsorted(edges, loss, side="left")


def profile_on_grid(mechanism: str, eps0: float, n: int, params: dict, eps_points=None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(eps points, deltas)``: at each point (``>= 0``; default :data:`GRID_POINTS` evenly
    spaced on ``[0, eps0]``) the largest delta over every neighbouring pair and both directions,
    as :func:`exact_profile` gives it (the same allowances), but one configuration at a time:
    only the sums of ``P`` and ``Q`` over the losses between two consecutive points are kept, so
    the memory is one configuration's laws and the budget is :data:`GRID_CELLS_MAX`. Exact at
    the points (no rounding of the losses: a point is a bin edge)."""
    if not applies(mechanism, eps0, n, params):
        raise ValueError(f"the exact profile of {mechanism} at n = {n} ({params}) is not enumerated here")
    pts = np.linspace(0.0, float(eps0), GRID_POINTS) if eps_points is None else np.asarray(eps_points, float)
    if pts.ndim != 1 or np.any(pts < 0) or np.any(np.diff(pts) <= 0):
        raise ValueError("eps_points must be increasing and >= 0")
    edges = pts - LOSS_SLACK            # a smaller eps: a larger delta (exact_profile's slack)
    w = np.exp(edges)
    best = np.zeros(pts.size)
    eps_m = np.finfo(float).eps
    for _, P, Q in pair_laws(mechanism, eps0, n, params):
        if np.any(P <= 0) or np.any(Q <= 0):
            raise ValueError("an output class without mass: the class matrix is not positive")
        L = np.log(P) - np.log(Q)
        allow = 2.0 * L.size * eps_m
        for loss, A, B in ((L, P, Q), (-L, Q, P)):   # A || B: the losses of A over B above each point
            above = _edges_below(edges, loss)
            a = np.cumsum(np.bincount(above, weights=A, minlength=pts.size + 1)[::-1])[::-1][1:]
            b = np.cumsum(np.bincount(above, weights=B, minlength=pts.size + 1)[::-1])[::-1][1:]
            best = np.maximum(best, a - w * b + allow * (a + w * b))
    return pts, np.minimum(1.0, np.maximum(best, 0.0) * (1.0 + DELTA_RTOL))
