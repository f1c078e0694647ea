"""Batches (``workflow.batches``, docs/architecture.md "Batches"): several short jobs of one step run
in one workflow job, one process, so a job's start-up is paid once per batch. The batches are a
function of the config only; every member runs exactly as it would alone (its spec, seed, files,
job record and output record), so its tables are byte-identical whether batched or not; every
member is checked before the first one runs; and a changed key reruns the batch that holds it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shuffledp.config import ConfigError, load_configs, validate_config
from shuffledp.errors import UsageError
from shuffledp.stages import Output, Stage, Step, batches, run_step, spec_fingerprint
from shuffledp.stages.jobs import Job

REPO = Path(__file__).resolve().parents[1]
TOY_PATH = str(REPO / "tests" / "stages")


def _stage(n: int) -> tuple[Stage, Step, list[Job]]:
    # the step's wildcard order (method, then batch) is not the alphabetical one
    step = Step("run", lambda spec, inputs, outputs: None, outputs=(Output("t", "x/{method}_{batch}.parquet"),),
                wildcards={"method": "[a-z]+", "batch": "[0-9]+"})
    stage = Stage(name="st", title="t", steps=(step,), jobs=lambda config: [])
    jobs = [Job("run", {"method": "abcdefghij"[i % 3], "batch": str(i // 3)}, {"i": i}) for i in range(n)]
    return stage, step, jobs


@pytest.mark.parametrize("n,k", [(7, 2), (7, 3), (18, 4), (6, 5), (3, 1)])
def test_batches_cover_every_job_once_in_near_equal_parts_whatever_the_order(n, k):
    stage, step, jobs = _stage(n)
    config = {"workflow": {"batches": {"st_run": k}}}
    got = batches(stage, step, jobs, config)
    assert len(got) == k
    sizes = [len(b) for b in got]
    assert max(sizes) - min(sizes) <= 1 and sum(sizes) == n
    flat = [j for b in got for j in b]
    assert sorted(json.dumps(j.wildcards, sort_keys=True) for j in flat) == \
        sorted(json.dumps(j.wildcards, sort_keys=True) for j in jobs)
    shuffled = list(jobs)
    random.Random(n * 31 + k).shuffle(shuffled)
    assert batches(stage, step, shuffled, config) == got  # the config decides, never the job list's order


def test_no_batches_when_the_step_is_not_named_or_has_no_more_jobs_than_batches():
    stage, step, jobs = _stage(4)
    assert batches(stage, step, jobs, {}) is None
    assert batches(stage, step, jobs, {"workflow": {"batches": {"other_run": 2}}}) is None
    assert batches(stage, step, jobs, {"workflow": {"batches": {"st_run": 4}}}) is None
    assert len(batches(stage, step, jobs, {"workflow": {"batches": {"st_run": 3}}})) == 3
    assert batches(stage, step, jobs, {"workflow": {"batching": False, "batches": {"st_run": 3}}}) is None


def test_neighbours_in_a_batch_share_their_leading_wildcards():
    stage, step, jobs = _stage(9)  # methods a, b, c, three batches of repetitions each
    got = batches(stage, step, jobs, {"workflow": {"batches": {"st_run": 3}}})
    assert [sorted({j.wildcards["method"] for j in b}) for b in got] == [["a"], ["b"], ["c"]]


def test_a_batches_key_naming_no_rule_is_refused_naming_it():
    config = load_configs([REPO / "config" / "config.yaml"])
    config["workflow"]["batches"]["segmented_runs"] = 2  # the rule is segmented_run
    with pytest.raises(ConfigError, match=r"workflow\.batches\.segmented_runs: no step"):
        validate_config(config)
    config["workflow"]["batches"].pop("segmented_runs")
    config["workflow"]["batches"]["segmented_run"] = 0
    with pytest.raises(ConfigError, match="segmented_run"):
        validate_config(config)


# ---- one process runs the members: each as it would run alone -------------------------------------


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.setenv("SHUFFLEDP_STAGE_PATH", TOY_PATH)
    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    return tmp_path


def _files(folder: Path, name: str, spec, io) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"spec-{name}.json").write_text(json.dumps(spec))
    (folder / f"io-{name}.json").write_text(json.dumps(io))
    return str(folder / f"spec-{name}.json"), str(folder / f"io-{name}.json")


def _member(k: int, out: str) -> tuple[dict, dict]:
    spec = {"k": k, "seed": 100 + k}
    io = {"input": {}, "output": {"table": f"{out}/{k}.parquet"},
          "job": {"stage": "toy", "step": "draw", "wildcards": {"k": str(k)},
                  "spec": spec_fingerprint(spec)}}
    return spec, io


def test_a_batch_writes_what_its_members_write_alone(toy):
    ks = (2, 5, 7)
    for k in ks:  # alone: one process call per job
        spec, io = _member(k, "alone")
        run_step("toy", "draw", *_files(toy / "results" / ".jobs", f"a{k}", spec, io))
    alone_records = {p.name: p.read_bytes() for p in (toy / "results" / ".outputs" / "toy").iterdir()}
    members = [_member(k, "batched") for k in ks]
    run_step("toy", "draw", *_files(toy / "results" / ".jobs", "b", {"batch": [s for s, _ in members]},
                                    {"batch": [i for _, i in members]}))
    for k in ks:
        assert (toy / "batched" / f"{k}.parquet").read_bytes() == (toy / "alone" / f"{k}.parquet").read_bytes()
    # each member's output record, named by its own identity (shuffledp verify reads them)
    batched_records = {p.name: json.loads(p.read_text()) for p in (toy / "results" / ".outputs" / "toy").iterdir()}
    assert set(batched_records) == set(alone_records) == {f"draw_{k}.json" for k in ks}
    assert all(list(r["outputs"]) == [f"batched/{k}.parquet"] for k, r in
               ((int(n[5:-5]), r) for n, r in batched_records.items()))


def test_every_member_is_checked_before_the_first_runs(toy):
    good = _member(2, "out")
    bad_spec = {"k": "five", "seed": 105}
    _, bad_io = _member(5, "out")
    spec, io = _files(toy / "results" / ".jobs", "x", {"batch": [good[0], bad_spec]}, {"batch": [good[1], bad_io]})
    with pytest.raises(UsageError, match=r"batch member 2"):
        run_step("toy", "draw", spec, io)
    assert not (toy / "out" / "2.parquet").exists()  # member 1 did not run: nothing half done
    # a batch spec with an io file of another length: one line, nothing run
    spec, io = _files(toy / "results" / ".jobs", "y", {"batch": [good[0], good[0]]}, {"batch": [good[1]]})
    with pytest.raises(UsageError, match="one io per member"):
        run_step("toy", "draw", spec, io)
    assert not (toy / "out" / "2.parquet").exists()


# ---- the workflow: rules per batch, same tables, a changed key reruns its batch ---------------------


def _snakemake(cwd: Path, cfg: dict, *args: str) -> str:
    (cwd / "toy.yaml").write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, SHUFFLEDP_STAGE_PATH=TOY_PATH)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--cores", "2", "toy_report", *args, "--configfile", str(cwd / "toy.yaml")]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_workflow_batches_give_the_same_tables_and_a_changed_key_reruns_its_batch(tmp_path):
    base = {"name": "toyscale", "seed": 11, "datasets": {}, "toy": {"ks": [2, 5, 7]}}
    alone, batched = tmp_path / "alone", tmp_path / "batched"
    alone.mkdir()
    batched.mkdir()
    _snakemake(alone, base)
    cfg = {**base, "workflow": {"batches": {"toy_draw": 2}}}
    out = _snakemake(batched, cfg)
    assert "toy_draw_batch1of2" in out and "toy_draw_batch2of2" in out and "rule toy_draw:" not in out
    logs = sorted(p.name for p in (batched / "results" / "logs" / "toy").iterdir())
    assert logs == ["draw_batch1of2.log", "draw_batch2of2.log", "report.log"]
    assert (batched / "results" / "benchmarks" / "toy" / "draw_batch1of2.tsv").is_file()

    def tables(root: Path) -> dict:
        res = root / "results"
        return {str(p.relative_to(res)): p.read_bytes() for p in sorted(res.rglob("*"))
                if p.suffix in (".parquet", ".md", ".csv") or p.parent.name == "toy" and ".outputs" in p.parts}

    a, b = tables(alone), tables(batched)
    assert len(a) >= 8 and a == b  # the tables and the output records, byte for byte
    assert "Nothing to be done" in _snakemake(batched, cfg, "--dry-run")
    # ks sorted by identity ("2", "5", "7", "9"): batches [2, 5] and [7, 9]; adding k=9 changes the
    # second batch only, which reruns whole (its member 7 too); the first is untouched
    cfg["toy"]["ks"] = [2, 5, 7, 9]
    out = _snakemake(batched, cfg, "--dry-run", "--rerun-triggers", "params", "mtime", "input")
    assert "toy_draw_batch2of2" in out and "toy_draw_batch1of2" not in out, out[-3000:]
