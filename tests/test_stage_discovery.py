"""Stages are discovered, never listed: a toy paper outside the package (tests/stages/toy), named
only by SHUFFLEDP_STAGE_PATH, is validated, run end to end by Snakemake and shows in its report."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TOY_PATH = str(REPO / "tests" / "stages")


def _env() -> dict:
    env = dict(os.environ)
    env["SHUFFLEDP_STAGE_PATH"] = TOY_PATH
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _snakemake(cwd: Path, overlay: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Snakemake in ``cwd`` with the default config overlaid by ``overlay`` (as a user would)."""
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--cores", "2", *args, "--configfile", str(REPO / "config" / "config.yaml"), str(overlay)]
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _validate(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shuffledp", "config", "validate",
                           str(REPO / "config" / "config.yaml"), *map(str, files)],
                          env=_env(), capture_output=True, text=True)


def test_discovery_finds_the_package_stages_and_a_path_stage(monkeypatch):
    from shuffledp.stages import discover

    assert "toy" not in discover()
    assert "personalized" in discover()
    monkeypatch.setenv("SHUFFLEDP_STAGE_PATH", TOY_PATH)
    stages = discover()
    assert "toy" in stages and "personalized" in stages
    assert stages["toy"].folder == Path(TOY_PATH, "toy").resolve()


@pytest.mark.slow
def test_toy_stage_validated_run_and_reported_without_editing_a_list(tmp_path):
    good = tmp_path / "toy.yaml"
    good.write_text(yaml.safe_dump({"name": "toyscale", "toy": {"ks": [2, 5]}}))
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"toy": {"ks": [2, 2]}}))
    typo = tmp_path / "typo.yaml"
    typo.write_text(yaml.safe_dump({"toy": {"kz": [2]}}))

    # the stage's own schema and check, the same in `shuffledp config validate` and in the workflow
    assert _validate(good).returncode == 0
    for cfg, needle in ((bad, "config key toy.ks"), (typo, "kz")):
        proc = _validate(cfg)
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr
        run = _snakemake(tmp_path, cfg, "--dry-run", check=False)
        assert run.returncode != 0 and needle in run.stdout + run.stderr

    # rules made from the stage, run through the one step command; its outputs are final targets
    _snakemake(tmp_path, good, "toy_report")
    res = tmp_path / "results"
    assert sorted(p.name for p in (res / "toy" / "draws").iterdir()) == ["2.parquet", "5.parquet"]
    assert (res / "logs" / "toy" / "draw_5.log").is_file() and (res / "benchmarks" / "toy" / "report.tsv").is_file()
    import pandas as pd

    assert bool(pd.read_parquet(res / "tables" / "toy_claims.parquet")["held"].all())
    (res / "tables" / "toy_claims.md").unlink()
    dry = _snakemake(tmp_path, good, "--dry-run")
    assert "toy_report" in dry.stdout  # rule all asks for the toy's final targets too
    _snakemake(tmp_path, good, "toy_report")

    archive = tmp_path / "report.zip"
    _snakemake(tmp_path, good, "report_pages_toy")  # the claims table's page (the report stage)
    _snakemake(tmp_path, good, "--report", str(archive), "toy_report", "report_pages_toy")
    with zipfile.ZipFile(archive) as zf:
        names = {Path(n).name for n in zf.namelist()}
        html = zf.read(next(n for n in zf.namelist() if n.endswith("report.html"))).decode()
    assert {"toy_fig.png", "toy_claims.html"} <= names and "toy_claims.md" not in names
    assert "Toy paper (tests)" in html
