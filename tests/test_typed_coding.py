"""The public codings' ranges (shuffledp.datasets.coding) are checked when a step reads its spec: a
bad range at any attribute of any step's ``coding`` (the data stage's Adult preprocessing, the Loan
table of multidim_frameworks, the raw-record audits) is refused by ``shuffledp step`` with exit 2 and
one line naming the attribute's key (``coding.<attribute>``), before the step runs."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from shuffledp.cli import main
from shuffledp.config import load_validated
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]


def _coding_specs() -> dict[str, tuple[str, str, dict]]:
    """One real spec with a ``coding`` per step that reads one (a raw audit's from the paper config)."""
    cfg = [REPO / "config" / "config.yaml"]
    found: dict[str, tuple[str, str, dict]] = {}
    for config in (load_validated(cfg), load_validated([*cfg, REPO / "config" / "paper.yaml"])):
        for stage in discover().values():
            if stage.enabled(config):
                for job in stage.jobs(config):
                    if job.spec.get("coding"):
                        found.setdefault(f"{stage.name}/{job.step}", (stage.name, job.step, job.spec))
    return found


SPECS = _coding_specs()


def test_every_step_with_a_coding_is_covered():
    # the data stage (Adult), multidim_frameworks (Loan) and the raw-record audits read a coding
    assert {"data/preprocess_adult", "multidim_frameworks/loan", "audits/run"} <= set(SPECS), sorted(SPECS)


def _bad_ranges(entry: dict) -> dict[str, dict]:
    """Ranges no coding admits, each for this attribute's entry."""
    lo, hi = entry["lo"], entry["hi"]
    bins = {} if entry["scale"] == "int" else {"bins": entry.get("bins", 8)}
    return {
        "lo-equals-hi": {**entry, "lo": hi},
        "lo-above-hi": {**entry, "lo": hi + 1, "hi": lo},
        "log-with-lo-0": {"scale": "log", "lo": 0, "hi": max(hi, 10), "bins": 8},
        "log1p-with-lo--1": {"scale": "log1p", "lo": -1, "hi": max(hi, 10), "bins": 8},
        "int-with-fraction": {"scale": "int", "lo": 0.5, "hi": hi + 0.5},
        "same-scale-reversed": {**entry, **bins, "lo": hi, "hi": hi - 1},
    }


CASES = [(name, attr, kind, bad) for name, (_, _, spec) in SPECS.items() for attr, entry in spec["coding"].items()
         for kind, bad in _bad_ranges(entry).items()]


def _step(stage: str, step: str, spec: dict, tmp_path: Path) -> tuple[int, list[str]]:
    spec_file, io_file = tmp_path / "spec.json", tmp_path / "io.json"
    spec_file.write_text(json.dumps(spec))
    io_file.write_text(json.dumps({"input": {}, "output": {}}))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["step", stage, step, "--spec", str(spec_file), "--io", str(io_file)])
    return code, err.getvalue().strip().splitlines()


def test_the_real_specs_pass(tmp_path):
    """The unchanged specs get past the spec check (the refusals below are the ranges', nothing else)."""
    from shuffledp.stages import check_spec

    for stage, step, spec in SPECS.values():
        s = discover()[stage]
        check_spec(s.step(step), spec, "--spec", s)


@pytest.mark.parametrize(("name", "attr", "kind", "bad"), CASES,
                         ids=[f"{n}-{a}-{k}" for n, a, k, _ in CASES])
def test_a_bad_range_is_refused_with_exit_2_naming_the_attribute(name, attr, kind, bad, tmp_path):
    stage, step, spec = SPECS[name]
    code, lines = _step(stage, step, {**spec, "coding": {**spec["coding"], attr: bad}}, tmp_path)
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("shuffledp: error: --spec "), lines
    assert f"coding.{attr}" in lines[0], lines
