"""Hard kill and resume, as the README describes: SIGKILL a tiny run mid-way, see the stale lock,
`snakemake --unlock`, `snakemake --cores 2 --rerun-incomplete`, and get every table byte for byte
equal to a clean run's (the session's shared tiny run of every stage, tests/conftest.py).

The killed run builds TARGETS only: the data stage's table and figure (the jobs the kill meets:
it comes while the data stage's jobs run) and the segmented stage's summary (a chain of jobs that
read the killed jobs' outputs). The rest of the workflow would run after the resume exactly as
in any run (tests/test_workflow.py checks a second run's tables)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TARGETS = ("results/tables/datasets.parquet", "results/tables/datasets.md", "results/figures/msnbc_category_shares.png",
           "results/segmented/summary.parquet")


def _cmd(workdir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
            "--configfile", str(workdir / "config.yaml"), *args]


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = str(REPO / "src")
    return env


def _run(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(_cmd(workdir, *args), cwd=workdir, env=_env(), capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def _tables(workdir: Path) -> dict[str, bytes]:
    files = [*(workdir / "results").rglob("*.parquet"), *(workdir / "results" / "tables").glob("*.md"),
             *(workdir / "data" / "processed").glob("*.parquet")]
    # wall-clock timings (multidim's Figure 4, accountants_compare's) are measured, not reproducible
    return {str(p.relative_to(workdir)): p.read_bytes() for p in sorted(files)
            if "timings" not in p.name and p.parent.name != "timings"}


# "batches": the killed run runs its short steps in batches (workflow.batches, several jobs in one
# process): a batch killed mid-way is incomplete as a whole and reruns whole, and its tables equal the
# clean run's, which has one workflow job per job
BATCHES = {"audits_run": 2, "data_synthetic": 1, "multidim_uniform": 2, "personalized_points": 2, "peruser_job": 2,
           "report_pages": 2, "segmented_params": 2, "segmented_run": 2}


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["jobs", "batches"])
def test_sigkill_unlock_rerun_incomplete_gives_the_clean_tables(tmp_path, tiny_workflow, layout):
    clean, killed = tiny_workflow, tmp_path / "killed"  # the clean run: the shared one, read only
    killed.mkdir()
    cfg = yaml.safe_load((clean / "config.yaml").read_text())
    if layout == "batches":
        cfg["workflow"] = {"batches": BATCHES}
    (killed / "config.yaml").write_text(yaml.safe_dump(cfg))

    # a run killed with SIGKILL (the whole process group: snakemake and its running jobs) mid-way
    proc = subprocess.Popen(_cmd(killed, "--cores", "2", *TARGETS), cwd=killed, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if list((killed / "data" / "processed").glob("*.parquet")):
                break
            time.sleep(0.2)
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(1.0)  # let the next jobs start, so that some are killed mid-run
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (killed / "results" / "tables" / "datasets.parquet").exists(), "killed too late to test a resume"
    assert list((killed / ".snakemake" / "locks").iterdir()), "expected the stale lock a hard kill leaves"

    # --rerun-incomplete alone meets the stale lock; the README's procedure is --unlock first
    stale = _run(killed, "--cores", "2", "--rerun-incomplete", *TARGETS, check=False)
    assert stale.returncode != 0 and "lock" in (stale.stdout + stale.stderr).lower()
    _run(killed, "--unlock")
    _run(killed, "--cores", "2", "--rerun-incomplete", *TARGETS)
    assert not list(killed.rglob("*.part")), "a temporary file survived"

    if layout == "batches":  # the layout really differs
        assert (killed / "results" / "logs" / "segmented" / "run_batch1of2.log").is_file()
    b = _tables(killed)
    a = {k: v for k, v in _tables(clean).items() if k in b}  # the clean run's tables of the same jobs
    assert all((killed / t).exists() for t in TARGETS) and len(b) >= 10
    assert a.keys() == b.keys()
    differing = [k for k in a if a[k] != b[k]]
    assert not differing, f"tables differ after kill + resume: {differing}"
