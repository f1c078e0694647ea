"""Tests of the segmented experiment layer: padding/selection, jobs, aggregation, claims, config."""

import copy
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from shuffledp.config import ConfigError
from shuffledp.experiments import segmented as ex
from shuffledp.stages import discover

STAGE = discover()["segmented"]  # the stage's jobs and config check


def test_fixed_width_sets_padding_and_selection():
    items = pa.array([[0, 3], [1, 2, 4, 5, 6, 7], [], [2, 5, 9, 11]], type=pa.list_(pa.int8()))
    out = ex.fixed_width_sets(items, 4, np.random.default_rng(0), "random")
    assert out.shape == (4, 4)
    assert sorted(out[0][out[0] >= 0]) == [0, 3] and (out[0] < 0).sum() == 2
    assert set(out[1]) <= {1, 2, 4, 5, 6, 7} and len(set(out[1])) == 4
    assert np.all(out[2] == -1)
    assert sorted(out[3]) == [2, 5, 9, 11]
    first = ex.fixed_width_sets(items, 4, np.random.default_rng(0), "first")
    assert list(first[1]) == [1, 2, 4, 5]


def test_random_selection_is_uniform():
    items = pa.array([[0, 1, 2, 3, 4, 5]] * 30000, type=pa.list_(pa.int32()))
    out = ex.fixed_width_sets(items, 2, np.random.default_rng(1), "random")
    freq = np.bincount(out.ravel(), minlength=6) / out.shape[0]
    assert np.allclose(freq, 2 / 6, atol=0.015)  # each item kept with probability s/size


def test_level_counts():
    assert list(ex.level_counts(5000, [0.25, 0.5, 0.25])) == [1250, 2500, 1250]
    assert ex.level_counts(1001, [0.25, 0.5, 0.25]).sum() == 1001


def _config():
    from shuffledp.config import load_validated

    return load_validated(["config/config.yaml"])


def test_check_config_rejects_bad_shares_and_levels():
    cfg = _config()
    STAGE.check(cfg)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["settings"]["S1"] = [0.3, 0.5, 0.25]
    with pytest.raises(ConfigError, match="segmented.settings.S1"):
        STAGE.check(bad)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["levels"] = [1.0, 0.5, 2.0]
    with pytest.raises(ConfigError, match="segmented.levels"):
        STAGE.check(bad)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["figures"]["fig2"]["settings"] = ["S9"]
    with pytest.raises(ConfigError, match="figures.fig2"):
        STAGE.check(bad)


def test_check_config_refuses_sampling_users_with_replacement():
    """One record, one user slot (issue 43): a table that may hold fewer users than the largest n is refused."""
    cfg = _config()
    bad = copy.deepcopy(cfg)
    bad["datasets"]["msnbc"]["standin_users"] = max(cfg["segmented"]["n"]) - 1
    with pytest.raises(ConfigError, match="datasets.msnbc.standin_users.*per slot"):
        STAGE.check(bad)
    bad["datasets"]["msnbc"]["source"] = "real"  # the real table (989,818 users) only: no stand-in
    STAGE.check(bad)
    bad = copy.deepcopy(cfg)
    bad["datasets"]["synthetic"][0]["users"] = max(cfg["segmented"]["n"]) - 1
    with pytest.raises(ConfigError, match=r"datasets.synthetic\[synth_T128_s4\].users"):
        STAGE.check(bad)


@pytest.fixture
def prepared(tmp_path):
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 7, 4000)
    items = [sorted(rng.choice(17, k, replace=False).tolist()) for k in sizes]
    t = pa.table({"user_id": np.arange(4000, dtype=np.int32),
                  "items": pa.array(items, type=pa.list_(pa.int8())), "set_size": sizes.astype(np.int8)})
    t = t.replace_schema_metadata({b"shuffledp": json.dumps({"dataset": "msnbc", "standin": True}).encode()})
    src = tmp_path / "msnbc_sets.parquet"
    pq.write_table(t, src)
    out = tmp_path / "prep.parquet"
    meta = ex.prepare(str(src), str(out), dataset="msnbc", d=17, s=4, seed=3)
    return out, meta


def test_prepare_truth_and_reproducible(prepared, tmp_path):
    out, meta = prepared
    sets, meta2 = ex.load_prepared(str(out))
    assert meta2["truth"] == meta["truth"]
    assert np.allclose(np.bincount(sets[sets >= 0], minlength=17) / sets.shape[0], meta["truth"])
    assert meta["standin"] is True
    ex.prepare(str(tmp_path / "msnbc_sets.parquet"), str(tmp_path / "again.parquet"), dataset="msnbc",
               d=17, s=4, seed=3)
    assert (tmp_path / "again.parquet").read_bytes() == out.read_bytes()


def test_lambdas_from_table_by_grid_index_and_level_number():
    acct = pd.DataFrame({"m": [1.0, 1.0, 0.1, 0.1], "level": [2, 1, 1, 2], "eps": [2.0, 0.5, 0.5, 2.0],
                         "lambda": [1.0, 0.3, 0.1, 0.4]})
    m, lam = ex.params_from_table(acct, 1, [0.5, 2.0])   # the second grid point, ascending
    assert m == 1.0 and list(lam) == [0.3, 1.0]
    m, lam = ex.params_from_table(acct, 0, [0.5, 2.0])
    assert m == 0.1 and list(lam) == [0.1, 0.4]
    with pytest.raises(ValueError, match="no grid point 2"):
        ex.params_from_table(acct, 2, [0.5, 2.0])
    with pytest.raises(ValueError, match="other levels"):   # a table built for other levels is refused
        ex.params_from_table(acct, 0, [0.5, 1.0])


def _fake_summary(errors_ours, base):
    """A summary with our errors per m and one baseline error (for the claims logic)."""
    rows = []
    for m, e in errors_ours.items():
        rows.append(dict(protocol="segmented", dataset="msnbc", n=5000, setting="S1", m=m, error_mean=e))
    rows.append(dict(protocol="wsepmm", dataset="msnbc", n=5000, setting="S1", m=np.nan, error_mean=base))
    return pd.DataFrame(rows)


def test_optimal_m_and_best_baseline():
    summ = _fake_summary({0.1: 5.0, 1.0: 1.0, 10.0: 3.0}, 2.0)
    assert ex.optimal_m(summ, "msnbc", 5000, "S1") == (1.0, 1.0)
    assert ex.best_baseline(summ, "msnbc", 5000, "S1") == ("wsepmm", 2.0)


def test_job_rows_reproducible_and_batch_independent(prepared, tmp_path):
    out, _ = prepared
    grid = list(np.geomspace(0.1, 10, 3))
    acct = pd.DataFrame([dict(m=m, eps=e, level=k + 1, **{"lambda": 0.5}, mse_bound=1.0, padding=4)
                         for m in grid for k, e in enumerate([0.5, 1, 2])])
    acct.to_parquet(tmp_path / "acct.parquet")
    table = str(tmp_path / "acct.parquet")
    base = dict(protocol="segmented", dataset="msnbc", n=1000, setting="S1", seed=5,
                levels=[0.5, 1, 2], shares=[0.25, 0.5, 0.25], level_histogram="exact", sampler="counts",
                accountant="sound")
    a = ex.run_job(dict(base, reps=[0, 1, 2, 3]), str(out), table)
    b0 = ex.run_job(dict(base, reps=[0, 1]), str(out), table)
    b1 = ex.run_job(dict(base, reps=[2, 3]), str(out), table)
    both = pd.concat([b0, b1]).sort_values(["m_index", "rep"], kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, both)
    # every m of the table's grid runs, in grid order, with the table's lambda
    assert list(a["m"].unique()) == grid and list(a["m_index"].unique()) == [0, 1, 2]
    assert (a["lambda_1"] == 0.5).all() and len(a) == 3 * 4
    again = ex.run_job(dict(base, reps=[0, 1, 2, 3]), str(out), table)
    pd.testing.assert_frame_equal(a, again)
    # a table computed for another padding domain (rates over d items) is refused
    acct.assign(padding=0).to_parquet(tmp_path / "acct0.parquet")
    with pytest.raises(ValueError, match="padding"):
        ex.run_job(dict(base, reps=[0]), str(out), str(tmp_path / "acct0.parquet"))


def test_padding_declared_by_the_source_and_checked_against_the_data(prepared, tmp_path):
    """MSNBC (1 to 17 items) pads: padding = s in every job of its chain; the synthetic tables (every
    user exactly s items) do not: padding 0, so their accountant tables and runs are the paper's
    protocol over d items. A dataset declared without padding whose users hold fewer than s items
    is refused."""
    cfg = _config()
    jobs = STAGE.jobs(cfg)
    for j in jobs:
        if j.step in ("prepare", "accountant", "params", "params_paper"):
            ds = j.wildcards["segds"]
            s = cfg["segmented"]["datasets"][ds]["s"]
            assert j.spec["padding"] == (s if ds == "msnbc" else 0), (j.step, ds)
    _, meta = prepared
    assert meta["padding"] == 4
    with pytest.raises(ValueError, match="fewer than s = 4"):
        ex.prepare(str(tmp_path / "msnbc_sets.parquet"), str(tmp_path / "x.parquet"), dataset="msnbc",
                   d=17, s=4, seed=3, padding=0)


def test_jobs_grid_and_specs():
    cfg = _config()
    seg = cfg["segmented"]
    jobs = STAGE.jobs(cfg)
    runs = [j for j in jobs if j.step == "run"]
    n_panels = len(ex.panels(seg))
    n_ds = len({d for d, _ in ex.panels(seg)})
    batches = -(-seg["repetitions"] // seg["batch_size"])
    n_ours = len(ex.ours_protocols(seg))
    assert n_ours == (2 if seg.get("compare_paper_accountant") else 1)
    # one job per protocol and batch; every panel of the protocol inside
    assert len(runs) == batches * (n_ours + 2 + 3)
    points = [(j.wildcards["segproto"], p["dataset"], p["n"], p["setting"]) for j in runs for p in j.spec["points"]]
    assert len(points) == batches * len(seg["n"]) * (n_panels * (n_ours + 2) + 3 * n_ds)
    assert len(set(points)) * batches == len(points)
    ours = next(j for j in runs if j.wildcards["segproto"] == "segmented")
    pt = ours.spec["points"][0]
    assert pt["shares"] == seg["settings"][pt["setting"]] and "m_grid" not in pt
    assert ours.inputs["table"][pt["table"]].step == "accountant"
    mm_job = next(j for j in runs if j.wildcards["segproto"] == "mm_shuffle")
    assert all("shares" not in p and "levels" not in p for p in mm_job.spec["points"])
    assert mm_job.inputs["table"][mm_job.spec["points"][0]["table"]].step == "params"
    acct = [j for j in jobs if j.step == "accountant"]
    assert len(acct) == n_ds * len(seg["n"])
    a = acct[0]
    assert a.spec["delta"] == seg["delta_factor"] / a.spec["n"]
    assert a.spec["m_grid"] == [float(x) for x in ex.m_grid(seg)] and len(a.spec["m_grid"]) == seg["m_grid"]["num"]


def test_paper_calibrated_baselines_are_jobs_of_their_own_and_leave_the_others_unchanged():
    """``baseline_accounting: [ours, paper]`` adds one ``params_paper`` job per (dataset, n) and one run
    job per (paper-calibrated baseline, batch), after the others; every job of the default is there
    with the same spec, wildcards and inputs (so its tables stay byte-identical)."""
    cfg = _config()
    assert cfg["segmented"]["baseline_accounting"] == ["ours"]
    plain = STAGE.jobs(cfg)
    both = copy.deepcopy(cfg)
    both["segmented"]["baseline_accounting"] = ["ours", "paper"]
    STAGE.check(both)
    jobs = STAGE.jobs(both)

    def key(j):
        return (j.step, tuple(sorted(j.wildcards.items())))

    new = {key(j): j for j in jobs}
    for j in plain:
        if j.step in ("aggregate", "claims"):
            continue      # they read every run: the variant's runs too
        if j.step == "figures":  # the figures draw the variants too: one key more, nothing else changed
            assert new[key(j)].spec == dict(j.spec, paper_baselines=True) and "paper_baselines" not in j.spec
            assert new[key(j)].inputs == j.inputs
            continue
        assert json.dumps(new[key(j)].spec, sort_keys=True) == json.dumps(j.spec, sort_keys=True)
        assert new[key(j)].inputs == j.inputs
    added = [j for j in jobs if key(j) not in {key(p) for p in plain}]
    seg = cfg["segmented"]
    batches = -(-seg["repetitions"] // seg["batch_size"])
    n_ds = len({d for d, _ in ex.panels(seg)})
    assert sorted(j.step for j in added) == ["params_paper"] * (n_ds * len(seg["n"])) + ["run"] * (4 * batches)
    runs = [j for j in added if j.step == "run"]
    assert {j.wildcards["segproto"] for j in runs} == set(ex.PAPER_BASELINES)
    assert all(r.inputs["table"][0].step == "params_paper" for r in runs)
    all_runs = [j for j in jobs if j.step == "run"]
    assert all_runs[-len(runs):] == runs                  # listed after every other run job
    bad = copy.deepcopy(cfg)
    bad["segmented"]["baseline_accounting"] = ["paper"]
    with pytest.raises(ConfigError, match="segmented.baseline_accounting"):
        STAGE.check(bad)


def test_panels_run_together_give_each_panel_alone(prepared, tmp_path):
    """run_panels (the repetitions outermost, one user sample per (dataset, n) and repetition
    shared by its settings) gives every panel the frame run_job gives it alone."""
    out, _ = prepared
    grid = [0.3, 3.0]
    acct = pd.DataFrame([dict(m=m, eps=e, level=k + 1, **{"lambda": 0.2 + 0.2 * k}, mse_bound=1.0, padding=4)
                         for m in grid for k, e in enumerate([0.5, 1, 2])])
    acct.to_parquet(tmp_path / "acct.parquet")
    table = str(tmp_path / "acct.parquet")
    ours = dict(protocol="segmented", dataset="msnbc", seed=5, levels=[0.5, 1, 2], level_histogram="exact",
                sampler="counts", accountant="sound", reps=[2, 0, 1])
    specs = [dict(ours, n=n, setting=st, shares=sh) for n in (300, 700)
             for st, sh in (("S1", [0.25, 0.5, 0.25]), ("S3", [0.25, 0.25, 0.5]))]
    specs.append(dict(ours, n=300, setting="S2", shares=[0.5, 0.25, 0.25], reps=[1, 3]))
    together = ex.run_panels([(sp, str(out), table) for sp in specs])
    for sp, got in zip(specs, together, strict=True):
        pd.testing.assert_frame_equal(got, ex.run_job(sp, str(out), table))
    assert not together[0]["error"].equals(together[1]["error"])   # other settings: other levels and draws
    sepmm = dict(protocol="sepmm", dataset="msnbc", n=300, setting="S1", seed=5, levels=[0.5, 1, 2],
                 shares=[0.25, 0.5, 0.25], reps=[0, 1])
    prm = pd.DataFrame([dict(baseline="sepmm", setting="S1", level=k + 1, m=1.0 + k, padding=4) for k in range(3)])
    prm.to_parquet(tmp_path / "prm.parquet")
    both = ex.run_panels([(specs[0], str(out), table), (sepmm, str(out), str(tmp_path / "prm.parquet"))])
    pd.testing.assert_frame_equal(both[1], ex.run_job(sepmm, str(out), str(tmp_path / "prm.parquet")))
