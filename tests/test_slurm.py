"""The workflow through the `slurm` profile on a real one-node SLURM cluster on localhost: every
Parquet table must equal, byte for byte, the one a local `--cores 2` run produces (the session's
shared tiny run, tests/conftest.py: tiny_workflow).

It runs every stage at the smallest scale (tests/conftest.py: all_stages_tiny_config; the
profile bundles the short jobs into group jobs, as at any scale) under an outer `timeout -k`. Set
SHUFFLEDP_SLURM_CONFIG to run another configuration (e.g. config/config.yaml, 234 jobs: about
17 min on this one-node cluster).

Skips itself, saying why, when no cluster can be started here (binaries missing, not root). On
CI (`CI` set) the cluster is expected, so a missing one is a failure, not a skip."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import all_stages_tiny_config
from slurm_cluster import LocalSlurm, why_unavailable

REPO = Path(__file__).resolve().parents[1]
CONFIG_ENV = os.environ.get("SHUFFLEDP_SLURM_CONFIG")

# its own group under pytest-xdist (tests/conftest.py), started beside the tiny run's group: the cluster
# run needs nothing of the shared tiny run, which it asks for only afterwards (built by then, on the other
# worker); in the tiny run's group the two longest units ran one after the other on one worker
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm")]


def _snakemake(args: list[str], cwd: Path, env: dict, timeout_s: int, config: Path) -> float:
    env = dict(env)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = ["timeout", "-k", "30", str(timeout_s), sys.executable, "-m", "snakemake", "--snakefile",
           str(REPO / "Snakefile"), "--directory", str(cwd), "--configfile", str(config), *args]
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


def _is_timing_table(key: str) -> bool:
    """Wall-clock timing tables (multidim's, labelled "NOT reproducible" in their `note` column)."""
    return "/timings/" in key or key.endswith("_timings.parquet")


def _same_but_timings(path_a: Path, path_b: Path) -> bool:
    """Timing tables: equal in every column except the measured seconds."""
    import pandas as pd

    a, b = pd.read_parquet(path_a), pd.read_parquet(path_b)
    timing = [c for c in a.columns if "seconds" in c]
    return bool(timing) and list(a.columns) == list(b.columns) and a.drop(columns=timing).equals(
        b.drop(columns=timing))


def _same_claims(path_a: Path, path_b: Path) -> bool:
    """Claims decided from wall-clock timings (multidim_claims_timings): the same claims, whatever
    the measured times say."""
    import pandas as pd

    if "claims" not in path_a.name:
        return False
    a, b = pd.read_parquet(path_a), pd.read_parquet(path_b)
    return list(a.columns) == list(b.columns) and list(a["id"]) == list(b["id"])


def test_slurm_profile_matches_local_run(tmp_path, request):
    reason = why_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI must be able to start the SLURM test cluster: {reason}")
        pytest.skip(reason)
    cluster = tmp_path / "cluster"
    cluster.mkdir()
    if CONFIG_ENV:  # another configuration: its own local run
        config, local = Path(CONFIG_ENV), tmp_path / "local"
        local.mkdir()
        local_s = _snakemake(["--cores", "2"], local, dict(os.environ), 1500, config)
    else:  # the shared tiny run of every stage is the local run (its config: all_stages_tiny_config),
        # asked for after the cluster run (under pytest-xdist another worker builds it meanwhile)
        config = tmp_path / "config.yaml"
        config.write_text(yaml.safe_dump(all_stages_tiny_config()))
    # status every second at first (the plugin adds 10 s per check that finds nothing finished, and
    # starts again from this after one that does): the cluster run took 287 s at 5, 179 s at 1
    with LocalSlurm(tmp_path / "slurm") as slurm:
        try:
            slurm_s = _snakemake(
                ["--workflow-profile", str(REPO / "profiles" / "slurm"), "--jobs", "4",
                 "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "1",
                 "--latency-wait", "5", "--retries", "0"],
                cluster, slurm.env, 2700, config,
            )
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{slurm.logs()}") from None
    if not CONFIG_ENV:
        local = request.getfixturevalue("tiny_workflow")
        assert yaml.safe_load((local / "config.yaml").read_text()) == yaml.safe_load(config.read_text())
        local_s = float((local / "seconds").read_text())
    label = CONFIG_ENV or "all_stages_tiny_config"
    print(f"\nwall time of {label}: local --cores 2 {local_s:.0f} s, through SLURM {slurm_s:.0f} s")
    a, b = _tables(local), _tables(cluster)
    assert a, "the local run produced no Parquet table"
    if not CONFIG_ENV:  # every stage that writes tables ran (under results/<stage> or named after it)
        from shuffledp.stages import discover

        tabled = [name for name, s in discover().items()
                  if any(o.path.endswith(".parquet") for st in s.steps for o in st.outputs)]
        missing = [s for s in tabled if not any(s in k for k in a)]
        assert not missing, f"stages that write tables but wrote none here: {missing}; tables: {sorted(a)}"
    assert a.keys() == b.keys()
    timing = [k for k in a if _is_timing_table(k)]
    differing = [k for k in a if k not in timing and a[k] != b[k]]
    assert not differing, f"tables differ between the local and the SLURM run: {differing}"
    assert len(timing) < len(a) / 5, f"too many tables treated as timings: {timing}"
    bad = [k for k in timing if not _same_but_timings(local / k, cluster / k)
           and not _same_claims(local / k, cluster / k)]
    assert not bad, f"timing tables differ beyond their measured seconds: {bad}"


def test_spool_path_fits_slurmd_sockets(tmp_path):
    """slurmd's step sockets live in the spool folder; a long test folder (pytest-xdist's popen-gwN/)
    made every job launch fail. A long root gets a short private spool folder, a short one keeps its own."""
    from slurm_cluster import SPOOL_MAX, spool_dir

    long_root = tmp_path / ("x" * 80)
    spool, own = spool_dir(long_root)
    try:
        assert own and spool.is_dir() and len(str(spool)) <= SPOOL_MAX
        assert len(f"{spool}/localhost_4294967294.4294967291") <= 107
    finally:
        spool.rmdir()
    assert spool_dir(Path("/tmp/s")) == (Path("/tmp/s/spool"), False)
