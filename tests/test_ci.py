"""CI (`.ci/run`) runs exactly the test command README.md's Quick start shows, and the test extra
installs what that command needs."""

import os
import re
import shlex
import subprocess
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


def test_ci_keeps_pythons_bytecode_cache_whatever_the_environment_says():
    """CI installs the packages without byte-compiling them (--no-compile): with PYTHONDONTWRITEBYTECODE
    set by the calling environment, every Python process of the suite would compile numpy, pandas, scipy
    and Snakemake from source again (a tiny `snakemake -n`: 4.4 CPU s instead of 1.9). The script's
    lines before it creates the virtual environment, run with the variable set: the Python it then
    starts writes its bytecode cache."""
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    venv = next(i for i, ln in enumerate(lines) if ln.startswith("python3 -m venv"))
    script = "\n".join([*lines[:venv], 'python3 -c "import sys; print(sys.dont_write_bytecode)"'])
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(["bash", "-c", script, str(REPO / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False", "CI's Python would not cache the bytecode it compiles"


def test_the_test_extra_installs_the_commands_plugins():
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    names = {re.match(r"[A-Za-z0-9_.\-]+", r).group(0).lower() for r in extra}
    args = shlex.split(_readme_command())
    if "-n" in args or "--dist" in args or "--numprocesses" in args:
        assert "pytest-xdist" in names, extra
    lock = (REPO / "requirements.lock").read_text()
    for name in names:  # every test requirement pinned for CI
        assert re.search(rf"^{re.escape(name)}==", lock, flags=re.M | re.I), name


GROUPED_MODULE = '''
import os, pytest

@pytest.fixture(scope="module")
def shared():
    return 1

@pytest.mark.parametrize("i", range(6))
def test_with_module_fixture(shared, i, record):
    record("a", i)

@pytest.mark.parametrize("i", range(6))
def test_free(i, record):
    record("b", i)
'''

SUB_CONFTEST = '''
import importlib.util, os, pytest
_spec = importlib.util.spec_from_file_location("shuffledp_tests_conftest", {path!r})
_c = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_c)
pytest_collection_modifyitems = _c.pytest_collection_modifyitems
pytest_configure = _c.pytest_configure
pytest_unconfigure = _c.pytest_unconfigure
pytest_xdist_make_scheduler = _c.pytest_xdist_make_scheduler

@pytest.fixture
def record():
    def write(kind, i):
        with open(os.path.join({out!r}, f"{{kind}}{{i}}"), "w") as f:
            f.write(os.environ.get("PYTEST_XDIST_WORKER", "main"))
    return write
'''


def test_the_parallel_command_keeps_a_module_fixtures_tests_on_one_worker(tmp_path):
    """The README's command on a module whose tests share a module-scoped fixture: they all run on one
    worker (tests/conftest.py's scheduler; pytest-xdist's own loadgroup spreads them under pytest 9.2),
    while the other worker runs the rest."""
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(SUB_CONFTEST.format(path=str(REPO / "tests" / "conftest.py"), out=str(out)))
    (suite / "test_grouped.py").write_text(GROUPED_MODULE)
    args = shlex.split(_readme_command())[1:]
    assert "auto" in args
    args[args.index("auto")] = "2"  # two workers whatever this machine has
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "SHUFFLEDP_XDIST"))}
    proc = subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", "-q", str(suite)],
                          cwd=suite, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    workers = {p.name: p.read_text() for p in out.iterdir()}
    assert len(workers) == 12, workers
    assert len({workers[f"a{i}"] for i in range(6)}) == 1, workers
    assert set(workers.values()) == {"gw0", "gw1"}, workers  # and both workers ran tests
