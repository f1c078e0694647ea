"""The jobs contract end to end (docs/architecture.md): on the shared tiny run of every stage
(tests/conftest.py; every repetition in one job), a second run with one repetition per job, its short
steps run in batches (``workflow.batches``), gives byte-identical tables, and editing one config key
reruns only the jobs whose spec holds it (the batches that hold them, where a step is batched).

The second run builds only the tables of the stages with a batch key (and the data stage's, which
they read): the other stages' jobs are the same in both layouts (tests/test_workflow.py checks
that a second run of the same jobs gives the same tables)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import copy_of_tiny_workflow

REPO = Path(__file__).resolve().parents[1]

# the batch-size keys of each stage: "all" puts every repetition in one job, 1 one per job
BATCH_KEYS = [("segmented", "batch_size"), ("multidim", "reps_per_job"), ("multidim", "personal", "reps_per_job"),
              ("peruser", "batch_size")]
# the stages whose tables the second run builds and compares: those with a batch key, and the data stage
BATCHED = ("data", "segmented", "multidim", "peruser")
# stages without a batch key (every repetition in one job) and whose data no other stage lists:
# nothing to compare across layouts (tests/test_workflow.py checks their tables are byte-identical
# across two runs); Figs 6-9's stage stays, its data (loan, Adult ordinal) is in the datasets table
NO_BATCH_KEY = ("accountants_compare", "personalized")


def _whole(shared: dict) -> None:
    """The shared run's layout is every repetition in one job, and each stage has more than one."""
    for keys in BATCH_KEYS:
        sec = shared
        for k in keys[:-1]:
            sec = sec[k]
        reps = sec["repetitions"] if "repetitions" in sec else sec["reps"]
        assert reps > 1 and sec[keys[-1]] == reps, keys


# the second run's batched steps (rule -> number of batches): each has more jobs than that there
BATCHES = {"segmented_run": 2, "multidim_uniform": 3, "multidim_personal": 2, "peruser_job": 2, "report_pages": 2}


def _one_per_job(shared: dict, path: Path) -> Path:
    cfg = yaml.safe_load(yaml.safe_dump(shared))
    for name in NO_BATCH_KEY:
        cfg.pop(name)
    for keys in BATCH_KEYS:
        sec = cfg
        for k in keys[:-1]:
            sec = sec[k]
        sec[keys[-1]] = 1
    cfg["workflow"] = {"batches": dict(BATCHES)}
    path.write_text(yaml.safe_dump(cfg))
    return path


def _rerun_batches(old: dict, new: dict, rule: str) -> set[str]:
    """The batch rules of ``rule`` that hold a job whose spec differs between the two configs."""
    import copy

    from shuffledp.config import validate_config
    from shuffledp.stages import batch_label, batches, discover, rule_name
    from shuffledp.stages.jobs import canonical

    old, new = copy.deepcopy(old), copy.deepcopy(new)
    validate_config(old)
    validate_config(new)
    stage, step = next((st, sp) for st in discover().values() for sp in st.steps if rule_name(st, sp) == rule)
    before = {canonical(j.wildcards): j.spec for j in stage.jobs(old) if j.step == step.name}
    parts = batches(stage, step, [j for j in stage.jobs(new) if j.step == step.name], new)
    assert parts is not None and len(parts) == BATCHES[rule]
    return {f"{rule}_{batch_label(i, len(parts))}" for i, members in enumerate(parts)
            if any(before.get(canonical(j.wildcards)) != j.spec for j in members)}


def _snakemake(cwd: Path, cfg: Path, *args: str) -> str:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--configfile", str(cfg), "--cores", "2", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc.stdout + proc.stderr


def _targets(root: Path) -> list[str]:
    """The tables (results/tables/*.parquet and the segmented summary) of the BATCHED stages in the
    run at ``root`` (paths relative to it); wall-clock timings (multidim's Figure 4) left out: they
    are measured, not reproducible. (A batch's own files differ by design: one repetition or all.)"""
    from fnmatch import fnmatch

    from shuffledp.stages import discover

    patterns = [re.sub(r"\{[^}]*\}", "*", o.path) for name in BATCHED for st in discover()[name].steps
                for o in st.outputs if o.path.endswith(".parquet")
                and (o.path.startswith("tables/") or o.path == "segmented/summary.parquet")]
    found = sorted(str(p.relative_to(root)) for p in (root / "results").rglob("*.parquet")
                   if any(fnmatch(str(p.relative_to(root / "results")), pat) for pat in patterns))
    return [t for t in found if "timings" not in t]


def _tables(root: Path, targets: list[str]) -> dict:
    return {t: (root / t).read_bytes() for t in targets if (root / t).exists()}


def _job_counts(out: str) -> dict[str, int]:
    block = out.split("Job stats:", 1)[1].split("\n\n", 1)[0] if "Job stats:" in out else ""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", block, re.M)}


@pytest.mark.slow
def test_two_layouts_same_tables_and_one_key_reruns_only_its_jobs(tiny_workflow, tmp_path):
    shared_cfg = yaml.safe_load((tiny_workflow / "config.yaml").read_text())
    _whole(shared_cfg)
    whole = copy_of_tiny_workflow(tiny_workflow, tmp_path / "whole")  # Snakemake runs in it: a copy
    single = tmp_path / "single"
    single.mkdir()
    targets = _targets(whole)
    assert "results/segmented/summary.parquet" in targets and "results/tables/multidim_personal.parquet" in targets
    _snakemake(single, _one_per_job(shared_cfg, single / "config.yaml"), *targets)
    a, b = _tables(whole, targets), _tables(single, targets)
    assert len(a) >= 10 and a.keys() == b.keys() == set(targets)
    assert [k for k in a if a[k] != b[k]] == []
    # the layouts really differ: one repetition per job means more jobs, run in batches
    assert len(list((single / "results/segmented/runs").rglob("*.parquet"))) > \
        len(list((whole / "results/segmented/runs").rglob("*.parquet")))
    assert sorted(p.name for p in (single / "results/logs/segmented").glob("run_*.log")) == \
        ["run_batch1of2.log", "run_batch2of2.log"]

    # editing one key reruns exactly the jobs whose spec holds it (and what reads their outputs)
    cfg_whole = whole / "config.yaml"
    cfg = yaml.safe_load(cfg_whole.read_text())
    cfg["multidim"]["flame_variant"] = "seed33"
    cfg["segmented"]["wsepmm_power"] = 1.0
    edited = whole / "edited.yaml"
    edited.write_text(yaml.safe_dump(cfg))
    counts = _job_counts(_snakemake(whole, edited, "--dry-run", "--rerun-triggers", "params"))
    # the FLAME jobs only (one per dataset and eps: all repetitions in one job), not MHM's
    assert counts.get("multidim_uniform") == len(cfg["multidim"]["datasets"]) * len(cfg["multidim"]["eps"])
    assert counts.get("segmented_run") == 1              # the Weighted SepMM job only
    assert "multidim_personal" not in counts and "segmented_accountant" not in counts
    assert not [r for r in counts if r.startswith(("peruser", "personalized", "data_", "accountants_compare",
                                                   "multidim_frameworks"))]
    # nothing changed: nothing to do
    assert "Nothing to be done" in _snakemake(whole, cfg_whole, "--dry-run", "--rerun-triggers", "params")

    # batched: the same edit reruns the batches that hold an edited job, whole, and no other batch
    cfg_single = single / "config.yaml"
    cfg = yaml.safe_load(cfg_single.read_text())
    edited_cfg = yaml.safe_load(cfg_single.read_text())
    edited_cfg["multidim"]["flame_variant"] = "seed33"
    edited_cfg["segmented"]["wsepmm_power"] = 1.0
    edited = single / "edited.yaml"
    edited.write_text(yaml.safe_dump(edited_cfg))
    # (the single run built the targets only: the dry runs ask for them)
    counts = _job_counts(_snakemake(single, edited, *targets, "--dry-run", "--rerun-triggers", "params"))
    for rule in ("multidim_uniform", "segmented_run"):
        want = _rerun_batches(cfg, edited_cfg, rule)
        assert want and {r for r in counts if r.startswith(f"{rule}_batch")} == want, (rule, want, counts)
    # the Weighted SepMM jobs are neighbours (sorted by method): one batch of two reruns
    assert _rerun_batches(cfg, edited_cfg, "segmented_run") == {"segmented_run_batch2of2"}
    assert not [r for r in counts if r.startswith(("multidim_personal", "peruser", "segmented_accountant"))]
    assert "Nothing to be done" in _snakemake(single, cfg_single, *targets, "--dry-run", "--rerun-triggers", "params")
