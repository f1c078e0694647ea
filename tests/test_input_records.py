"""Issue 23, class 1: intermediate files are checked on read.

Every table a job writes carries its job record (stage, step, wildcards, spec fingerprint, data
sources) in its Parquet metadata; every job checks each input table against the record its
producer's job wrote (the io file's ``expect``) and otherwise stops with one line naming the file,
what it holds, what was expected and the command that rebuilds it. The record holds no time and no
absolute path: tables stay byte-identical run to run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from shuffledp.cli import main
from shuffledp.config import load_validated
from shuffledp.io import JOB_KEY, job_record_context, read_job_record, write_table
from shuffledp.stages import content_file, discover, job_io, job_record
from shuffledp.stages.jobs import JobTable

REPO = Path(__file__).resolve().parents[1]


def _tiny_tables():
    cfg = load_validated([REPO / "tests" / "fixtures" / "config_tiny.yaml"])
    stages = discover()
    return cfg, stages, {n: JobTable(s.jobs(cfg)) for n, s in stages.items() if s.enabled(cfg)}


def _run_job(stages, tables, stage_name, step_name, wildcards, folder: Path) -> int:
    """``shuffledp step`` of one real job of the tiny config, with the spec and io files the workflow writes."""
    stage = stages[stage_name]
    step = stage.step(step_name)
    job = tables[stage_name].job(step_name, wildcards)
    io = job_io(stage, step, job, {"results": "results", "data": "data"}, stages, tables)
    spec_file = content_file(folder / "results" / ".jobs", "spec", job.spec)
    io_file = content_file(folder / "results" / ".jobs", "io", io)
    return main(["step", stage_name, step_name, "--spec", spec_file, "--io", io_file])


def test_a_table_copied_over_another_is_refused_naming_file_content_and_rebuild(tmp_path, capsys, monkeypatch):
    """ipums_mx.parquet copied over ipums_br.parquet: the job reading br stops before any work."""
    monkeypatch.chdir(tmp_path)
    cfg, stages, tables = _tiny_tables()
    for key in ("br", "mx"):
        assert _run_job(stages, tables, "data", "preprocess_ipums", {"key": key}, tmp_path) == 0
    br, mx = tmp_path / "data/processed/ipums_br.parquet", tmp_path / "data/processed/ipums_mx.parquet"
    record = read_job_record(br)
    assert record["stage"] == "data" and record["step"] == "preprocess_ipums" and record["wildcards"] == {"key": "br"}
    assert record["sources"] and record["sources"][0]["dataset"] == "ipums_br" and record["sources"][0]["standin"]
    # a consumer job whose io expects the br table (the multidim stage reads it)
    stage_name, job = "multidim_frameworks", tables["multidim_frameworks"].job(
        "run", {"framework": "calm", "dataset": "br", "component": "mhm"})
    stage = stages[stage_name]
    io = job_io(stage, stage.step(job.step), job, {"results": "results", "data": "data"}, stages, tables)
    assert {k: v for k, v in record.items() if k != "sources"} in [e for exp in io["expect"].values() for e in exp]
    capsys.readouterr()
    shutil.copyfile(mx, br)
    before = {p: p.read_bytes() for p in (tmp_path / "data/processed").iterdir()}
    # the preprocess jobs' own output records (results/.outputs) are there already
    results_before = {p for p in (tmp_path / "results").rglob("*") if p.is_file() and ".jobs" not in p.parts}
    code = _run_job(stages, tables, stage_name, job.step, job.wildcards, tmp_path)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    line = err[0]
    assert line.startswith("shuffledp: error: ") and "data/processed/ipums_br.parquet" in line
    assert "holds the table output of data/preprocess_ipums [key=mx]" in line
    assert "expects the table output of data/preprocess_ipums [key=br]" in line
    # the file itself: Snakemake reruns the job (or batch, workflow.batches) that writes it
    assert "snakemake --forcerun data/processed/ipums_br.parquet" in line
    assert {p: p.read_bytes() for p in (tmp_path / "data/processed").iterdir()} == before  # nothing lost
    written = [p for p in (tmp_path / "results").rglob("*") if p.is_file() and ".jobs" not in p.parts]
    assert set(written) == results_before  # nothing written (not even the refused job's output record)


def test_a_table_without_a_record_or_from_another_config_is_refused(tmp_path, capsys, monkeypatch):
    """A table not written by the workflow (no record), or by a job of another config (other spec)."""
    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    stage = discover()["data"]
    want = job_record("data", "synthetic", {"name": "a"}, {"x": 1})
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(plain)
    other = tmp_path / "other.parquet"
    with job_record_context(job_record("data", "synthetic", {"name": "a"}, {"x": 2})):
        write_table(pd.DataFrame({"a": [1]}), other)
    for path, needle in ((plain, "no job record"), (other, "spec")):
        io = {"input": {"tables": [str(path)]}, "output": {"parquet": str(tmp_path / "o.parquet"),
                                                            "md": str(tmp_path / "o.md")},
              "expect": {"tables": [want]}}
        (tmp_path / "io.json").write_text(json.dumps(io))
        (tmp_path / "spec.json").write_text("{}")
        assert stage.step("datasets_table")
        code = main(["step", "data", "datasets_table", "--spec", str(tmp_path / "spec.json"),
                     "--io", str(tmp_path / "io.json")])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and str(path) in err[0] and needle in err[0], err
        assert f"snakemake --forcerun {path}" in err[0]
        assert not (tmp_path / "o.parquet").exists()


def test_the_record_is_deterministic_and_holds_no_time_or_absolute_path(tmp_path):
    record = job_record("toy", "draw", {"k": "2"}, {"k": 2, "seed": 9})
    df = pd.DataFrame({"x": [0.5, 0.25]})
    with job_record_context({**record, "sources": []}):
        write_table(df, tmp_path / "a.parquet", {"dataset": "d", "source": "standin", "standin": True})
        write_table(df, tmp_path / "b.parquet", {"dataset": "d", "source": "standin", "standin": True})
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    raw = pq.read_schema(tmp_path / "a.parquet").metadata[JOB_KEY].decode()
    assert str(tmp_path) not in raw and "/" not in raw
    assert json.loads(raw)["sources"] == [{"dataset": "d", "source": "standin", "standin": True}]
    # the data are those of a table written without a record
    write_table(df, tmp_path / "c.parquet")
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "c.parquet"))
    assert read_job_record(tmp_path / "c.parquet") is None


def test_io_file_of_another_job_is_refused(tmp_path, capsys, monkeypatch):
    """The io file's job record must be the job the spec describes (spec and io belong together)."""
    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    spec = {"name": "a", "domain": 10, "set_size": 2, "users": 5, "distribution": "uniform", "zipf_exponent": 1.0,
            "seed": 1}
    io = {"input": {}, "output": {"table": str(tmp_path / "o.parquet")},
          "job": job_record("data", "synthetic", {"name": "a"}, {**spec, "seed": 2}), "expect": {}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "io.json").write_text(json.dumps(io))
    code = main(["step", "data", "synthetic", "--spec", str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "do not belong together" in err[0], err
    assert not (tmp_path / "o.parquet").exists()


def _snakemake(cwd: Path, overlay: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["SHUFFLEDP_STAGE_PATH"] = str(REPO / "tests" / "stages")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--cores", "2", *args, "--configfile", str(REPO / "config" / "config.yaml"), str(overlay)]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_workflow_refuses_a_copied_intermediate_and_forcerun_rebuilds_it(tmp_path):
    """The toy stage end to end: draws/5.parquet copied over draws/2.parquet, rerun -> refused with
    the rebuild command; that command then rebuilds it."""
    toy = tmp_path / "toy.yaml"
    toy.write_text(yaml.safe_dump({"name": "toyscale", "toy": {"ks": [2, 5]}}))
    assert _snakemake(tmp_path, toy, "toy_report").returncode == 0
    draws = tmp_path / "results" / "toy" / "draws"
    good5 = (draws / "5.parquet").read_bytes()
    good2 = (draws / "2.parquet").read_bytes()
    shutil.copyfile(draws / "5.parquet", draws / "2.parquet")
    run = _snakemake(tmp_path, toy, "toy_report")
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert ("shuffledp: error: input draws: results/toy/draws/2.parquet holds the table output of toy/draw [k=5]"
            in out), out[-3000:]
    assert ("expects the table output of toy/draw [k=2]" in out
            and "snakemake --forcerun results/toy/draws/2.parquet" in out)
    assert (draws / "5.parquet").read_bytes() == good5 and (draws / "2.parquet").read_bytes() == good5
    fixed = _snakemake(tmp_path, toy, "toy_report", "--forcerun", "results/toy/draws/2.parquet")
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert (draws / "2.parquet").read_bytes() == good2  # rebuilt byte-identical
