"""envs/shuffledp.yaml (for `--sdm conda` users, e.g. on a cluster) keeps the version ranges of
pyproject.toml's runtime dependencies (snakemake and its plugins excepted: they run outside the
job environment)."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CONDA_NAMES = {"matplotlib": "matplotlib-base"}


def _split(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", req)
    return m.group(1).lower(), m.group(3).replace(" ", "")


def test_conda_env_matches_pyproject():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = {name: spec for name, spec in map(_split, deps) if not name.startswith("snakemake")}
    env = yaml.safe_load((REPO / "envs" / "shuffledp.yaml").read_text())
    have = {}
    for item in env["dependencies"]:
        if isinstance(item, dict):
            for req in item.get("pip", []):
                if not req.startswith("-e"):
                    have.update([_split(req)])
        else:
            have.update([_split(item)])
    assert any(isinstance(i, dict) and "-e .." in i.get("pip", []) for i in env["dependencies"])
    for name, spec in wanted.items():
        conda_name = CONDA_NAMES.get(name, name)
        assert conda_name in have, f"envs/shuffledp.yaml lacks {conda_name} ({name}{spec})"
        assert have[conda_name] == spec, f"{conda_name}: env {have[conda_name]!r} vs pyproject {spec!r}"
