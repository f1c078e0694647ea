"""Property-based config fuzzer: mutate keys and values of the tiny (and default) configuration.

Every mutated configuration must either pass :func:`shuffledp.config.validate_config` -- the very
function the workflow calls before any job -- or be refused with a :class:`ConfigError` whose
message names a config key; any other exception would be a traceback for the user. A handful of
examples also go through a real ``snakemake -n``, which must succeed or exit non-zero naming a key,
without a traceback.
"""

from __future__ import annotations

import copy
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffledp.config import ConfigError, merge, validate_config

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
PAPER = merge(copy.deepcopy(DEFAULT), yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
# "config key <path>: ..." where <path> is a.b[0].c with odd keys quoted (['<x>']), or "config: ..."
KEY_MSG = re.compile(r"^config(?: key (?:[A-Za-z0-9_-]+|\[\d+\]|\['.*?'\]|\[\".*?\"\])"
                     r"(?:\.[A-Za-z0-9_-]+|\[\d+\]|\['.*?'\]|\[\".*?\"\])*)?: ", re.M)
TRIED = {"validate": 0, "refused": 0, "snakemake": 0}


def _paths(node, prefix=()):
    """Every (path) to a value in the config: mapping keys and list indices."""
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out.append((*prefix, k))
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((*prefix, i))
            out += _paths(v, (*prefix, i))
    return out


VALUES = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-10**6, max_value=10**6),
    st.sampled_from([0, 1, 2, -1, 10**12, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, 1e-300, 0.5, 1.0]),
    st.text(max_size=12),
    st.sampled_from(["", " ", "a b", "x; rm -rf /", "$(id)", "../..", "/abs", "auto", "standin", "sound", "paper",
                     "kmeans", "alg1", "uniform", "zipf"]),
    st.lists(st.integers(-3, 100), max_size=4),
    st.lists(st.floats(allow_nan=True), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers(-2, 50), max_size=3),
)


ODD_NAMES = ["../x", "../../etc/passwd", "/abs", "a b", "a/b", ".hidden", "x;rm", "$(id)", "", "é", "A" * 80, "..",
             "1e3", "null", "true"]


@st.composite
def mutation(draw, base):
    cfg = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(cfg)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = cfg
        for p in path[:-1]:
            parent = parent[p]
        key = path[-1]
        op = draw(st.sampled_from(["value", "value", "value", "delete", "rename", "add", "empty", "dup", "big",
                                   "float", "oddkey"]))
        value = parent[key]
        if op == "value":
            parent[key] = draw(VALUES)
        elif op == "empty":  # an empty list or mapping where one was
            parent[key] = [] if isinstance(value, list) else {} if isinstance(value, dict) else draw(VALUES)
        elif op == "dup" and isinstance(value, list) and value:  # a duplicate entry
            value.append(copy.deepcopy(value[draw(st.integers(0, len(value) - 1))]))
        elif op == "big" and isinstance(value, (int, float)) and not isinstance(value, bool):  # out of range
            parent[key] = value * draw(st.sampled_from([10**6, 10**12, -1, -(10**9)]))
        elif op == "float" and isinstance(value, int) and not isinstance(value, bool):  # 300 -> 300.0 / 300.5
            parent[key] = float(value) + draw(st.sampled_from([0.0, 0.0, 0.5]))
        elif op == "oddkey" and isinstance(value, dict):  # an odd name at any depth (collections too)
            name = draw(st.sampled_from(ODD_NAMES) | st.text(max_size=8))
            value[name] = copy.deepcopy(next(iter(value.values()))) if value and draw(st.booleans()) else draw(VALUES)
        elif op == "delete":
            del parent[key]
        elif op == "rename" and isinstance(parent, dict):
            text = str(key)
            i = draw(st.integers(0, max(len(text) - 1, 0)))
            new = text[:i] + draw(st.sampled_from(["", "x", "_", "s"])) + text[i + 1:]
            parent[new or "k"] = parent.pop(key)
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", str(key) + "s", "data_dir", "Seed", "notes"]))] = draw(VALUES)
    return cfg


def _check(cfg) -> str | None:
    try:
        validate_config(cfg)
    except ConfigError as exc:
        msg = str(exc)
        lines = [line for line in msg.splitlines() if not re.fullmatch(r"\(\d+ more\)", line)]
        bad = [line for line in lines if not KEY_MSG.match(line)]
        assert lines and not bad, f"refusal line does not name a config key: {bad or msg!r}"
        return msg
    return None


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_fuzzed_config_passes_or_names_a_key(data):
    base = data.draw(st.sampled_from([TINY, DEFAULT, PAPER]))
    cfg = data.draw(mutation(base))
    TRIED["validate"] += 1
    TRIED["refused"] += _check(cfg) is not None  # any exception other than ConfigError fails the test


def run_snakemake(tmp_path: Path, cfg, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """Snakemake on ``cfg`` (written to ``tmp_path/config.yaml``) in ``tmp_path``, with ``args``."""
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--configfile", str(path), *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)


def _dry_run(tmp_path: Path, cfg) -> subprocess.CompletedProcess:
    return run_snakemake(tmp_path, cfg, "--cores", "1", "-n", "--quiet", "rules")


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.data())
def test_fuzzed_config_real_dry_run(tmp_path_factory, data):
    cfg = data.draw(mutation(TINY))
    tmp = tmp_path_factory.mktemp("fuzz")
    TRIED["snakemake"] += 1
    expected = _check(cfg)
    proc = _dry_run(tmp, cfg)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out[-3000:]
    if proc.returncode != 0:
        assert KEY_MSG.search(proc.stderr) or "config key" in out, out[-3000:]
    # the dry run agrees with validate_config (the same function): refused iff refused
    assert (proc.returncode != 0) == (expected is not None), (expected, out[-2000:])
    # no data: at most the real datasets' source markers (data/.sources), which every parse keeps
    assert not (tmp / "data").exists() or [p.name for p in (tmp / "data").iterdir()] == [".sources"]
    if proc.returncode != 0:  # refused: nothing written
        assert not (tmp / "results").exists()
    elif (tmp / "results").exists():  # a dry run writes only the jobs' content-named spec and io files
        assert [p.name for p in (tmp / "results").iterdir()] == [".jobs"]


def teardown_module(module):
    print(f"\nconfig fuzzer: {TRIED['validate']} configs through validate_config ({TRIED['refused']} refused), "
          f"{TRIED['snakemake']} through snakemake -n")


def test_the_workflow_calls_exactly_this_validation():
    """The fuzzer's property holds for the workflow only if common.smk calls the same function."""
    text = (REPO / "workflow" / "rules" / "common.smk").read_text()
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert "from shuffledp.config import ConfigError, validate_config, workflow_config" in code
    assert re.search(r"^\s+validate_config\(config\)", code, re.M)
    # and builds its config with the same merge as `shuffledp config validate` (overlay semantics):
    # the defaults read by workflow_config, Snakemake's `config` (only the user's files) over them
    assert re.search(r"^\s+_merged = workflow_config\(config\)$", code, re.M)
    from shuffledp.config import load_configs, workflow_config

    cwd = os.getcwd()
    try:
        os.chdir(REPO)
        paper = load_configs([REPO / "config" / "paper.yaml"])
        assert workflow_config(paper) == load_configs([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"])
    finally:
        os.chdir(cwd)
    assert "snakemake.utils import validate" not in code and "check_config(" not in code
