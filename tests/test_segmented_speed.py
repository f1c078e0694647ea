"""The segmented run job's shortcuts (issue 36) give the draws and numbers of the plain code: the
held sets and item-level counts computed once per repetition (``protocols.segmented.hold``) and the
accountant table read once for every grid point (``experiments.segmented.table_params``)."""

import numpy as np
import pandas as pd
import pytest

from shuffledp.experiments import segmented as ex
from shuffledp.protocols import segmented


def _data(n=400, d=7, s=3, seed=1):
    rng = np.random.default_rng(seed)
    sets = np.stack([rng.choice(d, size=s, replace=False) for _ in range(n)])
    sets[rng.random((n, s)) < 0.2] = -1   # users with fewer than s items (padding)
    levels = rng.permutation(np.repeat(np.arange(3), [n // 4, n // 2, n - n // 4 - n // 2]))
    return sets, levels, d


@pytest.mark.parametrize("sampler, level_mode", [("counts", "exact"), ("messages", "exact"), ("counts", "grr")])
def test_held_gives_the_same_draws_at_every_m(sampler, level_mode):
    sets, levels, d = _data()
    held = segmented.hold(sets, levels, d, 3)
    # what the users hold, counted one by one: padding entry i of a user is item d + i
    want = np.zeros((d + sets.shape[1], 3), dtype=np.int64)
    for row, k in zip(sets, levels, strict=True):
        for i, x in enumerate(row):
            want[x if x >= 0 else d + i, k] += 1
    assert held.domain == d + sets.shape[1] and np.array_equal(held.item_level, want)
    for m in (0.0, 0.3, 1.0, 2.5):
        lam = [0.2, 0.5, 0.9]
        kw = dict(level_mode=level_mode, epsilon_p=1.0, sampler=sampler)
        plain = segmented.run_segmented(sets, levels, lam, m, d, np.random.default_rng(7), **kw)
        fast = segmented.run_segmented(sets, levels, lam, m, d, np.random.default_rng(7), held=held, **kw)
        assert np.array_equal(plain.counts, fast.counts) and plain.n_messages == fast.n_messages
        assert np.array_equal(plain.estimate, fast.estimate) and np.array_equal(plain.n_hat, fast.n_hat)


def test_held_of_other_arrays_is_refused():
    sets, levels, d = _data()
    held = segmented.hold(sets, levels, d, 3)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="held"):   # other levels (a copy is another repetition's array)
        segmented.run_segmented(sets, levels.copy(), [0.2, 0.5, 0.9], 1.0, d, rng, held=held)
    with pytest.raises(ValueError, match="held"):
        segmented.run_segmented(sets.copy(), levels, [0.2, 0.5, 0.9], 1.0, d, rng, held=held)
    with pytest.raises(ValueError, match="held"):   # held with padding, run without
        segmented.run_segmented(sets, levels, [0.2, 0.5, 0.9], 1.0, d, rng, held=held, padding=False)
    with pytest.raises(ValueError, match="held"):   # another number of levels
        segmented.run_segmented(sets, levels, [0.2, 0.5, 0.9, 1.0], 1.0, d, rng, held=held)


def test_table_params_equal_params_from_table_at_every_point():
    rng = np.random.default_rng(3)
    grid = [0.1, 0.3, 1.0, 3.0]
    rows = [{"m": m, "level": k, "eps": e, "lambda": float(rng.random()), "source": "grid", "accountant": a}
            for a in ("sound", "paper") for m in grid for k, e in ((3, 2.0), (1, 0.5), (2, 1.0))]
    rows.append({"m": 0.7, "level": 1, "eps": 0.5, "lambda": 0.5, "source": "optimum", "accountant": "sound"})
    acct = pd.DataFrame(rows).sample(frac=1.0, random_state=0)   # rows in no order
    for variant in ("sound", "paper"):
        got = ex.table_params(acct, [0.5, 1.0, 2.0], variant)
        assert len(got) == len(grid)
        for i, (m, lam) in enumerate(got):
            want_m, want_lam = ex.params_from_table(acct, i, [0.5, 1.0, 2.0], variant)
            assert m == want_m == grid[i] and np.array_equal(lam, want_lam)
            sel = acct[(acct["accountant"] == variant) & (acct["source"] == "grid") & (acct["m"] == grid[i])]
            assert list(lam) == list(sel.sort_values("level")["lambda"])
    with pytest.raises(ValueError, match="other levels"):
        ex.table_params(acct, [0.5, 1.0, 4.0], "sound")
    with pytest.raises(ValueError, match="2 rows"):   # a duplicated row is refused, not picked
        dup = acct[(acct["accountant"] == "sound") & (acct["source"] == "grid")].iloc[:1]
        ex.table_params(pd.concat([acct, dup]), [0.5, 1.0, 2.0], "sound")


def test_prepared_data_read_once_per_file_version(tmp_path):
    import pyarrow as pa

    from shuffledp.io import write_table

    path = tmp_path / "prep.parquet"

    def write(first_item):
        cols = {"item_0": pa.array([first_item, 1, 2], type=pa.int32()),
                "item_1": pa.array([3, -1, 4], type=pa.int32())}
        write_table(pa.table(cols), str(path), {"d": 5, "s": 2, "truth": [0.2] * 5, "padding": 2})

    write(0)
    a, meta = ex._load_prepared_once(str(path))
    b, _ = ex._load_prepared_once(str(path))
    want, want_meta = ex.load_prepared(str(path))
    assert a is b and np.array_equal(a, want) and meta == want_meta
    with pytest.raises(ValueError):   # shared between the job's panels: read-only
        a[0, 0] = 9
    meta["truth"][0] = 1.0            # the metadata is the caller's copy
    assert ex._load_prepared_once(str(path))[1] == want_meta
    import os

    write(3)                          # a new version of the file is read again
    os.utime(path, ns=(1, 1))         # even with an older modification time
    c, _ = ex._load_prepared_once(str(path))
    assert c[0, 0] == 3


@pytest.mark.parametrize("padding", [True, False])
def test_sepmm_counts_each_level_as_run_mm_on_its_rows(padding):
    """SepMM counts every level's instance at once: the same draws and estimates as ``run_mm`` on
    each level's rows in level order (the definition), with and without padding."""
    from shuffledp.protocols import mm

    sets, levels, d = _data(n=500)
    if not padding:
        sets = np.stack([np.random.default_rng(i).choice(d, size=3, replace=False) for i in range(500)])
    m_levels = [2.5, 0.7, 1.0]
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    combined, per = mm.run_sepmm(sets, levels, m_levels, d, a, padding=padding)
    want = np.asarray([mm.run_mm(sets[levels == k], mk, d, b, padding=padding) for k, mk in enumerate(m_levels)])
    assert np.array_equal(per, want) and np.array_equal(combined, np.full(3, 1 / 3) @ want)
    assert a.bit_generator.state == b.bit_generator.state
    rows, domain = segmented.ps.protocol_sets(sets[levels == 1], d, padding)
    held = (rows.shape[0], segmented.ps.item_level_counts(rows, np.zeros(rows.shape[0], dtype=np.int64), domain, 1),
            domain)
    assert np.array_equal(mm.run_mm(None, 0.7, d, np.random.default_rng(3), padding=padding, held=held),
                          mm.run_mm(sets[levels == 1], 0.7, d, np.random.default_rng(3), padding=padding))


def _complement_by_comparison(padded, big, k, rng):
    """The rejection sampler of ``subset_exp._complement_sample`` (small ``k``) written out: a draw
    is rejected while it equals an item of the row's set or of an earlier slot."""
    n = padded.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    for j in range(k):
        todo = np.arange(n)
        while todo.size:
            cand = rng.integers(0, big, size=todo.size)
            bad = (padded[todo] == cand[:, None]).any(axis=1) | (out[todo, :j] == cand[:, None]).any(axis=1)
            out[todo[~bad], j] = cand[~bad]
            todo = todo[bad]
    return out


@pytest.mark.parametrize("d, s", [(5, 3), (17, 4), (128, 8)])
def test_complement_sample_rejects_as_the_comparisons(d, s):
    from shuffledp.mechanisms import subset_exp as se

    rng = np.random.default_rng(d)
    for k in range(1, max(d // 4, 1) + 1):  # k <= (d + s - s) // 4: the rejection sampler runs
        sets = np.stack([rng.choice(d, size=s, replace=False) for _ in range(700)])
        sets[rng.random(sets.shape) < 0.3] = -1
        padded = se.pad_sets(sets, d)
        a, b = np.random.default_rng(k), np.random.default_rng(k)
        got = se._complement_sample(padded, d + s, k, a)
        assert np.array_equal(got, _complement_by_comparison(padded, d + s, k, b))
        assert a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("d, s", [(2, 2), (5, 3), (17, 4), (128, 8), (40, 1)])
def test_randomize_one_item_as_the_general_path(d, s):
    """k = 1: the output from the same draws as the general path (argsort of the keys, complement
    sampler), the generator left in the same state; rows with tied keys included."""
    from shuffledp.mechanisms import subset_exp as se

    rng = np.random.default_rng(d + s)
    sets = np.stack([rng.choice(d, size=s, replace=False) for _ in range(900)])
    sets[rng.random(sets.shape) < 0.3] = -1
    padded = se.pad_sets(sets, d)
    for eps in (0.3, 2.0):
        r = se.subset_exp_rates(d, s, eps, 1)
        a, b = np.random.default_rng(7), np.random.default_rng(7)
        got = se.randomize(padded, r, a)
        n, big = padded.shape[0], d + s
        inter = b.choice(se.intersection_pmf(r).size, size=n, p=se.intersection_pmf(r))
        own = np.take_along_axis(padded, np.argsort(b.random((n, s)), axis=1), axis=1)
        comp = se._complement_sample(padded, big, 1, b)
        want = np.where(inter[:, None] >= 1, own[:, :1], comp)
        assert got.shape == (n, 1) and got.dtype == want.dtype
        assert np.array_equal(got, want)
        assert a.bit_generator.state == b.bit_generator.state


def test_randomize_one_item_takes_argsorts_first_of_tied_keys():
    """Rows whose smallest keys tie (at positions 1 and 3, and at every position) take the item
    argsort puts first (the general path's), whichever tie it is."""
    from shuffledp.mechanisms import subset_exp as se

    keys = np.tile([0.5, 0.125, 0.25, 0.125, 0.75, 0.5], (50, 1))
    keys[25:] = 0.25

    class Tied:   # the intersection sizes all 1 and tied keys; the complement's draws from a real generator
        def __init__(self):
            self.g = np.random.default_rng(3)

        def choice(self, a, *, size, p):
            return np.ones(size, dtype=np.int64)

        def random(self, shape):
            return keys.copy()

        def integers(self, *a, **k):
            return self.g.integers(*a, **k)

    padded = se.pad_sets(np.tile(np.arange(6), (50, 1)), 40)
    got = se.randomize(padded, se.subset_exp_rates(40, 6, 1.0, 1), Tied())
    want = np.take_along_axis(padded, np.argsort(keys, axis=1), axis=1)[:, :1]
    assert np.array_equal(got, want)
