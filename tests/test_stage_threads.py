"""``Step.threads``: a step that sets it runs with its BLAS/OpenMP pools limited to that many threads
(checked with threadpoolctl inside ``shuffledp step``); a step that leaves it ``None`` changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("threadpoolctl")

STAGE = '''
from shuffledp.stages import Output, Stage, Step


def _probe(spec, inputs, outputs):
    import json
    import os

    import numpy  # noqa: F401  (BLAS)
    import sklearn.cluster  # noqa: F401  (OpenMP)
    from threadpoolctl import threadpool_info

    info = [{"api": i["user_api"], "threads": i["num_threads"]} for i in threadpool_info()]
    with open(outputs["info"], "w") as fh:
        json.dump({"pools": info, "omp": os.environ.get("OMP_NUM_THREADS")}, fh)


STAGE = Stage(name="threadprobe", title="t", section="threadprobe", jobs=lambda config: [], steps=(
    Step("one", _probe, outputs=(Output("info", "one.json"),), threads=1),
    Step("free", _probe, outputs=(Output("info", "free.json"),)),
))
'''


def _run(tmp_path, step):
    folder = tmp_path / "stages" / "threadprobe"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(STAGE)
    out = tmp_path / f"{step}.json"
    (tmp_path / "spec.json").write_text("{}")
    (tmp_path / "io.json").write_text(json.dumps({"input": {}, "output": {"info": str(out)}}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["SHUFFLEDP_STAGE_PATH"] = str(tmp_path / "stages")
    proc = subprocess.run([sys.executable, "-m", "shuffledp", "step", "threadprobe", step, "--spec",
                           str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")],
                          capture_output=True, text=True, env=env, cwd=tmp_path)  # its files: inside the working folder
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_step_threads_limits_blas_and_openmp(tmp_path):
    got = _run(tmp_path, "one")
    assert got["omp"] == "1"
    assert {p["api"] for p in got["pools"]} >= {"blas"}
    assert all(p["threads"] == 1 for p in got["pools"]), got


def test_step_without_threads_leaves_the_pools_alone(tmp_path):
    assert _run(tmp_path, "free")["omp"] is None


def test_peruser_job_runs_on_one_thread():
    from shuffledp.stages import discover

    assert discover()["peruser"].step("job").threads == 1
