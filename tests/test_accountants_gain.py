"""What the tighter accountant buys (issue 17): certified local eps and the MSE gain, by formula
and by running the protocols under fixed seeds."""

from __future__ import annotations

import contextlib
import math

import pytest

from shuffledp.accountants import best
from shuffledp.accountants.lower import lower_bounds as L
from shuffledp.accountants.upper import decomposition as D
from shuffledp.experiments import accountants_gain as G


@pytest.mark.parametrize("k,eps_s,n", [(10, 0.4, 20_000), (100, 0.1, 20_000)])
def test_krr_local_eps_is_certified_and_not_above_the_truth(k, eps_s, n):
    """best's eps_l: at least today's; the blanket decomposition's eps at that eps_l (its own eps
    search, not the delta check that chose it) meets eps_s; and issue 12's exact pair lower bound
    there stays below eps_s (else the certificate would be wrong)."""
    delta = 1.0 / n
    st = G.settings(f"krr{k}", eps_s, delta, n)
    (et, _, _), (eb, gb, by) = st["today"], st["best"]
    assert gb == k and by == "decomposition" and eb > et > eps_s
    up = D.decomposition_eps(None, n, delta, pairs=D.krr_pairs(k, eb), rtol=1e-6)
    assert up <= eps_s * (1 + 1e-5)
    assert L.krr_eps_lower(k, eb, n, delta, rtol=1e-5) <= eps_s
    # and the search is tight to its rtol: 1% more local eps breaks the decomposition's certificate
    assert D.decomposition_delta(None, n, eps_s, pairs=D.krr_pairs(k, eb * 1.01)) > delta


def test_mhm1_setting_is_certified_for_its_hash_range():
    n, eps_s = 20_000, 0.4
    st = G.settings("mhm1", eps_s, 1.0 / n, n)
    eb, g, by = st["best"]
    from shuffledp.protocols import mhm

    assert by == "decomposition" and g == mhm.g_int(eb, 1) and eb > st["today"][0]
    assert D.decomposition_eps(None, n, 1.0 / n, pairs=D.krr_pairs(g, eb), rtol=1e-6) <= eps_s * (1 + 1e-5)


def test_eps_local_for_returns_only_checked_points():
    """A non-monotone bound: the returned eps_l is eps_s or a point where the check passed."""
    calls = []

    def bumpy(e):
        calls.append(e)
        return 0.0 if e < 2.0 or 3.0 < e < 3.5 else 1.0

    e = best.eps_local_for(bumpy, 0.5, 0.1, hi=10.0, rtol=1e-6)
    assert e in calls and bumpy(e) <= 0.1
    with pytest.raises(ValueError, match="--eps"):
        best.eps_local_for(bumpy, -1.0, 0.1)


def test_measured_mse_ratio_agrees_with_the_formula():
    """k-RR (k = 10) and MHM's hashed randomizer (one attribute, 50 values) at n = 2000, eps_s = 1,
    200 seeded runs with each eps_l: the measured MSE ratio (best / today) agrees with the formula's
    within 20%; the tolerance is about 4 relative standard errors of the measured ratio (s.e.
    from the spread of the per-run MSEs, asserted below). The formulas themselves are checked too."""
    spec = {"randomizers": ["krr10", "mhm1"], "mhm_domain": 50, "delta_n": 1.0, "rtol": 1e-4, "seed": 7,
            "measure": {"n": 2000, "eps_s": 1.0, "reps": 200, "tolerance": 0.2}}
    df = G.measure_rows(spec)
    for r in df.itertuples():
        assert r.ratio_formula < 0.95  # a real gain to measure
        assert abs(r.ratio_rel_diff) <= r.tolerance
        assert r.tolerance >= 3.5 * r.ratio_rel_se
        for which in ("today", "best"):
            f, m = getattr(r, f"mse_{which}_formula"), getattr(r, f"mse_{which}_measured")
            assert m == pytest.approx(f, rel=0.2)


def test_gain_rows_and_markdown():
    spec = {"randomizers": ["krr10"], "mhm_domain": 50, "n_grid": [20_000], "eps_s": [0.1], "delta_n": 1.0,
            "rtol": 1e-3}
    df = G.gain_rows(spec)
    (r,) = df.itertuples()
    assert r.eps_l_best >= r.eps_l_today and r.mse_best <= r.mse_today
    assert r.mse_today == pytest.approx(G.krr_mse(r.eps_l_today, 10, 20_000))
    assert r.mse_gain_pct == pytest.approx(100 * (1 - r.mse_best / r.mse_today))
    assert math.isclose(r.delta_s, 1 / 20_000)
    assert "krr10" in G.markdown(df, df.iloc[0:0].assign(reps=[], ratio_formula=[], ratio_measured=[],
                                                          ratio_rel_diff=[], ratio_rel_se=[], tolerance=[]))


def _gain_step(tmp_path, spec, outputs, params=(), cwd=None):
    """``shuffledp step accountants_compare gain``, as the workflow calls it (spec and io files);
    ``params``: the segmented parameter tables the spec's ``subexp`` entries index."""
    import json

    from shuffledp.cli import main

    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "io.json").write_text(json.dumps({"input": {"params": list(params)}, "output": outputs}))
    with contextlib.chdir(cwd or tmp_path):  # a job's files lie inside its working folder
        return main(["step", "accountants_compare", "gain", "--spec", str(tmp_path / "spec.json"),
                     "--io", str(tmp_path / "io.json")])


def test_gain_job_and_step_errors(capsys, tmp_path):

    from shuffledp.config import load_validated
    from shuffledp.stages.accountants_compare import jobs

    cfg = load_validated(["config/config.yaml"])
    (job,) = [j for j in jobs(cfg) if j.step == "gain"]
    assert job.wildcards == {} and job.spec["seed"] == cfg["seed"]
    assert set(job.spec) == {"randomizers", "mhm_domain", "eps_s", "n_grid", "delta_n", "rtol", "seed",
                             "measure", "scale", "subexp"}
    seg = cfg["segmented"]
    assert {(c["d"], c["s"], c["n"]) for c in job.spec["subexp"]} == {
        (v["d"], v["s"], n) for v in seg["datasets"].values() for n in seg["n"]}
    assert all(c["eps_s"] == seg["uniform_eps"] and c["delta_s"] == seg["delta_factor"] / c["n"]
               for c in job.spec["subexp"])
    # each setting reads Subexp-shuffle's eps0 from the segmented parameter table of its (dataset, n)
    assert all("params" in c for c in job.spec["subexp"])
    assert [r.step for r in job.inputs["params"]] == ["params"] * len(job.spec["subexp"])
    files = {k: str(tmp_path / k) for k in ("table", "measured", "md", "pdf", "png")}
    job.spec["subexp"] = [{k: v for k, v in c.items() if k != "params"} for c in job.spec["subexp"]]
    bad = dict(job.spec, randomizers=["krr1"])
    assert _gain_step(tmp_path, bad, files) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shuffledp: error: --spec ")
    assert "randomizers: randomizer 'krr1'" in err[0]
    bad = dict(job.spec, subexp=[{"d": 4, "s": 4, "n": 100, "eps_s": 0.5, "delta_s": 1e-4}])
    assert _gain_step(tmp_path, bad, files) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shuffledp: error: --spec ")
    assert "subexp[0]: s = 4 must be < d" in err[0]
    bad = dict(job.spec, delta_n=1e9)
    assert _gain_step(tmp_path, bad, files) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("shuffledp: error: --spec ") and ": delta_n: delta_n / n" in err
    assert not any((tmp_path / k).exists() for k in files)


def test_gain_step_writes_tables_and_figure(tmp_path):
    import pandas as pd

    spec = {"randomizers": ["krr10", "mhm1"], "mhm_domain": 20, "n_grid": [20_000], "eps_s": [0.4, 1.0],
            "delta_n": 1.0, "rtol": 1e-3, "seed": 3, "scale": "t",
            "measure": {"n": 500, "eps_s": 1.0, "reps": 3, "tolerance": 0.2}}
    out = {k: str(tmp_path / f"g_{k}.{e}") for k, e in (("table", "parquet"), ("measured", "parquet"),
                                                       ("md", "md"), ("pdf", "pdf"), ("png", "png"))}
    assert _gain_step(tmp_path, spec, out) == 0
    g = pd.read_parquet(out["table"])
    assert len(g) == 4 and set(g["randomizer"]) == {"krr10", "mhm1"}
    assert len(pd.read_parquet(out["measured"])) == 2
    md = open(out["md"]).read()
    assert (tmp_path / "g_png.png").stat().st_size > 1000 and "mhm1" in md
    assert "Not in this table: MHM with d > 1 attributes" in md


def test_subexp_mse_formula_matches_simulation():
    """PrivSet's per-item MSE formula (mechanisms.subset_exp.expected_mse) against the estimator's
    squared error over 400 seeded runs, with padded sets (users holding 1..s real items, so the
    mean number of real items per user is below s): agreement within 4 relative standard errors of
    the simulated mean (s.e. from the spread of the per-run errors)."""
    import numpy as np

    from shuffledp import seeding
    from shuffledp.mechanisms import subset_exp as se

    d, s, n, eps, reps = 10, 3, 400, 1.5, 400
    k = se.best_subset_size(d, s, eps)
    r = se.subset_exp_rates(d, s, eps, k)
    rng = seeding.rng(11, "test_subexp_mse")
    sets = np.full((n, s), -1)
    sizes = rng.integers(1, s + 1, size=n)
    for i, m in enumerate(sizes):
        sets[i, :m] = rng.choice(d, size=m, replace=False, p=np.arange(d, 0, -1) / (d * (d + 1) / 2))
    padded = se.pad_sets(sets, d)
    true = np.bincount(sets[sets >= 0], minlength=d) / n
    errs = np.array([np.mean((se.estimate(se.hits(se.randomize(padded, r, rng), d, s), n, r) - true) ** 2)
                     for _ in range(reps)])
    f = se.expected_mse(r, n, mean_items=sizes.mean())
    se_rel = errs.std(ddof=1) / np.sqrt(reps) / errs.mean()
    assert se_rel < 0.05
    assert errs.mean() == pytest.approx(f, rel=4 * se_rel)
    # full sets are the default; the formula really depends on the items held
    assert se.expected_mse(r, n) != pytest.approx(f, rel=0.05)
    with pytest.raises(ValueError, match="mean_items"):
        se.expected_mse(r, n, mean_items=s + 1)


def test_subexp_rows_at_a_segmented_setting():
    """The synthetic T = 128, s = 4 Subexp-shuffle setting (n = 5000, eps = 0.5, delta = 0.01/n):
    best eps_l is the decomposition's certified eps0 (checked independently by the decomposition of
    the grouped pairs), above the variation ratio's; the gain row's MSEs are the formula's; the
    seeded protocol's measured MSE ratio agrees with the formula's within 10% (about 3.5 relative
    standard errors or more, asserted), and the gain is real (formula ratio < 0.9)."""
    from shuffledp.accountants.randomizers import standard as rz

    d, s, n = 128, 4, 5000
    spec = {"randomizers": [], "rtol": 1e-4, "seed": 7,
            "measure": {"n": 2000, "eps_s": 1.0, "reps": 150, "tolerance": 0.1},
            "subexp": [{"d": d, "s": s, "n": n, "eps_s": 0.5, "delta_s": 0.01 / n}]}
    (g,) = G.subexp_gain_rows(spec)
    assert g["randomizer"] == "subexp-d128-s4" and g["best_by"] == "decomposition"
    assert g["eps_l_best"] > g["eps_l_today"] > 0.5
    assert D.decomposition_delta(None, n, 0.5, pairs=rz.subset_exp_pairs(d, s, g["g_best"], g["eps_l_best"])) \
        <= 0.01 / n
    # real pairs' exact coarse-count divergence: below eps_s at best's eps_l, above it at 1% more
    low = best.lower_bounds("subset-exp", g["eps_l_best"], n, 0.01 / n, d=d, s=s, k=g["g_best"])
    assert low["pair-group-counts"]() <= 0.5
    assert best.lower_bounds("subset-exp", 1.01 * g["eps_l_best"], n, 0.01 / n, d=d, s=s)["pair-group-counts"]() > 0.5
    assert g["mse_best"] == G.subexp_mse(g["eps_l_best"], g["g_best"], d, s, n) < g["mse_today"]
    assert g["mse_gain_pct"] == pytest.approx(100 * (1 - g["mse_best"] / g["mse_today"]))
    (m,) = G.subexp_measure_rows(spec)
    assert m["ratio_formula"] < 0.9 and m["eps_l_best"] == g["eps_l_best"]
    assert abs(m["ratio_rel_diff"]) <= m["tolerance"] and m["tolerance"] >= 3.5 * m["ratio_rel_se"]
    for which in ("today", "best"):
        assert m[f"mse_{which}_measured"] == pytest.approx(m[f"mse_{which}_formula"], rel=0.1)


def test_gain_reads_subexp_from_the_segmented_params_table_with_the_same_numbers(tmp_path, monkeypatch):
    """The gain job reads Subexp-shuffle's eps0 from the segmented parameter table instead of searching
    again: the tables are the same as when it searches (the same searches at the same precision), and
    a table of another setting is refused naming the file."""
    import pandas as pd

    from shuffledp.experiments import segmented as ex
    from shuffledp.experiments import segmented_params as sp
    from shuffledp.io import write_table

    n, d, s, eps_s = 3000, 8, 2, 0.5
    delta = 0.01 / n
    params = sp.baseline_params(n, d, s, [0.5, 1.0], {"S1": [0.5, 0.5]}, delta, eps_s, ex.level_counts)
    params.insert(0, "dataset", "x")
    params.insert(1, "n", n)
    table = tmp_path / "params.parquet"
    write_table(params, table)
    setting = {"d": d, "s": s, "n": n, "eps_s": eps_s, "delta_s": delta}
    spec = {"randomizers": ["krr10"], "mhm_domain": 20, "n_grid": [n], "eps_s": [1.0], "delta_n": 1.0,
            "rtol": sp.SUBEXP_RTOL, "seed": 3, "scale": "t", "measure": {"n": 300, "eps_s": 1.0, "reps": 2,
                                                                         "tolerance": 0.2}}
    from shuffledp.experiments import accountants_gain as G

    def no_search(*args, **kw):
        raise AssertionError("searched although the parameter table holds the setting")

    out = {}
    for name, sub, tables in (("searched", setting, []), ("read", dict(setting, params=0), [str(table)])):
        G.subexp_settings.cache_clear()  # one process runs both steps here: nothing carried over
        G._PRESET.clear()
        if name == "read":
            monkeypatch.setattr(sp, "subexp_shuffle_eps0", no_search)
            monkeypatch.setattr(sp, "subexp_shuffle_eps0_vr", no_search)
        (tmp_path / name).mkdir()
        out[name] = {k: str(tmp_path / name / f"g.{k}") for k in ("table", "measured", "md", "pdf", "png")}
        assert _gain_step(tmp_path / name, dict(spec, subexp=[sub]), out[name], tables, cwd=tmp_path) == 0
    for k in ("table", "measured"):
        a, b = pd.read_parquet(out["read"][k]), pd.read_parquet(out["searched"][k])
        assert len(a[a.randomizer.str.startswith("subexp")]) == 1
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    G.subexp_settings.cache_clear()
    G._PRESET.clear()
    other = dict(setting, n=n + 1, params=0)
    (tmp_path / "bad").mkdir()
    assert _gain_step(tmp_path / "bad", dict(spec, subexp=[other]), out["read"], [str(table)]) == 2


def test_eps_local_for_brackets_the_boundary_in_few_probes():
    """A smooth bound with a known boundary r: the answer passes, lies within rtol below r, and a
    failing probe within rtol above it closes the bracket; the interpolating search needs far
    fewer probes than the 17 a bisection of [0.5, 30] to rtol 1e-4 takes."""
    import math

    r, rtol, probes = 5.1234567, 1e-4, []

    def logistic(e):
        probes.append(e)
        return 1.0 / (1.0 + math.exp(-3.0 * (e - r)) * (1e5 - 1.0))  # = 1e-5 at e = r

    e = best.eps_local_for(logistic, 0.5, 1e-5, rtol=rtol)
    assert logistic(e) <= 1e-5 and r * (1 - rtol) <= e <= r
    probes.pop()
    assert any(e < p <= e * (1 + rtol) and logistic(p) > 1e-5 for p in probes)
    assert len(probes) <= 12


def test_eps_local_for_treats_nan_as_failing():
    e = best.eps_local_for(lambda x: float("nan") if x > 2.0 else 0.0, 0.5, 1e-3, rtol=1e-6)
    assert 2.0 * (1 - 1e-6) <= e <= 2.0


def test_paired_ratio_standard_error():
    """Independent pairs: the ratio's relative s.e. is the two in quadrature (within sampling noise of
    the covariance); b proportional to a: the ratio is exact, s.e. 0."""
    import numpy as np

    rng = np.random.default_rng(3)
    a, b = rng.gamma(20.0, 1.0, 4000), rng.gamma(20.0, 2.0, 4000)
    sa, sb, sr = G.paired_ratio(a, b)
    assert sr == pytest.approx(math.hypot(sa, sb), rel=0.05)
    assert G.paired_ratio(a, 3.0 * a)[2] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("guess", [0.7, 5.0, 5.1234567, 5.2, 29.0])
def test_eps_local_for_with_a_guess_on_either_side(guess):
    """A starting guess below, at or above the boundary changes the probes, not the answer's
    guarantee: it passes and lies within rtol below the boundary."""
    r, rtol = 5.1234567, 1e-4

    def logistic(e):
        return 1.0 / (1.0 + math.exp(-3.0 * (e - r)) * (1e5 - 1.0))

    e = best.eps_local_for(logistic, 0.5, 1e-5, rtol=rtol, guess=guess)
    assert logistic(e) <= 1e-5 and r * (1 - rtol) <= e <= r


def test_successive_sample_has_the_law_of_sampling_without_replacement():
    """Rows are s distinct items; the probability of each ordered pair of first two items is the
    successive-sampling law w_i w_j / (1 - w_i) (exact, enumerated), within 4.5 binomial standard
    errors at 200,000 rows, for Zipf weights with a heavy first item (many rejections)."""
    import numpy as np

    w = G._zipf(5)
    rows = G.successive_sample(w, 200_000, 3, np.random.default_rng(5))
    assert all(len(set(r)) == 3 for r in rows[:2000]) and rows.min() >= 0 and rows.max() <= 4
    for i in range(5):
        for j in range(5):
            if i == j:
                continue
            p = w[i] * w[j] / (1 - w[i])
            got = np.mean((rows[:, 0] == i) & (rows[:, 1] == j))
            assert abs(got - p) <= 4.5 * math.sqrt(p * (1 - p) / rows.shape[0]), (i, j, got, p)
    # third slot given the first two: w_k / (1 - w_i - w_j)
    first = (rows[:, 0] == 0) & (rows[:, 1] == 1)
    for k in (2, 3, 4):
        p = w[k] / (1 - w[0] - w[1])
        got = np.mean(rows[first, 2] == k)
        assert abs(got - p) <= 4.5 * math.sqrt(p * (1 - p) / first.sum())


def test_successive_sample_draws_as_comparing_with_earlier_slots():
    """The flag-based clash test takes the same draws and keeps the same items as comparing each
    draw with the row's earlier slots (the rule it replaced), and leaves the generator in the same
    state: the measured tables' bytes do not depend on which of the two runs."""
    import numpy as np

    def by_comparison(w, n, s, rng):
        cdf = np.cumsum(np.asarray(w, float))
        cdf /= cdf[-1]
        out = np.empty((n, s), dtype=np.int64)
        for j in range(s):
            todo = np.arange(n)
            while todo.size:
                cand = np.minimum(np.searchsorted(cdf, rng.random(todo.size), side="right"), cdf.size - 1)
                clash = (out[todo, :j] == cand[:, None]).any(axis=1)
                out[todo[~clash], j] = cand[~clash]
                todo = todo[clash]
        return out

    for d, s, seed in ((5, 5, 1), (17, 4, 2), (40, 8, 3), (3, 1, 4)):
        w = G._zipf(d)
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        got, want = G.successive_sample(w, 3000, s, a), by_comparison(w, 3000, s, b)
        assert np.array_equal(got, want), (d, s)
        assert a.bit_generator.state == b.bit_generator.state


def test_variation_ratio_general_search_is_shared_by_every_krr():
    """The general-parameter variation ratio's search does not depend on k: its cached value is
    the search's own number, and a second k-RR at the same (eps_s, delta_s, n) reuses it."""
    from shuffledp.accountants import best
    from shuffledp.accountants.upper import variation_ratio as vr

    eps_s, delta_s, n, rtol = 0.7, 1e-6, 5000, 1e-3
    G.vr_general_eps_local.cache_clear()
    want = best.eps_local_for(lambda e: vr.vr_delta(vr.vr_params("general", e), n, eps_s), eps_s, delta_s,
                              rtol=rtol)
    got = [G.settings(r, eps_s, delta_s, n, rtol=rtol) for r in ("krr3", "krr7")]
    info = G.vr_general_eps_local.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    assert G.vr_general_eps_local(eps_s, delta_s, n, rtol) == want
    for st in got:   # today is the larger of Bennett's and this search's value
        assert st["today"][0] >= want
