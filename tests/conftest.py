"""Shared fixtures. The real raw files come from the offline mirror named by SHUFFLEDP_DATA_MIRROR
(CI sets it to ../shared/data); without it, tests that need real data skip, except on CI where
its absence is a failure."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def mirror() -> Path:
    value = os.environ.get("SHUFFLEDP_DATA_MIRROR")
    if not value:
        if os.environ.get("CI"):
            pytest.fail("CI must set SHUFFLEDP_DATA_MIRROR to the offline data mirror")
        pytest.skip("SHUFFLEDP_DATA_MIRROR is not set: no offline copy of the real raw files")
    path = Path(value)
    if not path.is_dir():
        pytest.fail(f"SHUFFLEDP_DATA_MIRROR={value} is not a folder")
    return path


def run_snakemake(*args: str, cwd: Path, check: bool = True, timeout: int = 1200) -> subprocess.CompletedProcess:
    """``snakemake --snakefile <repo>/Snakefile --directory cwd ARGS`` with this interpreter's tools on PATH."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd), *args]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


# added to the tiny configuration for the shared run: the multidimensional stage on the IPUMS stand-in
# and on Adult's categorical attributes (real when the mirror or the internet has Adult), smallest scale;
# two repetitions in one job, so that tests/test_workflow_layout.py's one-repetition-per-job run differs
TINY_MULTIDIM = {
    "datasets": ["br", "adult"], "records": 1000, "mechanisms": ["mhm", "flame"], "eps": [1.0], "reps": 2,
    "reps_per_job": 2, "bound": "bennett", "hash_family_bits": 32, "flame_np_fraction": 0.3333333333333333,
    "flame_variant": "balle", "topk": 10, "personal": {"ratios": ["2:4:4"], "reps": 2, "reps_per_job": 2},
}


# tiny sections of the three stages the tiny fixture leaves out, so that one configuration runs every stage
# (the audits: the two cheapest, few trials: the stage's jobs, table, figure and the claims' audit gate run)
TINY_SECTIONS = {
    "audits": {"trials": 2000, "loop_trials": 200, "raw_trials": 20, "include": ["krr_shuffle", "oue"]},
    "segmented": {
        "levels": [0.5, 1.0, 2.0], "accountant": "sound", "compare_paper_accountant": False,
        "accountants": ["sound"], "settings": {"S1": [0.25, 0.5, 0.25]}, "delta_factor": 0.01,
        "m_grid": {"min": 0.5, "max": 2.0, "num": 2}, "n": [300],
        "datasets": {"synth_T128_s4": {"table": "synthetic_synth_tiny", "d": 16, "s": 2}},
        "repetitions": 3, "batch_size": 3,
        "figures": {"fig2": {"datasets": ["synth_T128_s4"], "settings": ["S1"], "title": "tiny"}},
    },
    "personalized": {
        "settings": ["uniform1"], "bounds_pure": ["hps", "fv"], "bounds_approx": ["hps"],
        "delta_local_approx": 1.0e-10, "delta_central": 1.0e-5, "calibration": "analytic",
        "n_grid": [1000], "seeds": [0, 1],
        "table2": {"setting": "uniform2", "n": 1000, "seed": 0, "eps_central": [0.05],
                   "rows": [{"name": "fv", "bound": "fv"}]},
    },
}

# the per-user stage with two repetitions in one job (the tiny fixture has one)
TINY_PERUSER = {"repetitions": 2, "batch_size": 2}


def all_stages_tiny_config() -> dict:
    """tests/fixtures/config_tiny.yaml with TINY_MULTIDIM, TINY_SECTIONS and TINY_PERUSER: every
    stage, smallest scale, every stage's repetitions in one job. The configuration of the shared run."""
    cfg = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
    cfg["multidim"] = yaml.safe_load(yaml.safe_dump(TINY_MULTIDIM))
    cfg.update(yaml.safe_load(yaml.safe_dump(TINY_SECTIONS)))
    cfg["peruser"].update(TINY_PERUSER)
    return cfg


def _shared_root(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of this session sees (the session's base temp)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def tiny_workflow(tmp_path_factory) -> Path:
    """ONE run of :func:`all_stages_tiny_config` (``snakemake --cores 2``) for the whole session, also
    across pytest-xdist workers (the first to ask builds it under a lock; the others wait for it):
    every test that needs a finished tiny workflow reads it (tests/test_workflow.py, test_report.py,
    test_slurm.py, test_resume.py, test_workflow_layout.py, test_config_fuzz_run.py, the docs' report
    command). The folder holds ``config.yaml``, ``data/``, ``results/`` and ``.snakemake/``, and
    ``seconds`` (the run's wall time). Never change it: a test that runs Snakemake in it, or edits it,
    works on :func:`copy_of_tiny_workflow`."""
    root = _shared_root(tmp_path_factory)
    workdir = root / "tiny_workflow"
    with open(root / "tiny_workflow.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = root / "tiny_workflow.failed"
        if failed.exists():
            pytest.fail(f"the shared tiny run failed in another worker:\n{failed.read_text()}")
        if not (workdir / "seconds").exists():
            if workdir.exists():
                shutil.rmtree(workdir)
            workdir.mkdir()
            (workdir / "config.yaml").write_text(yaml.safe_dump(all_stages_tiny_config()))
            t0 = time.monotonic()
            try:
                run_snakemake("--configfile", str(workdir / "config.yaml"), "--cores", "2", cwd=workdir)
            except AssertionError as exc:
                failed.write_text(str(exc))
                raise
            (workdir / "seconds").write_text(f"{time.monotonic() - t0:.1f}\n")
    return workdir


# --- the README's parallel test command: pytest-xdist, --dist loadgroup --------------------------------
# Which tests share a worker: every test that reads the shared tiny run (one worker builds it once; no
# other worker sits waiting on its lock), and the tests of a module that share a module-scoped fixture
# (built once, as in a serial run). Correctness never depends on this (the tiny run is built under a
# lock, a module fixture is per process): it only saves time. pytest-xdist 3.8's own loadgroup passes
# the group in the test id, which pytest 9.2 no longer lets a plugin change (pytest-xdist issue 1386),
# so the workers write the groups to a file the controller's scheduler reads (below); where the id
# does carry the group, the scheduler uses it as pytest-xdist does.
GROUPS_ENV = "SHUFFLEDP_XDIST_GROUPS"  # the folder of the workers' group files, set by the controller
TINY_GROUP = "tiny_workflow"
# the longest units, started first, in this order (on 2 workers: the tiny run's group on one, the
# SLURM test beside it on the other): the longest first is the shortest tail
FIRST_GROUPS = (TINY_GROUP, "slurm")
_GROUPS_DIR = pytest.StashKey[str]()


def _group(item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    if mark:  # a test's own mark (e.g. one that asks for the tiny run inside the test)
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    if "tiny_workflow" in getattr(item, "fixturenames", ()):
        return TINY_GROUP
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(d.scope == "module" for chain in defs.values() for d in chain):
        return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook, which reads the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = _group(item)
        if group and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))


class _WriteGroups:
    """On a pytest-xdist worker: {test id: [group or None, slow]} to the controller's folder."""

    @pytest.hookimpl(trylast=True)  # after every hook that may change the ids
    def pytest_collection_modifyitems(self, config, items):
        import json

        folder = Path(os.environ[GROUPS_ENV])
        rows = {item.nodeid: [_group(item), item.get_closest_marker("slow") is not None] for item in items}
        tmp = folder / f"{config.workerinput['workerid']}.json.part"
        tmp.write_text(json.dumps(rows))
        tmp.replace(tmp.with_suffix(""))


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        if os.environ.get(GROUPS_ENV):  # set by a controller with --dist loadgroup only
            config.pluginmanager.register(_WriteGroups(), "shuffledp_write_groups")
    elif getattr(config.option, "dist", "no") == "loadgroup":
        import tempfile  # the controller, before it starts the workers (they inherit the environment)

        config.stash[_GROUPS_DIR] = os.environ[GROUPS_ENV] = tempfile.mkdtemp(prefix="shuffledp-xdist-groups-")


def pytest_unconfigure(config):
    folder = config.stash.get(_GROUPS_DIR, None)
    if folder:
        os.environ.pop(GROUPS_ENV, None)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: no error where pytest-xdist is missing
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup" or not os.environ.get(GROUPS_ENV):
        return None
    import json

    from xdist.scheduler import LoadGroupScheduling

    class Scheduling(LoadGroupScheduling):
        """pytest-xdist's loadgroup with the groups from the workers' files; FIRST_GROUPS first,
        then the units that hold a `slow` test (longest first is the shortest wall), then
        the rest, largest unit first as pytest-xdist orders them."""

        rows: dict | None = None
        ordered = False

        def _row(self, nodeid: str):
            if self.rows is None:
                files = sorted(Path(os.environ[GROUPS_ENV]).glob("*.json"))
                self.rows = {}
                for f in files:  # every worker collected the same tests (pytest-xdist checks)
                    self.rows.update(json.loads(f.read_text()))
            return self.rows.get(nodeid, [None, False])

        def _split_scope(self, nodeid: str) -> str:
            group = self._row(nodeid)[0]
            return group if group else super()._split_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:
                self.ordered = True
                slow = [s for s, unit in self.workqueue.items() if any(self._row(n)[1] for n in unit)]
                for scope in reversed([*FIRST_GROUPS, *(s for s in slow if s not in FIRST_GROUPS)]):
                    if scope in self.workqueue:
                        self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


def copy_of_tiny_workflow(shared: Path, dest: Path) -> Path:
    """A copy of the shared run at ``dest`` (file times kept: Snakemake finds it complete)."""
    shutil.copytree(shared, dest, symlinks=True)
    return dest
