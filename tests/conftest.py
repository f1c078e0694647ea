"""Shared fixtures. The real raw files come from the offline mirror named by SHUFFLEDP_DATA_MIRROR
(CI sets it to ../shared/data); without it, tests that need real data skip, except on CI where
its absence is a failure."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    value = os.environ.get("SHUFFLEDP_DATA_MIRROR")
    if not value:
        if os.environ.get("CI"):
            pytest.fail("CI must set SHUFFLEDP_DATA_MIRROR to the offline data mirror")
        pytest.skip("SHUFFLEDP_DATA_MIRROR is not set: no offline copy of the real raw files")
    path = Path(value)
    if not path.is_dir():
        pytest.fail(f"SHUFFLEDP_DATA_MIRROR={value} is not a folder")
    return path


def run_snakemake(*args: str, cwd: Path, check: bool = True, timeout: int = 1200) -> subprocess.CompletedProcess:
    """``snakemake --snakefile <repo>/Snakefile --directory cwd ARGS`` with this interpreter's tools on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


# added to the tiny configuration for the shared run: the multidimensional stage on the IPUMS stand-in
# and on Adult's categorical attributes (real when the mirror or the internet has Adult), smallest scale;
# two repetitions in one job, so that tests/test_workflow_layout.py's one-repetition-per-job run differs
TINY_MULTIDIM = {
    "datasets": ["br", "adult"], "records": 1000, "mechanisms": ["mhm", "flame"], "eps": [1.0], "reps": 2,
    "reps_per_job": 2, "bound": "bennett", "hash_family_bits": 32, "flame_np_fraction": 0.3333333333333333,
    "flame_variant": "balle", "topk": 10, "personal": {"ratios": ["2:4:4"], "reps": 2, "reps_per_job": 2},
}


# tiny sections of the three stages the tiny fixture leaves out, so that one configuration runs every stage
# (the audits: the two cheapest, few trials: the stage's jobs, table, figure and the claims' audit gate run)
TINY_SECTIONS = {
    "audits": {"trials": 2000, "loop_trials": 200, "raw_trials": 20, "include": ["krr_shuffle", "oue"]},
    "segmented": {
        "levels": [0.5, 1.0, 2.0], "accountant": "sound", "compare_paper_accountant": False,
        "accountants": ["sound"], "settings": {"S1": [0.25, 0.5, 0.25]}, "delta_factor": 0.01,
        "m_grid": {"min": 0.5, "max": 2.0, "num": 2}, "n": [300],
        "datasets": {"synth_T128_s4": {"table": "synthetic_synth_tiny", "d": 16, "s": 2}},
        "repetitions": 3, "batch_size": 3,
        "figures": {"fig2": {"datasets": ["synth_T128_s4"], "settings": ["S1"], "title": "tiny"}},
    },
    "personalized": {
        "settings": ["uniform1"], "bounds_pure": ["hps", "fv"], "bounds_approx": ["hps"],
        "delta_local_approx": 1.0e-10, "delta_central": 1.0e-5, "calibration": "analytic",
        "n_grid": [1000], "seeds": [0, 1],
        "table2": {"setting": "uniform2", "n": 1000, "seed": 0, "eps_central": [0.05],
                   "rows": [{"name": "fv", "bound": "fv"}]},
    },
}

# the per-user stage with two repetitions in one job (the tiny fixture has one)
TINY_PERUSER = {"repetitions": 2, "batch_size": 2}


def all_stages_tiny_config() -> dict:
    """tests/fixtures/config_tiny.yaml with TINY_MULTIDIM, TINY_SECTIONS and TINY_PERUSER: every
    stage, smallest scale, every stage's repetitions in one job. The configuration of the shared run."""
    cfg = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
    cfg["multidim"] = yaml.safe_load(yaml.safe_dump(TINY_MULTIDIM))
    cfg.update(yaml.safe_load(yaml.safe_dump(TINY_SECTIONS)))
    cfg["peruser"].update(TINY_PERUSER)
    return cfg


def _shared_root(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of this session sees (the session's base temp)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def tiny_workflow(tmp_path_factory) -> Path:
    """ONE run of :func:`all_stages_tiny_config` (``snakemake --cores 2``) for the whole session, also
    across pytest-xdist workers (the first to ask builds it under a lock; the others wait for it):
    every test that needs a finished tiny workflow reads it (tests/test_workflow.py, test_report.py,
    test_slurm.py, test_resume.py, test_workflow_layout.py, test_config_fuzz_run.py, the docs' report
    command). The folder holds ``config.yaml``, ``data/``, ``results/`` and ``.snakemake/``, and
    ``seconds`` (the run's wall time). Never change it: a test that runs Snakemake in it, or edits it,
    works on :func:`copy_of_tiny_workflow`."""
    root = _shared_root(tmp_path_factory)
    workdir = root / "tiny_workflow"
    with open(root / "tiny_workflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = root / "tiny_workflow.failed"
        if failed.exists():
            pytest.fail(f"the shared tiny run failed in another worker:\n{failed.read_text()}")
        if not (workdir / "seconds").exists():
            if workdir.exists():
                shutil.rmtree(workdir)
            workdir.mkdir()
            (workdir / "config.yaml").write_text(yaml.safe_dump(all_stages_tiny_config()))
            t0 = time.monotonic()
            try:
                run_snakemake("--configfile", str(workdir / "config.yaml"), "--cores", "2", cwd=workdir)
            except AssertionError as exc:
                failed.write_text(str(exc))
                raise
            (workdir / "seconds").write_text(f"{time.monotonic() - t0:.1f}\n")
    return workdir


def copy_of_tiny_workflow(shared: Path, dest: Path) -> Path:
    """A copy of the shared run at ``dest`` (file times kept: Snakemake finds it complete)."""
    shutil.copytree(shared, dest, symlinks=True)
    return dest
