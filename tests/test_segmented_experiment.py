"""Tests of the segmented experiment layer: padding/selection, jobs, aggregation, claims, config."""

import copy
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from shuffledp.config import ConfigError
from shuffledp.experiments import segmented as ex


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
    return yaml.safe_load(open("config/config.yaml"))


def test_check_config_rejects_bad_shares_and_levels():
    cfg = _config()
    ex.check_config(cfg)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["settings"]["S1"] = [0.3, 0.5, 0.25]
    with pytest.raises(ConfigError, match="segmented.settings.S1"):
        ex.check_config(bad)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["levels"] = [1.0, 0.5, 2.0]
    with pytest.raises(ConfigError, match="segmented.levels"):
        ex.check_config(bad)
    bad = copy.deepcopy(cfg)
    bad["segmented"]["figures"]["fig2"]["settings"] = ["S9"]
    with pytest.raises(ConfigError, match="figures.fig2"):
        ex.check_config(bad)


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


def test_lambdas_from_table():
    acct = pd.DataFrame({"m": [0.1, 0.1, 1.0, 1.0], "eps": [0.5, 2.0, 0.5, 2.0],
                         "lambda": [0.1, 0.4, 0.3, 1.0]})
    assert list(ex.lambdas_from_table(acct, 1.0, [0.5, 2.0])) == [0.3, 1.0]
    with pytest.raises(ValueError, match="no row"):
        ex.lambdas_from_table(acct, 0.5, [0.5, 2.0])


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
    acct = pd.DataFrame([dict(m=m, eps=e, level=k + 1, **{"lambda": 0.5}, mse_bound=1.0)
                         for m in grid for k, e in enumerate([0.5, 1, 2])])
    acct.to_parquet(tmp_path / "acct.parquet")
    base = dict(protocol="segmented", dataset="msnbc", n=1000, setting="S1", m_index=1, seed=5,
                levels=[0.5, 1, 2], shares=[0.25, 0.5, 0.25], delta_factor=0.01, m_grid=grid,
                level_histogram="exact", sampler="counts", scale="t")
    a = ex.run_job(dict(base, batch=0, batch_size=4), str(out), str(tmp_path / "a.parquet"),
                   accountant=str(tmp_path / "acct.parquet"))
    b0 = ex.run_job(dict(base, batch=0, batch_size=2), str(out), str(tmp_path / "b0.parquet"),
                    accountant=str(tmp_path / "acct.parquet"))
    b1 = ex.run_job(dict(base, batch=1, batch_size=2), str(out), str(tmp_path / "b1.parquet"),
                    accountant=str(tmp_path / "acct.parquet"))
    assert np.array_equal(a["error"].to_numpy(), np.concatenate([b0["error"], b1["error"]]))
    assert (a["lambda_1"] == 0.5).all() and (a["m"] == grid[1]).all()
    again = ex.run_job(dict(base, batch=0, batch_size=4), str(out), str(tmp_path / "c.parquet"),
                       accountant=str(tmp_path / "acct.parquet"))
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "c.parquet").read_bytes()
    assert again["error"].equals(a["error"])


def test_workflow_glue_job_grid():
    cfg = _config()
    seg = cfg["segmented"]
    runs = ex.run_targets(cfg, "results")
    n_panels = len(ex.panels(seg))
    n_ds = len({d for d, _ in ex.panels(seg)})
    per = len(ex.batches(seg)) * len(seg["n"])
    n_ours = len(ex.ours_protocols(seg))
    assert n_ours == (2 if seg.get("compare_paper_accountant") else 1)
    assert len(runs) == len(set(runs)) == per * (n_panels * (n_ours * seg["m_grid"]["num"] + 2) + 3 * n_ds)
    spec = json.loads(ex.job_spec(cfg, "segmented", "msnbc", 5000, "S1", 2, 0, "default"))
    assert spec["m_grid"][2] == pytest.approx(float(ex.m_grid(seg)[2])) and spec["shares"] == seg["settings"]["S1"]
    assert json.loads(ex.job_spec(cfg, "mm_shuffle", "msnbc", 5000, "none", None, 0, "x"))["shares"] is None
    assert len(ex.accountant_tables(cfg, "results")) == n_panels * len(seg["n"])
