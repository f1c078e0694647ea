"""CI (`.ci/run`) runs exactly the test command README.md's Quick start shows, and the test extra
installs what that command needs."""

import re
import shlex
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _readme_command() -> str:
    quick = (REPO / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^pip install -e '\.\[test\]' && (pytest[^#\n]*?)\s*(?:#.*)?$", quick, flags=re.M)
    assert len(found) == 1, found
    return found[0]


def _ci_command() -> str:
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("# the README's test command"))
    assert i == len(lines) - 2, "the test command is the script's last line"
    return lines[i + 1].strip()


def test_ci_runs_the_readmes_test_command():
    assert _ci_command() == _readme_command()


def test_the_test_extra_installs_the_commands_plugins():
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower() for r in extra}
    args = shlex.split(_readme_command())
    if "-n" in args or "--dist" in args or "--numprocesses" in args:
        assert "pytest-xdist" in names, extra
    lock = (REPO / "requirements.lock").read_text()
    for name in names:  # every test requirement pinned for CI
        assert re.search(rf"^{re.escape(name)}==", lock, flags=re.M | re.I), name
