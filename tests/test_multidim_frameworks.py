"""CALM marginals and HDG range queries with MHM / FLAME as the frequency component (issue 16)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from shuffledp.accountants.upper.blanket import delta_blanket
from shuffledp.tasks import marginals as M
from shuffledp.tasks import range_queries as R
from shuffledp.tasks.frequency import ExactComponent, FLAMEComponent, MHMComponent, make_component


def _correlated(n, domains, seed):
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 4, n)
    return np.stack([(z + rng.integers(0, 2, n)) % c for c in domains], axis=1).astype(np.int64)


def _independent_factorial(domains, seed, reps=3):
    """Every combination of values, each repeated a product of per-attribute multiplicities: the table
    is exactly a product distribution, so maximum entropy from any margins reproduces it exactly."""
    rng = np.random.default_rng(seed)
    mult = [rng.integers(1, 4, c) for c in domains]
    rows = []
    for combo in itertools.product(*[range(c) for c in domains]):
        rows += [combo] * int(np.prod([m[v] for m, v in zip(mult, combo, strict=True)]))
    return np.array(rows, dtype=np.int64)


# ------------------------------------------------------------------ views: unbiased


@pytest.mark.parametrize("component", [MHMComponent(), FLAMEComponent()])
def test_view_frequencies_unbiased(component):
    """Raw view estimates averaged over R = 40 repetitions sit within 5 empirical standard errors of the
    truth in every cell (t with 39 df: a correct estimator fails a cell with probability ~1e-5, ~100
    cells)."""
    domains = [3, 4, 2, 3]
    data = _correlated(4000, domains, 1)
    views = M.select_views(domains, 3)
    codes, vdoms = M.encode_views(data, domains, views)
    truth = [np.bincount(codes[:, j], minlength=k) / len(data) for j, k in enumerate(vdoms)]
    reps = 40
    runs = [[] for _ in vdoms]
    rng = np.random.default_rng(7)
    for _ in range(reps):
        fe = component.estimate(codes, vdoms, 1.0, 1 / len(data), rng)
        for r, e in zip(runs, fe.estimates, strict=True):
            r.append(e)
    var = component.cell_variances(len(data), vdoms, 1.0, 1 / len(data))
    for r, t, v in zip(runs, truth, var, strict=True):
        r = np.array(r)
        se = r.std(axis=0, ddof=1) / math.sqrt(reps)
        assert np.all(np.abs(r.mean(axis=0) - t) < 5 * se + 1e-12)
        assert v > 0 and se.max() < 0.02  # informative: a bias of 0.1 (true cells are 0-0.07) is caught


# ------------------------------------------------------------------ consistency


def test_calm_consistency_preserves_totals_and_views_agree():
    rng = np.random.default_rng(3)
    domains = [3, 4, 2, 5, 3]
    views = M.select_views(domains, 3)
    noisy = []
    for v in views:
        t = rng.dirichlet(np.ones(M.view_domain(v, domains))) + rng.normal(0, 0.01, M.view_domain(v, domains))
        noisy.append(t / t.sum())  # each view totals 1 but they disagree on shared attributes
    out = M.consistency(noisy, views, domains, cell_variance=rng.uniform(0.5, 2.0, len(views)))
    for t in out:
        assert t.sum() == pytest.approx(1.0, abs=1e-12)
    for (i, v), (j, w) in itertools.combinations(enumerate(views), 2):
        s = tuple(sorted(set(v) & set(w)))
        if s:
            np.testing.assert_allclose(M.project(out[i], v, s), M.project(out[j], w, s), atol=1e-12)
    # before consistency they did disagree (the test is not vacuous)
    v, w = views[0], views[1]
    s = tuple(sorted(set(v) & set(w)))
    assert np.abs(M.project(noisy[0].reshape([domains[a] for a in v]), v, s)
                  - M.project(noisy[1].reshape([domains[a] for a in w]), w, s)).max() > 1e-4
    # full post-processing ends with consistency: agreement and total 1 remain
    post = M.postprocess(noisy, views, domains)
    assert all(t.sum() == pytest.approx(1.0, abs=1e-12) for t in post)


def test_hdg_consistency_agrees_on_every_attribute():
    rng = np.random.default_rng(4)
    grids = R.Grids(d=4, c=16, g1=8, g2=4)
    tabs = [rng.dirichlet(np.ones(k)) + rng.normal(0, 0.01, k) for k in grids.domains]
    tot = [t.sum() for t in tabs]
    out = R.attribute_consistency(tabs, grids, cell_variance=rng.uniform(0.5, 2, grids.count))
    totals = [t.sum() for t in out]
    assert max(totals) - min(totals) < 1e-12
    assert min(tot) - 1e-12 <= totals[0] <= max(tot) + 1e-12  # a weighted mean of the totals
    for a in range(grids.d):
        members = [a] + [grids.d + i for i, p in enumerate(grids.pairs) if a in p]
        margs = [R._attr_marginal(out[j], j, a, grids) for j in members]
        for m in margs[1:]:
            np.testing.assert_allclose(m, margs[0], atol=1e-12)


def test_norm_sub_is_nonnegative_and_sums_to_one():
    v = np.array([0.5, -0.2, 0.4, 0.3, -0.01])
    out = M.norm_sub(v)
    assert out.min() >= 0 and out.sum() == pytest.approx(1.0)
    # the positive cells move by one common amount
    kept = out > 0
    assert np.ptp((v - out)[kept]) < 1e-12


# ------------------------------------------------------------------ no noise: brute force


def test_calm_no_noise_equals_brute_force():
    exact = ExactComponent()
    # (a) any table: marginals inside a view are exact
    domains = [3, 4, 2, 3, 2]
    data = _correlated(3000, domains, 5)
    views = M.select_views(domains, 3)
    codes, vdoms = M.encode_views(data, domains, views)
    fe = exact.estimate(codes, vdoms, math.inf, 0.0, None)
    tables = M.postprocess(fe.estimates, views, domains)
    for v in views:
        np.testing.assert_allclose(M.answer_marginal(tables, views, domains, v), M.true_marginal(data, domains, v),
                                   atol=1e-12)
    # (b) a product-distribution table: every 3-way marginal (inside a view or by maximum entropy) is exact
    domains = [2, 3, 2, 3, 2]
    data = _independent_factorial(domains, 6)
    views = M.select_views(domains, 3)
    codes, vdoms = M.encode_views(data, domains, views)
    tables = M.postprocess(exact.estimate(codes, vdoms, math.inf, 0.0, None).estimates, views, domains)
    outside = 0
    for q in itertools.combinations(range(len(domains)), 3):
        outside += not any(set(q) <= set(v) for v in views)
        np.testing.assert_allclose(M.answer_marginal(tables, views, domains, q), M.true_marginal(data, domains, q),
                                   atol=1e-8)
    assert outside > 0  # maximum entropy was exercised


def test_hdg_no_noise_equals_brute_force():
    exact = ExactComponent()
    c = 8
    rng = np.random.default_rng(8)
    data = np.clip(_correlated(5000, [c] * 4, 9) + rng.integers(0, 5, (5000, 4)), 0, c - 1)
    grids = R.Grids(4, c, c, c)
    tabs = R.postprocess(exact.estimate(R.encode_grids(data, grids), grids.domains, math.inf, 0.0, None).estimates,
                         grids)
    mats = R.response_matrices(tabs, grids)
    for q in R.random_queries(4, c, 2, 20, 0.5, rng):
        assert R.answer_query(mats, q) == pytest.approx(R.true_answer(data, q), abs=1e-9)
    # coarser grids: 2-D queries aligned with the 2-D cells are still exact
    grids = R.Grids(4, c, 4, 2)
    tabs = R.postprocess(R.true_grids(data, grids), grids)
    mats = R.response_matrices(tabs, grids)
    q = R.RangeQuery((1, 3), (0, 4), (3, 7))
    assert R.answer_query(mats, q) == pytest.approx(R.true_answer(data, q), abs=1e-9)
    # 3-D queries on a product-distribution table: exact through maximum entropy
    data = _independent_factorial([c] * 3, 10)
    grids = R.Grids(3, c, c, c)
    mats = R.response_matrices(R.postprocess(R.true_grids(data, grids), grids), grids)
    for q in R.random_queries(3, c, 3, 10, 0.5, rng):
        assert R.answer_query(mats, q) == pytest.approx(R.true_answer(data, q), abs=1e-6)


def test_mhm_large_eps_close_to_exact():
    """MHM at a very large eps_s is not noise-free (a user reports one of the d hashed values, so the
    data-dependent term of Lemma 4 stays), but every view cell lies within 6 Lemma-4 standard errors
    of the brute-force truth, and those errors are small."""
    from shuffledp.protocols.mhm import lemma4_variance

    domains = [3, 4, 2, 3]
    data = _correlated(20000, domains, 11)
    views = M.select_views(domains, 3)
    codes, vdoms = M.encode_views(data, domains, views)
    comp = MHMComponent()
    n = len(data)
    st = comp.setting(n, vdoms, 8.0, 1 / n)
    fe = comp.estimate(codes, vdoms, 8.0, 1 / n, np.random.default_rng(12))
    for e, v in zip(fe.estimates, views, strict=True):
        truth = M.true_marginal(data, domains, v).ravel()
        se = np.sqrt(lemma4_variance(st.eps_l, len(views), st.g, n, truth))
        assert se.max() < 0.005
        assert np.all(np.abs(e - truth) < 6 * se)


# ------------------------------------------------------------------ accountants


def test_mhm_view_budget_is_the_blanket_accountant():
    """Each view's eps_l is the MHM blanket inverse for n reports of m views (Sec. 6.1.2: one MHM over
    the views), and the blanket bound at that eps_l meets delta_s (checked independently)."""
    n, eps, domains = 20000, 0.5, [60, 120, 40, 300, 90]
    comp = MHMComponent(bound="bennett")
    st = comp.setting(n, domains, eps, 1 / n)
    assert comp.local_budgets(n, domains, eps, 1 / n) == [st.eps_l] * len(domains)
    assert st.amplified and st.eps_l > eps
    assert delta_blanket(st.eps_l, n, eps, mechanism="mhm", bound="bennett", d=len(domains), g=st.g) <= 1 / n
    # and it is nearly the largest such: 1% more budget breaks the bound
    assert delta_blanket(st.eps_l * 1.01, n, eps, mechanism="mhm", bound="bennett", d=len(domains), g=st.g) > 1 / n


def test_flame_view_budget_is_the_papers_formula():
    """FLAME's budget for a view of k cells is the seed's Sec. 6.1.2 formula
    log((N_p - 1) eps_ck^2 / (14 log(2 / delta_ck)) - k + 1) (with BBGN's second condition), never below
    eps_s; large views get eps_s, which is why FLAME degrades on views."""
    n, eps, domains = 100000, 1.0, [4, 16, 300, 4000]
    m = len(domains)
    got = FLAMEComponent().local_budgets(n, domains, eps, 1 / n)
    n_p = math.ceil(n / 3)
    eps_ck = math.log(m * (math.exp(eps / 2) - 1) + 1)
    for k, e in zip(domains, got, strict=True):
        val = min((n_p - 1) * eps_ck**2 / (14 * math.log(2 / (m / n))), (n_p - 1) * eps_ck / 27) - k + 1
        assert e == pytest.approx(max(math.log(val) if val > 1 else 0.0, eps), rel=1e-12)
    assert got[-1] == eps
    # against the exact k-RR blanket accountant, inside the theorem's range (eps_ck <= 1): sound
    n, eps, domains = 100000, 0.4, [4, 8]
    m = len(domains)
    eps_ck = math.log(m * (math.exp(eps / 2) - 1) + 1)
    assert eps_ck <= 1
    for k, e in zip(domains, FLAMEComponent().local_budgets(n, domains, eps, 1 / n), strict=True):
        assert e > eps
        assert delta_blanket(e, math.ceil(n / 3), eps_ck, mechanism="krr", bound="bennett", k=k) <= m / n


# ------------------------------------------------------------------ HDG pieces, jobs, CLI


def test_granularities_follow_hdg_guideline():
    # the guideline written with the oracle's variance agrees with HDG's LDP formula
    n, d, eps, c = 200000, 6, 1.0, 64
    m = d + d * (d - 1) // 2
    v = 4 * m * math.exp(eps) / (n * (math.exp(eps) - 1) ** 2)
    assert R.granularities(n, d, eps, c) == R.granularities_from_variance(v, c)
    g1, g2 = R.granularities_from_variance(1e-7, 16)
    assert (g1, g2) == (16, 16)
    with pytest.raises(ValueError):
        R.granularities(n, d, eps, 12)


def _config():
    br = {"source": "standin", "records": 100000, "attributes": {"A": 2, "B": 3, "C": 4, "D": 5}}
    return _filled({"name": "t", "seed": 5, "datasets": {"ipums": {"br": br}},
            "multidim_frameworks": {
                "components": ["mhm", "flame"], "eps": [0.5, 1.0], "bound": "bennett",
                "hash_family_bits": 32, "flame_np_fraction": 1 / 3, "flame_variant": "balle",
                "calm": {"datasets": ["br"], "records": 1000, "view_size": 3, "max_view_cells": 4096,
                         "marginals": 3, "marginal_size": 3, "reps": 1, "rounds": 2},
                "hdg": {"datasets": ["adult", "loan"], "records": None, "domain": 8, "granularity": "hdg", "queries": 3,
                        "query_dim": 3, "reps": 2, "volume": 0.5, "rounds": 2},
                "loan": {"source": "standin"}}})


def _filled(cfg: dict) -> dict:
    """``cfg`` with the schema's defaults filled in, as validation fills them."""
    from shuffledp.config import fill_defaults

    fill_defaults(cfg)
    return cfg


def test_jobs_one_per_framework_component_dataset_every_eps_inside():
    from shuffledp.stages.jobs import JobTable, canonical
    from shuffledp.stages.multidim_frameworks import jobs

    js = jobs(_config())
    table = JobTable(js)  # no two jobs with the same identity
    runs = [j for j in js if j.step == "run"]
    assert len(runs) == 2 * 1 + 2 * 2  # components x (CALM datasets + HDG datasets)
    assert all(j.spec["eps"] == [0.5, 1.0] and "eps" not in j.wildcards for j in runs)
    keys = {tuple(sorted(j.wildcards.items())) for j in runs}
    assert len(keys) == len(runs)
    calm = table.job("run", {"framework": "calm", "component": "mhm", "dataset": "br"})
    assert "view_size" in calm.spec and "domain" not in calm.spec and "np_fraction" not in calm.spec
    hdg = table.job("run", {"framework": "hdg", "component": "flame", "dataset": "loan"})
    assert "queries" in hdg.spec and "view_size" not in hdg.spec and "family_bits" not in hdg.spec
    assert json.loads(canonical(hdg.spec)) == hdg.spec
    assert [j.step for j in js].count("report") == 1


def test_calm_on_the_real_ordinal_tables():
    """CALM on Adult and Loan reads the ordinal tables of the stage's own adult/loan steps (built once,
    also without HDG on that dataset)."""
    from shuffledp.stages.jobs import JobTable
    from shuffledp.stages.multidim_frameworks import check_config, jobs

    cfg = _config()
    cfg["multidim_frameworks"]["calm"]["datasets"] = ["br", "adult", "loan"]
    cfg["multidim_frameworks"]["hdg"]["datasets"] = ["adult"]
    check_config(cfg)
    js = jobs(cfg)
    table = JobTable(js)
    assert [j.step for j in js].count("loan") == 1 and [j.step for j in js].count("adult") == 1
    calm_loan = table.job("run", {"framework": "calm", "component": "flame", "dataset": "loan"})
    assert calm_loan.inputs["table"][0].step == "loan" and calm_loan.spec["records"] == 1000
    report = table.job("report", {})
    assert report.spec["calm_datasets"] == ["br", "adult", "loan"]
    assert report.spec["datasets"] == ["adult", "br", "loan"]


def test_records_above_the_table_are_said_under_the_frameworks_key(tmp_path, capsys):
    import pandas as pd

    from shuffledp.datasets.provenance import write_table
    from shuffledp.experiments.multidim_frameworks import load_table

    path = tmp_path / "loan.parquet"
    write_table(pd.DataFrame({"a": [0, 1, 2], "b": [1, 1, 0]}), path, {"dataset": "loan", "domains": {"a": 4, "b": 2}})
    data, domains, _, _ = load_table(path, 500, 1, "loan", "calm")
    assert data.shape == (3, 2) and domains == [4, 2]
    assert "multidim_frameworks.calm.records: 500 exceeds the 3 rows" in capsys.readouterr().err


def test_editing_one_key_changes_only_the_specs_that_hold_it():
    """The rules pass the canonical spec as params: a job reruns exactly when its spec changes."""
    import copy

    from shuffledp.stages.jobs import canonical
    from shuffledp.stages.multidim_frameworks import jobs

    def changed(mutate):
        cfg = copy.deepcopy(_config())
        mutate(cfg["multidim_frameworks"])
        before = {(j.step, tuple(sorted(j.wildcards.items()))): canonical(j.spec) for j in jobs(_config())}
        after = {(j.step, tuple(sorted(j.wildcards.items()))): canonical(j.spec) for j in jobs(cfg)}
        assert before.keys() == after.keys()
        return {dict(k[1]).get("framework", "") + "/" + dict(k[1]).get("component", dict(k[1]).get("dataset", ""))
                + ":" + k[0] for k in before if before[k] != after[k]}

    assert changed(lambda s: s.update(flame_variant="seed33")) == {"calm/flame:run", "hdg/flame:run"}
    assert changed(lambda s: s["hdg"].update(queries=4)) == {"hdg/mhm:run", "hdg/flame:run", "/:report"}
    assert changed(lambda s: s["calm"].update(view_size=2)) == {"calm/mhm:run", "calm/flame:run"}
    assert changed(lambda s: s["hdg"].update(domain=16)) == {"hdg/mhm:run", "hdg/flame:run", "/:loan", "/:adult"}
    assert changed(lambda s: s["loan"].update(records=500)) == {"/:loan"}


def test_run_job_reproducible_and_mhm_beats_flame(tmp_path):
    import pandas as pd

    from shuffledp.datasets import loan
    from shuffledp.datasets.provenance import write_table
    from shuffledp.experiments.multidim_frameworks import run_job
    from shuffledp.stages.jobs import JobTable
    from shuffledp.stages.multidim_frameworks import jobs

    # a 4-attribute stand-in-like ordinal table (10 grids keep MHM's exact accountant fast)
    attrs = loan.ATTRIBUTES[:4]
    table = loan.standin(3000, 8, np.random.default_rng(2), attrs)
    path = tmp_path / "loan.parquet"
    write_table(pd.DataFrame(table), path, {"dataset": "loan", "standin": True, "domains": {a: 8 for a in attrs}})
    js = JobTable(jobs(_config()))
    whole = js.job("run", {"framework": "hdg", "component": "mhm", "dataset": "loan"}).spec
    spec = dict(whole, eps=[1.0])
    a, b = run_job(spec, str(path)), run_job(spec, str(path))
    write_table(a, tmp_path / "a.parquet")
    write_table(b, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()  # no timings inside
    assert bool(a.standin.all())
    fl = run_job(dict(js.job("run", {"framework": "hdg", "component": "flame", "dataset": "loan"}).spec, eps=[1.0]),
                 str(path))
    # granularity "hdg": HDG's guideline, the same grids for both components (Fig. 8 compares like with like)
    assert (a.g1.iloc[0], a.g2.iloc[0]) == (fl.g1.iloc[0], fl.g2.iloc[0])
    # 2 repetitions each; the grid MSE gap at these settings is large (measured ~5x), so this is not flaky
    assert a.unit_mse.mean() < fl.unit_mse.mean()
    # every eps_s in one job: the eps_s = 1 rows are those of a job holding only eps_s = 1
    both = run_job(dict(whole, eps=[0.5, 1.0]), str(path))
    assert list(both.eps.unique()) == [0.5, 1.0]
    write_table(both[both.eps == 1.0], tmp_path / "c.parquet")
    assert (tmp_path / "c.parquet").read_bytes() == (tmp_path / "a.parquet").read_bytes()
    tuned = run_job(dict(spec, granularity="component", reps=1), str(path))
    assert tuned.g1.iloc[0] >= a.g1.iloc[0]  # MHM's variance is far below LDP's at eps_s: finer grids


def test_step_bad_spec_is_one_line_error(tmp_path):
    """``shuffledp step multidim_frameworks ...``: a bad spec or input is one line, exit 2, nothing written."""
    import subprocess
    import sys

    def run(step, spec, inputs, text=None):
        (tmp_path / "s.json").write_text(text if text is not None else json.dumps(spec))
        (tmp_path / "io.json").write_text(json.dumps({"input": inputs, "output": {"table": str(tmp_path / "y")}}))
        proc = subprocess.run([sys.executable, "-m", "shuffledp", "step", "multidim_frameworks", step, "--spec",
                               str(tmp_path / "s.json"), "--io", str(tmp_path / "io.json")], capture_output=True,
                              text=True, cwd=tmp_path)  # its files: inside the working folder
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(("shuffledp: error: --spec", "shuffledp: error: input", "shuffledp: error: --io"))
        assert proc.stderr.count("\n") == 1, proc.stderr
        return proc.stderr

    run_spec = {"framework": "hdg", "component": "mhm", "dataset": "loan", "eps": [1.0], "seed": 1, "reps": 1,
                "records": None, "domain": 8, "queries": 5, "query_dim": 2, "volume": 0.5, "granularity": "hdg",
                "rounds": 0, "bound": "hoeffding", "family_bits": 32}
    assert "not valid JSON" in run("run", None, {"table": []}, text="{nope")
    loan = {"dataset": "loan", "seed": 1, "domain": 12, "source": "standin", "path": None, "records": None,
            "mirror": None, "raw_dir": "data/raw"}
    assert "power of two" in run("loan", loan, {"source": []})
    bad_coding = dict(loan, domain=16, coding={"int_rate": {"scale": "log", "lo": 0, "hi": 31}})
    assert "coding" in run("loan", bad_coding, {"source": []})  # a public range that cannot cut: one line
    assert "no such file" in run("run", run_spec, {"table": [str(tmp_path / "nonexistent.parquet")]})
    assert "outside the working folder" in run("run", run_spec, {"table": ["/nonexistent.parquet"]})
    assert "eps[0]: must be >= 1e-06" in run("run", dict(run_spec, eps=[-1.0]), {"table": [__file__]})
    # a key of the other framework (or component) is refused, naming it
    assert "view_size: not a key of a hdg run" in run("run", dict(run_spec, view_size=2), {"table": [__file__]})
    assert "queries: missing key" in run("run", {k: v for k, v in run_spec.items() if k != "queries"},
                                         {"table": [__file__]})
    assert not (tmp_path / "y").exists()


def test_make_component_unknown():
    with pytest.raises(ValueError, match="unknown"):
        make_component("tcm")


def test_config_checks():
    from shuffledp.config import ConfigError
    from shuffledp.stages.multidim_frameworks import check_config

    check_config(_config())
    for mutate, needle in ((lambda c: c["multidim_frameworks"].update(eps=[1.0, 0.5]), "eps"),
                           (lambda c: c["multidim_frameworks"]["hdg"].update(domain=12), "power of two"),
                           (lambda c: c["multidim_frameworks"]["calm"].update(datasets=["zz"]), "datasets.ipums"),
                           (lambda c: c["multidim_frameworks"]["loan"].update(source="file"), "path"),
                           (lambda c: c["multidim_frameworks"]["calm"].update(datasets=["adult"], view_size=6),
                            "5 ordinal attributes of adult"),
                           (lambda c: (c["multidim_frameworks"]["calm"].update(datasets=["loan"]),
                                       c["multidim_frameworks"].pop("hdg")), "needs the hdg part")):
        cfg = _config()
        mutate(cfg)
        with pytest.raises(ConfigError, match=needle):
            check_config(cfg)


def test_ipf_many_is_ipf_bit_for_bit():
    """The batched maximum-entropy fit gives every problem exactly (==) what ipf gives it alone:
    consistent and inconsistent pair tables (these stop at different iterations, some at the cap),
    empty cells, and problems it does not batch (4-D pair margins, mixed axes)."""
    rng = np.random.default_rng(3)
    for lam, count in ((3, 40), (4, 6)):
        pairs = list(itertools.combinations(range(lam), 2))
        problems = []
        for k in range(count):
            joint = rng.random([2] * lam) ** 3  # consistent margins: converge, each at its own iteration
            cons = []
            for a, b in pairs:
                other = tuple(i for i in range(lam) if i not in (a, b))
                t = joint.sum(axis=other) if k % 3 == 1 else rng.random((2, 2)) if k % 3 else np.full((2, 2), 0.25)
                if k % 7 == 2:
                    t[0, 1] = 0.0
                cons.append(((a, b), t))
            problems.append(cons)
        for iters in (1000, 3):
            got = M.ipf_many([2] * lam, problems, iters=iters)
            for p, x in zip(problems, got, strict=True):
                assert np.array_equal(x, M.ipf([2] * lam, p, iters=iters))
    mixed = [[((0, 1), rng.random((2, 3)))], [((1, 2), rng.random((3, 4)))]]
    for p, x in zip(mixed, M.ipf_many([2, 3, 4], mixed), strict=True):
        assert np.array_equal(x, M.ipf([2, 3, 4], p))


def test_ipf_many_is_ipf_bit_for_bit_any_shape():
    """Batched fits of any shape (CALM's 3-way marginals of domains up to 40, 2-D and 4-D tables, one
    long innermost axis where numpy sums pairwise in blocks) equal ipf's, bit for bit: consistent and
    inconsistent targets, zero cells, one to seven problems, at the iteration cap too."""
    rng = np.random.default_rng(5)
    shapes = [(2, 20, 5), (17, 8, 12), (5, 40, 3), (7, 9), (3, 4, 5, 6), (2, 9000), (1, 6, 4), (13, 2, 2)]
    for k, shape in enumerate(shapes):
        nd = len(shape)
        axes = list(itertools.combinations(range(nd), max(1, nd - 1)))
        if k % 2:
            axes += list(itertools.combinations(range(nd), 1))[:1]
        problems = []
        for j in range(1 + k % 7):
            joint = rng.random(shape) ** 3
            cons = []
            for a in axes:
                other = tuple(i for i in range(nd) if i not in a)
                t = joint.sum(axis=other) if j % 3 != 2 else rng.random([shape[i] for i in a])
                if j % 4 == 3:
                    t.flat[0] = 0.0
                cons.append((a, t))
            problems.append(cons)
        for iters in (1000, 2):
            got = M.ipf_many(shape, problems, iters=iters)
            for p, x in zip(problems, got, strict=True):
                assert np.array_equal(x, M.ipf(shape, p, iters=iters)), (shape, iters)


def test_answer_marginal_many_is_answer_marginal():
    """CALM's answers for several repetitions at once equal each repetition's answer alone (bit for
    bit), for marginals inside a view (projections) and outside every view (maximum entropy)."""
    rng = np.random.default_rng(9)
    domains = [3, 5, 4, 6, 2]
    views = M.select_views(domains, 2)
    sets = []
    for _ in range(4):
        est = [rng.random(M.view_domain(v, domains)) for v in views]
        sets.append(M.postprocess(est, views, domains, rounds=2))
    for q in ((0, 1), (1, 3), (0, 2, 4), (1, 2, 3), (0, 1, 2, 3)):
        got = M.answer_marginal_many(sets, views, domains, q)
        for tables, x in zip(sets, got, strict=True):
            assert np.array_equal(x, M.answer_marginal(tables, views, domains, q)), q


def test_answer_queries_equal_answer_query():
    rng = np.random.default_rng(11)
    d, c = 4, 16
    grids = R.Grids(d, c, 8, 4)
    data = rng.integers(0, c, size=(3000, d))
    truth = R.true_grids(data, grids)
    noisy = [np.maximum(t + rng.normal(0, 0.01, t.shape), 0) for t in truth]
    mats = R.response_matrices(R.postprocess(noisy, grids), grids)
    queries = [q for dim in (2, 3, 4) for q in R.random_queries(d, c, dim, 15, 0.5, rng)]
    assert R.answer_queries(mats, queries) == [R.answer_query(mats, q) for q in queries]
    # several repetitions' matrices at once (a job's): each its own answers, bit for bit
    reps = [R.response_matrices(R.postprocess([np.maximum(t + rng.normal(0, s, t.shape), 0) for t in truth], grids),
                                grids) for s in (0.001, 0.01, 0.05)]
    got = R.answer_queries_many(reps, queries)
    assert got == [[R.answer_query(m, q) for q in queries] for m in reps]
