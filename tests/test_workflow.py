"""The workflow end to end: schema errors before any job, a tiny run in a temporary folder whose
tables are byte-identical when run again, a dry run of the paper configuration, and lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import run_snakemake

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "fixtures" / "config_tiny.yaml"


snakemake = run_snakemake  # tests/conftest.py: snakemake --snakefile <repo>/Snakefile --directory cwd ARGS


def _write_config(tmp_path: Path, mutate=None) -> Path:
    cfg = yaml.safe_load(TINY.read_text())
    if mutate:
        mutate(cfg)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda c: c["datasets"].update(movielens={"source": "auto"}), "movielens"),
        (lambda c: c["datasets"]["msnbc"].update(source="maybe"), "maybe"),
        (lambda c: c["datasets"]["synthetic"][0].update(set_size=40), "set_size"),
        (lambda c: c.update(seed=-1), "seed"),
    ],
    ids=["unknown-dataset", "unknown-source", "set-larger-than-domain", "negative-seed"],
)
def test_bad_config_stops_before_any_job(tmp_path, mutate, needle):
    cfg = _write_config(tmp_path, mutate)
    proc = snakemake("--configfile", str(cfg), "--cores", "1", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert needle in proc.stdout + proc.stderr
    assert not (tmp_path / "data").exists() and not (tmp_path / "results").exists()


def _reproducible(paths):
    # wall-clock timings (Figure 4 of the multidimensional paper) are measured, not reproducible
    return [p for p in paths if "timings" not in p.name and "timings" not in p.parent.name]


@pytest.mark.slow
def test_tiny_workflow_end_to_end_and_byte_identical(tiny_workflow):
    tmp_path = tiny_workflow  # the shared tiny run (tests/conftest.py); rebuilt below, so left complete
    cfg = tmp_path / "config.yaml"
    tables = _reproducible(sorted((tmp_path / "results").rglob("*.parquet")))
    assert (tmp_path / "results/tables/datasets.parquet") in tables
    assert (tmp_path / "results/figures/msnbc_category_shares.png").stat().st_size > 1000
    md = (tmp_path / "results/tables/datasets.md").read_text()
    assert "stand-in" in md  # the IPUMS tables are stand-ins here and the caption says so
    assert "| loan | loan.parquet |" in md and "| adult_ordinal | adult_ordinal.parquet |" in md  # HDG's tables
    for k in (6, 7, 8, 9):  # Figs 6-9 at the tiny scale of the fixture's multidim_frameworks section
        assert (tmp_path / f"results/figures/multidim_fig{k}.png").stat().st_size > 1000
    assert (tmp_path / "results/tables/multidim_frameworks_claims.parquet") in tables
    first = {p.relative_to(tmp_path): p.read_bytes() for p in tables}
    shutil.rmtree(tmp_path / "results")
    shutil.rmtree(tmp_path / "data" / "processed")
    snakemake("--configfile", str(cfg), "--cores", "2", cwd=tmp_path)
    second = {p.relative_to(tmp_path): p.read_bytes()
              for p in _reproducible(sorted((tmp_path / "results").rglob("*.parquet")))}
    assert first.keys() == second.keys()
    differing = [str(k) for k in first if first[k] != second[k]]
    assert not differing, f"tables differ between two runs of the same config: {differing}"


def test_paper_config_dry_run(tmp_path):
    proc = snakemake("--configfile", str(REPO / "config" / "paper.yaml"), "--cores", "2", "--dry-run", cwd=tmp_path)
    assert "rule all" in proc.stdout or "all" in proc.stdout


def test_default_config_dry_run(tmp_path):
    snakemake("--configfile", str(REPO / "config" / "config.yaml"), "--cores", "2", "--dry-run", cwd=tmp_path)


def test_lint_has_no_remarks(tmp_path):
    proc = snakemake("--lint", "--cores", "1", cwd=REPO, check=False)
    out = proc.stdout + proc.stderr
    assert "Lints for" not in out, out[-4000:]
    assert proc.returncode == 0, out[-4000:]


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    paths = [d for d in ("src", "tests", "workflow", "benchmarks") if (REPO / d).exists()]
    proc = subprocess.run([ruff, "check", *paths], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_paper_config_sets_every_key_of_the_default():
    """The Snakefile always loads config/config.yaml and --configfile overlays it, so a key set only
    in the default would silently leak into the paper scale."""
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())

    def missing(a, b, path=""):
        out = []
        for k, v in a.items():
            if k not in b:
                out.append(path + k)
            elif isinstance(v, dict) and isinstance(b[k], dict):
                out += missing(v, b[k], path + k + ".")
        return out

    assert missing(default, paper) == []
