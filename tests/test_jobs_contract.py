"""The jobs contract (shuffledp.stages.jobs): lookup, canonical specs, batching, and every
stage's jobs on the default and paper configurations (counts, only the keys a job uses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shuffledp.config import load_validated
from shuffledp.stages import check_spec, discover, job_io
from shuffledp.stages.jobs import Job, JobTable, Ref, batch_ranges, canonical
from shuffledp.stages.segmented import UNIFORM_BASELINES

REPO = Path(__file__).resolve().parents[1]
# transitional: the stages not yet moved to shuffledp.stages (discovered ones are added below)
personalized = discover()["personalized"]
segmented = discover()["segmented"]
multidim = discover()["multidim"]
multidim_frameworks = discover()["multidim_frameworks"]
peruser = discover()["peruser"]
accountants_compare = discover()["accountants_compare"]


def _config(name: str) -> dict:
    """The config the workflow's jobs see: paper.yaml deep-merged over config.yaml, defaults filled."""
    files = ["config.yaml"] + (["paper.yaml"] if name == "paper" else [])
    return load_validated(REPO / "config" / f for f in files)


def test_batch_ranges_cover_every_repetition_once():
    assert batch_ranges(5, 2) == [[0, 1], [2, 3], [4]]
    assert batch_ranges(3, 10) == [[0, 1, 2]]
    for reps, bs in ((7, 1), (7, 3), (7, 7)):
        assert sum(batch_ranges(reps, bs), []) == list(range(reps))


def test_job_table_lookup_and_refs():
    jobs = [Job("run", {"a": "1", "b": "x"}, {"k": 1.5, "j": [1, 2]}), Job("run", {"a": "2", "b": "x"}, {}),
            Job("report", {}, {"scale": "s"})]
    t = JobTable(jobs)
    # wildcards of other rules' patterns (or extra ones) do not matter, only the step's names
    assert t.job("run", {"a": "1", "b": "x", "other": "y"}) is jobs[0]
    assert t.job("report", {"a": "1"}) is jobs[2]
    assert t.refs("run", "table") == [Ref("run", "table", {"a": "1", "b": "x"}),
                                      Ref("run", "table", {"a": "2", "b": "x"})]
    assert t.of_step("report") == [jobs[2]]
    with pytest.raises(KeyError, match="no run job"):
        t.job("run", {"a": "3", "b": "x"})
    with pytest.raises(ValueError, match="same identity"):
        JobTable(jobs + [Job("run", {"b": "x", "a": "1"}, {})])


def test_canonical_is_order_independent_and_rejects_nan():
    assert canonical({"b": 1, "a": [1.0, "x"]}) == canonical({"a": [1.0, "x"], "b": 1})
    with pytest.raises(ValueError):
        canonical({"x": float("nan")})


@pytest.mark.parametrize("name", ["default", "paper"])
def test_every_stage_jobs_unique_and_json(name):
    cfg = _config(name)
    total = 0
    for stage in discover().values():
        jobs = stage.jobs(cfg)
        JobTable(jobs)  # no two jobs with the same identity
        for j in jobs:
            assert json.loads(canonical(j.spec)) == j.spec
            assert all(isinstance(v, str) for v in j.wildcards.values())
        total += len(jobs)
    # the data stage adds about ten; 300 before issue 15, whose Adult multidim runs add 26 paper-scale jobs;
    # issue 24's mhm_paper variant (MHM under the paper's printed p and accountant) adds 15 more
    assert total <= 325


def test_specs_hold_only_the_keys_a_job_uses():
    cfg = _config("paper")
    seed = cfg["seed"]
    for j in personalized.jobs(cfg):
        if j.step == "points":
            assert ("calibration" in j.spec) == (j.spec["bound"] == "hps")
            assert j.spec["seeds"] == [seed + s for s in cfg["personalized"]["seeds"]]
            assert j.spec["delta_local"] == (0.0 if j.spec["mechanism"] == "laplace"
                                             else cfg["personalized"]["delta_local_approx"])
    runs = [j for j in segmented.jobs(cfg) if j.step == "run"]
    for j in runs:
        p = j.wildcards["segproto"]
        assert j.spec["protocol"] == p and j.spec["points"]
        for pt in j.spec["points"]:
            assert ("wsepmm_power" in pt) == (p in ("wsepmm", "wsepmm_paper"))
            assert ("subexp_local_eps" in pt) == (p == "subexp_local")
            assert ("shares" in pt) == (p not in UNIFORM_BASELINES)
            if p in ("wsepmm", "wsepmm_paper"):
                assert pt["delta"] == cfg["segmented"]["delta_factor"] / pt["n"]
    for j in peruser.jobs(cfg):
        if j.step == "job":
            assert [d["name"] for d in cfg["peruser"]["datasets"]].count(j.spec["dataset"]["name"]) == 1
            assert ("dbscan" in j.spec) == (j.wildcards["clustering"] == "dbscan")
            # only an msnbc job reads the data stage's table
            assert bool(j.inputs["msnbc"]) == (j.spec["dataset"]["source"] == "msnbc")
    for j in accountants_compare.jobs(cfg):
        if j.step == "run":  # k only for k-RR; the label is the mechanism wildcard
            assert (j.spec["k"] is None) == (j.spec["mechanism"] == "general")
            assert j.spec["label"] == j.wildcards["acmech"]
        elif j.step == "gain":  # the segmented experiment's Subexp-shuffle settings, derived once here
            assert all(c["delta_s"] == cfg["segmented"]["delta_factor"] / c["n"] for c in j.spec["subexp"])
    for j in multidim_frameworks.jobs(cfg):
        if j.step == "run":  # a CALM job holds no HDG key, an MHM job no FLAME key, and conversely
            assert ("view_size" in j.spec) == (j.wildcards["framework"] == "calm")
            assert ("query_dim" in j.spec) == (j.wildcards["framework"] == "hdg")
            assert ("family_bits" in j.spec) == (j.wildcards["component"] == "mhm")
            assert ("np_fraction" in j.spec) == (j.wildcards["component"] == "flame")
        elif j.step in ("loan", "adult"):  # Adult's ordinal table does not depend on the Loan settings
            assert ("source" in j.spec) == (j.step == "loan")


def test_profiles_name_existing_rules():
    """The SLURM profile's groups and set-resources name rules that exist: the rules of
    workflow/rules/stages.smk, one per step of every discovered stage, named ``<stage>_<step>``,
    or, for a step with one rule per job (the report pages), ``<stage>_<step>_<wildcard values>``
    of a job of the default or the paper configuration."""
    rules = {f"{s.name}_{st.name}" for s in discover().values() for st in s.steps}
    for cfg in (_config("default"), _config("paper")):
        for s in discover().values():
            per_job = {st.name: st for st in s.steps if st.rule_per_job}
            rules |= {"_".join([s.name, j.step, *(str(j.wildcards[w]) for w in per_job[j.step].wildcards)])
                      for j in (s.jobs(cfg) if s.enabled(cfg) and per_job else []) if j.step in per_job}
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    assert set(slurm["groups"]) <= rules
    assert set(slurm.get("set-resources", {})) <= rules
    assert set(slurm["groups"].values()) == set(slurm["group-components"])
    assert [p.name for p in (REPO / "workflow" / "rules").glob("*.smk")] != []
    for s in discover().values():  # every step's resources are its own, declared on the Step
        for st in s.steps:
            assert st.mem_mb >= 100 and st.runtime >= 1, (s.name, st.name)


@pytest.mark.parametrize("name", ["default", "paper"])
def test_every_discovered_stage_keeps_its_own_contract(name):
    """For every discovered stage: each job names a declared step, carries exactly that step's
    wildcards (each matching its regular expression), a spec the step accepts, only declared input
    names, and references that resolve to a job and output that exist."""
    import re

    cfg = _config(name)
    stages = discover()
    roots = {"results": "results", "data": "data"}
    tables = {s.name: JobTable(s.jobs(cfg)) for s in stages.values() if s.enabled(cfg)}
    for sname, table in tables.items():
        stage = stages[sname]
        for job in table.jobs:
            step = stage.step(job.step)
            assert list(job.wildcards) == list(step.wildcards) or set(job.wildcards) == set(step.wildcards)
            for w, value in job.wildcards.items():
                assert re.fullmatch(step.wildcards[w], value), (sname, job.step, w, value)
            check_spec(step, job.spec, stage=stage)  # the step's typed spec accepts it
            assert set(job.inputs) <= set(step.inputs), (sname, job.step)
            for refs in job.inputs.values():
                for ref in refs:
                    if isinstance(ref, Ref):
                        owner = stages[ref.stage or sname]
                        tables[owner.name].job(ref.step, ref.wildcards)  # the referenced job exists
                        owner.step(ref.step).output(ref.output)
            io = job_io(stage, step, job, roots, stages)
            assert set(io["output"]) == {o.name for o in step.outputs}


def test_step_command_refuses_bad_specs_and_io_with_one_line(tmp_path):
    """``shuffledp step``: a spec missing a key, holding an unknown key or a NaN, an io naming other
    inputs or a missing input file, an unknown stage or step: exit 2, one line naming the problem."""
    spec_ok = {"bound": "fv", "settings": ["uniform1"], "mechanism": "laplace", "n_grid": [1000], "seeds": [1],
               "delta_central": 1e-5, "delta_local": 0.0}
    io_ok = {"input": {}, "output": {"table": str(tmp_path / "out.parquet")}}

    def run(stage, step, spec, io):
        (tmp_path / "s.json").write_text(spec if isinstance(spec, str) else json.dumps(spec))
        (tmp_path / "io.json").write_text(json.dumps(io))
        return subprocess.run([sys.executable, "-m", "shuffledp", "step", stage, step, "--spec",
                               str(tmp_path / "s.json"), "--io", str(tmp_path / "io.json")],
                              capture_output=True, text=True, cwd=tmp_path)  # its files: inside the working folder

    cases = [
        (("personalized", "points", {k: v for k, v in spec_ok.items() if k != "bound"}, io_ok), "bound: missing key"),
        (("personalized", "points", {**spec_ok, "extra": 1}, io_ok), "extra: unknown key"),
        (("personalized", "points", json.dumps({**spec_ok, "delta_central": float("nan")}), io_ok),
         "delta_central must be a finite number"),
        (("personalized", "points", "{not json", io_ok), "not valid JSON"),
        (("personalized", "points", spec_ok, {"input": {"x": []}, "output": io_ok["output"]}), "inputs"),
        (("personalized", "report", {"delta_central": 1e-5, "delta_local": 1e-10, "t2_setting": "uniform2",
                                     "t2_n": 10, "scale": "s"},
          {"input": {"points": [str(tmp_path / "none.parquet")], "rows": []}, "output": {}}), "outputs"),
        (("nosuchstage", "points", spec_ok, io_ok), "unknown stage"),
        (("personalized", "nosuchstep", spec_ok, io_ok), "no step"),
    ]
    for args, needle in cases:
        proc = run(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("shuffledp: error:") and proc.stderr.count("\n") == 1, proc.stderr
        assert needle in proc.stderr, (needle, proc.stderr)
    assert not (tmp_path / "out.parquet").exists()
    # the good spec runs and writes its table
    proc = run("personalized", "points", spec_ok, io_ok)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.parquet").is_file()


def test_spec_files_are_named_by_content_and_not_bounded_by_argument_size(tmp_path):
    """A spec far larger than a command line (1 MiB) travels as a file; a changed spec is a new path."""
    from shuffledp.stages import content_file

    big = {"reps": list(range(150_000))}
    path = content_file(tmp_path, "spec", big)
    assert Path(path).stat().st_size > 2**20 // 2 and json.loads(Path(path).read_text()) == big
    assert content_file(tmp_path, "spec", big) == path
    assert content_file(tmp_path, "spec", {"reps": [0]}) != path
