"""Per-user accounting (Theorem 2 with the clones bounds), Theorem 3's first term, Theorem 4."""

import itertools
import json
import math

import numpy as np
import pytest

from shuffledp.accountants.special import peruser as A
from shuffledp.cli import main


def thm6_printed(eps0, n, delta):
    """Theorem 6 exactly as printed (with n for the garbled q), written out independently here."""
    if eps0 > math.log(n / (16 * math.log(2 / delta))):
        return eps0
    e = math.exp(eps0)
    return math.log(1 + (e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / delta)) / math.sqrt(n) + 8 * e / n))


def _cluster(m, spread, rng, d=5):
    """m users around one centre, every L1 distance to it at most ``spread``."""
    centre = np.full(d, 1 / d)
    v = rng.uniform(-1, 1, size=(m, d))
    v -= v.mean(axis=1, keepdims=True)
    v *= spread / np.abs(v).sum(axis=1, keepdims=True) * rng.uniform(0, 1, size=(m, 1))
    return centre + v


def test_single_identical_group_matches_closed_form():
    # r = 0: the best subset is the whole group, eps' = eps1 + min(eps2, Thm6(eps2, |G|))
    m, eps1, eps2, c, delta = 50_000, 0.5, 0.8, 0.1, 1e-6
    hbar = np.full((m, 4), 0.25)
    amp = A.clones_amplifier("closed")
    out = A.per_user_eps(hbar, np.zeros(m, dtype=int), eps1, eps2, c, delta, amp)
    expect = eps1 + min(eps2, thm6_printed(eps2, m, delta))
    np.testing.assert_allclose(out["eps_prime"], expect, rtol=1e-12)
    assert expect < eps1 + eps2                      # amplification happens here
    num = A.per_user_eps(hbar, np.zeros(m, dtype=int), eps1, eps2, c, delta, A.clones_amplifier("numeric"))
    assert np.all(num["eps_prime"] <= out["eps_prime"] + 1e-12)   # numerical bound is tighter


@pytest.mark.parametrize("bound", ["closed", pytest.param("numeric", marks=pytest.mark.slow)])
def test_eps_prime_monotone_in_group_size_and_radius(bound):
    rng = np.random.default_rng(4)
    amp = A.clones_amplifier(bound)
    eps1, eps2, c, delta = 0.2, 0.3, 0.1, 1e-6
    base = _cluster(40_000, 0.05, rng)
    # group size: the same users plus more users at the centre -> eps' of the originals never grows
    prev = None
    for extra in (0, 20_000, 80_000):
        hbar = np.vstack([base, np.tile(base.mean(axis=0), (extra, 1))])
        e = A.per_user_eps(hbar, np.zeros(len(hbar), dtype=int), eps1, eps2, c, delta, amp)["eps_prime"][: len(base)]
        if prev is not None:
            assert np.all(e <= prev + 1e-12)
        prev = e
    assert prev.max() < eps1 + eps2                  # and it does amplify at the largest size
    # radius: the same users pushed further from the centre -> eps' never shrinks
    prev = None
    for scale in (0.5, 1.0, 2.0, 4.0):
        hbar = base.mean(axis=0) + scale * (base - base.mean(axis=0))
        e = A.per_user_eps(hbar, np.zeros(len(hbar), dtype=int), eps1, eps2, c, delta, amp)["eps_prime"]
        if prev is not None:
            assert np.all(e >= prev - 1e-12)
        prev = e


def test_local_eps_and_theorem4():
    assert A.local_eps(0.5, 0.1, 0.1) == pytest.approx(1.0)
    assert A.theorem4_eps1(17, 100_000, 1e-6, 20.0) == pytest.approx(4 * 17 * math.log(1e11) / 20)
    with pytest.raises(ValueError, match="R"):
        A.theorem4_eps1(17, 10, 1e-6, 0.0)


def test_heuristic_never_below_exact_minimum():
    # tiny groups: exact minimum over all subsets Q containing the user, exact diameters
    rng = np.random.default_rng(9)
    amp = A.clones_amplifier("numeric")
    eps1, eps2, c, delta = 0.1, 1.0, 0.5, 0.1
    hbar = _cluster(9, 0.1, rng, d=4)
    h = A.per_user_eps(hbar, np.zeros(9, dtype=int), eps1, eps2, c, delta, amp, grid_points=50)
    for i in range(9):
        ex = A.exact_min_eps(hbar, i, eps1, eps2, c, delta, amp)
        assert h["eps_prime"][i] >= ex - 1e-12
        assert ex < eps1 + eps2            # the case amplifies at all
    # the chosen subset's radius bounds its true diameter
    D = np.abs(hbar[:, None] - hbar[None]).sum(axis=2)
    assert np.all(h["q_radius"] <= 2 + 1e-12)
    assert D.max() <= 2 * h["dist_centre"].max() + 1e-12


def test_exact_min_by_brute_force_small():
    # the enumeration itself: against a direct product over subsets for 5 users
    amp = A.clones_amplifier("closed")
    hbar = np.array([[0.5, 0.5], [0.55, 0.45], [0.6, 0.4], [0.9, 0.1], [0.52, 0.48]])
    best = math.inf
    for size in range(0, 5):
        for sub in itertools.combinations([1, 2, 3, 4], size):
            q = (0, *sub)
            r = max(np.abs(hbar[a] - hbar[b]).sum() for a in q for b in q)
            best = min(best, amp(A.local_eps(1.0, r, 0.2), len(q), 0.3) if len(q) > 1 else math.inf)
    assert A.exact_min_eps(hbar, 0, 0.0, 1.0, 0.2, 0.3, amp) == pytest.approx(min(1.0, best))


def test_mean_group_l1_exact():
    rng = np.random.default_rng(1)
    hbar = rng.dirichlet(np.ones(6), size=300)
    labels = rng.integers(0, 7, size=300)
    fast = A.mean_group_l1(hbar, labels)
    for i in range(0, 300, 37):
        g = labels == labels[i]
        assert fast[i] == pytest.approx(np.abs(hbar[g] - hbar[i]).sum(axis=1).mean(), rel=1e-10)


def _mean_group_l1_reference(hbar, labels):
    """The first implementation of A.mean_group_l1 (one np.lexsort per column, np.add.at)."""
    n, d = hbar.shape
    sizes = np.bincount(labels)
    total = np.zeros(n)
    starts_all = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    for j in range(d):
        x = hbar[:, j]
        o = np.lexsort((x, labels))
        xs, cs, grp = x[o], np.cumsum(x[o]), labels[o]
        st = starts_all[grp]
        before = cs - xs - np.where(st > 0, cs[np.maximum(st - 1, 0)], 0.0)
        k = np.arange(n) - st
        G = sizes[grp]
        gsum = cs[st + G - 1] - np.where(st > 0, cs[np.maximum(st - 1, 0)], 0.0)
        total[o] += xs * k - before + (gsum - before - xs) - xs * (G - k - 1)
    return total / sizes[labels]


def _centre_distances_reference(hbar, labels):
    g = labels.max() + 1
    sums = np.zeros((g, hbar.shape[1]))
    np.add.at(sums, labels, hbar)
    centres = sums / np.maximum(np.bincount(labels, minlength=g), 1)[:, None]
    return np.abs(hbar - centres[labels]).sum(axis=1)


@pytest.mark.parametrize("groups", [1, 7, 3000, 70000])
def test_group_sums_bit_for_bit(groups):
    """Theorem 3's mean L1 term and the centre distances equal their first implementations to the
    last bit, ties included (rounded histograms: which tied user gets which rank's rounding), with
    16-bit and wider labels."""
    rng = np.random.default_rng(groups)
    n = 80000 if groups > 60000 else 5000
    hbar = np.round(rng.dirichlet(np.ones(9) * 0.5, size=n), 2)
    hbar /= hbar.sum(axis=1, keepdims=True)
    labels = np.unique(rng.integers(0, groups, size=n), return_inverse=True)[1].ravel()
    assert A.mean_group_l1(hbar, labels).tobytes() == _mean_group_l1_reference(hbar, labels).tobytes()
    assert A.group_centre_distances(hbar, labels).tobytes() == _centre_distances_reference(hbar, labels).tobytes()


def test_column_orders_given_or_not_give_the_same_bits():
    """Theorem 3's mean L1 term with the column orders computed once (a job's many groupings) is
    the term computed from scratch, bit for bit (rounded histograms: ties); a wrong shape is refused."""
    rng = np.random.default_rng(3)
    hbar = np.round(rng.dirichlet(np.ones(7) * 0.5, size=4000), 2)
    orders = A.column_orders(hbar)
    for groups in (1, 9, 500):
        labels = np.unique(rng.integers(0, groups, size=4000), return_inverse=True)[1].ravel()
        assert A.mean_group_l1(hbar, labels, orders).tobytes() == A.mean_group_l1(hbar, labels).tobytes()
        assert (A.theorem3_bound(hbar, labels, 0.5, 1e-6, 1.0, 2.0, orders).tobytes()
                == A.theorem3_bound(hbar, labels, 0.5, 1e-6, 1.0, 2.0).tobytes())
    with pytest.raises(ValueError, match="col_orders"):
        A.mean_group_l1(hbar, labels, orders[:, :10])


def test_several_bounds_at_once_give_each_bound_alone():
    """per_user_eps_bounds (the geometry once for every bound) returns, per bound, the arrays of
    per_user_eps run with that bound alone, bit for bit (groups of several sizes, singletons too)."""
    rng = np.random.default_rng(11)
    hbar = rng.dirichlet(np.ones(5) * 500.0, size=3000)
    labels = np.unique(rng.integers(0, 12, size=3000), return_inverse=True)[1].ravel()
    labels[:5] = labels.max() + 1 + np.arange(5)   # five singleton groups
    amps = {"closed": A.clones_amplifier("closed"), "numeric": A.clones_amplifier("numeric")}
    both = A.per_user_eps_bounds(hbar, labels, 0.5, 1.0, 2.0, 1e-6, amps)
    assert list(both) == ["closed", "numeric"]
    for b, amp in amps.items():
        alone = A.per_user_eps(hbar, labels, 0.5, 1.0, 2.0, 1e-6, amp)
        assert sorted(both[b]) == sorted(alone)
        for key, arr in alone.items():
            assert both[b][key].dtype == arr.dtype and both[b][key].tobytes() == arr.tobytes(), (b, key)
    assert (both["numeric"]["eps_shuffle"] < 1.0).any()   # some users amplified: the arrays are not trivial


def test_capped_numeric_amplifier_gives_the_uncapped_arrays():
    """The numerical amplifier takes a cap (per_user_eps passes eps2: values not below it are unused)
    and skips the eps search where the bound exceeds it; the arrays are those of the same amplifier
    called without a cap, bit for bit, and searches were skipped (else the cap would buy nothing)."""
    from shuffledp.accountants.upper import clones

    rng = np.random.default_rng(5)
    # groups of several sizes and spreads: users amplified to 0.1-0.9 eps2, others not at all
    groups = [(4000, 0.02), (3000, 0.3), (300, 0.1), (500, 0.8), (200, 0.4), (2000, 1.0), (100, 0.05)]
    hbar = np.vstack([_cluster(m, spread, rng) for m, spread in groups])
    labels = np.repeat(np.arange(len(groups)), [m for m, _ in groups])
    calls = []
    orig = clones.eps_clones

    def spy(*a, **k):
        v = orig(*a, **k)
        calls.append(v)
        return v

    clones.eps_clones = spy   # the amplifiers bind eps_clones when made
    try:
        capped = A.clones_amplifier("numeric")
        plain = A.clones_amplifier("numeric")
    finally:
        clones.eps_clones = orig
    uncapped = lambda e0, n, delta: plain(e0, n, delta)   # noqa: E731 (no takes_cap: no cap passed)
    for eps1, eps2, c in ((0.5, 1.0, 0.5), (0.2, 2.0, 0.1)):
        n0 = len(calls)
        got = A.per_user_eps(hbar, labels, eps1, eps2, c, 1e-6, capped)
        assert math.inf in calls[n0:]   # some searches were skipped
        ref = A.per_user_eps(hbar, labels, eps1, eps2, c, 1e-6, uncapped)
        for key, arr in ref.items():
            assert got[key].tobytes() == arr.tobytes(), key
        assert (got["eps_shuffle"] < eps2).any()
    assert capped(1.0, 100, 1e-6, cap=0.5) == math.inf and plain(1.0, 100, 1e-6) >= 0.5
    assert capped(2.0, 50_000, 1e-6, cap=2.0) == plain(2.0, 50_000, 1e-6) < 2.0


def _toy_capped_amplifier(calls):
    """A monotone toy bound (grows with eps0, falls with n; on a grid of 1/8, so that ties are
    common) with the cap protocol of clones_amplifier: ``inf`` for a value not below ``cap``;
    ``calls`` records (eps0, n, cap, value)."""
    def amp(e0, n, delta, cap=None):
        v = math.ceil(e0 * 24.0 / math.sqrt(n)) / 8.0
        out = math.inf if cap is not None and v >= cap else v
        calls.append((e0, n, cap, out))
        return out
    amp.takes_cap = True
    return amp


def test_prefix_values_suffix_min_keeps_the_suffix_minima_and_their_arguments():
    """suffix_min visits the prefixes from the last with the smallest later value as the cap: the
    suffix minima and their arguments (what per_user_eps_bounds reads) are those of the full values,
    bit for bit, with fewer values computed; an inf kept for a tight cap is asked again under a looser one."""
    rng = np.random.default_rng(11)
    calls, full_calls = [], []
    amp, full = _toy_capped_amplifier(calls), _toy_capped_amplifier(full_calls)
    cache: dict = {}
    for _ in range(200):
        G = int(rng.integers(3, 400))
        grid, _ = A._prefix_geometry(np.zeros((G, 2)), np.zeros(G), G, 16)
        r = np.sort(rng.uniform(0.0, 0.6, len(grid))) * rng.uniform(0.2, 1.0)
        eps2, c = float(rng.uniform(0.5, 3.0)), float(rng.choice([0.1, 0.5, 1.0]))
        got = A._prefix_values(grid, r, eps2, c, 1e-6, amp, 60.0, cache, suffix_min=True)
        ref = A._prefix_values(grid, r, eps2, c, 1e-6, lambda e, n, d: full(e, n, d), 60.0, {})
        ref = np.where(ref < eps2, ref, math.inf)   # values not below eps2 are never used
        assert np.array_equal(np.minimum.accumulate(got[::-1])[::-1], np.minimum.accumulate(ref[::-1])[::-1])
        assert np.array_equal(A._suffix_argmin(got), A._suffix_argmin(ref))
    computed = sum(1 for *_, v in calls if v < math.inf)
    assert computed < sum(1 for *_, v in full_calls if v < math.inf)   # values above a later one skipped
    # a key first answered inf under a tight cap, then needed where the cap is eps2: asked again
    cache = {}
    first = A._prefix_values(np.array([100, 10_000]), np.array([0.1, 0.1]), 1.0, 1.0, 1e-6, amp, 60.0, cache,
                             suffix_min=True)
    assert first[0] == math.inf and first[1] == math.ceil(1.1 * 24.0 / 100.0) / 8.0
    again = A._prefix_values(np.array([100]), np.array([0.1]), 1.0, 1.0, 1e-6, amp, 60.0, cache, suffix_min=True)
    assert again[0] == math.ceil(1.1 * 24.0 / 10.0) / 8.0


def test_theorem3_noise_term():
    assert A.theorem3_noise_term(17, 0.1, 1000, 1e-6, 1.0, 2.0) == pytest.approx(
        2 * 17 * 0.1 * math.log(1e9) / math.sqrt(5))


def test_cli_account_peruser(capsys):
    rc = main(["account", "peruser", "--eps", "1.3", "--eps1", "0.5", "--c", "0.1", "--group-size", "50000",
               "--radius", "0", "--delta", "1e-6", "--bound", "closed,numeric"])
    assert rc == 0
    rows = json.loads(capsys.readouterr().out)
    closed = next(r for r in rows if r["bound"] == "closed")
    assert closed["eps_prime"] == pytest.approx(0.5 + thm6_printed(0.8, 50000, 1e-6))
    numeric = next(r for r in rows if r["bound"] == "numeric")
    assert numeric["eps_prime"] <= closed["eps_prime"]
    assert main(["account", "peruser", "--eps", "1", "--eps1", "2", "--c", "0.1", "--group-size", "5",
                 "--radius", "0", "--delta", "1e-6"]) == 2
