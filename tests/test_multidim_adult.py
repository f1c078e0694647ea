"""The multidimensional stage on real data: Adult's categorical attributes (prepare step, jobs, labels)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from shuffledp.config import ConfigError
from shuffledp.datasets import adult
from shuffledp.datasets.provenance import read_provenance, write_table
from shuffledp.experiments.multidim import (
    ADULT,
    ADULT_ATTRIBUTES,
    dataset_label,
    load_dataset,
    prepare_adult,
    run_uniform,
)
from shuffledp.experiments.multidim_report import _note
from shuffledp.stages.multidim import check_config, jobs


def _adult_like(rows: int, seed: int = 0, standin: bool = False):
    df, domains = adult.standin(rows, np.random.default_rng(seed))
    prov = {"dataset": "adult", "source": "standin" if standin else "real", "standin": standin,
            "domains": domains, "ordinal": list(adult.ORDINAL)}
    return df, prov


def _config(datasets):
    from shuffledp.config import fill_defaults

    ipums = {k: {"source": "standin", "records": 1000} for k in ("br", "mx")}  # more rows than records
    cfg = {"seed": 3, "name": "t", "datasets": {"ipums": ipums},
            "multidim": {"datasets": datasets, "records": 500, "mechanisms": ["mhm", "flame"], "eps": [1.0],
                         "reps": 1, "reps_per_job": 1, "bound": "bennett", "hash_family_bits": 32,
                         "flame_np_fraction": 1 / 3, "flame_variant": "balle", "topk": 10,
                         "personal": {"ratios": ["2:4:4"], "reps": 1, "reps_per_job": 1}}}
    fill_defaults(cfg)  # as validation does
    return cfg


def test_prepare_keeps_the_categorical_attributes_and_their_domains():
    df, prov = _adult_like(300)
    out, new = prepare_adult(df, prov, ADULT_ATTRIBUTES)
    assert list(out.columns) == list(ADULT_ATTRIBUTES)
    assert not set(out.columns) & (set(adult.ORDINAL) | {"income"})
    assert new["domains"] == {a: len(adult.CATEGORIES[a].split()) for a in ADULT_ATTRIBUTES}
    assert new["standin"] is False and new["dataset"] == ADULT and new["rows"] == 300
    np.testing.assert_array_equal(out.to_numpy(), df[list(ADULT_ATTRIBUTES)].to_numpy())


def test_prepare_rejects_codes_outside_the_domain_and_missing_columns():
    df, prov = _adult_like(50)
    bad = df.copy()
    bad.loc[0, "sex"] = 2  # sex has 2 values: 0..1
    with pytest.raises(ValueError, match="sex"):
        prepare_adult(bad, prov, ADULT_ATTRIBUTES)
    with pytest.raises(ValueError, match="missing"):
        prepare_adult(df.drop(columns=["race"]), prov, ADULT_ATTRIBUTES)


def test_labels_say_real_or_standin_and_not_ipums():
    assert dataset_label(ADULT, {"standin": False}) == "Adult (real), not IPUMS"
    assert dataset_label(ADULT, {"standin": True}) == "Adult (stand-in), not IPUMS"
    assert dataset_label("br", {"standin": True}) == "BR"
    note = _note({"br": {"dataset": "ipums_br", "standin": True}, ADULT: {"dataset": "adult", "standin": False}})
    assert "Adult (real), not IPUMS" in note and "stand-in" in note and "ipums_br" in note
    # an Adult stand-in is named as a stand-in, never as real
    note = _note({ADULT: {"dataset": "adult", "standin": True}})
    assert "Adult (stand-in), not IPUMS" in note and "not the real adult" in note


def test_jobs_add_one_prepare_job_and_run_adult_like_any_dataset():
    js = jobs(_config(["br", "adult"]))
    prep = [j for j in js if j.step == "prepare"]
    assert len(prep) == 1 and prep[0].spec == {"dataset": "adult", "attributes": list(ADULT_ATTRIBUTES)}
    uni = {(j.wildcards["dataset"], j.wildcards["mechanism"]) for j in js if j.step == "uniform"}
    assert uni == {(d, m) for d in ("br", "adult") for m in ("mhm", "flame")}
    assert not [j for j in jobs(_config(["br"])) if j.step == "prepare"]
    report = [j for j in js if j.step == "report"][0]
    assert report.spec["datasets"] == ["br", "adult"]


def test_config_rejects_unknown_and_repeated_datasets():
    with pytest.raises(ConfigError, match="multidim.datasets"):
        check_config(_config(["br", "zz"]))
    with pytest.raises(ConfigError, match="multidim.datasets"):
        check_config(_config(["adult", "adult"]))
    check_config(_config(["mx", "adult"]))


def test_step_prepare_then_uniform_on_the_prepared_table(tmp_path):
    import json

    df, prov = _adult_like(2000, seed=4)
    src = tmp_path / "adult.parquet"
    write_table(df, src, prov)
    out = tmp_path / "md_adult.parquet"
    (tmp_path / "io.json").write_text(json.dumps({"input": {"table": [str(src)]}, "output": {"table": str(out)}}))

    def step(spec):
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        return subprocess.run([sys.executable, "-m", "shuffledp", "step", "multidim", "prepare", "--spec",
                               str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")],
                              capture_output=True, text=True, cwd=tmp_path)  # its files: inside the working folder

    proc = step({"dataset": "adult", "attributes": list(ADULT_ATTRIBUTES)})
    assert proc.returncode == 0, proc.stderr
    assert read_provenance(out)["domains"]["native_country"] == 42
    data, domains, attrs, p = load_dataset(out, 1000, 3, ADULT)
    assert attrs == list(ADULT_ATTRIBUTES) and data.shape == (1000, 8) and p["standin"] is False
    res, _ = run_uniform(data, domains, "mhm", 1.0, [0], seed=3, dataset=ADULT, topk=10)
    assert res["n"].iloc[0] == 1000 and res["d"].iloc[0] == 8 and np.isfinite(res["mse"].iloc[0])
    # a spec naming a column the table does not have: one line on stderr, exit 2
    proc = step({"dataset": "adult", "attributes": ["workclass", "zodiac"]})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("shuffledp: error: input table:") and "zodiac" in proc.stderr


def test_real_adult_categorical_table(mirror, tmp_path):
    """The verified UCI files: 48,842 records, every code inside its attribute's domain."""
    adult.download(tmp_path / "raw", str(mirror), log=lambda _m: None)
    raw = adult.read_raw(tmp_path / "raw" / "adult.data", tmp_path / "raw" / "adult.test")
    enc, domains = adult.encode(raw)
    out, new = prepare_adult(enc, {"dataset": "adult", "standin": False, "domains": domains}, ADULT_ATTRIBUTES)
    assert len(out) == 48842 and new["standin"] is False
    # the most frequent native country of the real data is the United States (code 0)
    assert pd.Series(out["native_country"]).mode().iloc[0] == 0


def test_log_axis_only_over_a_decade_or_more():
    from shuffledp.experiments.multidim_report import use_log_axis

    assert use_log_axis([1e-3, 2e-2, 5e-3])
    assert not use_log_axis([9.4e-4, 1.8e-3, 1.5e-3])  # Fig. 10's BR panel: under one decade
    assert not use_log_axis([0.0, np.nan])
