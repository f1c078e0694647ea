"""A SEARCHED ESTIMATE of the segmented protocol's single-item delta on its FULL output: the other
users' data messages kept, integer ``m`` only. Not a proven upper bound (see
docs/segmented.md, "Keeping the other users' messages"); the workflow's default stays ``sound``.

Model (padding sent, so every user holds exactly ``s`` items of the ``D`` items the blankets are
drawn over): the victim's set changes in one item, ``a`` -> ``b``; the victim sends it with
probability ``lam``; every user makes ``m`` blanket trials (integer ``m``: each sends one uniform
item of ``D``), ``T = n m`` in all; every other user sends each of its ``s`` items with the rate of
its level. What is proven (docs):

1. the victim's other ``s - 1`` messages are independent of the pair and identically distributed
   under both datasets: removing them can only increase the divergence;
2. a blanket landing outside ``{a, b}`` is uniform over the other ``D - 2`` items whatever the
   pair, so with no other user's message outside ``{a, b}`` the full output reduces exactly to
   ``(C_a, C_b, N)`` (``N`` the total message count);
3. the divergence grows with ``lam`` (joint convexity, 0 at ``lam = 0``).

What is NOT proven: that the other users' messages outside ``{a, b}`` can be summarised by their
number (the adversary also sees which items they fall on), and that the worst configuration of the
others' sets and levels lies in the family searched here: every other user at the same level
(each level's rate in turn), holding ``a`` (and, ``s >= 2``, ``a`` and ``b``) or neither, its other
items outside ``{a, b}``. The tests hold it against the exact enumeration of the full output
(tests/_oracle_segmented.py) at small sizes, every pair and every configuration.

The view evaluated: ``(C_a, C_b, N - T)`` with
``C_a = B_a + A + V_a``, ``C_b = B_b + B' + V_b``, ``N - T = A + B' + W + V`` (``(B_a, B_b)`` the
multinomial blanket counts of the two items, ``A``/``B'`` the others' messages on ``a``/``b``,
``W`` their messages elsewhere, ``V`` the victim's), as exact arrays; the blanket mass outside the
evaluated window is added to the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from shuffledp.accountants.special.poisson import single_item_target, solve_poisson_lambda

__all__ = ["CONFIGS", "full_delta_config", "full_delta_est", "full_lambdas_est", "FullLambdas", "level_counts_of"]

TAIL = 1e-14
MAX_CELLS = 4_000_000   # largest law array evaluated (32 MB); beyond it the trivial bound 1
CONFIGS = ("rest", "on_a", "on_ab")


@lru_cache(maxsize=64)
def _blanket2(T: int, D: int, tail: float):
    """``(lo, pmf)``: the law of ``(B_a, B_b)`` (multinomial, T trials, 1/D each) on the square
    ``[lo, hi]^2``; the mass outside it is ``1 - pmf.sum()`` (at most about ``2 tail``)."""
    p = 1.0 / D
    lo = int(stats.binom.ppf(tail, T, p))
    hi = int(stats.binom.isf(tail, T, p)) + 1
    lo, hi = max(lo - 1, 0), min(hi + 1, T)
    i = np.arange(lo, hi + 1)
    ii, jj = np.meshgrid(i, i, indexing="ij")
    ok = ii + jj <= T
    logp = np.full(ii.shape, -np.inf)
    a, b = ii[ok].astype(float), jj[ok].astype(float)
    from scipy.special import gammaln
    logp[ok] = (gammaln(T + 1.0) - gammaln(a + 1) - gammaln(b + 1) - gammaln(T - a - b + 1)
                + (a + b) * math.log(p) + (T - a - b) * math.log1p(-2 * p))
    return lo, np.exp(logp)


def _count_law(groups, tail: float):
    """``(pmf from 0, skipped mass)`` of a sum of independent binomials ``groups = [(count, rate)]``."""
    pmf = np.ones(1)
    skipped = 0.0
    for cnt, rate in groups:
        if cnt <= 0 or rate <= 0:
            continue
        if rate >= 1:
            # sent for sure: a fixed shift of the observed counts, the same under both datasets,
            # which leaves the divergence unchanged
            continue
        hi = int(stats.binom.isf(tail, cnt, rate)) + 1
        hi = min(hi, cnt)
        k = np.arange(hi + 1)
        q = stats.binom.pmf(k, cnt, rate)
        skipped += max(0.0, 1.0 - float(q.sum()))
        pmf = np.convolve(pmf, q)
    return pmf, skipped


def _shift_add(out, src, da, db, dn, w):
    if w == 0:
        return
    A, B, N = src.shape
    out[da:da + A, db:db + B, dn:dn + N] += w * src


def full_delta_config(lam: float, n: int, m: int, D: int, s: int, eps: float, rates_a, rates_b, rates_w,
                      tail: float = TAIL) -> float:
    """Upper end of the delta (both directions, max) of the view ``(C_a, C_b, N - T)`` of one
    configuration: ``rates_a``/``rates_b``/``rates_w`` are lists of ``(count, rate)`` of the
    other users' messages on ``a``, on ``b`` and elsewhere. Integer ``m >= 1`` only."""
    if lam <= 0:
        return 0.0
    T = n * int(m)
    lo, pb = _blanket2(T, D, tail)
    skipped = max(0.0, 1.0 - float(pb.sum()))
    pa, s1 = _count_law(rates_a, tail)
    pbb, s2 = _count_law(rates_b, tail)
    pw, s3 = _count_law(rates_w, tail)
    skipped += s1 + s2 + s3
    L = pb.shape[0]
    na, nb, nw = pa.size - 1, pbb.size - 1, pw.size - 1
    if (L + na + 1) * (L + nb + 1) * (na + nb + nw + 2) > MAX_CELLS:
        return 1.0      # too large to evaluate: reported as the trivial bound (the solver backs off)
    # law without the victim's message: axes (C_a - lo, C_b - lo, N - T), room for one more message
    base = np.zeros((L + na + 1, L + nb + 1, na + nb + nw + 2))
    core = np.zeros((L, L, nw + 1))
    core[:, :, :] = pb[:, :, None] * pw[None, None, :]
    tmp = np.zeros((L + na, L, na + nw + 1))
    for k in range(na + 1):
        _shift_add(tmp, core, k, 0, k, pa[k])
    for k in range(nb + 1):
        _shift_add(base, tmp, 0, k, k, pbb[k])
    ee = math.exp(eps)
    pa_shift = np.zeros_like(base)
    pb_shift = np.zeros_like(base)
    pa_shift[1:, :, 1:] = base[:-1, :, :-1]
    pb_shift[:, 1:, 1:] = base[:, :-1, :-1]
    P = (1 - lam) * base + lam * pa_shift
    Q = (1 - lam) * base + lam * pb_shift
    d1 = float(np.maximum(P - ee * Q, 0.0).sum())
    d2 = float(np.maximum(Q - ee * P, 0.0).sum())
    allowance = 1e-12 * float(P.sum() + ee * Q.sum())
    return min(1.0, max(d1, d2) + allowance + skipped)


def _configs(n: int, s: int, rate: float):
    """The searched family: every other user at ``rate``, holding ``a`` (s >= 1), ``a`` and ``b``
    (s >= 2) or neither; its other items outside ``{a, b}``."""
    return _group_configs([(n - 1, rate)], s)


def _group_configs(groups, s: int):
    """Every other user (``groups = [(count, rate)]``) in the same position: holding ``a``, ``a``
    and ``b`` (s >= 2) or neither; its other items outside ``{a, b}``."""
    g = [(c, r) for c, r in groups if c > 0]
    out = {"rest": ([], [], [(c * s, r) for c, r in g]),
           "on_a": (list(g), [], [(c * (s - 1), r) for c, r in g])}
    if s >= 2:
        out["on_ab"] = (list(g), list(g), [(c * (s - 2), r) for c, r in g])
    return out


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for k in range(total + 1):
        for rest in _compositions(total - k, parts - 1):
            yield (k, *rest)


def full_delta_est(lam: float, n: int, m: int, D: int, s: int, eps: float, other_rates,
                   tail: float = TAIL, *, mode: str = "pure", level_counts=None) -> tuple[float, str, object]:
    """``(delta, config, rates)``: the largest delta over the searched family, with the
    configuration attaining it. ``mode``:

    * ``"pure"``: every other user at one of ``other_rates`` (each in turn), all in the same
      position (rest / on_a / on_ab);
    * ``"split"`` (small n only): every split of the ``n - 1`` others over (rate x position
      ``a``, ``b``, ``a and b`` (s >= 2), neither), each position's users holding that and items
      outside ``{a, b}``;
    * ``"histogram"``: the others' levels as given by ``level_counts`` (``[(count, rate)]``, the
      level histogram without the victim), all in the same position."""
    best = (0.0, "", None)

    def consider(v, name, rates):
        nonlocal best
        if v > best[0]:
            best = (v, name, rates)

    if mode == "pure":
        for r in sorted(set(float(x) for x in other_rates)):
            for name, (ra, rb, rw) in _configs(n, s, r).items():
                consider(full_delta_config(lam, n, m, D, s, eps, ra, rb, rw, tail), name, r)
    elif mode == "histogram":
        for name, (ra, rb, rw) in _group_configs(level_counts, s).items():
            consider(full_delta_config(lam, n, m, D, s, eps, ra, rb, rw, tail), name, tuple(level_counts))
    elif mode == "split":
        rates = sorted(set(float(x) for x in other_rates))
        pos = ["a", "b", "ab", "rest"] if s >= 2 else ["a", "b", "rest"]
        cells = [(r, p) for r in rates for p in pos]
        if math.comb(n - 2 + len(cells), len(cells) - 1) > 20000:
            raise ValueError("full_delta_est: split mode is for small n only")
        for comp in _compositions(n - 1, len(cells)):
            ra, rb, rw = [], [], []
            for c, (r, p) in zip(comp, cells, strict=True):
                if c == 0:
                    continue
                if p in ("a", "ab"):
                    ra.append((c, r))
                if p in ("b", "ab"):
                    rb.append((c, r))
                rw.append((c * (s - {"a": 1, "b": 1, "ab": 2, "rest": 0}[p]), r))
            consider(full_delta_config(lam, n, m, D, s, eps, ra, rb, rw, tail), "split", comp)
    else:
        raise ValueError(f"mode {mode!r}")
    return best


@dataclass(frozen=True)
class FullLambdas:
    lambdas: list          # per level, verified against every searched configuration
    sound: list            # the sound accountant's lambdas (the start, and the fallback)
    improved: list         # per level: True when above the sound lambda
    iterations: int


def _largest(fn, target: float, lo: float, hi: float = 1.0, rtol: float = 1e-3) -> float:
    """Largest evaluated ``x`` in ``[lo, hi]`` with ``fn(x) <= target`` by bisection on log x
    (``fn(lo) <= target`` assumed; the answer is an evaluated feasible point)."""
    if fn(hi) <= target:
        return hi
    a, b = math.log(lo), math.log(hi)
    while b - a > rtol:
        mid = 0.5 * (a + b)
        if fn(math.exp(mid)) <= target:
            a = mid
        else:
            b = mid
    return math.exp(a)


def level_counts_of(n: int, shares) -> list[int]:
    """``n_k = floor(share_k n)``, the remainder to the last level (as the workflow assigns levels)."""
    counts = [int(math.floor(x * n)) for x in shares]
    counts[-1] += n - sum(counts)
    return counts


def full_lambdas_est(n: int, m: int, D: int, s: int, levels, delta: float, *, shares=None, rounds: int = 2,
                     rtol: float = 1e-2, tail: float = TAIL) -> FullLambdas:
    """Per-level rates by the searched estimate (integer ``m`` only). ``shares=None``: levels
    arbitrary (every other user may sit at any level: ``mode="pure"``); else the level histogram
    ``level_counts_of(n, shares)`` is fixed (``mode="histogram"``). Start from the ``sound`` rates
    (valid whatever the others do); each round raises each level's rate to the largest meeting its
    target against the searched family with the others at every rate vector met so far (the sound
    rates included) and the victim's own level at the candidate rate; at the end every level is
    verified against the final rates and a level that fails falls back to its ``sound`` rate
    (repeated until none fails)."""
    if int(m) != m or m < 1:
        raise ValueError("full_lambdas_est: integer m >= 1 only")
    m = int(m)
    K = len(levels)
    sound = [solve_poisson_lambda(n, m, D, s, e, delta).lam for e in levels]
    lam = list(sound)
    targets = [single_item_target(e, delta, s) for e in levels]
    counts = level_counts_of(n, shares) if shares is not None else None

    def dv(v, x, rates):
        rates = list(rates)
        rates[v] = x
        if counts is None:
            return full_delta_est(x, n, m, D, s, targets[v][0], rates, tail)[0]
        lc = [(counts[k] - (k == v), rates[k]) for k in range(K)]
        return full_delta_est(x, n, m, D, s, targets[v][0], rates, tail, mode="histogram", level_counts=lc)[0]

    if counts is None and max(sound) >= 1.0:
        # levels arbitrary and a level at rate 1: every other user may sit there and send all its
        # items, so its messages are fixed in number and hide nothing: the sound rates are exact
        return FullLambdas(list(sound), sound, [False] * K, 0)
    seen = [list(sound)]     # every rate vector met so far: the others are checked at each of them

    def worst(v, x):
        return max(dv(v, x, rates) for rates in seen)

    for _ in range(rounds):
        new = [_largest(lambda x, v=v: worst(v, x), targets[v][1], sound[v], rtol=rtol) for v in range(K)]
        if new == lam:
            break
        lam = new
        seen.append(list(lam))
    changed = True
    while changed:
        changed = False
        for v in range(K):
            if lam[v] > sound[v] and dv(v, lam[v], lam) > targets[v][1]:
                lam[v] = sound[v]
                changed = True
    return FullLambdas(lam, sound, [a > b for a, b in zip(lam, sound, strict=True)], rounds)
