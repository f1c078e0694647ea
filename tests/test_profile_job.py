"""benchmarks/profile_job.py: the jobs it lists are the stage's, and it refuses a job it cannot name."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO

SCRIPT = str(REPO / "benchmarks" / "profile_job.py")
PAPER = ["--configfile", str(REPO / "config" / "config.yaml"), str(REPO / "config" / "paper.yaml")]


def _run(*args, cwd):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_lists_the_paper_scale_jobs_of_a_stage(tmp_path):
    from shuffledp.config import load_validated
    from shuffledp.stages import discover

    proc = _run("multidim_frameworks", "--list", *PAPER, "--workdir", str(tmp_path / "w"), cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    config = load_validated([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"])
    want = [" ".join([j.step, *(f"{k}={v}" for k, v in j.wildcards.items())]).strip()
            for j in discover()["multidim_frameworks"].jobs(config)]
    assert [line.strip() for line in proc.stdout.splitlines()] == want
    assert "run framework=hdg dataset=loan component=flame" in want  # the paper scale's HDG on Loan


def test_unknown_spec_key_and_unknown_job_are_refused(tmp_path):
    proc = _run("multidim_frameworks", "run", "framework=hdg", "dataset=loan", "component=flame", "--set", "nokey=1",
                *PAPER, "--workdir", str(tmp_path / "w"), cwd=REPO)
    assert proc.returncode != 0 and "the spec has no key(s) nokey" in proc.stderr
    assert not (tmp_path / "w" / "data" / "processed").exists()  # refused before any input is built
    proc = _run("multidim_frameworks", "run", "framework=hdg", "dataset=nowhere", "component=flame",
                "--workdir", str(tmp_path / "w"), cwd=REPO)
    assert proc.returncode != 0 and "no run job" in proc.stderr
