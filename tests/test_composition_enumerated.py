"""The exact one-round profile of :mod:`shuffledp.accountants.composition.enumerated` against brute force.

Brute force, written independently: every dataset of the others over the whole domain (no symmetry
used), every ordered victim pair ``x != x'``, the law of the multiset of the *full* reports (the
randomizer's whole output matrix, no sufficient classes; only exactly equal columns merged) by
adding one user at a time to a dict keyed by the sorted tuple of reports; the hockey-stick
divergence in both directions, the largest."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from shuffledp.accountants.composition import enumerated as en
from shuffledp.accountants.params import mechanism_params
from shuffledp.accountants.randomizers import standard


def _matrix(mech: str, eps0: float, p: dict) -> np.ndarray:
    if mech == "krr":
        e, k = math.exp(eps0), p["k"]
        return np.where(np.eye(k, dtype=bool), e, 1.0) / (e + k - 1.0)
    if mech == "oue":
        return standard.oue_matrix(p["d"], eps0)
    if mech == "olh":
        return standard.olh_matrix(p["domain"], p["g"], eps0)
    return standard.subset_exp_matrix(p["d"], p["s"], p["k"], eps0)


def _multiset_law(rows) -> dict:
    law = {(): 1.0}
    for row in rows:
        nxt: dict = {}
        for key, mass in law.items():
            for y, py in enumerate(row):
                new = tuple(sorted((*key, y)))
                nxt[new] = nxt.get(new, 0.0) + mass * py
        law = nxt
    return law


def brute_profile(mech: str, eps0: float, n: int, p: dict, eps_points) -> np.ndarray:
    full = _matrix(mech, eps0, p)
    _, label = np.unique(full, axis=1, return_inverse=True)   # exactly equal columns merged (OLH: many)
    mat = np.stack([full[:, label.ravel() == c].sum(axis=1) for c in range(label.max() + 1)], axis=1)
    inputs = range(mat.shape[0])
    out = np.zeros(len(eps_points))
    for others in itertools.combinations_with_replacement(inputs, n - 1):
        base = _multiset_law([mat[v] for v in others])
        for x, x2 in itertools.permutations(inputs, 2):
            P, Q = {}, {}
            for key, mass in base.items():
                for y in range(mat.shape[1]):
                    new = tuple(sorted((*key, y)))
                    P[new] = P.get(new, 0.0) + mass * mat[x, y]
                    Q[new] = Q.get(new, 0.0) + mass * mat[x2, y]
            pv, qv = np.array(list(P.values())), np.array([Q[k] for k in P])
            for i, eps in enumerate(eps_points):
                out[i] = max(out[i], float(np.maximum(pv - math.exp(eps) * qv, 0).sum()))
    return out


CASES = [("krr", {"k": 2}, range(2, 13)), ("krr", {"k": 3}, range(2, 13)),
         ("oue", {"d": 2}, range(2, 13)), ("oue", {"d": 3}, range(2, 7)),
         ("olh", {"g": 2, "domain": 2}, range(2, 10)), ("olh", {"g": 2, "domain": 3}, range(2, 6)),
         ("olh", {"g": 3, "domain": 2}, range(2, 7)), ("olh", {"g": 3, "domain": 3}, range(2, 5)),
         ("subset-exp", {"d": 2, "s": 1}, range(2, 9)), ("subset-exp", {"d": 3, "s": 1, "k": 2}, range(2, 6))]


@pytest.mark.parametrize("mech,kw,ns", CASES)
def test_exact_profile_is_the_brute_force_maximum(mech, kw, ns):
    """At d, g, k = 2 and 3 and n = 2..12 (fewer where the brute force is slow): the enumerated
    profile is the largest divergence over every neighbouring pair and direction."""
    for n in ns:
        for eps0 in (0.5, 2.0):
            p = mechanism_params(mech, eps0, **kw)
            pts = [0.0, 0.05, 0.2, eps0 / 2, 0.9 * eps0]
            want = brute_profile(mech, eps0, n, p, pts)
            got = en.exact_profile(mech, eps0, n, p)
            for e, w in zip(pts, want, strict=True):
                g = got(e)
                assert w <= g <= w * (1 + 1e-9) + 1e-15, (mech, kw, n, eps0, e, g, w)


def test_a_single_pair_is_caught(monkeypatch):
    """Mutation: the profile of one configuration only (the others all at x) is below the brute
    force's maximum: the test above fails on it."""
    orig = en.pair_laws

    def one(*args):
        kept = [c for c in orig(*args) if c[0][:2] == (args[2] - 1, 0)]
        if len(kept) != 1:
            raise RuntimeError(f"the mutant's configuration is not enumerated: {kept}")
        return kept

    monkeypatch.setattr(en, "pair_laws", one)
    p = mechanism_params("oue", 1.0, d=3)
    want = brute_profile("oue", 1.0, 4, p, [0.2])[0]
    assert en.exact_profile("oue", 1.0, 4, p)(0.2) < want * (1 - 1e-3)


@pytest.mark.parametrize("g", [2, 3])
def test_olh_without_a_domain_is_every_domain(g):
    """OLH without ``--domain`` (every domain size): the profile is the brute force's largest over
    the domains 2 .. n + 1 (n = 3) and 2 .. n + 2 (n = 2: one more than the n + 1 inputs a pair can
    use; n = 3 with 5 inputs takes 10 s), at g = 2, 3."""
    for n, top in ((2, 4), (3, 4)):
        for eps0 in (0.5, 2.0):
            pts = [0.0, 0.05, 0.2, eps0 / 2, 0.9 * eps0]
            want = np.max([brute_profile("olh", eps0, n, {"g": g, "domain": dom}, pts) for dom in range(2, top + 1)],
                          axis=0)
            got = en.exact_profile("olh", eps0, n, mechanism_params("olh", eps0, g=g))
            for e, w in zip(pts, want, strict=True):
                assert w <= got(e) <= w * (1 + 1e-9) + 1e-15, (g, n, eps0, e, got(e), w)


def test_olh_without_a_domain_is_not_a_small_domain(monkeypatch):
    """Mutation: OLH without a domain read as ``D = n`` (one input too few) is below the brute
    force's largest over every domain at n = 2 (the test above fails on it)."""
    monkeypatch.setattr(en, "domain_size", lambda mech, params, n=None: n if n is not None else None)
    p = mechanism_params("olh", 0.5, g=3)
    want = max(brute_profile("olh", 0.5, 2, {"g": 3, "domain": dom}, [0.1])[0] for dom in (2, 3, 4))
    assert en.exact_profile("olh", 0.5, 2, p)(0.1) < want * (1 - 1e-3)


# Open (module docstring of enumerated): is the largest divergence always attained with the others
# on at most one value besides x and x'? Not used by any bound; pinned here so that a counterexample
# at these points shows. Measured beyond them: OLH g = 3 (D = 4, n <= 8; D = 5, n = 5), OUE d = 4
# (n <= 8), subset-exp d = 4 (n <= 7): none.
OPEN_ONE_THIRD = [("olh", {"g": 3, "domain": 4}, 1.0, 6), ("olh", {"g": 3, "domain": 4}, 0.5, 5),
                  ("oue", {"d": 4}, 1.0, 6), ("subset-exp", {"d": 4, "s": 1}, 0.5, 7),
                  ("subset-exp", {"d": 3, "s": 1}, 0.5, 6)]


def _split_maxima(mech, eps0, n, p, pts, keep):
    """(largest over every configuration, largest over those ``keep`` accepts), both directions."""
    every, kept = np.zeros(len(pts)), np.zeros(len(pts))
    for config, P, Q in en.pair_laws(mech, eps0, n, p):
        v = np.array([max(float(np.maximum(P - math.exp(e) * Q, 0).sum()),
                          float(np.maximum(Q - math.exp(e) * P, 0).sum())) for e in pts])
        every = np.maximum(every, v)
        if keep(config):
            kept = np.maximum(kept, v)
    return every, kept


@pytest.mark.parametrize("mech,kw,eps0,n", OPEN_ONE_THIRD)
def test_open_pairs_on_two_other_values_never_the_largest_here(mech, kw, eps0, n):
    p = mechanism_params(mech, eps0, **kw)
    pts = list(np.linspace(0.0, 0.95 * eps0, 12))
    every, kept = _split_maxima(mech, eps0, n, p, pts, lambda c: sum(1 for x in c[2] if x) <= 1)
    assert np.all(every <= kept * (1 + 1e-12)), (every, kept)


def test_open_check_can_fail():
    """The same comparison with the others only at x and x' (no third value) does fail: a third value
    matters (so the check above is not vacuous)."""
    p = mechanism_params("olh", 1.0, g=3, domain=4)
    pts = list(np.linspace(0.0, 0.95, 12))
    every, kept = _split_maxima("olh", 1.0, 6, p, pts, lambda c: not any(c[2]))
    assert np.any(every > kept * (1 + 1e-6))


# Open, a stronger form measured to hold (module docstring of enumerated): for the same others at x
# and x' (a, b), spreading the rest over two or more third values never raises the divergence above
# that of the same rest on one third value, at any eps, both directions (no max over (a, b) needed).
# Not used by any bound. D = n + 1 at n = 4 (OLH without a domain: three third values) included.
PER_AB = [("olh", {"g": 3, "domain": 4}, 1.0, 6), ("olh", {"g": 3, "domain": 5}, 2.0, 4),
          ("olh", {"g": 2, "domain": 5}, 0.5, 4), ("oue", {"d": 4}, 1.0, 5), ("subset-exp", {"d": 4, "s": 1}, 0.5, 5)]


def _per_ab_worst(mech, eps0, n, p, pts, reference):
    """The largest ratio, over every configuration with the others on two or more third values and
    every point where it is positive, of its delta (both directions) to that of ``reference(a, b,
    rest)``'s configuration."""
    deltas = {}
    for config, P, Q in en.pair_laws(mech, eps0, n, p):
        deltas[config[0], config[1], tuple(x for x in config[2] if x)] = np.array(
            [max(float(np.maximum(P - math.exp(e) * Q, 0).sum()), float(np.maximum(Q - math.exp(e) * P, 0).sum()))
             for e in pts])
    worst, compared = 0.0, 0
    for (a, b, rest), v in deltas.items():
        if len(rest) >= 2:
            ref = deltas[reference(a, b, sum(rest))]
            keep = v > 1e-300
            worst, compared = max(worst, float(np.max(v[keep] / ref[keep]))), compared + 1
    return worst, compared


@pytest.mark.parametrize("mech,kw,eps0,n", PER_AB)
def test_open_spreading_the_rest_never_raises_the_divergence_here(mech, kw, eps0, n):
    p = mechanism_params(mech, eps0, **kw)
    pts = list(np.linspace(0.0, 0.95 * eps0, 12))
    worst, compared = _per_ab_worst(mech, eps0, n, p, pts, lambda a, b, rest: (a, b, (rest,)))
    assert compared >= 3 and worst <= 1.0 + 1e-12, (worst, compared)


def test_open_per_ab_check_can_fail():
    """The same comparison against the rest moved to x (its own value: no third value) fails, so the
    check above is not vacuous."""
    p = mechanism_params("olh", 1.0, g=3, domain=4)
    pts = list(np.linspace(0.0, 0.95, 12))
    worst, _ = _per_ab_worst("olh", 1.0, 6, p, pts, lambda a, b, rest: (a + rest, b, ()))
    assert worst > 1.0 + 1e-6


GRID_CASES = [("krr", {"k": 3}, 1.0, 7), ("oue", {"d": 3}, 2.0, 5), ("olh", {"g": 3, "domain": 3}, 0.5, 5),
              ("olh", {"g": 2}, 1.0, 3), ("subset-exp", {"d": 3, "s": 1}, 0.5, 6), ("oue", {"d": 2}, 0.25, 9)]


@pytest.mark.parametrize("mech,kw,eps0,n", GRID_CASES)
def test_profile_on_grid_is_the_exact_profile(mech, kw, eps0, n):
    """The one-dataset-at-a-time grid (default points, evenly spaced: the division path; and uneven
    points: the search path) gives what the stored exact profile gives at every point (to rounding:
    at eps0 both are the allowances, ~1e-15); d, g, k = 2, 3."""
    p = mechanism_params(mech, eps0, **kw)
    exact = en.exact_profile(mech, eps0, n, p)
    uneven = np.sort(np.concatenate([[0.0], np.random.default_rng(7).uniform(0.0, eps0, 40)]))
    for pts, got in (en.profile_on_grid(mech, eps0, n, p), en.profile_on_grid(mech, eps0, n, p, uneven)):
        assert pts.size >= 41
        want = np.array([exact(e) for e in pts])
        assert np.allclose(got, want, rtol=1e-9, atol=1e-13), np.max(np.abs(got / np.maximum(want, 1e-300) - 1))
        assert np.any(want > 0) and np.any((want > 0) & (want < 1e-3))


def test_grid_beyond_the_stored_budget():
    """subset-exp d = 4, s = 1 at eps0 = 0.5, n = 12 (56M multisets): beyond what exact_profile keeps,
    within the grid's budget; beyond both, both refuse."""
    p = mechanism_params("subset-exp", 0.5, d=4, s=1)
    assert en.applies("subset-exp", 0.5, 12, p) and not en.stored("subset-exp", 0.5, 12, p)
    with pytest.raises(ValueError):
        en.exact_profile("subset-exp", 0.5, 12, p)
    with pytest.raises(ValueError):
        en.profile_on_grid("olh", 1.0, 12, mechanism_params("olh", 1.0, g=3))


def test_refuses_where_it_does_not_apply():
    assert en.applies("olh", 1.0, 3, {"g": 3})                 # no domain: D = n + 1 = 4 inputs
    assert not en.applies("olh", 1.0, 12, {"g": 3})            # no domain: 13 inputs, beyond the budget
    assert not en.applies("krr", 1.0, 16, {"k": 10})           # beyond the budget
    assert not en.applies("subset-exp", 1.0, 4, {"d": 4, "s": 2, "k": 2})
    with pytest.raises(ValueError):
        en.exact_profile("krr", 1.0, 16, {"k": 10})


@pytest.mark.parametrize("mech,kw", [("oue", {"d": 2}), ("krr", {"k": 3}), ("olh", {"g": 2, "domain": 3})])
def test_one_round_answer_brackets_the_brute_force_eps(mech, kw):
    """One round (T = 1) at n = 5: the answer is the curve of the exact profile, at least the exact
    eps at delta (bisection on the brute force) and within 1% of it."""
    from shuffledp.accountants.composition import rounds

    eps0, n, delta = 1.0, 5, 1e-3
    p = mechanism_params(mech, eps0, **kw)
    lo, hi = 0.0, eps0
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if brute_profile(mech, eps0, n, p, [mid])[0] > delta else (lo, mid)
    res = rounds.composed_eps(mech, eps0, n, delta, 1, **kw)
    assert res["by"] == "curve" and lo <= res["eps"] <= 1.01 * hi, (res, lo, hi)


def _marks_garbling_status(n: int, p: float, q: float) -> int:
    """linprog's status (0 feasible, 2 infeasible) for a kernel K from the marks on one value to the
    marks on two, with K(merged(Z)) = split(Z) for every set Z of two users' reports among n: merged,
    every report's bit at the one value is Bern(p) for a member of Z, else Bern(q); split, one member
    (uniform) has Bern(p) at the first value, the other at the second, every other bit Bern(q)."""
    from scipy.optimize import linprog

    zs = [z for z in itertools.product((0, 1), repeat=n) if sum(z) == 2]
    bs = list(itertools.product((0, 1), repeat=n))
    ts = list(itertools.product(range(4), repeat=n))   # per report: 2 * first bit + second bit

    def bern(r, b):
        return r if b else 1.0 - r

    def merged(z, b):
        return math.prod(bern(p if zj else q, bj) for zj, bj in zip(z, b, strict=True))

    def split(z, t):
        first, second = (j for j in range(n) if z[j])
        total = 0.0
        for one in (first, second):
            total += 0.5 * math.prod(bern(p if j == one else q, tj >> 1) * bern(p if z[j] and j != one else q, tj & 1)
                                     for j, tj in enumerate(t))
        return total

    rows, rhs = [], []
    for z in zs:
        mz = np.array([merged(z, b) for b in bs])
        for ti, t in enumerate(ts):
            row = np.zeros(len(bs) * len(ts))
            row[np.arange(len(bs)) * len(ts) + ti] = mz
            rows.append(row)
            rhs.append(split(z, t))
    for bi in range(len(bs)):
        row = np.zeros(len(bs) * len(ts))
        row[bi * len(ts):(bi + 1) * len(ts)] = 1.0
        rows.append(row)
        rhs.append(1.0)
    res = linprog(np.zeros(len(bs) * len(ts)), A_eq=np.array(rows), b_eq=np.array(rhs), bounds=(0, None),
                  method="highs")
    return res.status


def test_open_natural_proof_fails_at_four_users():
    """The module docstring's claim: the garbling that would prove "one other value suffices" exists
    at n = 3 (so the program is not vacuous) and not at n = 4 (OLH g = 3, eps0 = 0.5: p = e^0.5 /
    (e^0.5 + 2), q = 1/3)."""
    p, q = math.exp(0.5) / (math.exp(0.5) + 2.0), 1.0 / 3.0
    assert _marks_garbling_status(3, p, q) == 0
    assert _marks_garbling_status(4, p, q) == 2


def _victim_row_garbling_status(n: int, parts: tuple, p: float, q: float, reverse: bool = False) -> int:
    """linprog's status (0 feasible, 2 infeasible) for a kernel K with K(one(v)) = spread(v) for every
    row v of the victim (alone at x or x': a = b = 0): ``one(v)``, the n marks at one third value
    (Bern(q) at row v, Bern(p) at the others'); ``spread(v)``, the marks at ``len(parts)`` third
    values, the others split uniformly into groups of sizes ``parts``, each other's mark Bern(p) at
    its group's value, every other mark Bern(q). ``reverse``: K from spread to one."""
    from scipy.optimize import linprog
    from scipy.sparse import lil_matrix

    k = len(parts)
    ones = list(itertools.product((0, 1), repeat=n))
    spreads = list(itertools.product(range(2 ** k), repeat=n))   # per row: its k marks as bits

    def bern(r, b):
        return r if b else 1.0 - r

    def one(v, b):
        return math.prod(bern(q if i == v else p, bi) for i, bi in enumerate(b))

    def spread(v, t):
        others = [i for i in range(n) if i != v]
        labels = set(itertools.permutations(sum(([j] * c for j, c in enumerate(parts)), [])))
        total = 0.0
        for lab in labels:
            group = dict(zip(others, lab, strict=True))
            total += math.prod(bern(p if i != v and group[i] == j else q, (ti >> j) & 1)
                               for i, ti in enumerate(t) for j in range(k))
        return total / len(labels)

    src, dst, f_src, f_dst = (spreads, ones, spread, one) if reverse else (ones, spreads, one, spread)
    A = lil_matrix((n * len(dst) + len(src), len(src) * len(dst)))
    rhs, r = [], 0
    for v in range(n):
        w = [f_src(v, x) for x in src]
        for di, y in enumerate(dst):
            for si in range(len(src)):
                A[r, si * len(dst) + di] = w[si]
            rhs.append(f_dst(v, y))
            r += 1
    for si in range(len(src)):
        A[r, si * len(dst):(si + 1) * len(dst)] = 1.0
        rhs.append(1.0)
        r += 1
    res = linprog(np.zeros(len(src) * len(dst)), A_eq=A.tocsr(), b_eq=np.array(rhs), bounds=(0, None),
                  method="highs")
    return res.status


def test_open_victim_alone_garbling_exists_at_small_n():
    """A lead for the open question (module docstring), not used by any bound: with the victim alone
    at x and x' (a = b = 0, where the restricted profile's largest pair lies at small eps), the
    experiment "which report is the victim's" with the rest spread is a garbling of the same with
    the rest on one value at n = 3 and 4 (so the spread pair is a garbling of the one-value pair),
    and not the other way round (the program can fail; OLH g = 3, eps0 = 1)."""
    p, q = math.exp(1.0) / (math.exp(1.0) + 2.0), 1.0 / 3.0
    assert _victim_row_garbling_status(3, (1, 1), p, q) == 0
    assert _victim_row_garbling_status(4, (2, 1), p, q) == 0
    assert _victim_row_garbling_status(4, (2, 1), p, q, reverse=True) == 2


def _olh_rows_split(eps0: float, g: int, n: int, a: int, b: int, parts: tuple, eps_points):
    """``(direct, reduced)`` deltas (both directions, the larger) of OLH with the victim at x or x',
    ``a`` others at x, ``b`` at x', the rest on third values in groups ``parts``; the reports as the
    sets of inputs in use their hash maps to the reported value, the rows in a uniformly random order
    (equivalent to the multiset). ``direct``: the hockey-stick divergence of the ordered rows.
    ``reduced``: the identity of enumerated's module docstring ("What a proof would need"), the
    expectation over the rows' third-value bits ``beta`` (the same law under both inputs, checked) of
    the divergence of the ``{x, x'}`` bits given the posterior of which rows are the others on third
    values."""
    e = math.exp(eps0)
    p, q = e / (e + g - 1.0), 1.0 / g
    u = 2 + len(parts)

    def bit(r, z):
        return np.where(z, r, 1.0 - r)

    roles_p = [0] + [0] * a + [1] * b + [2 + j for j, c in enumerate(parts) for _ in range(c)]
    roles_q = [1] + roles_p[1:]
    outs = np.array(list(itertools.product((0, 1), repeat=u * n)), dtype=bool).reshape(-1, n, u)

    def law(roles, cols):   # ordered rows' law of the bits in ``cols``, the roles in a random order
        orders = set(itertools.permutations(roles))
        tot = np.zeros(outs.shape[0])
        for order in orders:
            tot += np.prod([bit(p if order[i] == c else q, outs[:, i, c]) for i in range(n) for c in cols], axis=0)
        return tot / len(orders)

    P, Q = law(roles_p, range(u)), law(roles_q, range(u))
    direct = [max(float(np.maximum(P - math.exp(x) * Q, 0).sum()), float(np.maximum(Q - math.exp(x) * P, 0).sum()))
              for x in eps_points]
    third = range(2, u)
    betas = np.array(list(itertools.product((0, 1), repeat=len(parts) * n)), dtype=bool).reshape(-1, n, len(parts))
    alphas = np.array(list(itertools.product((0, 1), repeat=2 * n)), dtype=bool).reshape(-1, n, 2)
    groups = sorted(set(itertools.permutations([-1] * (n - sum(parts)) + [j for j, c in enumerate(parts)
                                                                          for _ in range(c)])))   # -1: not third
    like = np.array([np.prod([bit(p if grp[i] == j else q, betas[:, i, j]) for i in range(n)
                              for j in range(len(parts))], axis=0) for grp in groups])   # (groups, betas)
    mu = like.mean(axis=0)
    assert np.allclose(law(roles_p, third), law(roles_q, third), rtol=1e-12, atol=0)   # beta: hypothesis-free
    subsets = sorted({tuple(x >= 0 for x in grp) for grp in groups})
    post = np.array([like[[k for k, grp in enumerate(groups) if tuple(x >= 0 for x in grp) == s]].sum(axis=0)
                     for s in subsets]) / like.sum(axis=0)                                  # (subsets, betas)

    def alpha_law(subset, victim):   # the {x, x'} bits given the rows of the third-value others
        free = [i for i in range(n) if not subset[i]]
        orders = set(itertools.permutations([victim] + [0] * a + [1] * b))
        tot = np.zeros(alphas.shape[0])
        for order in orders:
            role = dict(zip(free, order, strict=True))
            tot += np.prod([bit(p if role.get(i) == c else q, alphas[:, i, c]) for i in range(n) for c in (0, 1)],
                           axis=0)
        return tot / len(orders)

    AP = np.array([alpha_law(s, 0) for s in subsets])
    AQ = np.array([alpha_law(s, 1) for s in subsets])
    mixp, mixq = post.T @ AP, post.T @ AQ                                                    # (betas, alphas)
    reduced = [max(float(mu @ np.maximum(mixp - math.exp(x) * mixq, 0).sum(axis=1)),
                   float(mu @ np.maximum(mixq - math.exp(x) * mixp, 0).sum(axis=1))) for x in eps_points]
    return np.array(direct), np.array(reduced)


@pytest.mark.parametrize("a,b,parts", [(0, 0, (2, 1)), (1, 0, (1, 1)), (0, 0, (3,)), (1, 1, (1,))])
def test_olh_divergence_is_an_expectation_over_the_third_value_bits(a, b, parts):
    """The exact reduction of the module docstring (proved there; pinned here at n = 4, OLH g = 3):
    the divergence of a configuration is the expectation over the third-value bits of a convex
    function of the posterior of which rows are the others on third values; and the direct value is
    that of :func:`enumerated.pair_laws` (the same configuration, D = 2 + parts)."""
    eps0, g, n = 1.0, 3, 4
    pts = [0.0, 0.3, 0.7]
    direct, reduced = _olh_rows_split(eps0, g, n, a, b, parts, pts)
    assert np.allclose(direct, reduced, rtol=1e-10, atol=1e-15), (direct, reduced)
    p = mechanism_params("olh", eps0, g=g, domain=2 + len(parts))
    for config, P, Q in en.pair_laws("olh", eps0, n, p):
        if config == (a, b, parts):
            want = [max(float(np.maximum(P - math.exp(x) * Q, 0).sum()),
                        float(np.maximum(Q - math.exp(x) * P, 0).sum())) for x in pts]
            assert np.allclose(direct, want, rtol=1e-10, atol=1e-15), (direct, want)
            break
    else:
        raise AssertionError(f"configuration {(a, b, parts)} not enumerated")
