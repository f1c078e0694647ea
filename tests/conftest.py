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


# tiny sections of the two stages the tiny fixture leaves out, so that one configuration runs every stage
TINY_SECTIONS = {
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


def all_stages_tiny_config() -> dict:
    """tests/fixtures/config_tiny.yaml with TINY_MULTIDIM and TINY_SECTIONS: every stage, smallest scale."""
    cfg = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
    cfg["multidim"] = yaml.safe_load(yaml.safe_dump(TINY_MULTIDIM))
    cfg.update(yaml.safe_load(yaml.safe_dump(TINY_SECTIONS)))
    return cfg


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
