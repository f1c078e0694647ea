"""The jobs contract end to end (docs/architecture.md): on a tiny configuration of all four papers,
two job layouts (every repetition in one job, or one repetition per job) give byte-identical
tables, and editing one config key reruns only the jobs whose spec holds it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import TINY_SECTIONS

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "fixtures" / "config_tiny.yaml"

SECTIONS = {**TINY_SECTIONS, "multidim": {
    "datasets": ["br"], "records": 1000, "mechanisms": ["mhm", "flame"], "eps": [1.0], "reps": 2,
    "reps_per_job": 2, "bound": "bennett", "hash_family_bits": 32, "flame_np_fraction": 0.3333333333333333,
    "flame_variant": "balle", "topk": 5,
    "personal": {"ratios": ["2:4:4"], "reps": 2, "reps_per_job": 2},
}}
# the batch-size keys of each stage: "all" puts every repetition in one job, 1 one per job
BATCH_KEYS = [("segmented", "batch_size"), ("multidim", "reps_per_job"), ("multidim", "personal", "reps_per_job"),
              ("peruser", "batch_size")]


def _config(path: Path, per_job: int | None) -> Path:
    cfg = yaml.safe_load(TINY.read_text())
    cfg.update(yaml.safe_load(yaml.safe_dump(SECTIONS)))
    # Figs 6-9 have no batch key (every eps_s and repetition in one job): nothing to compare across
    # layouts, and test_workflow.py's tiny run already checks their tables are byte-identical
    cfg.pop("multidim_frameworks", None)
    cfg["peruser"]["methods"] = ["alg1", "ldp"]
    cfg["peruser"]["repetitions"] = 2
    for keys in BATCH_KEYS:
        sec = cfg
        for k in keys[:-1]:
            sec = sec[k]
        reps = sec["repetitions"] if "repetitions" in sec else sec["reps"]
        sec[keys[-1]] = reps if per_job is None else per_job
    path.write_text(yaml.safe_dump(cfg))
    return path


def _snakemake(cwd: Path, cfg: Path, *args: str) -> str:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--configfile", str(cfg), "--cores", "2", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc.stdout + proc.stderr


def _tables(root: Path) -> dict:
    paths = sorted((root / "results" / "tables").glob("*.parquet")) + [root / "results/segmented/summary.parquet"]
    # wall-clock timings (Figure 4 of the multidimensional paper) are measured, not reproducible
    return {p.name: p.read_bytes() for p in paths if p.name != "multidim_timings.parquet"}


def _job_counts(out: str) -> dict[str, int]:
    block = out.split("Job stats:", 1)[1].split("\n\n", 1)[0] if "Job stats:" in out else ""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M)}


@pytest.mark.slow
def test_two_layouts_same_tables_and_one_key_reruns_only_its_jobs(tmp_path):
    whole, single = tmp_path / "whole", tmp_path / "single"
    whole.mkdir()
    single.mkdir()
    cfg_whole = _config(whole / "config.yaml", None)
    _snakemake(whole, cfg_whole)
    _snakemake(single, _config(single / "config.yaml", 1))
    a, b = _tables(whole), _tables(single)
    assert len(a) >= 10 and a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    # the layouts really differ: one repetition per job means more jobs
    assert len(list((single / "results/segmented/runs").rglob("*.parquet"))) > \
        len(list((whole / "results/segmented/runs").rglob("*.parquet")))

    # editing one key reruns exactly the jobs whose spec holds it (and what reads their outputs)
    cfg = yaml.safe_load(cfg_whole.read_text())
    cfg["multidim"]["flame_variant"] = "seed33"
    cfg["segmented"]["wsepmm_power"] = 1.0
    edited = whole / "edited.yaml"
    edited.write_text(yaml.safe_dump(cfg))
    counts = _job_counts(_snakemake(whole, edited, "--dry-run", "--rerun-triggers", "params"))
    assert counts.get("multidim_uniform") == 1           # the FLAME job only, not MHM's
    assert counts.get("segmented_run") == 1              # the Weighted SepMM job only
    assert "multidim_personal" not in counts and "segmented_accountant" not in counts
    assert not [r for r in counts if r.startswith(("peruser", "personalized", "data_"))]
    # nothing changed: nothing to do
    assert "Nothing to be done" in _snakemake(whole, cfg_whole, "--dry-run", "--rerun-triggers", "params")
