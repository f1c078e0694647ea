"""The jobs contract (shuffledp.experiments.jobs): lookup, canonical specs, batching, and every
stage's jobs on the default and paper configurations (counts, only the keys a job uses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shuffledp.experiments import multidim, multidim_frameworks, personalized, peruser, segmented
from shuffledp.experiments.jobs import Job, JobTable, batch_ranges, canonical

REPO = Path(__file__).resolve().parents[1]
STAGES = (segmented, personalized, multidim, peruser, multidim_frameworks)


def _config(name: str) -> dict:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    if name == "paper":
        cfg.update(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
    return cfg


def test_batch_ranges_cover_every_repetition_once():
    assert batch_ranges(5, 2) == [[0, 1], [2, 3], [4]]
    assert batch_ranges(3, 10) == [[0, 1, 2]]
    for reps, bs in ((7, 1), (7, 3), (7, 7)):
        assert sum(batch_ranges(reps, bs), []) == list(range(reps))


def test_job_table_lookup_spec_and_targets():
    jobs = [Job("run", {"a": "1", "b": "x"}, {"k": 1.5, "j": [1, 2]}), Job("run", {"a": "2", "b": "x"}, {}),
            Job("report", {}, {"scale": "s"})]
    t = JobTable(jobs)
    # wildcards of other rules' patterns (or extra ones) do not matter, only the step's names
    assert t.spec("run")({"a": "1", "b": "x", "other": "y"}) == '{"j":[1,2],"k":1.5}'
    assert t.spec("report")({}) == canonical({"scale": "s"})
    assert t.targets("run", "r/{a}_{b}.parquet") == ["r/1_x.parquet", "r/2_x.parquet"]
    with pytest.raises(KeyError, match="no run job"):
        t.job("run", {"a": "3", "b": "x"})
    with pytest.raises(ValueError, match="same identity"):
        JobTable(jobs + [Job("run", {"b": "x", "a": "1"}, {})])


def test_canonical_is_order_independent_and_rejects_nan():
    assert canonical({"b": 1, "a": [1.0, "x"]}) == canonical({"a": [1.0, "x"], "b": 1})
    with pytest.raises(ValueError):
        canonical({"x": float("nan")})


@pytest.mark.parametrize("name", ["default", "paper"])
def test_every_stage_jobs_unique_and_json(name):
    cfg = _config(name)
    total = 0
    for stage in STAGES:
        jobs = stage.jobs(cfg)
        JobTable(jobs)  # no two jobs with the same identity
        for j in jobs:
            assert json.loads(canonical(j.spec)) == j.spec
            assert all(isinstance(v, str) for v in j.wildcards.values())
        total += len(jobs)
    # the data stage adds about ten; 300 before issue 15, whose Adult multidim runs add 26 paper-scale jobs
    assert total <= 310


def test_specs_hold_only_the_keys_a_job_uses():
    cfg = _config("paper")
    seed = cfg["seed"]
    for j in personalized.jobs(cfg):
        if j.step == "points":
            assert ("calibration" in j.spec) == (j.spec["bound"] == "hps")
            assert j.spec["seeds"] == [seed + s for s in cfg["personalized"]["seeds"]]
            assert j.spec["delta_local"] == (0.0 if j.spec["mechanism"] == "laplace"
                                             else cfg["personalized"]["delta_local_approx"])
    runs = [j for j in segmented.jobs(cfg) if j.step == "run"]
    for j in runs:
        p = j.wildcards["segproto"]
        assert ("wsepmm_power" in j.spec) == (p == "wsepmm")
        assert ("subexp_local_eps" in j.spec) == (p == "subexp_local")
        assert ("shares" in j.spec) == (p not in segmented.UNIFORM_BASELINES)
        if p == "wsepmm":
            assert j.spec["delta"] == cfg["segmented"]["delta_factor"] / j.spec["n"]
    for j in peruser.jobs(cfg):
        if j.step == "run":
            assert [d["name"] for d in cfg["peruser"]["datasets"]].count(j.spec["dataset"]["name"]) == 1
            assert ("dbscan" in j.spec) == (j.wildcards["clustering"] == "dbscan")
    for j in multidim_frameworks.jobs(cfg):
        if j.step == "run":  # a CALM job holds no HDG key, an MHM job no FLAME key, and conversely
            assert ("view_size" in j.spec) == (j.wildcards["framework"] == "calm")
            assert ("query_dim" in j.spec) == (j.wildcards["framework"] == "hdg")
            assert ("family_bits" in j.spec) == (j.wildcards["component"] == "mhm")
            assert ("np_fraction" in j.spec) == (j.wildcards["component"] == "flame")
        elif j.step == "prepare":  # Adult's ordinal table does not depend on the Loan settings
            assert ("source" in j.spec) == (j.wildcards["dataset"] == "loan")


def test_bad_spec_is_a_one_line_usage_error(tmp_path):
    import pandas as pd

    x = tmp_path / "x.parquet"  # inputs must be readable Parquet (issue 13), so that the --spec error is reported
    pd.DataFrame({"a": [1]}).to_parquet(x)
    for argv, needle in ((["segmented", "run", "--spec", "{not json", "--data", str(x), "--out", "y"],
                          "not valid JSON"),
                         (["personalized", "points", "--spec", '{"bound": "hps"}', "--out", "y"], "missing key"),
                         (["peruser", "report", "--spec", "[1]", "--runs", str(x), "--users", str(x), "--figures", "c",
                           "--claims", "d"], "JSON object")):
        proc = subprocess.run([sys.executable, "-m", "shuffledp", *argv], capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("shuffledp: error: --spec:") and proc.stderr.count("\n") == 1
        assert needle in proc.stderr


def test_profiles_and_resources_name_existing_rules():
    """RESOURCES (workflow/rules/jobs.smk) and the SLURM profile's groups and set-resources name
    rules that exist, and every stage rule takes its resources from RESOURCES under its own name."""
    import re

    rules_dir = REPO / "workflow" / "rules"
    texts = {p.name: p.read_text() for p in rules_dir.glob("*.smk")}
    rules = {m for t in texts.values() for m in re.findall(r"^\s*rule (\w+):", t, re.M)}
    resources = set(re.findall(r'^\s+"(\w+)": \{"mem_mb"', texts["jobs.smk"], re.M))
    assert resources and resources <= rules
    for name, text in texts.items():
        for rule, body in re.findall(r"^\s*rule (\w+):(.*?)(?=^\s*rule \w+:|\Z)", text, re.M | re.S):
            used = re.findall(r'\*\*RESOURCES\["(\w+)"\]', body)
            assert used in ([], [rule]), (name, rule, used)
            if rule in resources:
                assert used == [rule], (name, rule)
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert set(slurm["groups"]) <= rules
    assert set(slurm.get("set-resources", {})) <= rules
    assert set(slurm["groups"].values()) == set(slurm["group-components"])
