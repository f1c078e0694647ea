"""Issue 37, the rest: a hand-written ``--io`` file of ``shuffledp step`` never leads a job out of the
working folder (every input and output path must resolve inside it, symbolic links followed: exit 2,
one line naming the key and the path, nothing written), and a job whose spec or io file was pruned by
another run's parse (a run with ``--nolock``) says so in one line and how to rerun."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from shuffledp.cli import main
from shuffledp.io import write_table
from shuffledp.stages import content_file, discover, job_io, prune_job_files
from shuffledp.stages.jobs import JobTable

SYNTH = {"name": "a", "domain": 10, "set_size": 2, "users": 5, "distribution": "uniform", "zipf_exponent": 1.0,
         "seed": 1}


@pytest.fixture
def work(tmp_path, monkeypatch):
    """``tmp_path/work`` as the working folder; ``tmp_path/outside`` beside it (outside)."""
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "work", tmp_path / "outside"


def _step(folder: Path, stage: str, step: str, spec: dict, io: dict, capsys) -> tuple[int, list[str]]:
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "io.json").write_text(json.dumps(io))
    code = main(["step", stage, step, "--spec", str(folder / "spec.json"), "--io", str(folder / "io.json")])
    return code, capsys.readouterr().err.strip().splitlines()


def _synthetic(folder: Path, output: str, capsys) -> tuple[int, list[str]]:
    return _step(folder, "data", "synthetic", SYNTH, {"input": {}, "output": {"table": output}}, capsys)


def _refused(code, err, *needles) -> None:
    assert code == 2 and len(err) == 1 and err[0].startswith("shuffledp: error: --io "), err
    assert "outside the working folder" in err[0], err
    for needle in needles:
        assert needle in err[0], err


def test_outputs_outside_the_working_folder_are_refused(work, capsys):
    here, outside = work
    cases = {
        "absolute": str(outside / "o.parquet"),
        "dotdot": "../outside/o.parquet",
        "dotdot-inside-first": "sub/../../outside/o.parquet",
        "root": "/o.parquet",
    }
    (here / "to-outside").symlink_to(outside, target_is_directory=True)  # a folder link leading out
    cases["folder-link"] = "to-outside/o.parquet"
    (here / "dangling.parquet").symlink_to(outside / "d.parquet")  # a link to a file not there yet, outside
    cases["dangling-link"] = "dangling.parquet"
    for name, path in cases.items():
        code, err = _synthetic(here, path, capsys)
        _refused(code, err, "output table: ", path)
        if "link" in name:
            assert "resolves to " + str(outside) in err[0], err
    assert list(outside.iterdir()) == []  # nothing written outside
    assert not (here / "results").exists()


def test_inputs_outside_the_working_folder_are_refused(work, capsys):
    here, outside = work
    table = outside / "t.parquet"
    write_table(pd.DataFrame({"a": [1]}), table)
    (here / "linked.parquet").symlink_to(table)  # a link inside to a table outside
    out = {"parquet": "o.parquet", "md": "o.md"}
    for path in (str(table), "../outside/t.parquet", "linked.parquet"):
        code, err = _step(here, "data", "datasets_table", {}, {"input": {"tables": [path]}, "output": out}, capsys)
        _refused(code, err, "input tables: ", path)
    assert not (here / "o.parquet").exists() and not (here / "o.md").exists()


def test_paths_inside_run_relative_absolute_or_through_an_inside_link(work, capsys):
    here, _ = work
    (here / "sub").mkdir()
    (here / "in-link").symlink_to(here / "sub", target_is_directory=True)
    for path in ("a.parquet", str(here / "b.parquet"), "in-link/c.parquet", "sub/../d.parquet"):
        code, err = _synthetic(here, path, capsys)
        assert code == 0, err
        assert (here / path).is_file()


def test_an_io_file_outside_writes_no_output_record_outside(work, capsys):
    """The output record goes beside the io file's .jobs folder: never when that folder is outside."""
    here, outside = work
    (outside / ".jobs").mkdir()
    code, err = _synthetic(outside / ".jobs", "o.parquet", capsys)
    assert code == 0, err
    assert (here / "o.parquet").is_file()
    assert sorted(p.name for p in outside.iterdir()) == [".jobs"]  # no .outputs beside it


def test_a_step_run_from_another_folder_is_refused_naming_the_key(tmp_path, capsys, monkeypatch):
    """The workflow's own io files hold relative paths: run from another folder, they would read and
    write elsewhere; an absolute path into another folder is refused."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "b")
    code, err = _synthetic(tmp_path / "a", str(tmp_path / "a" / "o.parquet"), capsys)
    _refused(code, err, "output table: ", str(tmp_path / "a" / "o.parquet"))


# ---------------------------------------------------------------------- job files pruned by another run


def _tiny():
    from shuffledp.config import load_validated

    cfg = load_validated([Path(__file__).parent / "fixtures" / "config_tiny.yaml"])
    stages = discover()
    return cfg, stages, {n: JobTable(s.jobs(cfg)) for n, s in stages.items() if s.enabled(cfg)}


def test_a_job_whose_files_another_run_pruned_says_so_and_a_rerun_writes_them_again(tmp_path, capsys, monkeypatch):
    """A run without its lock (--nolock) parsed config A; another run's parse (config B) prunes
    results/.jobs to B's files; A's job then stops with one line naming the file, the cause and the
    rerun; the rerun's parse writes the files again (same names: named by their content) and the job runs."""
    monkeypatch.chdir(tmp_path)
    _, stages, tables = _tiny()
    stage = stages["data"]
    job = next(j for j in tables["data"].jobs if j.step == "synthetic")
    step = stage.step(job.step)
    roots = {"results": "results", "data": "data"}

    def parse():  # what stages.smk writes for this job at every parse
        io = job_io(stage, step, job, roots, stages, tables)
        return content_file("results/.jobs", "spec", job.spec), content_file("results/.jobs", "io", io)

    spec_file, io_file = parse()
    assert prune_job_files("results/.jobs", []) == 2  # config B names neither (no lock: --nolock)
    for missing, present in (("--spec", None), ("--io", spec_file)):
        if present:  # only the io file gone
            assert parse() == (spec_file, io_file)
            os.unlink(io_file)
        with pytest.raises(SystemExit) as exit_:
            main(["step", "data", "synthetic", "--spec", spec_file, "--io", io_file])
        err = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 2 and len(err) == 1, err
        assert f"argument {missing}: no such file: " in err[0] and "removed by another snakemake run" in err[0], err
        assert "--nolock" in err[0] and "rerun the same snakemake command" in err[0], err
    assert parse() == (spec_file, io_file)  # the rerun's parse: the same files again
    assert main(["step", "data", "synthetic", "--spec", spec_file, "--io", io_file]) == 0


def test_a_missing_file_that_is_no_job_file_keeps_the_plain_message(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / ".jobs").mkdir(parents=True)
    for path in ("spec.json", "results/.jobs/spec-x.json", "other/spec-0123456789abcdef0123456789abcdef.json"):
        with pytest.raises(SystemExit) as exit_:
            main(["step", "data", "synthetic", "--spec", path, "--io", path])
        err = capsys.readouterr().err.strip().splitlines()
        assert exit_.value.code == 2 and len(err) == 1 and f"no such file: {path} (" in err[0], err
