"""The workflow end to end: schema errors before any job, a tiny run in a temporary folder whose
tables are byte-identical when run again, a dry run of the paper configuration, and lint."""

from __future__ import annotations

import copy
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
def test_tiny_workflow_end_to_end_and_byte_identical(tiny_workflow, tmp_path):
    shared = tiny_workflow  # the shared tiny run of every stage (tests/conftest.py), read only
    tables = _reproducible(sorted((shared / "results").rglob("*.parquet")))
    assert (shared / "results/tables/datasets.parquet") in tables
    assert (shared / "results/figures/msnbc_category_shares.png").stat().st_size > 1000
    md = (shared / "results/tables/datasets.md").read_text()
    assert "stand-in" in md  # the IPUMS tables are stand-ins here and the caption says so
    assert "| loan | loan.parquet |" in md and "| adult_ordinal | adult_ordinal.parquet |" in md  # HDG's tables
    for k in (6, 7, 8, 9):  # Figs 6-9 at the tiny scale of the fixture's multidim_frameworks section
        assert (shared / f"results/figures/multidim_fig{k}.png").stat().st_size > 1000
    assert (shared / "results/tables/multidim_frameworks_claims.parquet") in tables
    first = {p.relative_to(shared): p.read_bytes() for p in tables}
    # the same configuration again, from nothing, in another folder: the jobs of these tables (the
    # jobs that draw only figures or report pages are left out: nothing of theirs is compared)
    (tmp_path / "config.yaml").write_text((shared / "config.yaml").read_text())
    snakemake("--configfile", str(tmp_path / "config.yaml"), "--cores", "2", *map(str, first), cwd=tmp_path)
    second = {p.relative_to(tmp_path): p.read_bytes()
              for p in _reproducible(sorted((tmp_path / "results").rglob("*.parquet")))}
    assert first.keys() == second.keys()
    differing = [str(k) for k in first if first[k] != second[k]]
    assert not differing, f"tables differ between two runs of the same config: {differing}"


def test_paper_config_dry_run(tmp_path):
    # outside the repository the Snakefile's config/config.yaml is not there: paper.yaml goes over it explicitly
    proc = snakemake("--configfile", str(REPO / "config" / "config.yaml"), str(REPO / "config" / "paper.yaml"),
                     "--cores", "2", "--dry-run", cwd=tmp_path)
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


# config/paper.yaml holds only what differs from config/config.yaml: the Snakefile always loads
# config.yaml and Snakemake deep-merges a --configfile over it (mappings key by key, lists replaced).

CONFIG = REPO / "config"


def _jobs_seen(config: dict) -> dict:
    """Everything a job sees, per enabled stage: step, wildcards, canonical spec, inputs."""
    from shuffledp.stages import discover
    from shuffledp.stages.jobs import canonical

    return {name: [(j.step, dict(j.wildcards), canonical(j.spec), repr(dict(j.inputs))) for j in stage.jobs(config)]
            for name, stage in discover().items() if stage.enabled(config)}


def _sub(schema: dict, key: str) -> dict | None:
    """The schema of ``key`` in an object of ``schema`` (None: an unknown key)."""
    import re

    sub = schema.get("properties", {}).get(key)
    if sub is None:
        sub = next((s for p, s in schema.get("patternProperties", {}).items() if re.search(p, key)), None)
    if sub is None and isinstance(schema.get("additionalProperties"), dict):
        sub = schema["additionalProperties"]
    return sub


def _unknown_keys(node, schema, path="") -> list[str]:
    """Key paths of ``node`` the schema does not know (its properties, patternProperties or
    additionalProperties; array items through ``items``)."""
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            sub = _sub(schema, key)
            if sub is None:
                out.append(path + key)
            else:
                out += _unknown_keys(value, sub, path + key + ".")
    elif isinstance(node, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(node):
            out += _unknown_keys(item, schema["items"], f"{path[:-1]}[{i}].")
    return out


def test_merged_paper_config_validates():
    from shuffledp.config import load_configs, validate_config

    validate_config(load_configs([CONFIG / "config.yaml", CONFIG / "paper.yaml"]))


def test_paper_config_holds_only_what_differs_from_the_default():
    """No key of paper.yaml repeats the value the default has there (config.yaml's, else the
    schema's default), so each scale's value is written once."""
    from shuffledp.config import load_validated, load_yaml

    default = load_validated([CONFIG / "config.yaml"])
    paper = load_yaml(CONFIG / "paper.yaml")

    def redundant(over, base, path=""):
        out = []
        for k, v in over.items():
            if isinstance(v, dict) and isinstance(base.get(k), dict):
                out += redundant(v, base[k], path + k + ".") if v else [path + k]
            elif k in base and base[k] == v:
                out.append(path + k)
        return out

    assert redundant(paper, default) == []


def test_config_files_hold_only_keys_the_schema_knows():
    from shuffledp.config import load_configs, load_schema, load_yaml

    schema = load_schema()
    for name, cfg in (("config.yaml", load_yaml(CONFIG / "config.yaml")),
                      ("paper.yaml", load_yaml(CONFIG / "paper.yaml")),
                      ("merged", load_configs([CONFIG / "config.yaml", CONFIG / "paper.yaml"]))):
        assert _unknown_keys(cfg, schema) == [], name


def test_filling_the_defaults_into_the_default_config_changes_no_job():
    """config.yaml may state a key at its schema default (it documents every key); the jobs are
    the same whether it does or the default is filled in, and validation only adds keys."""
    from shuffledp.config import load_schema, load_yaml, validate_config

    raw = load_yaml(CONFIG / "config.yaml")
    filled = copy.deepcopy(raw)
    validate_config(filled)

    def added_only(small, big):
        if isinstance(small, dict):
            return set(small) <= set(big) and all(added_only(v, big[k]) for k, v in small.items())
        if isinstance(small, list):
            return len(small) == len(big) and all(added_only(a, b) for a, b in zip(small, big, strict=True))
        return small == big

    assert added_only(raw, filled)

    # the default config without every key that equals its schema default: the same jobs
    schema = load_schema()

    def strip(node, sch):
        removed = 0
        if isinstance(node, dict):
            for k in list(node):
                sub = _sub(sch, k) or {}
                if "default" in sub and node[k] == sub["default"]:
                    del node[k]
                    removed += 1
                else:
                    removed += strip(node[k], sub)
        elif isinstance(node, list):
            removed += sum(strip(item, sch.get("items", {})) for item in node)
        return removed

    minimal = copy.deepcopy(raw)
    assert strip(minimal, schema) > 0  # the comparison below is not vacuous
    validate_config(minimal)
    assert _jobs_seen(minimal) == _jobs_seen(filled)
