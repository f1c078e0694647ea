"""Issue 37, classes 2-5: what a job reads is what it expects; the end of a run never fails a run;
every request answered in one line; nothing written outside the working folder."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from shuffledp.errors import DataError
from shuffledp.io import job_record_context, read_job_record, write_table
from shuffledp.stages import check_input_records, job_record

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------- class 2: the record names its output


def _run_and_timings(folder: Path) -> tuple[Path, Path, dict]:
    """The two tables one job writes (multidim uniform: its run table and its timings table)."""
    record = job_record("multidim", "uniform", {"dataset": "br", "mechanism": "mhm", "batch": "0"}, {"x": 1})
    run, timings = folder / "run.parquet", folder / "timings.parquet"
    with job_record_context({**record, "sources": []}, {"table": str(run), "timings": str(timings)}):
        write_table(pd.DataFrame({"error": [0.5]}), run)
        write_table(pd.DataFrame({"seconds": [1.5]}), timings)
    return run, timings, record


def test_each_table_of_a_job_names_its_output(tmp_path):
    run, timings, _ = _run_and_timings(tmp_path)
    assert read_job_record(run)["output"] == "table" and read_job_record(timings)["output"] == "timings"


def test_a_timings_table_in_place_of_a_run_table_is_refused_in_one_line(tmp_path):
    run, timings, record = _run_and_timings(tmp_path)
    expect = {"uniform": [{**record, "output": "table"}], "timings": [{**record, "output": "timings"}]}
    # the tables where they belong: accepted
    check_input_records({"uniform": [str(run)], "timings": [str(timings)]}, expect, "--io x")
    # the timings table copied over the run table (same job, same spec): refused, naming both outputs
    run.write_bytes(timings.read_bytes())
    with pytest.raises(DataError) as err:
        check_input_records({"uniform": [str(run)], "timings": [str(timings)]}, expect, "--io x")
    msg = str(err.value)
    assert "\n" not in msg and str(run) in msg and "the timings output" in msg and "the table output" in msg, msg


def test_a_table_of_an_older_version_without_output_is_still_matched(tmp_path):
    """A record written before records named their output: matched on the rest (no forced rebuild)."""
    record = job_record("multidim", "uniform", {"dataset": "br"}, {"x": 1})
    old = tmp_path / "old.parquet"
    with job_record_context({**record, "sources": []}):
        write_table(pd.DataFrame({"error": [0.5]}), old)
    assert "output" not in read_job_record(old)
    check_input_records({"uniform": [str(old)]}, {"uniform": [{**record, "output": "table"}]}, "--io x")


@pytest.mark.parametrize("content", [b"", b"PAR1 not really", b"garbage" * 100])
def test_an_unreadable_input_table_says_to_delete_it(tmp_path, capsys, content, monkeypatch):
    from shuffledp.cli import main

    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    bad = tmp_path / "ipums_br.parquet"
    bad.write_bytes(content)
    io = {"input": {"tables": [str(bad)]}, "output": {"parquet": str(tmp_path / "o.parquet"),
                                                       "md": str(tmp_path / "o.md")}}
    (tmp_path / "io.json").write_text(json.dumps(io))
    (tmp_path / "spec.json").write_text("{}")
    code = main(["step", "data", "datasets_table", "--spec", str(tmp_path / "spec.json"),
                 "--io", str(tmp_path / "io.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert str(bad) in err[0] and f"delete it and rerun (rm {bad}" in err[0], err
    assert not (tmp_path / "o.parquet").exists()


# ------------------------------------------------------------------------- class 3: the end of a run


def test_the_datasets_summary_reports_every_damaged_table_in_one_line(tmp_path):
    from shuffledp.datasets.availability import summary_text

    good = tmp_path / "good.parquet"
    write_table(pd.DataFrame({"a": [1]}), good, {"dataset": "g", "source": "synthetic"})
    empty, garbage, folder, bad_meta = (tmp_path / f"{n}.parquet" for n in ("empty", "garbage", "folder", "meta"))
    empty.write_bytes(b"")
    garbage.write_bytes(b"PAR1" + b"x" * 50 + b"PAR1")
    folder.mkdir()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1]}).replace_schema_metadata({b"shuffledp": b"{not json"}), bad_meta)
    tables = {"good": str(good), "empty": str(empty), "garbage": str(garbage), "folder": str(folder),
              "meta": str(bad_meta), "missing": str(tmp_path / "missing.parquet")}
    text = summary_text(tables)
    lines = text.splitlines()[1:]
    assert len(lines) == len(tables), text
    for name in ("empty", "garbage", "folder", "meta"):
        (line,) = [x for x in lines if x.strip().startswith(name)]
        assert "UNREADABLE" in line and "delete it and rerun" in line, line
    assert any(x.strip().startswith("good") and "synthetic" in x for x in lines)
    assert any(x.strip().startswith("missing") and "not built" in x for x in lines)


# ------------------------------------------------------------------------- class 4: one line, exit 2

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

MHM = ["account", "mhm", "--eps", "0.5", "--delta", "1e-4", "--n", "1e4", "--d", "10"]


def _cli(args, env=None, shell_suffix="", cwd=None):
    environ = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    environ.pop("SHUFFLEDP_DEBUG", None)
    environ.update(env or {})
    if shell_suffix:
        cmd = " ".join([sys.executable, "-m", "shuffledp", *args]) + " " + shell_suffix
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, env=environ, cwd=cwd, timeout=300)
    return subprocess.run([sys.executable, "-m", "shuffledp", *args], capture_output=True, text=True, env=environ,
                          cwd=cwd, timeout=300)


def _one_line(proc, *needles):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and all(n in lines[0] for n in needles), lines


@pytest.mark.parametrize(("env", "needles"), [
    ({"SHUFFLEDP_DEBUG": "maybe"}, ["SHUFFLEDP_DEBUG", "maybe"]),
    ({"SHUFFLEDP_DOWNLOAD_DEADLINE_S": "soon"}, ["SHUFFLEDP_DOWNLOAD_DEADLINE_S", "soon"]),
    ({"SHUFFLEDP_DOWNLOAD_DEADLINE_S": "-3"}, ["SHUFFLEDP_DOWNLOAD_DEADLINE_S"]),
    # with a folder mirror nothing is downloaded: the bad deadline is still refused, not ignored
    ({"SHUFFLEDP_DOWNLOAD_DEADLINE_S": "nan", "SHUFFLEDP_DATA_MIRROR": "/work"}, ["SHUFFLEDP_DOWNLOAD_DEADLINE_S"]),
    ({"SHUFFLEDP_STAGE_PATH": "/no/such/folder"}, ["SHUFFLEDP_STAGE_PATH", "/no/such/folder", "no such folder"]),
    ({"SHUFFLEDP_DATA_MIRROR": "/tmp/a\x01b"}, ["SHUFFLEDP_DATA_MIRROR"]),
    ({"SHUFFLEDP_NUMBA": "fast"}, ["SHUFFLEDP_NUMBA", "fast"]),
])
def test_a_bad_environment_variable_is_one_line(env, needles):
    _one_line(_cli(MHM, env), *needles)


def test_shuffledp_debug_0_is_off():
    proc = _cli(["step", "nosuchstage", "x", "--spec", __file__, "--io", __file__], {"SHUFFLEDP_DEBUG": "0"})
    _one_line(proc, "unknown stage")
    proc = _cli(["step", "nosuchstage", "x", "--spec", __file__, "--io", __file__], {"SHUFFLEDP_DEBUG": "1"})
    assert "Traceback" in proc.stderr  # 1 is on


@pytest.mark.parametrize(("raw", "on"), [(None, True), ("1", True), ("on", True), ("0", False), ("off", False),
                                          ("false", False), ("", True)])
def test_shuffledp_numba_is_a_switch(monkeypatch, raw, on):
    """``SHUFFLEDP_NUMBA`` reads like ``SHUFFLEDP_DEBUG`` (``off`` is off, not on as a plain ``!= "0"``
    read it), and the kernels' loader follows it."""
    from shuffledp.environment import compiled_kernels, numba_enabled

    if raw is None:
        monkeypatch.delenv("SHUFFLEDP_NUMBA", raising=False)
    else:
        monkeypatch.setenv("SHUFFLEDP_NUMBA", raw)
    assert numba_enabled() is on
    got = compiled_kernels("shuffledp.mechanisms._collision_numba", "distinct", "pick")
    if on:
        pytest.importorskip("numba")
        assert got is not None and [f.__name__ for f in got] == ["distinct", "pick"]
    else:
        assert got is None


def test_a_stage_package_with_a_syntax_error_is_one_line(tmp_path):
    pkg = tmp_path / "broken"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("STAGE = (\n")
    _one_line(_cli(["step", "broken", "x", "--spec", __file__, "--io", __file__],
                   {"SHUFFLEDP_STAGE_PATH": str(tmp_path)}), "SHUFFLEDP_STAGE_PATH", "__init__.py", "syntax error")
    (pkg / "__init__.py").write_text("import no_such_module_here\n")
    _one_line(_cli(["step", "broken", "x", "--spec", __file__, "--io", __file__],
                   {"SHUFFLEDP_STAGE_PATH": str(tmp_path)}), "SHUFFLEDP_STAGE_PATH", "does not import")


def test_a_closed_stdout_is_one_line():
    _one_line(_cli(MHM, shell_suffix=">&-"), "standard output is closed")


def test_mplbackend_does_not_reach_the_figures(tmp_path):
    """MPLBACKEND=bogus (set for another program): a figure job still draws (with Agg)."""
    draw = tmp_path / "d.parquet"
    with job_record_context(job_record("toy", "draw", {"k": "2"}, {"k": 2, "seed": 1})):
        write_table(pd.DataFrame({"k": [2, 2], "x": [0.2, 0.4]}), draw)
    out = {"png": str(tmp_path / "f.png"), "claims": str(tmp_path / "c.parquet"), "claims_md": str(tmp_path / "c.md")}
    (tmp_path / "io.json").write_text(json.dumps({"input": {"draws": [str(draw)]}, "output": out}))
    (tmp_path / "spec.json").write_text(json.dumps({"scale": "t"}))
    proc = _cli(["step", "toy", "report", "--spec", str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")],
                {"MPLBACKEND": "bogus", "SHUFFLEDP_STAGE_PATH": str(REPO / "tests" / "stages")}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert Path(out["png"]).stat().st_size > 0


def test_out_naming_a_folder_is_one_line(tmp_path):
    args = ["account-table", "segmented", "--n", "1000", "--d", "10", "--s", "2", "--levels", "1,2", "--shares",
            "0.5,0.5", "--delta", "1e-6", "--m-grid", "1,2", "--out"]
    _one_line(_cli([*args, str(tmp_path)]), "--out", str(tmp_path), "is a folder")
    (tmp_path / "f").write_text("x")
    _one_line(_cli([*args, str(tmp_path / "f" / "t.parquet")]), "--out", "is a file, not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # no temporary file left


def test_results_dir_naming_a_file_is_refused(tmp_path, monkeypatch):
    from shuffledp.config import ConfigError, load_configs, validate_config

    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").write_text("a file")
    for results in ("out", "out/sub"):
        cfg = load_configs([REPO / "config" / "config.yaml"])
        cfg["results_dir"] = results
        with pytest.raises(ConfigError, match="config key results_dir: out is a file"):
            validate_config(cfg)


@pytest.mark.parametrize(("section", "key", "value", "needle"), [
    ("accountants_compare", "eps0", [1.0, 1.0000001], "config key accountants_compare.eps0: 1.0 and 1.0000001"),
    ("peruser", "eps", [1.0, 1.0000001], "config key peruser.eps: 1.0 and 1.0000001"),
    ("peruser", "eps1_fractions", [0.5, 0.50000001], "config key peruser.eps1_fractions"),
    ("accountants_compare", "deltas", [5e-324], "config key accountants_compare.deltas[0]: 5e-324 is subnormal"),
    ("segmented", "delta_factor", 1e-320, "config key segmented.delta_factor: 1e-320 is subnormal"),
])
def test_config_values_a_job_cannot_use_are_refused_naming_the_key(section, key, value, needle):
    from shuffledp.config import ConfigError, load_configs, validate_config

    cfg = load_configs([REPO / "config" / "config.yaml"])
    cfg[section][key] = value
    with pytest.raises(ConfigError) as err:
        validate_config(cfg)
    assert needle in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_a_derived_subnormal_delta_is_refused_naming_the_key():
    from shuffledp.config import ConfigError, load_configs, validate_config

    cfg = load_configs([REPO / "config" / "config.yaml"])
    cfg["segmented"]["delta_factor"], cfg["segmented"]["n"] = 1e-305, [100000]
    with pytest.raises(ConfigError, match="config key segmented.delta_factor: delta = delta_factor / n"):
        validate_config(cfg)


# ------------------------------------------------------------------------- class 5: nothing written outside


def test_links_under_results_leading_outside_are_refused(tmp_path, monkeypatch):
    from shuffledp.io import check_links_inside

    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "results" / "benchmarks" / "segmented").mkdir(parents=True)
    outside.mkdir()
    monkeypatch.chdir(work)
    check_links_inside("results")  # nothing planted: fine
    (work / "results" / "inside.tsv").symlink_to(work / "results" / "benchmarks")  # inside: fine
    check_links_inside("results")
    cases = [("results/benchmarks/segmented/run_x.tsv", outside / "x.tsv"),  # dangling, outside
             ("results/benchmarks/segmented/prepare.tsv", Path("/etc/hostname")),  # an existing file outside
             ("results/logs", outside)]  # a folder outside
    for link, target in cases:
        (work / link).symlink_to(target)
        with pytest.raises(DataError) as err:
            check_links_inside("results")
        assert link in str(err.value) and "outside the working folder" in str(err.value)
        (work / link).unlink()
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(("section", "key", "value", "needle"), [
    ("segmented", "figures", {}, "config key segmented.figures: the mapping is empty"),
    ("personalized", "bounds_pure", [], "config key personalized.bounds_pure: the list is empty"),
    ("personalized", "bounds_approx", [], "config key personalized.bounds_approx: the list is empty"),
])
def test_an_empty_map_or_list_is_refused_naming_it(section, key, value, needle):
    from shuffledp.config import ConfigError, load_configs, validate_config

    cfg = load_configs([REPO / "config" / "config.yaml"])
    cfg[section][key] = value
    with pytest.raises(ConfigError) as err:
        validate_config(cfg)
    assert needle in str(err.value), str(err.value)


@pytest.mark.slow
def test_a_target_the_config_does_not_define_is_one_line(tmp_path):
    """`snakemake <file>` for a file that matches a rule's pattern but no job of the config: one line, exit 2."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), PATH=str(Path(sys.executable).parent) + os.pathsep
               + os.environ.get("PATH", ""))
    # a step config/config.yaml runs as one pattern rule (not in workflow.batches, whose members are
    # rules of their own: a file of no member is Snakemake's own "No rule to produce")
    for target in ("data/raw/ipums_zz",):
        proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--snakefile",
                               str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                               str(REPO / "config" / "config.yaml"), "--", target],
                              capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 2, proc.stderr[-2000:]
        ours = [x for x in proc.stderr.splitlines() if x.startswith("shuffledp:")]
        assert len(ours) == 1 and "Traceback" not in proc.stderr and "InputFunctionException" not in proc.stderr
        assert "is not one this config produces" in ours[0], ours
    # a step the config runs in batches (workflow.batches: peruser_job, segmented_accountant) has no rule
    # with a pattern, only its batches' files: a file none of them writes is Snakemake's own refusal, no
    # rule produces it
    for target in ("results/peruser/jobs/msnbc/alg1_kmeans_b7.runs.parquet",
                   "results/accountant/segmented/msnbc_n7_S1.parquet"):
        proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--snakefile",
                               str(REPO / "Snakefile"), "--directory", str(tmp_path), "--configfile",
                               str(REPO / "config" / "config.yaml"), "--", target],
                              capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode != 0 and "MissingRuleException" in proc.stdout + proc.stderr, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------- class 7: the same config, the same bytes


def _lists_and_maps(schema):
    from shuffledp.config import is_collection

    def walk(node, path):
        if isinstance(node, dict):
            kind = node.get("type")
            kinds = kind if isinstance(kind, list) else [kind]
            if ("array" in kinds and node.get("maxItems", 2) > 1) or is_collection(node):
                yield path, node
            for k, v in node.items():
                yield from walk(v, f"{path}.{k}")

    yield from walk(schema, "")


def test_every_list_and_user_named_map_says_whether_its_order_matters():
    """x-order: canonical (sorted before any job), or significant with the reason."""
    from shuffledp.config import load_schema, order_of

    for path, node in _lists_and_maps(load_schema()):
        assert order_of(node) in ("canonical", "significant"), f"{path}: declare x-order"
        if order_of(node) == "significant":
            assert len(str(node["x-order"]).split(":", 1)[1].strip()) > 10, f"{path}: say why its order matters"


def _reordered(cfg, schema):
    """``cfg`` with every canonical list reversed and every canonical mapping's keys reversed."""
    from shuffledp.config import order_of

    def walk(node, sch):
        if not isinstance(sch, dict):
            return node
        if isinstance(node, dict):
            props = sch.get("properties", {})
            extra = sch.get("additionalProperties") if isinstance(sch.get("additionalProperties"), dict) else None
            pattern = next(iter(sch.get("patternProperties", {}).values()), None)
            out = {k: walk(v, props.get(k) or extra or pattern) for k, v in node.items()}
            return dict(reversed(out.items())) if order_of(sch) == "canonical" else out
        if isinstance(node, list):
            items = [walk(v, sch.get("items")) for v in node]
            return items[::-1] if order_of(sch) == "canonical" else items
        return node

    return walk(cfg, schema)


@pytest.mark.parametrize("files", [["config.yaml"], ["config.yaml", "paper.yaml"]], ids=["default", "paper"])
def test_an_order_free_list_or_map_written_in_another_order_gives_the_same_jobs(files):
    import copy

    from shuffledp.config import load_configs, load_schema, validate_config
    from shuffledp.stages import discover

    cfg = load_configs([REPO / "config" / f for f in files])
    other = _reordered(copy.deepcopy(cfg), load_schema())
    assert json.dumps(other) != json.dumps(cfg)  # the test reorders something
    validate_config(cfg)
    validate_config(other)
    assert json.dumps(other) == json.dumps(cfg)
    for stage in discover().values():
        assert [(j.step, j.wildcards, j.spec, j.inputs) for j in stage.jobs(cfg)] == \
            [(j.step, j.wildcards, j.spec, j.inputs) for j in stage.jobs(other)], stage.name


def test_the_shipped_configs_are_already_canonical():
    """Canonicalising changes nothing in config.yaml and paper.yaml: their tables keep their bytes."""
    from shuffledp.config import canonicalize, coerce_integers, fill_defaults, load_configs, load_schema

    schema = load_schema()
    for files in (["config.yaml"], ["config.yaml", "paper.yaml"]):
        cfg = load_configs([REPO / "config" / f for f in files])
        fill_defaults(cfg, schema)
        coerce_integers(cfg, schema)
        before = json.dumps(cfg)
        canonicalize(cfg, schema)
        assert json.dumps(cfg) == before


# ------------------------------------------------------------------------- class 8: shuffledp verify


def test_verify_checks_each_output_against_its_jobs_record_and_the_config(tmp_path, monkeypatch, capsys):
    import yaml

    from shuffledp.cli import main
    from shuffledp.config import load_configs, validate_config
    from shuffledp.stages import content_file, discover, job_io
    from shuffledp.stages.jobs import JobTable
    from shuffledp.stages.verify import verify

    monkeypatch.setenv("SHUFFLEDP_STAGE_PATH", str(REPO / "tests" / "stages"))
    monkeypatch.chdir(tmp_path)
    cfg_file = tmp_path / "config.yaml"
    raw = load_configs([REPO / "config" / "config.yaml"])
    raw["toy"] = {"ks": [2, 3]}
    cfg_file.write_text(yaml.safe_dump(raw))
    config = load_configs([cfg_file])
    validate_config(config)
    stages = discover()
    tables = {n: JobTable(s.jobs(config)) for n, s in stages.items() if s.enabled(config)}
    toy = stages["toy"]
    for k in ("2", "3"):  # the two draw jobs, as the workflow runs them (io file under results/.jobs)
        job = tables["toy"].job("draw", {"k": k})
        io = job_io(toy, toy.step("draw"), job, {"results": "results", "data": "data"}, stages, tables)
        assert main(["step", "toy", "draw", "--spec", content_file("results/.jobs", "spec", job.spec),
                     "--io", content_file("results/.jobs", "io", io)]) == 0
    assert sorted(p.name for p in (tmp_path / "results" / ".outputs" / "toy").iterdir()) == ["draw_2.json",
                                                                                            "draw_3.json"]
    got = verify(config)
    assert got["ok"] == ["results/toy/draws/2.parquet", "results/toy/draws/3.parquet"]
    assert not got["changed"] and not got["unrecorded"] and not got["stale"]
    assert "results/figures/toy_fig.png" in got["missing"]
    # a final table edited by hand, a file no job wrote, an output of a stage no longer configured
    with open("results/toy/draws/2.parquet", "ab") as fh:
        fh.write(b"\0")
    Path("results/tables").mkdir(parents=True)
    Path("results/tables/notes.parquet").write_bytes(b"x")
    (tmp_path / "results" / ".outputs" / "toy" / "draw_3.json").unlink()
    raw["toy"] = {"ks": [3]}
    cfg_file.write_text(yaml.safe_dump(raw))
    capsys.readouterr()
    assert main(["verify", str(cfg_file)]) == 1
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    assert "results/toy/draws/2.parquet: NOT PRODUCED by this configuration (an old output)" in lines
    assert "results/toy/draws/3.parquet: NO RECORD of the job that wrote it" in lines
    assert "results/tables/notes.parquet: NOT PRODUCED by this configuration (an old output)" in lines
    raw["toy"] = {"ks": [2, 3]}
    cfg_file.write_text(yaml.safe_dump(raw))
    assert main(["verify", str(cfg_file)]) == 1
    assert "results/toy/draws/2.parquet: CHANGED since its job wrote it" in capsys.readouterr().out
