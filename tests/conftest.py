"""Shared fixtures. The real raw files come from the offline mirror named by SHUFFLEDP_DATA_MIRROR
(CI sets it to ../shared/data); without it, tests that need real data skip, except on CI where
its absence is a failure."""

from __future__ import annotations

import os
import subprocess
import sys
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
# and on Adult's categorical attributes (real when the mirror or the internet has Adult), smallest scale
TINY_MULTIDIM = {
    "datasets": ["br", "adult"], "records": 1000, "mechanisms": ["mhm", "flame"], "eps": [1.0], "reps": 1,
    "reps_per_job": 1, "bound": "bennett", "hash_family_bits": 32, "flame_np_fraction": 0.3333333333333333,
    "flame_variant": "balle", "topk": 10, "personal": {"ratios": ["2:4:4"], "reps": 1, "reps_per_job": 1},
}


@pytest.fixture(scope="session")
def tiny_workflow(tmp_path_factory) -> Path:
    """One run of the tiny configuration (tests/fixtures/config_tiny.yaml plus TINY_MULTIDIM), shared
    by the tests that read a finished workflow (tests/test_workflow.py, tests/test_report.py): the
    folder holds ``config.yaml``, ``data/`` and ``results/``. A test that deletes outputs must rebuild them."""
    workdir = tmp_path_factory.mktemp("tiny_workflow")
    cfg = workdir / "config.yaml"
    tiny = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
    tiny["multidim"] = TINY_MULTIDIM
    cfg.write_text(yaml.safe_dump(tiny))
    run_snakemake("--configfile", str(cfg), "--cores", "2", cwd=workdir)
    return workdir
