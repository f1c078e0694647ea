"""The exact independent-flag decomposition (shuffledp.accountants.upper.flags) against the enumeration
oracle (tests/_oracle_decomposition.py): equal to the exact decomposed divergence up to the
allowances (never below), sound against the exact shuffled divergence of every configuration of
the other users, sound with few blocks and wide windows, and tighter than the three-atom spread of
the same pair (binary local hashing: the gap issue 25 measured)."""

from __future__ import annotations

import math

import _oracle_decomposition as O
import numpy as np
import pytest

from shuffledp.accountants.randomizers import standard as rz
from shuffledp.accountants.upper import decomposition as dec
from shuffledp.accountants.upper import flags


def _no_alt(fp):
    """The flag pair alone (its ``alt``, the optimal blanket's spread, can be smaller still)."""
    return flags.flag_pair(fp.gamma, fp.alpha, fp.beta, fp.u, fp.v)


PAIRS = {
    "olh-g2": lambda: rz.olh_pairs(2, 1.5)[0],
    "olh-g3": lambda: rz.olh_pairs(3, 1.0)[0],
    "olh-g6": lambda: rz.olh_pairs(6, 2.0)[0],
    "oue-d5": lambda: _no_alt(rz.oue_pairs(5, 1.2)[0]),
    # asymmetric flags and ratios (both directions evaluated; u1 < u0 takes the mirrored route)
    # (gamma = 1 / E[u] = 1 / E[v] so that both rows are probabilities)
    "asym": lambda: flags.flag_pair(1 / 1.45, 0.3, 0.45, (1.0, 2.5), (1.0, 2.0)),
    "asym-mirror": lambda: flags.flag_pair(1 / 1.6, 0.4, 0.5, (2.0, 1.0), (1.0, 2.2)),
}


def _valid(fp):
    """The rows' group masses are probabilities (the constructed pair is a real randomizer's)."""
    assert sum(fp.w) == pytest.approx(1.0, abs=1e-12)
    assert sum(fp.p) == pytest.approx(1.0, abs=1e-9) and sum(fp.q) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("n", [2, 7, 30])
def test_flag_pair_equals_exact_decomposed(name, n):
    fp = PAIRS[name]()
    _valid(fp)
    acc = dec.DecomposedPair(None, n, pairs=[fp])
    for eps in (0.0, 0.05, 0.3, 0.8):
        exact = max(O.exact_decomposed_delta(fp.w, fp.p, fp.q, fp.gamma, n, eps),
                    O.exact_decomposed_delta(fp.w, fp.q, fp.p, fp.gamma, n, eps))
        up = acc.delta(eps)
        low = acc.delta_lower(eps)
        assert exact <= up <= exact * (1 + 1e-7) + 1e-25, (eps, exact, up)
        assert low <= exact * (1 + 1e-12)


@pytest.mark.parametrize("name", ["olh-g2", "oue-d5", "asym"])
def test_few_blocks_and_wide_windows_stay_sound(name):
    """Blocks charged at their smallest M and windows with a large tail: still above the exact
    decomposed value; the blocks at their largest M stay below it."""
    fp = PAIRS[name]()
    n = 40
    acc = dec.DecomposedPair(None, n, pairs=[fp], max_blocks=3, tail=1e-4)
    for eps in (0.05, 0.3):
        exact = max(O.exact_decomposed_delta(fp.w, fp.p, fp.q, fp.gamma, n, eps),
                    O.exact_decomposed_delta(fp.w, fp.q, fp.p, fp.gamma, n, eps))
        assert acc.delta_lower(eps) <= exact <= acc.delta(eps)


@pytest.mark.parametrize("k,g,eps0,n", [(3, 2, 1.0, 5), (3, 2, 3.0, 4), (3, 3, 1.5, 4), (2, 2, 2.0, 6)])
def test_olh_flags_sound_against_every_configuration(k, g, eps0, n):
    """Above the exact shuffled divergence of every victim pair and every multiset of the others'
    inputs (local hashing over all functions [k] -> [g])."""
    mat = O.olh_matrix(k, g, eps0)
    acc = dec.DecomposedPair(None, n, pairs=rz.olh_pairs(g, eps0))
    eps_list = [0.0, 0.1 * eps0, 0.3 * eps0, 0.6 * eps0]
    for eps, (real, arg) in zip(eps_list, O.worst_shuffle_delta(mat, n, eps_list), strict=True):
        assert real <= acc.delta(eps), (eps, arg)


@pytest.mark.parametrize("d,eps0,n", [(3, 1.0, 5), (3, 3.0, 4), (4, 0.5, 4)])
def test_oue_flags_sound_against_every_configuration(d, eps0, n):
    mat = O.oue_matrix(d, eps0)
    acc = dec.DecomposedPair(None, n, pairs=rz.oue_pairs(d, eps0))
    eps_list = [0.0, 0.1 * eps0, 0.3 * eps0, 0.6 * eps0]
    for eps, (real, arg) in zip(eps_list, O.worst_shuffle_delta(mat, n, eps_list), strict=True):
        assert real <= acc.delta(eps), (eps, arg)


def test_oue_sub_blanket_is_valid_and_alt_kept():
    """OUE's flag blanket is at most every row at every output, and the optimal blanket's pair is
    attached (and never makes the answer larger) when it is noticeably heavier."""
    d, eps0 = 4, 1.0
    mat = rz.oue_matrix(d, eps0)
    p, q = 0.5, 1.0 / (np.e + 1.0)
    bits = (np.arange(2 ** d)[:, None] >> np.arange(d)[None, :]) & 1
    base = np.where(bits == 1, q, 1.0 - q).prod(axis=1)
    sub = base * (1.0 - p) / (1.0 - q)
    assert np.all(sub <= mat.min(axis=0) * (1 + 1e-12))
    (fp,) = rz.oue_pairs(d, eps0)
    assert fp.gamma == pytest.approx(sub.sum(), rel=1e-12)
    assert fp.alt is not None and fp.alt.gamma == pytest.approx(mat.min(axis=0).sum(), rel=1e-12)
    n = 200
    with_alt = dec.DecomposedPair(None, n, pairs=[fp])
    without = dec.DecomposedPair(None, n, pairs=[flags.flag_pair(fp.gamma, fp.alpha, fp.beta, fp.u, fp.v)])
    alt_only = dec.DecomposedPair(None, n, pairs=[fp.alt])
    for eps in (0.05, 0.2, 0.5):
        a = with_alt.delta(eps)
        assert a <= without.delta(eps) * (1 + 1e-12)
        assert a <= alt_only.delta(eps) * (1 + 1e-9)
    # at a large d the two blankets agree to 1e-6 and the spread is not run
    assert rz.oue_pairs(30, 1.0)[0].alt is None


@pytest.mark.parametrize("eps0", [1.0, 4.0])
def test_binary_local_hashing_tighter_than_the_spread(eps0):
    """The same four-group pair through the three-atom spread is looser; the exact flag value is
    above the enumerated decomposed value (n = 40) and the eps it certifies at n = 1000 is smaller."""
    fp = rz.olh_pairs(2, eps0)[0]
    assert fp.alt is None
    plain = dec.GroupedPair(fp.w, fp.p, fp.q, fp.gamma)
    n = 40
    eps = 0.2 * eps0
    exact = O.exact_decomposed_delta(fp.w, fp.p, fp.q, fp.gamma, n, eps)
    flag_v = dec.DecomposedPair(None, n, pairs=[fp]).delta(eps)
    spread_v = dec.DecomposedPair(None, n, pairs=[plain]).delta(eps)
    assert exact <= flag_v < spread_v
    e_flag = dec.decomposition_eps(None, 1000, 1e-6, pairs=[fp])
    e_spread = dec.decomposition_eps(None, 1000, 1e-6, pairs=[plain])
    assert e_flag < e_spread


def test_flag_pair_rejects_degenerate_input():
    with pytest.raises(ValueError, match="flag probabilities"):
        flags.flag_pair(0.5, 0.0, 0.5, (1.0, 2.0), (1.0, 2.0))
    with pytest.raises(ValueError, match="blanket mass"):
        flags.flag_pair(1.5, 0.3, 0.5, (1.0, 2.0), (1.0, 2.0))


# ----------------------------------------------------------------------------- the large-n oracle
def _flag_form(pair):
    """(w, u, v, gamma) of a four-group pair in the group order (10, 01, 11, 00)."""
    ug = [pair.p[i] / (pair.gamma * pair.w[i]) for i in range(4)]
    vg = [pair.q[i] / (pair.gamma * pair.w[i]) for i in range(4)]
    return pair.w, (ug[1], ug[0]), (vg[0], vg[1]), pair.gamma


@pytest.mark.parametrize("pair_fn", [lambda: rz.olh_pairs(2, 1.5)[0], lambda: rz.oue_optimal_pairs(4, 1.0)[0]],
                         ids=["olh-g2", "oue-optimal-dependent-flags"])
def test_large_n_oracle_brackets_the_enumeration(pair_fn):
    """tests/_oracle_flags.py (the benchmark's reference) brackets the enumerated decomposed value."""
    import _oracle_flags as OF

    pair = pair_fn()
    w, u, v, gamma = _flag_form(pair)
    for n in (5, 30):
        for eps in (0.1, 0.5):
            exact = O.exact_decomposed_delta(pair.w, pair.p, pair.q, pair.gamma, n, eps)
            lo, up = OF.bracket(w, u, v, gamma, n, eps, blocks=4)
            assert lo * (1 - 1e-9) <= exact <= up * (1 + 1e-9)


@pytest.mark.parametrize("g,eps0", [(2, 4.0), (5, 1.5)])
def test_exact_path_within_the_oracle_bracket_at_large_n(g, eps0):
    """n = 3000: the accountant's value is above the oracle's lower end and within its own
    blocking slack (0.5% in delta here, far less in eps) of the oracle's upper end; the
    accountant's own lower end (blocks at their largest M) is below the oracle's upper end."""
    import _oracle_flags as OF

    fp = rz.olh_pairs(g, eps0)[0]
    n, eps = 3000, 0.3 * eps0 / math.sqrt(10)
    lo, up = OF.bracket(fp.w, fp.u, fp.v, fp.gamma, n, eps)
    acc = dec.DecomposedPair(None, n, pairs=[fp])
    ours = acc.delta(eps)
    assert lo <= ours <= up * (1 + 5e-3)
    assert acc.delta_lower(eps) <= up


@pytest.mark.parametrize("name", ["oue-d5", "asym", "asym-mirror"])
def test_remembered_windows_and_tail_tables_give_the_same_numbers(name, monkeypatch):
    """flag_divergence keeps each count set's B windows and weights and, after a few evaluations,
    tabulates the A tails (a privacy profile evaluates one pair at many eps): every value equals,
    bit for bit, the one computed with nothing remembered, at every eps, both sides, and the kept
    arrays are read-only."""
    fp = PAIRS[name]()
    ms = np.array([0.0, 3.0, 40.0, 299.0, 1200.0])
    ees = [math.exp(e) for e in np.linspace(0.0, 1.5, 9)]

    def values():
        return [flag_div for ee in ees for upper in (True, False)
                for flag_div in flags.flag_divergence(ms, fp.gamma, fp.alpha, fp.beta, fp.u, fp.v, ee, 1e-12,
                                                      upper=upper).tolist()]

    with monkeypatch.context() as m:   # nothing remembered: every call computes everything
        m.setattr(flags, "_kept", lambda cache, key, build: tuple(build()))
        m.setattr(flags, "TABLE_AFTER", 10**9)
        fresh = values()
    for cache in (flags._WINDOWS, flags._WEIGHTS, flags._TABLES, flags._ASKED):
        cache.clear()
    first, again = values(), values()
    assert flags._TABLES, "the tail table was never built (the repeated evaluations must use it)"
    assert first == fresh and again == fresh
    for kept in (*flags._WINDOWS.values(), *flags._WEIGHTS.values(), *flags._TABLES.values()):
        assert all(not arr.flags.writeable for arr in kept)


def test_lazy_tails_keep_what_is_asked_and_give_the_same_numbers():
    """A count set too wide to tabulate whole keeps the A tails it was asked
    (``flags._LazyTails``): windows that move and widen between asks read, bit for bit, what
    ``_tail_terms`` computes, and asking the same cells again computes nothing new."""
    N = np.array([5000.0, 5200.0, 7000.0, 12.0])
    lazy = flags._LazyTails(N, 0.3)
    rng = np.random.default_rng(3)
    for trial in range(8):
        lo = rng.integers(0, 6000, size=N.size)
        t = np.clip(lo[:, None] + np.arange(int(rng.integers(5, 300)))[None, :], 0, N[:, None] + 1.0).astype(float)
        got, want = lazy(t), flags._tail_terms(N[:, None], t, 0.3)
        assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want, strict=True)), trial
    kept = int(lazy.known.sum())
    assert kept > 0 and [g.tobytes() for g in lazy(t)] == [w.tobytes() for w in want]
    assert int(lazy.known.sum()) == kept
