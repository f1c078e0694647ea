"""The workflow through the `slurm` profile on a real one-node SLURM cluster on localhost: every
Parquet table must equal, byte for byte, the one a local `--cores 2` run produces.

It runs the tiny test configuration (data stage and the per-user stage: the rules, profile and
executor are the same as for the default configuration, whose ~300 jobs would take most of CI's
time through a one-node cluster). Set SHUFFLEDP_SLURM_CONFIG to run another configuration.

Skips itself, saying why, when no cluster can be started here (binaries missing, not root). On
CI (`CI` set) the cluster is expected, so a missing one is a failure, not a skip."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from slurm_cluster import LocalSlurm, why_unavailable

REPO = Path(__file__).resolve().parents[1]
CONFIG = Path(os.environ.get("SHUFFLEDP_SLURM_CONFIG", REPO / "tests" / "fixtures" / "config_tiny.yaml"))

pytestmark = [pytest.mark.slurm, pytest.mark.slow]


def _snakemake(args: list[str], cwd: Path, env: dict, timeout_s: int) -> float:
    env = dict(env)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = ["timeout", "-k", "30", str(timeout_s), sys.executable, "-m", "snakemake", "--snakefile",
           str(REPO / "Snakefile"), "--directory", str(cwd), "--configfile", str(CONFIG), *args]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        )
    return elapsed


def _tables(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for d in ("results", "data/processed")
            for p in sorted((root / d).rglob("*.parquet"))}


def test_slurm_profile_matches_local_run(tmp_path):
    reason = why_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must be able to start the SLURM test cluster: {reason}")
        pytest.skip(reason)
    local, cluster = tmp_path / "local", tmp_path / "cluster"
    local.mkdir()
    cluster.mkdir()
    local_s = _snakemake(["--cores", "2"], local, dict(os.environ), 3000)
    with LocalSlurm(tmp_path / "slurm") as slurm:
        try:
            slurm_s = _snakemake(
                ["--workflow-profile", str(REPO / "profiles" / "slurm"), "--jobs", "4",
                 "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
                 "--latency-wait", "5", "--retries", "0"],
                cluster, slurm.env, 3000,
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{slurm.logs()}") from None
    print(f"\nwall time of {CONFIG.name}: local --cores 2 {local_s:.0f} s, through SLURM {slurm_s:.0f} s")
    a, b = _tables(local), _tables(cluster)
    assert a, "the local run produced no Parquet table"
    assert a.keys() == b.keys()
    differing = [k for k in a if a[k] != b[k]]
    assert not differing, f"tables differ between the local and the SLURM run: {differing}"
