"""Fuzzed configurations that validation accepts run to the end.

The fuzzer of tests/test_config_fuzz.py mutates the configuration of the shared tiny run of every
stage (tests/conftest.py: all_stages_tiny_config); an accepted mutation must not only pass
``snakemake -n`` but run: a config that validation lets through and a job then refuses (or crashes
on) is a check missing from the schema or a stage's check. Two examples, derandomized (the same two
in every CI run; measured 2026-11-29: `paper` added to segmented.accountants, which reruns the
segmented accountant job, one run job and the jobs that read them, 7 jobs; and a mutation that changes
no job's spec, nothing to run). Each
runs in a copy of the shared run: every job whose spec the mutation changed runs again (Snakemake
reruns a job whose spec file changed, and every job that reads its outputs), and the jobs the
mutation left alone are the shared run's, which ran them with the very same spec and inputs (a job
reads nothing of the configuration but its spec, so running one again could only repeat the shared
run's success: the tables are not deleted to force that).
Mutations that would make the run larger than the tiny one (a number above the tiny config's own)
are set aside: this test is about accepted values being runnable, the limits are
tests/test_config_classes.py's.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import pytest
import yaml
from conftest import all_stages_tiny_config, copy_of_tiny_workflow
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_config_fuzz import _check, mutation, run_snakemake

REPO = Path(__file__).resolve().parents[1]
BASE = all_stages_tiny_config()


def _leaves(node, prefix=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*prefix, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*prefix, i))
    else:
        yield prefix, node


def _no_larger(cfg) -> bool:
    """Every number the mutation changed is at most the tiny config's (in size), and no list grew."""
    old = dict(_leaves(BASE))
    for path, value in _leaves(cfg):
        before = old.get(path)
        if isinstance(value, numbers.Number) and not isinstance(value, bool):
            if not isinstance(before, numbers.Number) or abs(value) > abs(before):
                return False
    return sum(1 for _ in _leaves(cfg)) <= sum(1 for _ in _leaves(BASE))


@pytest.mark.slow
@settings(max_examples=2, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
@given(st.data())
def test_an_accepted_fuzzed_config_runs_to_the_end(tmp_path_factory, tiny_workflow, data):
    assert yaml.safe_load((tiny_workflow / "config.yaml").read_text()) == BASE
    cfg = data.draw(mutation(BASE))
    assume(cfg != BASE and _no_larger(cfg))
    assume(_check(cfg) is None)  # accepted by the one validation (the refusals are test_config_fuzz's)
    work = copy_of_tiny_workflow(tiny_workflow, tmp_path_factory.mktemp("fuzz_run") / "run")
    proc = run_snakemake(work, cfg, "--cores", "2", timeout=1200)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"accepted config failed to run:\n{yaml.safe_dump(cfg)[:3000]}\n{out[-4000:]}"
    assert "Traceback" not in out, out[-3000:]
    assert "steps (100%) done" in out or "Nothing to be done" in out, out[-3000:]
    assert list((work / "results" / "tables").glob("*.parquet")), "the run left no table"
