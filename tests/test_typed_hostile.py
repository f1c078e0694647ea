"""The spec and io files of ``shuffledp step`` as a careless or hostile user writes them (issue 37):
for every key of every stage's step spec a missing key, an unknown key, another step's spec, the io
file given as the spec, a spec file that is not a JSON object, and an io file whose inputs hold no
file. Each is refused by ``shuffledp step`` before the step runs: exit 2, one line on stderr.

(Wrongly typed and out-of-range values at every key: tests/test_typed_specs.py; bad coding ranges:
tests/test_typed_coding.py.)"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from shuffledp.cli import main
from shuffledp.config import load_validated
from shuffledp.stages import discover, spec_model

REPO = Path(__file__).resolve().parents[1]


def _examples() -> tuple[dict, dict]:
    """One real spec per (stage, step) of the default and paper configs, and for each (stage, step,
    input) the fewest files any job of either config gives that input."""
    cfg = [REPO / "config" / "config.yaml"]
    specs: dict[tuple[str, str], dict] = {}
    fewest: dict[tuple[str, str, str], int] = {}
    for config in (load_validated(cfg), load_validated([*cfg, REPO / "config" / "paper.yaml"])):
        for stage in discover().values():
            if not stage.enabled(config):
                continue
            for job in stage.jobs(config):
                specs.setdefault((stage.name, job.step), job.spec)
                for name in stage.step(job.step).inputs:
                    key = (stage.name, job.step, name)
                    fewest[key] = min(fewest.get(key, 1 << 30), len(job.inputs.get(name, [])))
    return specs, fewest


EXAMPLES, FEWEST = _examples()
STEPS = sorted(EXAMPLES)


def _model(stage: str, step: str):
    s = discover()[stage]
    return spec_model(s, s.step(step))


def _step(stage: str, step: str, spec, tmp_path: Path, io_obj=None, raw: str | None = None) -> tuple[int, list[str]]:
    spec_file, io_file = tmp_path / "spec.json", tmp_path / "io.json"
    spec_file.write_text(raw if raw is not None else json.dumps(spec))
    io_file.write_text(json.dumps(io_obj if io_obj is not None else {"input": {}, "output": {}}))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["step", stage, step, "--spec", str(spec_file), "--io", str(io_file)])
    return code, err.getvalue().strip().splitlines()


def _refused(code: int, lines: list[str], *needles: str) -> None:
    assert code == 2 and len(lines) == 1, (code, lines)
    assert lines[0].startswith("shuffledp: error: "), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines)


REQUIRED = [(stage, step, key) for stage, step in STEPS for key in EXAMPLES[(stage, step)]
            if key in _model(stage, step).model_fields and _model(stage, step).model_fields[key].is_required()]


def test_every_step_and_key_is_covered():
    assert len(STEPS) >= 30, STEPS
    for stage, step in STEPS:
        model = _model(stage, step)
        assert model is not None, (stage, step)
        for key in EXAMPLES[(stage, step)]:
            assert key in model.model_fields, (stage, step, key)


@pytest.mark.parametrize(("stage", "step", "key"), REQUIRED, ids=["/".join(c) for c in REQUIRED])
def test_a_missing_key_is_refused_naming_it(stage, step, key, tmp_path):
    spec = {k: v for k, v in EXAMPLES[(stage, step)].items() if k != key}
    _refused(*_step(stage, step, spec, tmp_path), key)


@pytest.mark.parametrize(("stage", "step"), STEPS, ids=["/".join(c) for c in STEPS])
def test_an_unknown_key_is_refused_naming_it(stage, step, tmp_path):
    _refused(*_step(stage, step, {**EXAMPLES[(stage, step)], "n_gird": 3}, tmp_path), "n_gird")


SWAPPED = [(a, b) for a in STEPS for b in STEPS if a != b and _model(*a) is not _model(*b)
           and EXAMPLES[a] != {}]


@pytest.mark.parametrize(("mine", "other"), SWAPPED, ids=[f"{'/'.join(a)}<-{'/'.join(b)}" for b, a in SWAPPED])
def test_another_steps_spec_is_refused(mine, other, tmp_path):
    _refused(*_step(*other, EXAMPLES[mine], tmp_path))


@pytest.mark.parametrize("raw", ["", "{", "[1, 2]", "null", "3", '"spec"', '{"seed": NaN}', '{"a": Infinity}',
                                 json.dumps({"input": {}, "output": {}})],
                         ids=["empty", "truncated", "list", "null", "number", "string", "nan", "infinity", "io-file"])
@pytest.mark.parametrize(("stage", "step"), STEPS, ids=["/".join(c) for c in STEPS])
def test_a_spec_file_that_is_no_spec_is_refused(stage, step, raw, tmp_path):
    code, lines = _step(stage, step, None, tmp_path, raw=raw)
    if raw == json.dumps({"input": {}, "output": {}}) and _model(stage, step).model_fields.keys() == set():
        return  # a step whose spec is empty reads no key: the io file's keys are unknown ones, below
    _refused(code, lines, "--spec")


# a "source" input is the data stage's source marker (shuffledp.stages.data.marker): a rebuild
# trigger that the step never reads, so a job run by hand without it is a job
FILLED = [(stage, step) for stage, step in STEPS
          if discover()[stage].step(step).inputs and "source" not in discover()[stage].step(step).inputs
          and all(FEWEST.get((stage, step, name), 0) >= 1 for name in discover()[stage].step(step).inputs)]


@pytest.mark.parametrize(("stage", "step"), FILLED, ids=["/".join(c) for c in FILLED])
def test_an_io_file_whose_inputs_hold_no_file_is_refused_naming_one(stage, step, tmp_path, monkeypatch):
    """Every input that every job of the shipped configs fills, left empty: refused naming an input
    (an io file written by hand; the workflow's io files are built from the jobs)."""
    monkeypatch.chdir(tmp_path)
    s = discover()[stage].step(step)
    spec = EXAMPLES[(stage, step)]
    outputs = {o.name: ({v: str(tmp_path / f"{o.name}_{v}.out") for v in o.values(spec)} if o.over is not None
                        else str(tmp_path / Path(o.path).name)) for o in s.outputs}
    code, lines = _step(stage, step, spec, tmp_path, io_obj={"input": {n: [] for n in s.inputs}, "output": outputs})
    _refused(code, lines)
    # the line names the input, or says the inputs do not hold what the spec names
    assert "input" in lines[0] or any(name in lines[0] for name in s.inputs), lines
    assert not any(Path(p).exists() for o in outputs.values() for p in (o.values() if isinstance(o, dict) else [o]))


# every spec key naming a place a step writes to (a raw download's file or folder under data/raw)
WRITTEN = [(stage, step, key) for stage, step in STEPS for key, value in EXAMPLES[(stage, step)].items()
           if isinstance(value, str) and value.startswith("data/raw")]
HOSTILE = {"absolute": "/tmp/shuffledp-hostile/x", "parent": "../outside", "inner-parent": "data/../../outside",
           "home": "~/outside", "newline": "data/raw/a\nb", "nul": "data/raw/a\x00b"}


def test_every_written_path_key_is_covered():
    assert {(s, k) for s, _, k in WRITTEN} >= {("data", "raw"), ("data", "raw_dir"), ("multidim_frameworks", "raw_dir")}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
@pytest.mark.parametrize(("stage", "step", "key"), WRITTEN, ids=["/".join(c) for c in WRITTEN])
def test_a_path_outside_the_working_folder_is_refused_naming_the_key(stage, step, key, kind, tmp_path):
    code, lines = _step(stage, step, {**EXAMPLES[(stage, step)], key: HOSTILE[kind]}, tmp_path)
    _refused(code, lines, key)
    assert not Path("/tmp/shuffledp-hostile").exists()
