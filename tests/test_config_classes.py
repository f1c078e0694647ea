"""Issue 23, the classes of bad configuration, each through the real entry points.

``shuffledp config validate FILE...`` (the CLI: exit 2, one line ``shuffledp: error: config key
...``) and ``snakemake -n`` (exit non-zero before any job, the key named, nothing written):

1. names that become paths (``segmented.datasets``/``settings``/``figures`` keys, IPUMS attribute
   names, ...) match a pattern;
2. every quantity has an upper limit (``maximum`` in the schema, with its reason), and the total
   number of jobs is bounded without building them;
3. whole-number floats are the integers (same jobs and specs), duplicate and empty lists are
   refused naming the key, NaN is refused by the library's ``eps_for_delta``; a config file that is
   not UTF-8, a folder or not a mapping is one line naming the file;
4. a YAML alias bomb is refused at once;
5. overlays: a collection the user names replaces the default's (README, "Configuration").
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from shuffledp.config import ConfigError, load_configs, load_yaml, merge, validate_config
from shuffledp.stages import discover
from shuffledp.stages.jobs import canonical

REPO = Path(__file__).resolve().parents[1]
DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
PAPER = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def _validate(cfg) -> str:
    with pytest.raises(ConfigError) as info:
        validate_config(cfg)
    return str(info.value)


def _mutated(**sections):
    cfg = copy.deepcopy(DEFAULT)
    for path, value in sections.items():
        node = cfg
        *head, last = path.split("__")
        for p in head:
            node = node[p]
        node[last] = value
    return cfg


# (id, mutation as key path with "__" -> value, substrings of the one line)
BAD = [
    # 1. paths
    ("seg-dataset-up", {"segmented__datasets": {"../../x": {"table": "msnbc_sets", "d": 17, "s": 4}}},
     ["segmented.datasets['../../x']", "not allowed"]),
    ("seg-dataset-abs", {"segmented__datasets": {"/tmp/x": {"table": "msnbc_sets", "d": 17, "s": 4}}},
     ["segmented.datasets['/tmp/x']"]),
    ("seg-figure-up", {"segmented__figures": {"../fig": {"datasets": ["msnbc"], "settings": ["S1"]}}},
     ["segmented.figures['../fig']"]),
    ("seg-setting-slash", {"segmented__settings": {"a/b": [0.25, 0.5, 0.25]}}, ["segmented.settings['a/b']"]),
    ("results-in-data", {"results_dir": "data/results"}, ["config key results_dir"]),
    ("loan-file-missing", {"multidim_frameworks__loan": {"source": "file", "path": "/nope/loans.csv"}},
     ["multidim_frameworks.loan.path", "no such file"]),
    ("attribute-name", {"datasets__ipums__br__attributes": {"SEX": 2, "../A": 3}},
     ["datasets.ipums.br.attributes['../A']"]),
    ("class-name", {"multidim__personal__classes": [{"name": "a/b", "eps": 0.1, "delta_n": 0.1},
                                                    {"name": "m", "eps": 0.5, "delta_n": 1.0},
                                                    {"name": "l", "eps": 1.0, "delta_n": 10.0}]},
     ["multidim.personal.classes[0].name"]),
    # 2. limits
    ("m-grid-num", {"segmented__m_grid": {"min": 0.1, "max": 10.0, "num": 1000000}},
     ["segmented.m_grid.num", "limit 200"]),
    ("seg-reps", {"segmented__repetitions": 1000000000}, ["segmented.repetitions", "limit"]),
    ("seg-batch", {"segmented__batch_size": 22000}, ["segmented.batch_size", "limit"]),
    ("acc-n-grid", {"accountants_compare__n_grid": [1000, 10**12]}, ["accountants_compare.n_grid[1]", "limit"]),
    ("peruser-n", {"peruser__datasets": [{"name": "x", "source": "msnbc", "n": 10**9}]},
     ["peruser.datasets[0].n", "limit"]),
    ("multidim-records", {"multidim__records": 10**9}, ["multidim.records", "limit"]),
    ("hdg-domain", {"multidim_frameworks__hdg__domain": 2**20}, ["multidim_frameworks.hdg.domain", "limit"]),
    ("too-many-jobs", {"peruser__repetitions": 10000, "peruser__batch_size": 1}, ["config key peruser", "jobs"]),
    ("seg-too-many-jobs", {"segmented__repetitions": 10000, "segmented__batch_size": 1},
     ["config key segmented", "jobs"]),
    # 3. values
    ("float-not-whole", {"segmented__n": [300.5]}, ["segmented.n[0]", "integer"]),
    ("dup-n", {"segmented__n": [5000, 5000]}, ["segmented.n", "duplicate"]),
    ("dup-eps", {"multidim__eps": [0.1, 0.1]}, ["multidim.eps", "duplicate"]),
    ("dup-methods", {"peruser__methods": ["alg1", "alg1"]}, ["peruser.methods", "duplicate"]),
    ("dup-n-grid", {"personalized__n_grid": [1000, 1000]}, ["personalized.n_grid", "duplicate"]),
    ("empty-calm", {"multidim_frameworks__calm__datasets": []}, ["multidim_frameworks.calm.datasets", "empty"]),
    ("empty-hdg", {"multidim_frameworks__hdg__datasets": []}, ["multidim_frameworks.hdg.datasets", "empty"]),
    ("nan-deep", {"accountants_compare__gain__measure": {"n": 2000, "eps_s": math.nan, "reps": 2,
                                                          "tolerance": 0.2}},
     ["accountants_compare.gain.measure.eps_s", "finite"]),
    ("inf-m", {"segmented__m_grid": {"min": 0.1, "max": math.inf, "num": 4}}, ["segmented.m_grid.max", "finite"]),
    # 7. weak answers found with mutated configs: they failed (or were capped quietly) late in a job
    ("calm-records", {"multidim_frameworks__calm__records": 10**6}, ["multidim_frameworks.calm.records", "exceeds"]),
    ("calm-view-size", {"multidim_frameworks__calm__view_size": 10, "multidim_frameworks__calm__datasets": ["br"],
                        "datasets__ipums__br__attributes": {"SEX": 2, "AGE2": 20}},
     ["multidim_frameworks.calm.view_size", "attributes"]),
    ("user-sample", {"peruser__user_sample": 10**5}, ["peruser.user_sample", "exceed"]),
    ("table2-dup-row", {"personalized__table2__rows": [{"name": "fv", "bound": "fv"}, {"name": "fv", "bound": "ccc"}]},
     ["personalized.table2.rows", "duplicate names 'fv'"]),
    ("class-dup-name", {"multidim__personal__classes": [{"name": "a", "eps": 0.1, "delta_n": 0.1}] * 3},
     ["multidim.personal.classes"]),
    ("krr-leading-zero", {"accountants_compare__mechanisms": ["krr10", "krr010"]},
     ["accountants_compare.mechanisms[1]"]),
]


@pytest.mark.parametrize(("mutation", "needles"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_value_is_refused_naming_the_key(mutation, needles):
    msg = _validate(_mutated(**mutation))
    assert msg.startswith("config key ") and len(msg.splitlines()) == 1, msg
    for needle in needles:
        assert needle in msg, msg


def test_limits_are_documented_in_the_schema():
    """Every integer quantity of the schema has a maximum (a seed, too); numbers in limits hold a reason."""
    from shuffledp.config import load_schema

    missing = []

    def walk(node, path):
        if isinstance(node, dict):
            kind = node.get("type")
            kinds = [kind] if isinstance(kind, str) else list(kind or [])
            if "integer" in kinds and "maximum" not in node:
                missing.append(path)
            for k, v in node.items():
                walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(load_schema(), "")
    assert missing == [], missing


def test_whole_number_floats_are_the_integers():
    """``n: 300.0`` and ``hdg.domain: 8.0`` give the very jobs (same specs) as ``300`` and ``8``."""
    ints, floats = copy.deepcopy(DEFAULT), copy.deepcopy(DEFAULT)
    floats["segmented"]["n"] = [float(n) for n in floats["segmented"]["n"]]
    floats["multidim_frameworks"]["hdg"]["domain"] = 16.0
    floats["segmented"]["m_grid"]["num"] = 4.0
    floats["peruser"]["datasets"][0]["n"] = 2000.0
    validate_config(ints)
    validate_config(floats)
    assert floats == ints
    for stage in discover().values():
        if stage.enabled(ints):
            assert [canonical(j.spec) for j in stage.jobs(floats)] == [canonical(j.spec) for j in stage.jobs(ints)]


def test_job_count_is_exact_without_building_every_batch():
    from shuffledp.config import _count_jobs

    cfg = copy.deepcopy(DEFAULT)
    cfg["segmented"].update(repetitions=7, batch_size=2)
    cfg["multidim"].update(reps=5, reps_per_job=2)
    cfg["multidim"]["personal"].update(reps=7, reps_per_job=3)
    validate_config(cfg)
    for stage in discover().values():
        if stage.enabled(cfg):
            assert _count_jobs(stage, cfg) == len(stage.jobs(cfg)), stage.name


def test_alias_bomb_is_refused_quickly(tmp_path):
    lines = ["name: x", "seed: 1", "datasets: {}", "a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    start = time.monotonic()
    proc = _cli(tmp_path, path)
    assert time.monotonic() - start < 30
    assert proc.returncode == 2 and "more than 100000 values" in proc.stderr and str(path) in proc.stderr
    # and a config built in memory (as Snakemake hands it over) is bounded the same way
    bomb = yaml.safe_load(path.read_text())
    start = time.monotonic()
    assert "more than" in _validate(bomb)
    assert time.monotonic() - start < 5


def test_eps_for_delta_refuses_nan_and_inf():
    from shuffledp.accountants.numerics.hockey_stick import eps_for_delta
    from shuffledp.errors import DomainError

    for delta, eps_hi, rtol in ((math.nan, 10.0, 1e-6), (1e-6, math.nan, 1e-6), (1e-6, math.inf, 1e-6),
                                (1e-6, 10.0, math.nan)):
        with pytest.raises(DomainError):
            eps_for_delta(lambda e: math.exp(-e), delta, eps_hi, rtol)
    # a bound that evaluates to NaN would pass as a verified point (NaN compares false): refused
    with pytest.raises(DomainError, match="NaN"):
        eps_for_delta(lambda e: math.nan if e > 1 else 1.0, 1e-6, 10.0)
    assert eps_for_delta(lambda e: math.exp(-e), 1e-6, 50.0) == pytest.approx(-math.log(1e-6), rel=1e-5)


# ------------------------------------------------------------------ the CLI: shuffledp config validate


def _cli(cwd: Path, *files) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shuffledp", "config", "validate", *map(str, files)],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("kind", ["not-utf8", "folder", "list", "huge", "deep", "deep-parsable"])
def test_config_file_that_is_no_config_is_one_line_naming_it(tmp_path, kind):
    path = tmp_path / "mine.yaml"
    if kind == "not-utf8":
        path.write_bytes(b"name: caf\xe9\nseed: 1\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "list":
        path.write_text("- 1\n- 2\n")
    elif kind == "deep":  # deeper than the YAML parser's recursion
        path.write_text("extra: " + "[" * 5000 + "]" * 5000 + "\n")
    elif kind == "deep-parsable":
        path.write_text("extra: " + "[" * 100 + "]" * 100 + "\n")
    else:
        path.write_text("# " + "x" * (2 << 20) + "\n")
    proc = _cli(tmp_path, REPO / "config" / "config.yaml", path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and str(path) in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("case", ["seg-dataset-up", "m-grid-num", "dup-n", "empty-calm"])
def test_cli_refuses_with_one_line_naming_the_key(tmp_path, case):
    mutation, needles = next(c[1:] for c in BAD if c[0] == case)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(_mutated(**mutation)))
    proc = _cli(tmp_path, path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("shuffledp: error: config key") and all(n in lines[0] for n in needles), lines


# ------------------------------------------------------------------ overlays


def _overlay(tmp_path: Path) -> Path:
    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump({
        "name": "mine",
        "datasets": {"ipums": {"br": {"source": "standin", "records": 20000,
                                      "attributes": {"SEX": 2, "AGE2": 20, "MARST": 5}}}},
        "segmented": {"datasets": {"msnbc": {"table": "msnbc_sets", "d": 17, "s": 4}},
                      "figures": {"only": {"datasets": ["msnbc"], "settings": ["S1"]}},
                      "m_grid": {"num": 3}},
        "multidim": {"datasets": ["br"]},
        "multidim_frameworks": {"calm": {"datasets": ["br"]}},
    }))
    return mine


def test_overlay_replaces_the_collections_it_names_and_merges_the_rest(tmp_path):
    cfg = load_configs([REPO / "config" / "config.yaml", _overlay(tmp_path)])
    seg = cfg["segmented"]
    assert list(seg["datasets"]) == ["msnbc"] and list(seg["figures"]) == ["only"]  # replaced, not merged
    assert seg["m_grid"] == {"min": 0.1, "max": 10.0, "num": 3}  # a fixed-key mapping: merged key by key
    assert seg["settings"] == DEFAULT["segmented"]["settings"]  # not written: the default's
    assert list(cfg["datasets"]["ipums"]) == ["br"]
    assert cfg["datasets"]["ipums"]["br"]["attributes"] == {"SEX": 2, "AGE2": 20, "MARST": 5}
    assert cfg["datasets"]["msnbc"] == DEFAULT["datasets"]["msnbc"]  # fixed keys: merged
    assert cfg["name"] == "mine" and cfg["seed"] == DEFAULT["seed"]  # scalars override
    validate_config(cfg)
    # paper.yaml names no collection: merged exactly as before
    assert load_configs([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"]) == merge(
        copy.deepcopy(DEFAULT), PAPER)


def _snakemake(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--cores", "1", *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def _job_specs(folder: Path) -> set[str]:
    """Every job's spec, as canonical JSON: a batch's spec file (workflow.batches) holds its members'."""
    out = set()
    for p in (folder / "results" / ".jobs").glob("spec-*.json"):
        spec = json.loads(p.read_text())
        out |= {canonical(m) for m in spec["batch"]} if set(spec) == {"batch"} else {p.read_text()}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("case", ["one-overlay", "two-overlays-and-config"])
def test_workflow_and_cli_build_the_same_overlaid_config(tmp_path, case):
    """The Snakefile path uses the same merge: the dry run's jobs are those of load_configs' config.
    The defaults are config/config.yaml of the working folder (read by the workflow itself); the
    user names only the overlays; with one overlay the config is the earlier loader's (each file
    over the previous with the overlay rule), with two Snakemake merges them first."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text((REPO / "config" / "config.yaml").read_text())
    mine = _overlay(tmp_path)
    files, args = [mine], []
    if case == "two-overlays-and-config":
        more = tmp_path / "more.yaml"  # a second figure and another seed: merged with mine's by Snakemake
        more.write_text(yaml.safe_dump({"segmented": {"figures": {"other": DEFAULT["segmented"]["figures"]["fig2"]}}}))
        files, args = [mine, more], ["--config", "seed=11"]
    proc = _snakemake(tmp_path, "-n", "--configfile", *map(str, files), *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cfg = load_configs([REPO / "config" / "config.yaml", *files], {"seed": 11} if args else None)
    if case == "one-overlay":  # main's loader: each file over the previous with the overlay rule
        assert cfg == merge(copy.deepcopy(DEFAULT), load_yaml(mine))
    else:
        assert list(cfg["segmented"]["figures"]) == ["only", "other"] and cfg["seed"] == 11
    validate_config(cfg)
    expected = {canonical(j.spec) for s in discover().values() if s.enabled(cfg) for j in s.jobs(cfg)}
    assert _job_specs(tmp_path) == expected
    assert "segmented_fig2" not in proc.stdout and "results/figures/segmented_only.pdf" in proc.stdout
    assert ("results/figures/segmented_other.pdf" in proc.stdout) == (case != "one-overlay")
    assert "ipums_mx" not in proc.stdout and "ipums_br" in proc.stdout
    # a dry run writes no data, only the real datasets' source markers (data/.sources: stand-ins never stick)
    assert not (tmp_path / "data").exists() or [p.name for p in (tmp_path / "data").iterdir()] == [".sources"]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["seg-dataset-up", "seg-figure-up", "m-grid-num", "empty-hdg", "float-not-whole"])
def test_snakemake_refuses_before_any_job(tmp_path, case):
    mutation, needles = next(c[1:] for c in BAD if c[0] == case)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(_mutated(**mutation)))
    proc = _snakemake(tmp_path, "-n", "--configfile", str(path))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out and all(n in out for n in needles), out[-3000:]
    assert not (tmp_path / "data").exists() and not (tmp_path / "results").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["bad.yaml"]


@pytest.mark.slow
def test_snakemake_float_integers_make_the_same_jobs(tmp_path):
    ints, floats = tmp_path / "ints", tmp_path / "floats"
    for folder in (ints, floats):
        folder.mkdir()
    cfg = copy.deepcopy(DEFAULT)
    (ints / "c.yaml").write_text(yaml.safe_dump(cfg))
    cfg["segmented"]["n"] = [float(n) for n in cfg["segmented"]["n"]]
    cfg["multidim_frameworks"]["hdg"]["domain"] = 16.0
    (floats / "c.yaml").write_text(yaml.safe_dump(cfg))
    for folder in (ints, floats):
        proc = _snakemake(folder, "-n", "--configfile", str(folder / "c.yaml"))
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert _job_specs(ints) and _job_specs(ints) == _job_specs(floats)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["not-utf8", "folder", "list", "bomb"])
def test_default_config_file_that_is_no_config_stops_the_snakefile_in_one_line(tmp_path, kind):
    (tmp_path / "config").mkdir()
    path = tmp_path / "config" / "config.yaml"
    if kind == "not-utf8":
        path.write_bytes(b"name: caf\xe9\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "list":
        path.write_text("- 1\n")
    else:
        path.write_text("a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" + "".join(
            f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 8)))
    start = time.monotonic()
    proc = _snakemake(tmp_path, "-n")
    assert time.monotonic() - start < 120
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "config/config.yaml" in proc.stderr and "shuffledp: invalid configuration" in proc.stderr, proc.stderr
    assert not (tmp_path / "results").exists()


def test_load_yaml_names_the_line_of_a_bad_byte(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"name: x\nseed: 1\ntitle: \xff\n")
    with pytest.raises(ConfigError, match=r"c\.yaml:3: not UTF-8"):
        load_yaml(path)


@pytest.mark.slow
def test_snakemake_refuses_an_alias_bomb_configfile_quickly(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: x\nseed: 1\ndatasets: {}\na0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 12)))
    start = time.monotonic()
    proc = _snakemake(tmp_path, "-n", "--configfile", str(path))
    assert time.monotonic() - start < 120
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    # the file is Snakemake's to read (no `configfile:`, no undocumented attribute tells which file held it)
    assert "--configfile/--config: config key " in proc.stderr and "more than 100000 values" in proc.stderr, \
        proc.stderr[-2000:]
    assert not (tmp_path / "results").exists()



# --- a privacy parameter too small to compute with (e^eps == 1 in floating point) ---------------------
# A positive eps of 1e-300 passed "exclusiveMinimum: 0" and reached a step (the variation-ratio bound:
# p = e^eps0 = 1.0, "--p: 1.0 must be > 1"). Every eps of every stage now has the floor 1e-6.
EPS_NAMES = {"eps0", "eps", "eps_s", "levels", "epsilon_p", "subexp_local_eps", "uniform_eps"}


def _eps_leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _eps_leaves(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _eps_leaves(v, (*path, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        names = [p for p in path if isinstance(p, str)]
        if names and names[-1] in EPS_NAMES and "figure" not in names and names[0] != "personalized":
            yield path


def _set(cfg, path, value):
    for p in path[:-1]:
        cfg = cfg[p]
    cfg[path[-1]] = value


@pytest.mark.parametrize("base", ["default", "paper"])
def test_every_eps_has_a_floor_that_exp_can_see(base):
    cfg0 = DEFAULT if base == "default" else merge(copy.deepcopy(DEFAULT), PAPER)
    paths = list(_eps_leaves(cfg0))
    assert len(paths) >= 10, paths  # the class is not empty
    for path in paths:
        for tiny in (1e-300, 5e-7):
            cfg = copy.deepcopy(cfg0)
            _set(cfg, path, tiny)
            msg = _validate(cfg)
            name = [p for p in path if isinstance(p, str)][-1]
            assert name in msg and msg.count("\n") == 0, (path, msg)
    validate_config(copy.deepcopy(cfg0))  # the unmutated config passes
