"""Typed specs (shuffledp.stages.specs, issue 37 class 1): every step of every stage has one, every
job of the default and paper configurations passes it, and a wrongly typed or out-of-range value at
any key of any step's spec is refused with one line naming that key (exit 2 from ``shuffledp step``).

The property test walks each step's spec (a real job's, from the configurations) beside its model's
JSON schema, so every key (nested ones and list items too) is reached, and hypothesis draws a value
that the key's declared type or range excludes."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffledp.cli import main
from shuffledp.config import load_validated
from shuffledp.errors import UsageError
from shuffledp.stages import check_spec, discover, spec_model
from shuffledp.stages.specs import _where, validate_spec

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "tests" / "stages"


@pytest.fixture(autouse=True)
def _toy_stage(monkeypatch):
    monkeypatch.setenv("SHUFFLEDP_STAGE_PATH", str(TOY))


def _configs() -> list[dict]:
    cfg = [REPO / "config" / "config.yaml"]
    return [load_validated(cfg), load_validated([*cfg, REPO / "config" / "paper.yaml"])]


@contextlib.contextmanager
def _with_toy():
    """The toy stage discovered too (tests/stages/toy), the environment restored after."""
    old = os.environ.get("SHUFFLEDP_STAGE_PATH")
    os.environ["SHUFFLEDP_STAGE_PATH"] = str(TOY)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("SHUFFLEDP_STAGE_PATH")
        else:
            os.environ["SHUFFLEDP_STAGE_PATH"] = old


def _examples() -> dict[tuple[str, str], dict]:
    """One real spec per (stage, step): the first job of the step in the default or paper config."""
    out: dict[tuple[str, str], dict] = {}
    for cfg in _configs() + [dict(load_validated([REPO / "config" / "config.yaml"]), toy={"ks": [2, 3]})]:
        for stage in discover().values():
            if stage.enabled(cfg):
                for job in stage.jobs(cfg):
                    out.setdefault((stage.name, job.step), job.spec)
    return out


with _with_toy():
    EXAMPLES = _examples()


def test_every_step_of_every_stage_has_a_typed_spec():
    missing = [(s.name, st_.name) for s in discover().values() for st_ in s.steps if spec_model(s, st_) is None]
    assert missing == []
    # and the configurations exercise every step (so that the property test reaches each)
    steps = {(s.name, st_.name) for s in discover().values() for st_ in s.steps}
    assert steps - set(EXAMPLES) <= {("segmented", "params_paper")}, steps - set(EXAMPLES)


@pytest.mark.parametrize("which", [0, 1], ids=["default", "paper"])
def test_every_job_passes_its_typed_spec(which):
    cfg = _configs()[which]
    for stage in discover().values():
        if stage.enabled(cfg):
            for job in stage.jobs(cfg):
                check_spec(stage.step(job.step), job.spec, stage=stage)


# ----------------------------------------------------------------------------------------- the walk


def _resolve(node: dict, defs: dict) -> dict:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _alternatives(node: dict, defs: dict) -> list[dict]:
    node = _resolve(node, defs)
    if "anyOf" in node:
        return [_resolve(a, defs) for a in node["anyOf"]]
    return [node]


def _keys(value, node: dict, defs: dict, path: tuple = ()):
    """(path, schema alternatives) of every key of ``value`` below ``node``: mapping keys, list item 0."""
    alts = [a for a in _alternatives(node, defs) if a.get("type") != "null"]
    yield path, _alternatives(node, defs)
    if isinstance(value, dict):
        for a in alts:
            if a.get("type") == "object":
                props = a.get("properties", {})
                extra = a.get("additionalProperties")
                for k, v in value.items():
                    sub = props.get(k, extra if isinstance(extra, dict) else None)
                    if sub is not None:
                        yield from _keys(v, sub, defs, (*path, k))
                break
    elif isinstance(value, list) and value:
        for a in alts:
            if a.get("type") == "array" and isinstance(a.get("items"), dict):
                yield from _keys(value[0], a["items"], defs, (*path, 0))
                break
            if a.get("type") == "array" and isinstance(a.get("prefixItems"), list):
                yield from _keys(value[0], a["prefixItems"][0], defs, (*path, 0))
                break


def _put(spec, path: tuple, value):
    spec = json.loads(json.dumps(spec))
    node = spec
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return spec


JSON_KIND = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object",
             type(None): "null"}


def _admits_type(alts: list[dict], value) -> bool:
    kind = JSON_KIND[type(value)]
    for a in alts:
        t = a.get("type")
        kinds = set(t) if isinstance(t, list) else {t} if t else set()
        if "enum" in a and value in a["enum"]:
            return True
        if "const" in a and value == a["const"]:
            return True
        if not kinds and "enum" not in a and "const" not in a:
            return True  # any value
        if kind in kinds or (kind == "integer" and "number" in kinds):
            return True
    return False


def _wrong_type():
    """Values of every JSON type: the draw is kept where the key's type excludes it."""
    return st.one_of(
        st.text(max_size=6), st.sampled_from(["1000", "1.5", "true", "none"]),
        st.booleans(), st.none(),
        st.integers(min_value=-10**6, max_value=10**6),
        st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6).filter(
            lambda x: not float(x).is_integer()),
        st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.sampled_from("abc"), st.integers(0, 3),
                                                                  max_size=2))


def _out_of_range(alts: list[dict]):
    """A number just outside a declared bound, or a string outside a declared enum."""
    outs = []
    for a in alts:
        t = a.get("type")
        if t in ("integer", "number"):
            lo = next((a[k] for k in ("minimum", "ge") if k in a), None)
            xlo = next((a[k] for k in ("exclusiveMinimum", "gt") if k in a), None)
            hi = next((a[k] for k in ("maximum", "le") if k in a), None)
            xhi = next((a[k] for k in ("exclusiveMaximum", "lt") if k in a), None)
            step = 1 if t == "integer" else 0.5
            if lo is not None:
                outs.append(st.just(lo - step) if t == "integer" else st.floats(lo - 1e6, lo, exclude_max=True))
            if xlo is not None:
                outs.append(st.just(math.floor(xlo)) if t == "integer" else st.floats(xlo - 1e6, xlo))
            if hi is not None:
                outs.append(st.just(hi + step) if t == "integer" else st.floats(hi, hi + 1e6, exclude_min=True))
            if xhi is not None:
                outs.append(st.just(math.ceil(xhi)) if t == "integer" else st.floats(xhi, xhi + 1e6))
        if "enum" in a:
            outs.append(st.text(min_size=1, max_size=8).filter(lambda s, e=a["enum"]: s not in e))
    return outs


CASES = []
with _with_toy():
    for (_stage, _step), _spec in sorted(EXAMPLES.items()):
        _model = spec_model(discover()[_stage], discover()[_stage].step(_step))
        _schema = _model.model_json_schema()
        for _path, _alts in _keys(_spec, _schema, _schema.get("$defs", {})):
            if _path:
                CASES.append((_stage, _step, _path, _alts))


def _refused(stage: str, step: str, spec: dict, path: tuple) -> str:
    model = spec_model(discover()[stage], discover()[stage].step(step))
    with pytest.raises(UsageError) as err:
        validate_spec(model, spec)
    msg = str(err.value)
    assert "\n" not in msg, msg
    return msg


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_wrongly_typed_value_at_any_key_is_refused_naming_it(data):
    stage, step, path, alts = data.draw(st.sampled_from(CASES), label="key")
    value = data.draw(_wrong_type().filter(lambda v: not _admits_type(alts, v)), label="value")
    msg = _refused(stage, step, _put(EXAMPLES[(stage, step)], path, value), path)
    # the line names the key (or, for a list item, the list: the message names the first problem found)
    assert msg.startswith(f"--spec: {_where(path)}") or msg.startswith(f"--spec: {_where(path[:-1])}"), (path, msg)


RANGED = [(s, st_, p, a) for s, st_, p, a in CASES if _out_of_range(a)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_an_out_of_range_value_at_any_key_is_refused_naming_it(data):
    stage, step, path, alts = data.draw(st.sampled_from(RANGED), label="key")
    value = data.draw(st.one_of(*_out_of_range(alts)), label="value")
    msg = _refused(stage, step, _put(EXAMPLES[(stage, step)], path, value), path)
    assert msg.startswith(f"--spec: {_where(path)}") or msg.startswith(f"--spec: {_where(path[:-1])}"), (path, msg)


def test_every_key_of_every_step_is_reached():
    """The walk reaches every field of every step's model (top-level keys at least)."""
    reached = {(s, st_, p[0]) for s, st_, p, _ in CASES}
    for (stage, step), spec in EXAMPLES.items():
        for key in spec:
            assert (stage, step, key) in reached, (stage, step, key)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_step_command_refuses_it_with_exit_2_and_one_line(data):
    """Through ``shuffledp step``: exit 2, one stderr line naming the spec file and the key, nothing run."""
    stage, step, path, alts = data.draw(st.sampled_from(CASES), label="key")
    value = data.draw(_wrong_type().filter(lambda v: not _admits_type(alts, v)), label="value")
    with tempfile.TemporaryDirectory() as tmp:
        spec_file, io_file = Path(tmp) / "spec.json", Path(tmp) / "io.json"
        spec_file.write_text(json.dumps(_put(EXAMPLES[(stage, step)], path, value)))
        io_file.write_text(json.dumps({"input": {}, "output": {}}))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["step", stage, step, "--spec", str(spec_file), "--io", str(io_file)])
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"shuffledp: error: --spec {spec_file}: "), lines
    assert _where(path[:1]) in lines[0]


@pytest.mark.parametrize(("stage", "step", "key", "value", "needle"), [
    # the issue's examples: each ran (exit 0) or crashed, or named the wrong key
    ("accountants_compare", "run", "deltas", 1e-6, "deltas: must be a list, got number"),
    ("segmented", "accountant", "settings", [[1.0]], "settings: must be a mapping, got list"),
    ("accountants_compare", "run", "n_grid", "1000", 'n_grid: must be a list, got string "1000"'),
    ("peruser", "job", "kmeans_k", 2.5, "kmeans_k: must be an integer, got number 2.5"),
    ("segmented", "prepare", "s", 3.5, "s: must be an integer, got number 3.5"),
    ("segmented", "prepare", "d", 8.5, "d: must be an integer, got number 8.5"),
    ("multidim_frameworks", "adult", "domain", 8.5, "domain: must be an integer, got number 8.5"),
    ("segmented", "accountant", "n", 1000.5, "n: must be an integer, got number 1000.5"),
    ("segmented", "accountant", "delta", 5e-324, "delta: 5e-324 is subnormal"),
    ("segmented", "accountant", "n", True, "n: must be an integer, got boolean true"),
])
def test_the_issues_examples(stage, step, key, value, needle):
    msg = _refused(stage, step, {**EXAMPLES[(stage, step)], key: value}, (key,))
    assert needle in msg, msg
