"""envs/shuffledp.yaml (for `--sdm conda` users, e.g. on a cluster) pins every runtime dependency of
pyproject.toml at the exact version of requirements.lock (snakemake and its plugins excepted: they run
outside the job environment), constrains the rest by the lock file, and installs the package itself
from the checkout without an editable path."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.match(r"^\s*([A-Za-z0-9_.\-]+)", req).group(1).lower().replace("_", "-")


def _lock() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[_name(name)] = version.strip()
    return pins


def _pip_section() -> list[str]:
    env = yaml.safe_load((REPO / "envs" / "shuffledp.yaml").read_text())
    sections = [i["pip"] for i in env["dependencies"] if isinstance(i, dict) and "pip" in i]
    assert len(sections) == 1, env["dependencies"]
    return sections[0]


def test_conda_env_pins_the_lock_files_versions():
    lock = _lock()
    pip = _pip_section()
    pinned = {_name(r): r.split("==", 1)[1] for r in pip if "==" in r}
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = {_name(d) for d in deps if not _name(d).startswith("snakemake")}
    assert wanted == set(pinned), f"env pins {sorted(pinned)}, pyproject's runtime dependencies {sorted(wanted)}"
    for name, version in pinned.items():
        assert lock.get(name) == version, f"{name}: env {version} vs requirements.lock {lock.get(name)}"
    assert "-c ../requirements.lock" in pip  # everything pip resolves besides: the lock's versions too


def test_conda_env_installs_the_package_without_an_editable_path():
    pip = _pip_section()
    assert ".." in pip and not [r for r in pip if r.startswith("-e") or "--editable" in r], pip
    env = yaml.safe_load((REPO / "envs" / "shuffledp.yaml").read_text())
    python = [d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python")]
    assert python == ["python=3.11"], python  # the Python the lock file was made with (its header)
    assert "Python 3.11" in (REPO / "requirements.lock").read_text().splitlines()[0]
