"""results/.jobs keeps only the current config's job files (issue 37, "Also"): the pruning removes
the job files no job names and nothing else, never outside the working folder, never while another
Snakemake run holds a lock on it (shuffledp.stages.prune_job_files); the workflow prunes at every
parse, dry runs too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shuffledp.stages import content_file, prune_job_files


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_only_the_files_no_job_names_are_removed(work):
    jobs = work / "results" / ".jobs"
    kept = [content_file(jobs, "spec", {"a": 1}), content_file(jobs, "io", {"input": {}, "output": {}})]
    stale = [content_file(jobs, "spec", {"a": 2}), content_file(jobs, "io", {"old": True})]
    (jobs / "notes.txt").write_text("mine")                      # not a job file's name
    (jobs / "spec-0123.json").write_text("{}")                   # too short a hash
    (jobs / ("spec-" + "a" * 32 + ".json")).mkdir()              # a folder named like a job file
    assert prune_job_files(jobs, kept) == 2
    assert _files(jobs) == {Path(p).name for p in kept} | {"notes.txt", "spec-0123.json", "spec-" + "a" * 32 + ".json"}
    assert not any(Path(p).exists() for p in stale)
    assert prune_job_files(jobs, kept) == 0  # nothing left to prune


def test_a_link_is_never_followed_or_removed(work, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    target = outside / ("spec-" + "b" * 32 + ".json")
    target.write_text("{}")
    jobs = work / "results" / ".jobs"
    jobs.mkdir(parents=True)
    link = jobs / target.name
    link.symlink_to(target)
    assert prune_job_files(jobs, []) == 0
    assert link.is_symlink() and target.read_text() == "{}"


def test_a_folder_outside_the_working_folder_is_never_pruned(work, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere")
    stale = content_file(outside, "spec", {"a": 3})
    assert prune_job_files(outside, []) is None
    assert Path(stale).exists()
    # nor through a link inside the working folder that leads there
    (work / "results").mkdir()
    (work / "results" / ".jobs").symlink_to(outside, target_is_directory=True)
    assert prune_job_files(work / "results" / ".jobs", []) is None
    assert Path(stale).exists()
    # nor the working folder itself
    own = content_file(work, "spec", {"a": 4})
    assert prune_job_files(work, []) is None and Path(own).exists()


def test_nothing_is_pruned_while_another_run_holds_a_lock(work):
    jobs = work / "results" / ".jobs"
    stale = content_file(jobs, "spec", {"a": 5})
    locks = work / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(str(work))
    assert prune_job_files(jobs, []) is None and Path(stale).exists()
    os.unlink(locks / "0.input.lock")
    assert prune_job_files(jobs, []) == 1 and not Path(stale).exists()


def test_a_missing_folder_is_nothing_to_prune(work):
    assert prune_job_files(work / "results" / ".jobs", []) is None


def test_a_dry_run_keeps_only_this_configs_job_files(tmp_path):
    """Through the workflow: a stale job file (another config's, or a dry run's) is gone after a dry
    run, a file of another name stays, the files of the jobs the run would start are there, and at
    most two files (spec, io) per job of the config are left (a job outside this run's DAG, e.g. a
    download the mirror makes needless, keeps its files)."""
    from conftest import run_snakemake

    from shuffledp.config import load_validated
    from shuffledp.stages import discover

    tiny = Path(__file__).resolve().parent / "fixtures" / "config_tiny.yaml"
    jobs = tmp_path / "results" / ".jobs"
    stale = content_file(jobs, "spec", {"from": "another config"})
    (jobs / "keep.txt").write_text("not a job file")
    proc = run_snakemake("--configfile", str(tiny), "--dry-run", "--printshellcmds", cwd=tmp_path)
    assert not Path(stale).exists()
    assert (jobs / "keep.txt").exists()
    left = {p.name for p in jobs.iterdir()} - {"keep.txt"}
    named = {Path(w).name for w in (proc.stdout + proc.stderr).split() if w.startswith("results/.jobs/")}
    config = load_validated([tiny])
    n_jobs = sum(len(s.jobs(config)) for s in discover().values() if s.enabled(config))
    assert named and named <= left, named - left
    assert len(left) <= 2 * n_jobs, (len(left), n_jobs)


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def test_a_killed_writers_temporaries_are_swept_a_living_ones_kept(work):
    """content_file writes without sweeping the folder at each write (that listed the folder once per
    file); pruning sweeps it once: a temporary of a dead process of this host goes, a living one's stays."""
    from shuffledp.io import _host

    jobs = work / "results" / ".jobs"
    kept = content_file(jobs, "spec", {"a": 6})
    name = Path(kept).name
    dead = jobs / f".{name}.{_host()}.{_dead_pid()}.x1y2.part"
    alive = jobs / f".{name}.{_host()}.{os.getpid()}.x3y4.part"
    other_host = jobs / f".{name}.elsewhere-host.{_dead_pid()}.x5y6.part"
    for p in (dead, alive, other_host):
        p.write_text("partial")
    assert prune_job_files(jobs, [kept]) == 1
    assert not dead.exists() and alive.exists() and other_host.exists() and Path(kept).exists()
