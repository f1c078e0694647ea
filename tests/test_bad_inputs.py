"""A corpus of bad configurations and bad CLI calls, each with the message it must give.

Configs are checked with :func:`shuffledp.config.validate_config`, the very function
``workflow/rules/common.smk`` calls before any job (a few go through a real ``snakemake -n`` too);
CLI calls run :func:`shuffledp.cli.main` in-process (a handful in a real subprocess), and each must
exit 2 with one line ``shuffledp: error: ...`` naming the flag or file -- never a traceback.
"""

from __future__ import annotations

import contextlib
import copy
import gzip
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shuffledp.cli import main
from shuffledp.config import ConfigError, load_yaml, merge, validate_config
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def _set(path: str, value):
    """A mutation that sets a dotted key path (``a.b[0].c``) to ``value`` (``DELETE`` removes it)."""
    def mutate(cfg):
        parts = []
        for tok in path.split("."):
            while "[" in tok:
                head, rest = tok.split("[", 1)
                if head:
                    parts.append(head)
                idx, tok = rest.split("]", 1)
                parts.append(int(idx))
            if tok:
                parts.append(tok)
        node = cfg
        for p in parts[:-1]:
            node = node[p]
        if value is DELETE:
            del node[parts[-1]]
        else:
            node[parts[-1]] = value
    return mutate


def _rename(path: str, new: str):
    def mutate(cfg):
        *head, last = path.split(".")
        node = cfg
        for p in head:
            node = node[p]
        node[new] = node.pop(last)
    return mutate


DELETE = object()
NAN, INF = math.nan, math.inf

# (id, base config, mutation, substrings the message must contain)
BAD_CONFIGS = [
    # unknown keys at every level, with the closest valid key
    ("top-typo", DEFAULT, _rename("segmented", "segmnted"), ["segmnted", "'segmented'"]),
    ("top-unknown", TINY, _set("movielens", {"a": 1}), ["config key movielens", "unknown key"]),
    ("data_dir-removed", TINY, _set("data_dir", "/tmp/anywhere"), ["config key data_dir", "unknown key"]),
    ("segmented-typo", DEFAULT, _rename("segmented.delta_factor", "delta_facter"),
     ["segmented.delta_facter", "'delta_factor'"]),
    ("peruser-typo", TINY, _rename("peruser.methods", "methds"), ["peruser.methds", "'methods'"]),
    ("personalized-typo", DEFAULT, _rename("personalized.calibration", "calibraton"),
     ["personalized.calibraton", "'calibration'"]),
    ("multidim-typo", DEFAULT, _rename("multidim.topk", "top_k"), ["multidim.top_k", "'topk'"]),
    ("datasets-unknown", TINY, _set("datasets.movielens", {"source": "auto"}), ["datasets.movielens"]),
    ("msnbc-typo", TINY, _rename("datasets.msnbc.source", "sourc"), ["datasets.msnbc.sourc", "'source'"]),
    ("synthetic-typo", TINY, lambda c: c["datasets"]["synthetic"][0].update(domian=c["datasets"]["synthetic"][0].pop(
        "domain")), ["datasets.synthetic[0].domian", "'domain'"]),
    ("dbscan-typo", TINY, _set("peruser.dbscan.min_sample", 3), ["peruser.dbscan.min_sample", "'min_samples'"]),
    ("peruser-dataset-typo", TINY, _set("peruser.datasets[0].cluster", 3), ["peruser.datasets[0].cluster"]),
    ("m_grid-typo", DEFAULT, _set("segmented.m_grid.mx", 3), ["segmented.m_grid.mx", "'max'"]),
    ("table2-typo", DEFAULT, _set("personalized.table2.seeds", [1]), ["personalized.table2.seeds", "'seed'"]),
    # missing required keys
    ("peruser-missing", TINY, _set("peruser.methods", DELETE), ["peruser.methods", "missing"]),
    ("seed-missing", TINY, _set("seed", DELETE), ["config key seed", "missing"]),
    # finite numbers only
    ("nan-delta", TINY, _set("peruser.delta", NAN), ["peruser.delta", "finite"]),
    ("inf-eps", TINY, _set("peruser.eps", [2, INF]), ["peruser.eps[1]", "finite"]),
    ("nan-level", DEFAULT, _set("segmented.levels", [0.5, NAN, 2.0]), ["segmented.levels[1]", "finite"]),
    ("neg-inf-share", DEFAULT, _set("segmented.settings.S1", [-INF, 1, 1]), ["segmented.settings.S1[0]", "finite"]),
    ("nan-multidim-eps", DEFAULT, _set("multidim.eps", [NAN]), ["multidim.eps[0]", "finite"]),
    # types, ranges, enums, patterns
    ("seed-negative", TINY, _set("seed", -1), ["config key seed"]),
    ("seed-string", TINY, _set("seed", "abc"), ["config key seed", "integer"]),
    ("seed-float", TINY, _set("seed", 1.5), ["config key seed"]),
    ("source-enum", TINY, _set("datasets.msnbc.source", "maybe"), ["datasets.msnbc.source", "'maybe'"]),
    ("name-space", TINY, _set("name", "my run"), ["config key name"]),
    ("name-shell", TINY, _set("name", "x; touch /tmp/pwned"), ["config key name"]),
    ("name-subst", TINY, _set("name", "$(id)"), ["config key name"]),
    ("results-abs", TINY, _set("results_dir", "/etc"), ["config key results_dir"]),
    ("results-up", TINY, _set("results_dir", "../elsewhere"), ["config key results_dir"]),
    ("results-inner-up", TINY, _set("results_dir", "results/../../x"), ["config key results_dir"]),
    ("mirror-empty", TINY, _set("data_mirror", ""), ["config key data_mirror"]),
    ("mirror-newline", TINY, _set("data_mirror", "a\nb"), ["config key data_mirror"]),
    ("delta-range", TINY, _set("peruser.delta", 1.5), ["config key peruser.delta"]),
    ("users-zero", TINY, _set("datasets.synthetic[0].users", 0), ["datasets.synthetic[0].users"]),
    ("method-enum", TINY, _set("peruser.methods", ["alg1", "magic"]), ["peruser.methods[1]", "'magic'"]),
    ("bool-as-int", TINY, _set("peruser.repetitions", True), ["peruser.repetitions"]),
    ("section-not-mapping", TINY, _set("peruser", [1, 2]), ["config key peruser"]),
    ("null-section", TINY, _set("datasets", None), ["config key datasets"]),
    # cross-key rules, all before any job
    ("set-size>domain", TINY, _set("datasets.synthetic[0].set_size", 40), ["datasets.synthetic", "set_size"]),
    ("dup-synthetic", TINY, lambda c: c["datasets"]["synthetic"].append(dict(c["datasets"]["synthetic"][0])),
     ["datasets.synthetic", "duplicate"]),
    ("peruser-reps-batch", TINY, lambda c: c["peruser"].update(repetitions=3, batch_size=2), ["peruser.repetitions"]),
    ("peruser-synth-needs-d", TINY, _set("peruser.datasets[0].d", DELETE), ["peruser.datasets[0].d"]),
    ("peruser-views-order", TINY, _set("peruser.datasets[0].views", [60, 20]), ["peruser.datasets[0].views"]),
    ("peruser-figure-eps", TINY, _set("peruser.figure.eps", 7), ["peruser.figure.eps"]),
    ("accountant-paper-not-built", DEFAULT,
     lambda c: c["segmented"].update(accountant="paper", accountants=["sound"]), ["segmented.accountant"]),
    ("compare-paper-not-built", DEFAULT,
     lambda c: c["segmented"].update(compare_paper_accountant=True, accountants=["sound"]),
     ["segmented.compare_paper_accountant"]),
    ("shares-sum", DEFAULT, _set("segmented.settings.S1", [0.5, 0.5, 0.5]), ["segmented.settings.S1", "sum"]),
    ("levels-order", DEFAULT, _set("segmented.levels", [2.0, 1.0, 0.5]), ["segmented.levels"]),
    ("m-grid-order", DEFAULT, lambda c: c["segmented"]["m_grid"].update(min=10, max=1), ["segmented.m_grid"]),
    ("segmented-table-missing", DEFAULT, lambda c: c["datasets"].update(synthetic=[]), ["segmented.datasets"]),
    ("multidim-reps", DEFAULT, lambda c: c["multidim"].update(reps=2, reps_per_job=5), ["multidim.reps_per_job"]),
    ("multidim-eps-zero", DEFAULT, _set("multidim.eps", [0]), ["multidim.eps[0]"]),
    ("table2-bound", DEFAULT, _set("personalized.table2.rows[0].bound", "magic"),
     ["personalized.table2.rows[0].bound", "'magic'"]),
    ("ipums-file-missing", TINY, lambda c: c["datasets"]["ipums"]["br"].update(source="file", ddi="/nope.xml",
                                                                             data="/nope.dat"),
     ["datasets.ipums.br.ddi", "no such file"]),
    ("ipums-file-keys", TINY, lambda c: c["datasets"]["ipums"]["br"].update(source="file"), ["datasets.ipums.br.ddi"]),
    ("ipums-api-sample", TINY, lambda c: c["datasets"]["ipums"]["br"].update(source="ipums"),
     ["datasets.ipums.br.sample"]),
    ("ipums-attributes", TINY, _set("datasets.ipums.br.attributes", DELETE), ["datasets.ipums.br.attributes"]),
    ("ipums-key", TINY, lambda c: c["datasets"]["ipums"].update(BRA=c["datasets"]["ipums"]["br"]),
     ["datasets.ipums.BRA", "unknown key"]),
    ("multidim-dataset-not-built", DEFAULT, _set("multidim.datasets", ["br", "ar"]), ["multidim.datasets", "'ar'"]),
    ("multidim-records", DEFAULT, _set("multidim.records", 10**7), ["multidim.records"]),
    ("segmented-table-unknown", DEFAULT, _set("segmented.datasets.msnbc.table", "adult"),
     ["segmented.datasets.msnbc.table"]),
    ("segmented-msnbc-d", DEFAULT, _set("segmented.datasets.msnbc.d", 20), ["segmented.datasets.msnbc.d"]),
    ("kmeans-k", TINY, _set("peruser.kmeans_k", 1000), ["peruser.kmeans_k"]),
    ("top-level-list", [1, 2], None, ["config"]),
]


@pytest.mark.parametrize(("base", "mutate", "needles"), [c[1:] for c in BAD_CONFIGS], ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_is_refused_naming_the_key(base, mutate, needles):
    cfg = copy.deepcopy(base)
    if mutate is not None:
        mutate(cfg)
    with pytest.raises(ConfigError) as info:
        validate_config(cfg)
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, msg
    assert msg.startswith("config"), msg


def test_the_bases_are_valid():
    validate_config(copy.deepcopy(TINY))
    validate_config(copy.deepcopy(DEFAULT))
    # paper.yaml holds only what differs: it is valid deep-merged over config.yaml, as Snakemake merges it
    validate_config(merge(copy.deepcopy(DEFAULT), load_yaml(REPO / "config" / "paper.yaml")))


@pytest.mark.parametrize(("text", "needle"), [
    ("name: x\nseed: [1,\n", ":3: YAML syntax error"),
    ("name: x\n  seed: 1\n", ":2: YAML syntax error"),
    ("name: x\nseed:\t1\n", "YAML syntax error"),
    ("- 1\n- 2\n", "top level must be a mapping"),
])
def test_yaml_errors_name_file_and_line(tmp_path, text, needle):
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_yaml(path)
    assert str(path) in str(info.value) and needle in str(info.value)


def test_segmented_three_repetitions_in_batches_of_two_are_three():
    from shuffledp.stages import discover

    cfg = copy.deepcopy(DEFAULT)
    cfg["segmented"].update(repetitions=3, batch_size=2)
    validate_config(cfg)  # fills the defaults, as the workflow does
    seg = cfg["segmented"]
    ds, n = next(iter(seg["datasets"])), seg["n"][0]
    runs = [j for j in discover()["segmented"].jobs(cfg) if j.step == "run" and j.spec.get("protocol") == "segmented"
            and any(p["dataset"] == ds and int(p["n"]) == int(n) and p["setting"] == "S1" for p in j.spec["points"])]
    assert len(runs) == 2
    reps = sorted(r for j in runs for r in j.spec["reps"])
    assert reps == [0, 1, 2]


# ------------------------------------------------------------------------------------------- CLI


def _parquet(tmp_path: Path) -> str:
    import pandas as pd

    from shuffledp.io import write_table

    path = tmp_path / "ok.parquet"
    write_table(pd.DataFrame({"user_id": [0, 1]}), path, {"dataset": "x"})
    return str(path)


# (id, argv with {tmp} and {ok} placeholders, substrings of the one stderr line)
BAD_CLI = [
    ("tcm-m-zero", "account tcm --eps 1 --delta 1e-6 --n 1000 --m 0", ["--m"]),
    ("poisson-s-above-d", "account poisson --n 5000 --m 2 --d 4 --s 6 --eps 1 --delta 2e-6", ["--s", "[1, 4]"]),
    ("tcm-eps-nan", "account tcm --eps nan --delta 1e-6 --n 1000 --m 3", ["--eps"]),
    ("tcm-delta", "account tcm --eps 1 --delta 2 --n 1000 --m 3", ["--delta"]),
    ("mhm-n", "account mhm --eps 1 --delta 1e-6 --n 0 --d 4", ["--n"]),
    ("mhm-d-text", "account mhm --eps 1 --delta 1e-6 --n 100 --d four", ["--d"]),
    ("config-missing", "config validate {tmp}/nope.yaml", ["nope.yaml"]),
    ("config-yaml", "config validate {tmp}/broken.yaml", ["broken.yaml:2", "YAML syntax error"]),
    ("config-key", "config validate {tmp}/typo.yaml", ["config key peruser.methds", "'methods'"]),
    ("unknown-command", "frobnicate", ["frobnicate"]),
]


def _argv(template: str, tmp_path: Path) -> list[str]:
    ok = _parquet(tmp_path)
    (tmp_path / "text.parquet").write_text("not parquet")
    (tmp_path / "trunc.parquet").write_bytes(Path(ok).read_bytes()[:-30])
    (tmp_path / "broken.yaml").write_text("name: x\n  seed: 1\n")
    typo = copy.deepcopy(TINY)
    typo["peruser"]["methds"] = typo["peruser"].pop("methods")
    (tmp_path / "typo.yaml").write_text(yaml.safe_dump(typo))
    return template.format(tmp=tmp_path, ok=ok).split()


@pytest.mark.parametrize(("template", "needles"), [c[1:] for c in BAD_CLI], ids=[c[0] for c in BAD_CLI])
def test_bad_cli_call_exits_2_with_one_line(tmp_path, capsys, template, needles):
    argv = _argv(template, tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shuffledp: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not list(tmp_path.glob("o.*")) and not list(tmp_path.glob("s.parquet"))


_RUN_SPEC = {"dataset": {"name": "s", "source": "synthetic", "n": 10, "d": 4, "clusters": 2, "kind": "separated"},
             "method": "alg1", "clustering": "kmeans", "eps": ["1"],
             "splits": ["0.5"], "c": [0.1], "delta": 1e-6, "kmeans_k": 2, "reps": [0], "seed": 1, "user_sample": 10}
_RUN_OUT = {"runs": "{tmp}/o.runs.parquet", "users": "{tmp}/o.users.parquet"}
_FIGURES = {f"fig{k}_{e}": f"{{tmp}}/o{k}.{e}" for k in (1, 2, 3, 4) for e in ("pdf", "png")}
_REPORT_OUT = {**_FIGURES, "claims": "{tmp}/o.parquet", "claims_md": "{tmp}/o.md"}
_REPORT_SPEC = {"figure": {}, "eps": [1], "eps1_fractions": [0.5], "scale": "t"}

# `shuffledp step STAGE STEP --spec FILE --io FILE`: (id, stage, step, spec (object or text), inputs, outputs,
# substrings of the one stderr line); {tmp} and {ok} as above
BAD_STEP_PERUSER = [
    ("collect-truncated", "peruser", "collect", {}, {"tables": ["{tmp}/trunc.parquet"]},
     {"table": "{tmp}/o.parquet"}, ["input tables", "trunc.parquet", "not a readable Parquet"]),
    ("peruser-collect", "peruser", "collect", {}, {"tables": ["{tmp}/nope.parquet"]}, {"table": "{tmp}/o.parquet"},
     ["input tables", "nope.parquet"]),
    ("peruser-report", "peruser", "report", _REPORT_SPEC, {"runs": ["{tmp}/nope"], "users": ["{ok}"], "audits": []},
     _REPORT_OUT,
     ["input runs", "nope"]),
    ("peruser-report-text", "peruser", "report", _REPORT_SPEC,
     {"runs": ["{tmp}/text.parquet"], "users": ["{ok}"], "audits": []},
     _REPORT_OUT, ["input runs", "text.parquet", "Parquet"]),
    ("peruser-run-spec", "peruser", "job", "nope", {"msnbc": []}, _RUN_OUT, ["--spec", "not valid JSON"]),
    ("peruser-run-reps", "peruser", "job", dict(_RUN_SPEC, reps=[-1]), {"msnbc": []}, _RUN_OUT, ["--spec", "reps"]),
    ("peruser-run-eps", "peruser", "job", dict(_RUN_SPEC, eps=["1", "-2"]), {"msnbc": []}, _RUN_OUT,
     ["--spec", "eps"]),
    ("peruser-run-msnbc", "peruser", "job", dict(_RUN_SPEC, dataset={"name": "m", "source": "msnbc", "n": 10}),
     {"msnbc": []}, _RUN_OUT, ["input msnbc"]),
    ("peruser-spec-keys", "peruser", "job", {}, {"msnbc": []}, _RUN_OUT, ["--spec", "missing key"]),
    ("peruser-spec-unknown", "peruser", "job", dict(_RUN_SPEC, colour=1), {"msnbc": []}, _RUN_OUT,
     ["--spec", "colour: unknown key"]),
    ("compare-report-truncated", "accountants_compare", "report", {"scale": "t"},
     {"runs": ["{tmp}/trunc.parquet"], "timings": ["{ok}"]},
     {k: f"{{tmp}}/o.{k}" for k in ("table", "md", "timings_md", "pdf", "png")}, ["input runs", "trunc.parquet"]),
]


@pytest.mark.parametrize("case", ["tcm-m-zero", "config-yaml"])
def test_bad_cli_call_in_a_real_process_has_no_traceback(tmp_path, case):
    template, needles = next(c[1:] for c in BAD_CLI if c[0] == case)
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("SHUFFLEDP_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "shuffledp", *_argv(template, tmp_path)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert all(n in proc.stderr for n in needles)


def _step(tmp_path: Path, stage: str, step: str, spec, io) -> list[str]:
    """argv of ``shuffledp step`` with ``spec`` (dict, or raw text) and ``io`` written to files."""
    (tmp_path / "spec.json").write_text(spec if isinstance(spec, str) else json.dumps(spec))
    (tmp_path / "io.json").write_text(json.dumps(io))
    return ["step", stage, step, "--spec", str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")]


def test_damaged_raw_file_via_the_cli_is_an_error_not_a_standin(tmp_path, capsys, monkeypatch):
    """The MSNBC preprocess step (source auto) with a truncated raw file and no reachable source."""
    from shuffledp.datasets import msnbc

    monkeypatch.setattr(msnbc, "candidates", lambda mirror: [])  # nothing reachable (no network in tests)
    monkeypatch.chdir(tmp_path)  # a spec's raw path is inside the working folder (specs.WorkPath)
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "msnbc990928.seq.gz").write_bytes(gzip.compress(b"% header\n" * 1000)[:-20])
    spec = {"source": "auto", "raw": "raw/msnbc990928.seq.gz", "mirror": "", "seed": 1, "standin_users": 100}
    io = {"input": {"raw": [], "source": []}, "output": {k: str(tmp_path / "p" / f"msnbc_{k}.parquet")
                                           for k in ("sequences", "sets", "categories")}}
    code = main(_step(tmp_path, "data", "preprocess_msnbc", spec, io))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err[-1].startswith("shuffledp: error: ") and "msnbc990928.seq.gz" in err[-1] and "truncated" in err[-1]
    assert not (tmp_path / "p").exists()
    assert [p.name for p in raw.iterdir()][0].startswith("msnbc990928.seq.gz.corrupt-")


SYNTH = {"name": "a", "domain": 10, "set_size": 2, "users": 5, "distribution": "uniform", "zipf_exponent": 1.0,
         "seed": 1}
# a spec's raw path is relative, inside the working folder (specs.WorkPath); these specs are refused before any write
MSNBC = {"source": "standin", "raw": "data/raw/raw.gz", "mirror": "", "seed": 1, "standin_users": 100}
IPUMS = {"key": "br", "extract": {"sample": "", "source": "standin", "records": 100, "attributes": [["A", 3]]},
         "raw_dir": "{tmp}", "seed": 1}
_TABLE = {"input": {}, "output": {"table": "{tmp}/o.parquet"}}
_SUMMARY = {"parquet": "{tmp}/o.parquet", "md": "{tmp}/o.md"}
_MSNBC_OUT = {k: f"{{tmp}}/msnbc_{k}.parquet" for k in ("sequences", "sets", "categories")}
# (id, stage, step, spec, io, words the one error line must hold): the jobs of the data stage
BAD_STEP = [
    ("summary-missing", "data", "datasets_table", {}, {"input": {"tables": ["{tmp}/nope.parquet"]},
                                                       "output": _SUMMARY}, ["nope.parquet", "no such file"]),
    ("summary-not-parquet", "data", "datasets_table", {}, {"input": {"tables": ["{tmp}/text.parquet"]},
                                                           "output": _SUMMARY}, ["text.parquet", "Parquet"]),
    ("summary-dir", "data", "datasets_table", {}, {"input": {"tables": ["{tmp}/d.parquet"]}, "output": _SUMMARY},
     ["not a regular file"]),
    ("summary-truncated", "data", "datasets_table", {}, {"input": {"tables": ["{tmp}/trunc.parquet"]},
                                                         "output": _SUMMARY}, ["trunc.parquet", "Parquet"]),
    ("figure-missing", "data", "msnbc_category_shares", {},
     {"input": {"sequences": ["{tmp}/a"], "sets": ["{ok}"], "categories": ["{ok}"]},
      "output": {"pdf": "{tmp}/f.pdf", "png": "{tmp}/f.png"}}, ["sequences", "no such file"]),
    ("synthetic-users-neg", "data", "synthetic", {**SYNTH, "users": -5}, _TABLE, ["users"]),
    ("synthetic-domain", "data", "synthetic", {**SYNTH, "domain": 1, "set_size": 1}, _TABLE, ["domain"]),
    ("synthetic-set-size", "data", "synthetic", {**SYNTH, "domain": 3, "set_size": 5}, _TABLE, ["set_size"]),
    ("synthetic-zipf-nan", "data", "synthetic", json.dumps({**SYNTH, "zipf_exponent": float("nan")}), _TABLE,
     ["zipf_exponent", "finite"]),
    ("synthetic-zipf-zero", "data", "synthetic", {**SYNTH, "zipf_exponent": 0.0}, _TABLE, ["zipf_exponent"]),
    ("synthetic-name", "data", "synthetic", {**SYNTH, "name": "a;b"}, _TABLE, ["name"]),
    ("synthetic-seed-text", "data", "synthetic", {**SYNTH, "seed": "x"}, _TABLE, ["seed"]),
    ("synthetic-distribution", "data", "synthetic", {**SYNTH, "distribution": "pareto"}, _TABLE, ["distribution"]),
    ("synthetic-missing-key", "data", "synthetic", {k: v for k, v in SYNTH.items() if k != "users"}, _TABLE,
     ["missing key", "users"]),
    ("synthetic-unknown-key", "data", "synthetic", {**SYNTH, "userz": 5}, _TABLE, ["unknown key", "userz"]),
    ("prepare-source", "data", "preprocess_msnbc", {**MSNBC, "source": "maybe"},
     {"input": {"raw": [], "source": []}, "output": _MSNBC_OUT}, ["source"]),
    ("prepare-seed", "data", "preprocess_adult", {"source": "standin", "raw_dir": "data/raw", "mirror": "", "seed": -1},
     {"input": {"raw": [], "source": []}, "output": {"table": "{tmp}/a.parquet"}}, ["seed"]),
    ("prepare-standin-users", "data", "preprocess_msnbc", {**MSNBC, "standin_users": 0},
     {"input": {"raw": [], "source": []}, "output": _MSNBC_OUT}, ["standin_users"]),
    ("prepare-spec-json", "data", "preprocess_ipums", "{bad", {"input": {"raw": []}, "output": _TABLE["output"]},
     ["--spec", "JSON"]),
    ("prepare-spec-keys", "data", "preprocess_ipums", {**IPUMS, "extract": {}},
     {"input": {"raw": []}, "output": _TABLE["output"]}, ["extract"]),
    ("prepare-spec-attrs", "data", "preprocess_ipums", {**IPUMS, "extract": {**IPUMS["extract"],
                                                                            "attributes": [["A", -2]]}},
     {"input": {"raw": []}, "output": _TABLE["output"]}, ["attributes"]),
    ("download-spec", "data", "download_ipums", "[]", {"input": {}, "output": {"raw": "{tmp}/r"}}, ["JSON object"]),
    ("io-outputs", "data", "synthetic", SYNTH, {"input": {}, "output": {"tabel": "{tmp}/o.parquet"}}, ["outputs"]),
]


def _check_bad_step(tmp_path, capsys, stage, step, spec, io, needles) -> None:
    """``shuffledp step`` on a bad job: exit 2, one line holding every needle, no output written.
    ``{tmp}`` is the test's folder, ``{ok}`` a readable Parquet file; ``text.parquet``,
    ``trunc.parquet`` and the folder ``d.parquet`` are there too."""
    ok = _parquet(tmp_path)
    (tmp_path / "text.parquet").write_text("not parquet")
    (tmp_path / "trunc.parquet").write_bytes(Path(ok).read_bytes()[:-30])
    (tmp_path / "d.parquet").mkdir()

    def fill(x):
        return json.loads(json.dumps(x).replace("{tmp}", str(tmp_path)).replace("{ok}", ok))

    spec = spec.replace("{tmp}", str(tmp_path)) if isinstance(spec, str) else fill(spec)
    with contextlib.chdir(tmp_path):  # a job's files lie inside its working folder
        code = main(_step(tmp_path, stage, step, spec, fill(io)))
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shuffledp: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    written = [*tmp_path.glob("o.*"), *tmp_path.glob("o[0-9].*"), *tmp_path.glob("t.*"), *tmp_path.glob("f.*")]
    assert written == []


# ------------------------------------------------------------------------------- through snakemake


def _snakemake_dry(tmp_path: Path, cfg) -> subprocess.CompletedProcess:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg) if not isinstance(cfg, str) else cfg)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path),
           "--configfile", str(path), "--cores", "1", "-n"]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("case", ["peruser-typo", "nan-delta", "data_dir-removed", "name-shell"])
def test_snakemake_dry_run_refuses_before_any_job(tmp_path, case):
    _, base, mutate, needles = next(c for c in BAD_CONFIGS if c[0] == case)
    cfg = copy.deepcopy(base)
    mutate(cfg)
    proc = _snakemake_dry(tmp_path, cfg)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Traceback" not in out and all(n in out for n in needles), out[-3000:]
    assert not (tmp_path / "data").exists() and not (tmp_path / "results").exists()


# ------------------------------------------------------------------------------- our bugs are ours


def test_a_bug_is_an_internal_error_exit_1_and_traceback_on_request(tmp_path, monkeypatch, capsys):
    """A ValueError/KeyError/ArithmeticError that no check of ours raised on purpose is a bug: exit 1,
    one line saying so (not "error" blaming the input); --traceback shows it. The user's own errors
    (InputError and its kinds, OSError) stay exit 2."""
    from shuffledp import errors
    from shuffledp.experiments import personalized

    spec = {"bound": "fv", "settings": ["uniform1"], "mechanism": "laplace", "n_grid": [1000], "seeds": [1],
            "delta_central": 1e-5, "delta_local": 0.0}
    io = {"input": {}, "output": {"table": str(tmp_path / "o.parquet")}}
    argv = _step(tmp_path, "personalized", "points", spec, io)
    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    for exc, code, word in ((KeyError("k"), 1, "internal error: KeyError"),
                            (ZeroDivisionError("x"), 1, "internal error: ZeroDivisionError"),
                            (ValueError("v"), 1, "internal error: ValueError"),
                            (errors.DomainError("eps: too large"), 2, "error: eps: too large"),
                            (errors.DataError("f.gz: truncated"), 2, "error: f.gz: truncated"),
                            (FileNotFoundError(2, "No such file or directory", "f.txt"), 2, "error: f.txt")):
        def boom(*_a, _exc=exc):
            raise _exc

        monkeypatch.setattr(personalized, "run_points", boom)  # the points step's computation
        assert main(argv) == code
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"shuffledp: {word}"), err
        if code == 1:
            assert "--traceback" in err[0]
            with pytest.raises(type(exc)):
                main(["--traceback", *argv])


# bad jobs of a stage in shuffledp.stages: ``shuffledp step STAGE STEP --spec FILE --io FILE`` with the spec
# and the io (``{tmp}``: the test's folder, ``{ok}``: a readable Parquet file) written as JSON files
_MD_UNIFORM = {"dataset": "br", "mechanism": "mhm", "eps": [1], "reps": [0], "records": 100, "seed": 1, "topk": 5}
_MD_UNIFORM_IO = {"input": {"data": ["{ok}"]}, "output": {"table": "{tmp}/o.parquet", "timings": "{tmp}/t.parquet"}}
_MD_REPORT_IO = {"uniform": ["{ok}"], "timings": [], "personal": [], "data": ["{ok}"], "audits": []}
_MD_REPORT_OUT = {o.name: "{tmp}/o." + o.name for o in discover()["multidim"].step("report").outputs}
BAD_STEP_MULTIDIM = [
    ("multidim-uniform-missing", "multidim", "uniform", _MD_UNIFORM,
     {**_MD_UNIFORM_IO, "input": {"data": ["{tmp}/nope"]}}, ["input data", "nope"]),
    ("multidim-uniform-eps", "multidim", "uniform", {**_MD_UNIFORM, "eps": [-1]}, _MD_UNIFORM_IO, ["--spec", "eps"]),
    ("multidim-uniform-eps-inf", "multidim", "uniform", {**_MD_UNIFORM, "eps": [math.inf]}, _MD_UNIFORM_IO,
     ["--spec", "eps", "finite"]),
    ("multidim-records", "multidim", "uniform", {**_MD_UNIFORM, "records": -3}, _MD_UNIFORM_IO, ["--spec", "records"]),
    ("multidim-report-missing", "multidim", "report", {"datasets": ["br"], "topk": 5, "scale": "t"},
     {"input": {**_MD_REPORT_IO, "uniform": ["{tmp}/nope"]}, "output": _MD_REPORT_OUT}, ["input uniform", "nope"]),
    ("multidim-report-data", "multidim", "report", {"datasets": ["br"], "topk": 5, "scale": "t"},
     {"input": {**_MD_REPORT_IO, "data": ["{tmp}/nope"]}, "output": _MD_REPORT_OUT}, ["input data", "nope"]),
    ("multidim-classes", "multidim", "personal",
     {"dataset": "br", "method": "ogm", "ratios": ["1:1:1"], "reps": [0], "records": 100, "seed": 1, "bound": "bennett",
      "family_bits": 32, "classes": [1]}, {"input": {"data": ["{ok}"]}, "output": {"table": "{tmp}/o.parquet"}},
     ["--spec", "classes"]),
]


def test_bad_job_in_a_real_process_has_no_traceback(tmp_path):
    stage, step, spec, io, needles = BAD_STEP_MULTIDIM[0][1:]
    ok = _parquet(tmp_path)
    io = json.loads(json.dumps(io).replace("{tmp}", str(tmp_path)).replace("{ok}", ok))
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    env.pop("SHUFFLEDP_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "shuffledp", *_step(tmp_path, stage, step, spec, io)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert all(n in proc.stderr for n in needles)


# the segmented stage runs through `shuffledp step segmented <step> --spec FILE --io FILE`:
# (id, step, spec (object or raw JSON text), inputs (name -> paths, {ok}/{tmp} placeholders), outputs, needles)
_POINT = {"dataset": "a", "n": 10, "setting": "S1", "data": 0, "table": 0}
_RUN = {"protocol": "segmented", "points": [_POINT], "seed": 1}
BAD_SEGMENTED_STEP = [
    ("prepare-missing", "prepare", {"dataset": "a", "d": 3, "s": 1, "seed": 1, "oversize": "random", "padding": 1},
     {"table": ["{tmp}/nope"]}, {"data": "{tmp}/o.parquet"}, ["input table", "nope"]),
    ("prepare-s", "prepare", {"dataset": "a", "d": 3, "s": 0, "seed": 1, "oversize": "random", "padding": 0},
     {"table": ["{ok}"]}, {"data": "{tmp}/o.parquet"}, ["--spec", "s: must be >= 1"]),
    ("run-spec", "run", "[1]", {"data": ["{ok}"], "table": []}, {"table": "{tmp}/o.parquet"},
     ["--spec", "JSON object"]),
    ("run-reps", "run", dict(_RUN, reps=[-1]), {"data": ["{ok}"], "table": []}, {"table": "{tmp}/o.parquet"},
     ["--spec", "reps"]),
    ("run-nan", "run", '{"protocol":"segmented","points":[{"dataset":"a","n":5,"setting":"S1","data":0,"table":0,'
     '"shares":[NaN]}],"reps":[0],"seed":1}',
     {"data": ["{ok}"], "table": ["{ok}"]}, {"table": "{tmp}/o.parquet"}, ["--spec", "shares.0", "finite"]),
    ("run-point-index", "run", dict(_RUN, reps=[0], points=[dict(_POINT, table=1)]),
     {"data": ["{ok}"], "table": ["{ok}"]},
     {"table": "{tmp}/o.parquet"}, ["--spec", "points[0].table", "index"]),
    ("run-point-key", "run", dict(_RUN, reps=[0], points=[dict(_POINT, m=3)]), {"data": ["{ok}"], "table": ["{ok}"]},
     {"table": "{tmp}/o.parquet"}, ["--spec", "points[0].m", "unknown key"]),
    ("run-data", "run", dict(_RUN, reps=[0]), {"data": ["{tmp}/nope"], "table": []}, {"table": "{tmp}/o.parquet"},
     ["input data", "nope"]),
    ("aggregate-runs", "aggregate", {"accountant": "sound", "scale": "t", "tables": []},
     {"runs": ["{tmp}/nope"], "accountant": []}, {"summary": "{tmp}/o.parquet"}, ["input runs", "nope"]),
    ("aggregate-variant", "aggregate", {"accountant": "best", "scale": "t", "tables": []},
     {"runs": ["{ok}"], "accountant": []}, {"summary": "{tmp}/o.parquet"}, ["--spec", "accountant"]),
    ("params-keys", "params", {}, {}, {"table": "{tmp}/o.parquet"}, ["--spec", "missing key"]),
    ("accountant-outputs", "accountant", {"n": 10, "d": 3, "s": 1, "levels": [1.0], "delta": 1e-3, "m_grid": [1.0, 2.0],
                                          "accountants": ["sound"], "settings": {"S1": [1.0]}, "padding": 1},
     {}, {"tables": {"S2": "{tmp}/o.parquet"}}, ["--io", "tables", "setting"]),
    ("prepare-padding", "prepare", {"dataset": "a", "d": 3, "s": 2, "seed": 1, "oversize": "random", "padding": 1},
     {"table": ["{ok}"]}, {"data": "{tmp}/o.parquet"}, ["--spec", "padding"]),
]


# the jobs that do many small pieces in one process (Table 2's rows, every segmented figure, a stage's
# report pages): a piece the job cannot match to its inputs or outputs is refused naming it
_ROW = {"name": "r", "bound": "fv", "setting": "uniform2", "n": 100, "seed": 1, "delta_local": 1e-6, "eps_grid": [1.0]}
_FIG = {"fig2": {"title": "t", "datasets": ["msnbc"], "settings": ["S1"]}}
_PAGE = {"stage": "segmented", "step": "claims", "output": "md", "title": "segmented_claims"}
BAD_STEP_MERGED = [
    ("table2-rows-empty", "personalized", "table2", {"rows": []}, {"input": {}, "output": {"table": "{tmp}/o.parquet"}},
     ["--spec", "rows", "at least 1"]),
    ("table2-row-missing", "personalized", "table2", {"rows": [{k: v for k, v in _ROW.items() if k != "seed"}]},
     {"input": {}, "output": {"table": "{tmp}/o.parquet"}}, ["--spec", "rows[0]", "missing", "seed"]),
    ("table2-row-unknown", "personalized", "table2", {"rows": [dict(_ROW, colour="red")]},
     {"input": {}, "output": {"table": "{tmp}/o.parquet"}}, ["--spec", "rows[0]", "unknown", "colour"]),
    ("segmented-figures-data", "segmented", "figures", {"figures": _FIG, "n": [10], "data_datasets": ["msnbc", "x"]},
     {"input": {"summary": ["{ok}"], "data": ["{ok}"]},
      "output": {"pdf": {"fig2": "{tmp}/f.pdf"}, "png": {"fig2": "{tmp}/f.png"}}}, ["--spec", "data_datasets", "2"]),
    ("report-pages-inputs", "report", "pages", {"pages": [_PAGE]},
     {"input": {"md": [], "parquet": []}, "output": {"html": {"segmented_claims": "{tmp}/p.html"}}},
     ["--spec", "pages", "1 tables"]),
]

# every stage's bad jobs, one format: (id, stage, step, spec (object or raw text), io, needles)
ALL_BAD_STEPS = (
    BAD_STEP + BAD_STEP_MULTIDIM + BAD_STEP_MERGED
    + [(i, st, sp, spec, {"input": a, "output": b}, n) for i, st, sp, spec, a, b, n in BAD_STEP_PERUSER]
    + [(f"segmented-{i}", "segmented", sp, spec, {"input": a, "output": b}, n)
       for i, sp, spec, a, b, n in BAD_SEGMENTED_STEP]
)


@pytest.mark.parametrize(("stage", "step", "spec", "io", "needles"), [c[1:] for c in ALL_BAD_STEPS],
                         ids=[c[0] for c in ALL_BAD_STEPS])
def test_bad_job_of_a_step_exits_2_with_one_line(tmp_path, capsys, stage, step, spec, io, needles):
    _check_bad_step(tmp_path, capsys, stage, step, spec, io, needles)
