"""Personalised budgets with MHM: OGM (Algorithm 3) and NOGM (one group per budget).

Both take per-user budgets ``(eps_i, delta_i)`` and combine their MHM estimates by inverse-variance
weighting: the combined estimate of every frequency is ``sum_r w_r F_r`` with ``w_r ~ 1 / Var_r``.
``weighting="lemma4"`` (default) takes ``Var_r`` = the invocation's exact expected per-attribute-averaged
MSE (Lemma 4 averaged over each attribute's values, data-independent because frequencies sum to 1);
``weighting="eq2"`` takes Eq. (2)'s approximation ``q(1-q)/(n(p-q)^2)``, which drops the term that
dominates at large eps_l (with Eq. (3)'s g, p is about 1/(2d) whatever eps_l) and then over-weights
the high-budget invocations.

OGM: while users remain, take the componentwise minimum remaining budget ``(x, y)`` over the remaining
users, run MHM on ALL remaining users under ``(x, y)``, subtract it from everyone's remaining budget,
and drop users whose remaining ``eps`` or ``delta`` reaches 0 (a user with ``eps`` left but no
``delta`` cannot take part in a blanket-based round). Sequential composition is accounted exactly:
budgets are converted to ``fractions.Fraction`` (exact binary values of the floats), remaining budgets
are exact, and the float passed to MHM is rounded DOWN, so the exact sum of what a user spends never
exceeds her budget (:func:`check_ledger`).

NOGM: users with the same budget form a group; MHM runs once per group (disjoint users).

Each round (group) estimates the frequencies among ITS users; the combination estimates the
population's frequencies when budgets are assigned independently of the data (as in the paper's
experiment, where users are split at random).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from shuffledp.protocols.mhm import approx_variance, expected_mse, mhm_eps_local, run_mhm


def _float_down(x: Fraction) -> float:
    f = float(x)
    if Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return max(f, 0.0)


@dataclass
class Round:
    users: int
    eps: float
    delta: float
    eps_l: float
    g: int
    variance: float
    members: np.ndarray  # budget-class ids taking part


@dataclass
class GroupResult:
    estimates: list[np.ndarray]
    rounds: list[Round]
    weights: list[float]
    spent: dict = field(default_factory=dict)  # class id -> (Fraction eps spent, Fraction delta spent)
    budgets: dict = field(default_factory=dict)  # class id -> (Fraction eps, Fraction delta)


def _classes(eps: np.ndarray, delta: np.ndarray):
    """The distinct ``(eps, delta)`` pairs in lexicographic order and each user's class: what
    ``np.unique(pairs, axis=0, return_inverse=True)`` gives, from two 1-D uniques and one of the
    combined integer codes (``np.unique`` on rows sorts a structured copy, about ten times slower)."""
    e, dl = np.asarray(eps, float).ravel(), np.asarray(delta, float).ravel()
    if e.shape != dl.shape or np.isnan(e).any() or np.isnan(dl).any():
        return _classes_rows(e, dl)
    ue, ie = _unique_inverse(e)
    ud, idl = _unique_inverse(dl)
    codes, inv = _unique_inverse(ie * len(ud) + idl)
    uniq = np.stack([ue[codes // len(ud)], ud[codes % len(ud)]], axis=1)
    if np.any(uniq <= 0):
        raise ValueError("eps/delta: every user's budget must be positive")
    return uniq, inv.ravel()


def _unique_inverse(x: np.ndarray, limit: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)`` of a 1-D array without NaN (inverse raveled), without its
    sort when ``x`` holds at most ``limit`` distinct values (a few budget classes): each value found
    by one pass, the inverse by a binary search among the sorted values (the same indices)."""
    vals = []
    rest = np.ones(x.size, dtype=bool)
    while x.size:
        i = int(rest.argmax())
        if not rest[i]:
            break
        if len(vals) == limit:  # many distinct values: numpy's sort
            u, inv = np.unique(x, return_inverse=True)
            return u, inv.ravel()
        vals.append(x[i])
        np.logical_and(rest, x != x[i], out=rest)
    u = np.sort(np.array(vals, dtype=x.dtype))
    return u, np.searchsorted(u, x)


def _classes_rows(eps: np.ndarray, delta: np.ndarray):
    pairs = np.stack([np.asarray(eps, float), np.asarray(delta, float)], axis=1)
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    if np.any(uniq <= 0):
        raise ValueError("eps/delta: every user's budget must be positive")
    return uniq, inv.ravel()


def ogm_schedule(budgets: list[tuple[float, float]]) -> list[tuple[float, float, list[int]]]:
    """Algorithm 3's rounds for budget classes: ``(eps, delta, member classes)`` per round (exact)."""
    rem = {c: (Fraction(e), Fraction(dl)) for c, (e, dl) in enumerate(budgets)}
    active = [c for c in rem if rem[c][0] > 0 and rem[c][1] > 0]
    out = []
    while active:
        x = min(rem[c][0] for c in active)
        y = min(rem[c][1] for c in active)
        xf, yf = _float_down(x), _float_down(y)
        if xf <= 0 or yf <= 0:  # a remainder below the smallest float: unusable
            break
        out.append((xf, yf, list(active)))
        # a class whose remaining eps (or delta) was the minimum is used up (Algorithm 3, lines 9-11);
        # the float rounding leaves it at most one ulp unspent
        active = [c for c in active if rem[c][0] != x and rem[c][1] != y]
        for c in active:
            rem[c] = (rem[c][0] - Fraction(xf), rem[c][1] - Fraction(yf))
    return out


def check_ledger(result: GroupResult) -> bool:
    """True iff every class's exact total spend is within its budget."""
    return all(result.spent[c][0] <= result.budgets[c][0] and result.spent[c][1] <= result.budgets[c][1]
               for c in result.budgets)


def _combine(estimates: list[list[np.ndarray]], variances: list[float]):
    w = np.array([1.0 / v for v in variances])
    w = w / w.sum()
    out = [sum(wr * est[j] for wr, est in zip(w, estimates, strict=True)) for j in range(len(estimates[0]))]
    return out, [float(x) for x in w]


def _variance(weighting, eps_l, d, g, n, domains):
    if weighting == "lemma4":
        return expected_mse(eps_l, d, g, n, domains)
    if weighting == "eq2":
        return approx_variance(eps_l, d, g, n)
    raise ValueError(f"weighting: 'lemma4' or 'eq2', got {weighting!r}")


def run_ogm(data, domains, eps, delta, rng, *, family_size=1 << 32, bound="bennett",
            weighting="lemma4") -> GroupResult:
    data = np.asarray(data)
    d = data.shape[1]
    uniq, cls = _classes(eps, delta)
    budgets = {c: (Fraction(float(uniq[c, 0])), Fraction(float(uniq[c, 1]))) for c in range(len(uniq))}
    spent = {c: (Fraction(0), Fraction(0)) for c in budgets}
    rounds, ests = [], []
    for x, y, members in ogm_schedule([(float(a), float(b)) for a, b in uniq]):
        mask = np.zeros(len(uniq), dtype=bool)
        mask[members] = True
        mask = mask[cls]  # the users of the member classes (np.isin's mask)
        n_r = int(mask.sum())
        if n_r < 2:
            continue
        st = mhm_eps_local(x, y, n_r, d, bound=bound)
        rows = data if n_r == mask.size else data[mask]  # the first round takes every user: no copy
        res = run_mhm(rows, domains, x, y, rng, family_size=family_size, setting=st)
        for c in members:
            spent[c] = (spent[c][0] + Fraction(x), spent[c][1] + Fraction(y))
        var = _variance(weighting, st.eps_l, d, st.g, n_r, domains)
        rounds.append(Round(n_r, x, y, st.eps_l, st.g, var, np.array(members)))
        ests.append(res.estimates)
    combined, w = _combine(ests, [r.variance for r in rounds])
    return GroupResult(combined, rounds, w, spent, budgets)


def run_nogm(data, domains, eps, delta, rng, *, family_size=1 << 32, bound="bennett",
             weighting="lemma4") -> GroupResult:
    data = np.asarray(data)
    d = data.shape[1]
    uniq, cls = _classes(eps, delta)
    budgets = {c: (Fraction(float(uniq[c, 0])), Fraction(float(uniq[c, 1]))) for c in range(len(uniq))}
    spent = {c: (Fraction(0), Fraction(0)) for c in budgets}
    rounds, ests = [], []
    for c in range(len(uniq)):
        mask = cls == c
        n_c = int(mask.sum())
        if n_c < 2:
            continue
        x, y = float(uniq[c, 0]), float(uniq[c, 1])
        st = mhm_eps_local(x, y, n_c, d, bound=bound)
        res = run_mhm(data[mask], domains, x, y, rng, family_size=family_size, setting=st)
        spent[c] = (Fraction(x), Fraction(y))
        var = _variance(weighting, st.eps_l, d, st.g, n_c, domains)
        rounds.append(Round(n_c, x, y, st.eps_l, st.g, var, np.array([c])))
        ests.append(res.estimates)
    combined, w = _combine(ests, [r.variance for r in rounds])
    return GroupResult(combined, rounds, w, spent, budgets)
