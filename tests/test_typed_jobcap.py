"""Bounded work (issue 37, class 6): a configuration that makes more jobs than the dry run can list in
30 s (shuffledp.config.MAX_JOBS, set from benchmarks/dryrun.py) is refused in one line naming the
section, before any job is built; the count is exact at the cap's edge; the shipped configurations
are far below it."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

from shuffledp.config import MAX_JOBS, ConfigError, load_configs, load_validated, validate_config
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]
DEFAULT = load_configs([REPO / "config" / "config.yaml"])


def _jobs(config) -> int:
    return sum(len(s.jobs(config)) for s in discover().values() if s.enabled(config))


def _peruser(reps: int) -> dict:
    cfg = copy.deepcopy(DEFAULT)
    cfg["peruser"].update(repetitions=reps, batch_size=1)
    return cfg


def _per_rep() -> tuple[int, int]:
    """(jobs at one repetition, jobs each further repetition adds) of the default with batch size 1."""
    one, two = _peruser(1), _peruser(2)
    validate_config(one)
    validate_config(two)
    return _jobs(one), _jobs(two) - _jobs(one)


def test_the_shipped_configs_are_far_below_the_cap():
    default = load_validated([REPO / "config" / "config.yaml"])
    paper = load_validated([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"])
    assert _jobs(default) < _jobs(paper) < MAX_JOBS // 10


def test_the_cap_is_exact_at_its_edge():
    base, step = _per_rep()
    under = 1 + (MAX_JOBS - base) // step  # the most repetitions within the cap
    cfg = _peruser(under)
    validate_config(cfg)  # accepted, and it makes at most MAX_JOBS jobs
    assert MAX_JOBS - step < _jobs(cfg) <= MAX_JOBS
    with pytest.raises(ConfigError) as err:
        validate_config(_peruser(under + 1))
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("config key peruser: ") and f"limit of {MAX_JOBS}" in msg, msg


def test_a_huge_config_is_refused_without_building_its_jobs():
    """repetitions at the schema's maximum with batch size 1: refused from the count alone (the jobs of
    one and two batches), never the whole list."""
    stage = discover()["peruser"]
    assert discover()["peruser"] is stage  # discovery is cached: the stage validate_config sees
    built = []
    real = stage.jobs

    def counting(config):
        jobs = real(config)
        built.append(len(jobs))
        return jobs

    object.__setattr__(stage, "jobs", counting)  # a frozen dataclass
    try:
        with pytest.raises(ConfigError) as err:
            validate_config(_peruser(10_000))
    finally:
        object.__setattr__(stage, "jobs", real)
    assert "config key peruser: " in str(err.value) and f"limit of {MAX_JOBS}" in str(err.value)
    assert built and max(built) < 100, built


@pytest.mark.slow
def test_snakemake_refuses_too_many_jobs_before_any_job(tmp_path):
    many = tmp_path / "many.yaml"
    many.write_text("peruser:\n  repetitions: 10000\n  batch_size: 1\n")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "-n", "--configfile", str(REPO / "config" / "config.yaml"), str(many)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    problem = [ln for ln in proc.stderr.splitlines() if ln.startswith("config key peruser: ")]
    assert len(problem) == 1 and f"limit of {MAX_JOBS}" in problem[0], proc.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["many.yaml"]
