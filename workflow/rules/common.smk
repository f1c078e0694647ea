# Shared definitions: config validation (before any job runs), paths, seeds and the list of final targets.
# Every stage appends its final targets to FINAL_TARGETS; `rule all` in the Snakefile collects them.
import os
import sys

try:
    import shuffledp  # noqa: F401
except ImportError:  # not installed (`pip install -e .` is needed to run jobs): still parse, lint, dry-run
    sys.path.insert(0, os.path.abspath("src"))

from shuffledp.config import ConfigError, validate_config, workflow_config  # noqa: E402
from shuffledp.errors import InputError  # noqa: E402
from shuffledp.stages import content_file, data_summary, job_io, output_list, output_path  # noqa: E402

# The config the jobs see, built with Snakemake's documented interface only: the Snakefile has no
# `configfile:`, so Snakemake's global `config` holds only what the user passed (each --configfile,
# merged by Snakemake among themselves key by key, then --config). shuffledp.config.workflow_config
# reads the defaults (config/config.yaml of the working folder) itself and puts that `config` over
# them with the README's overlay rule (a collection the user names, e.g. segmented.figures, replaces
# the default's; a section is merged key by key); `config` is then replaced by the result, which the
# jobs' specs are built from. Then the one validation (schema with unknown keys refused, finite
# numbers, whole-number floats as integers, limits, every cross-key rule).
# The environment first (SHUFFLEDP_STAGE_PATH's folders, SHUFFLEDP_DEBUG, the download deadline, the
# mirror: shuffledp.environment), then the config; each problem one line, exit 2, before any job.
try:
    from shuffledp.environment import check_environment

    check_environment()
except InputError as exc:
    sys.stderr.write(f"shuffledp: {exc}\n")
    sys.exit(2)
try:
    _merged = workflow_config(config)
    config.clear()
    config.update(_merged)
    validate_config(config)  # the schema: workflow/schemas/config.schema.yaml of the package's checkout
except ConfigError as exc:
    sys.stderr.write(f"shuffledp: invalid configuration:\n{exc}\n")
    sys.exit(2)
except InputError as exc:  # a stage package of SHUFFLEDP_STAGE_PATH that does not import, ...
    sys.stderr.write(f"shuffledp: {exc}\n")
    sys.exit(2)

# Stand-ins never stick: a processed table built from a stand-in while the real files are now on this
# machine (data/raw, or the folder SHUFFLEDP_DATA_MIRROR names) is stale; its source marker is renewed so
# that it and everything built from it are rebuilt (shuffledp.datasets.availability). A folder mirror
# without a file is an error naming the variable and the file.
from shuffledp.errors import DataError  # noqa: E402
from shuffledp.stages.data import refresh_sources  # noqa: E402

try:
    STALE_STANDINS = refresh_sources(config)
except DataError as exc:
    sys.stderr.write(f"shuffledp: {exc}\n")
    sys.exit(2)

FINAL_TARGETS = []

RESULTS = config["results_dir"]

# Nothing written outside the working folder: Snakemake's benchmark and log writes follow symbolic
# links, so a link under results/ that leads out of the folder is refused before any job runs.
from shuffledp.io import check_links_inside  # noqa: E402

try:
    check_links_inside(RESULTS)
except DataError as exc:
    sys.stderr.write(f"shuffledp: {exc}\n")
    sys.exit(2)
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
JOBFILES = f"{RESULTS}/.jobs"  # each job's spec and io files, named by their content
ROOTS = {"results": RESULTS, "data": "data"}


def env_file():
    return "../../envs/shuffledp.yaml"


# ---- the file names of a job: one function of (stage, step, output, wildcards) -------------------


def stage_output(stage, step, output, wildcards=None):
    """The path of a step's output: the pattern, or one job's file when ``wildcards`` is given."""
    return output_path(stage, step, step.output(output), ROOTS, wildcards)


def stage_output_list(stage, step, output, values, wildcards=None):
    """The files of an output list (``Output.over``), by value: patterns, or one job's files."""
    return output_list(stage, step, step.output(output), ROOTS, values, wildcards)


def step_values(step, output, table):
    """The values of an output list, the same for every job of the step (a rule has one output list)."""
    found = {tuple(output.values(j.spec)) for j in table.of_step(step.name)}
    if len(found) != 1:
        raise ValueError(f"step {step.name}: output {output.name} has different {output.over} values across jobs")
    return list(found.pop())


def _job_file(folder, stage, step, suffix):
    """``<folder>/<stage>/<step>[_<wildcard>...]<suffix>``: the identity of a job as a file name."""
    return "_".join([f"{folder}/{stage.name}/{step.name}", *(f"{{{w}}}" for w in step.wildcards)]) + suffix


def logs(stage, step):
    return _job_file(LOGS, stage, step, ".log")


def benchmarks(stage, step):
    return _job_file(BENCH, stage, step, ".tsv")


def job_of(stage, step, table, wildcards):
    """The job of ``step`` with ``wildcards``: a target this config does not define (a file name that
    matches the step's pattern, e.g. results/accountants_compare/runs/general_e9.parquet with no eps0
    = 9 in the config) ends the run with one line naming it, exit 2, before any job runs."""
    try:
        return table.job(step.name, wildcards)
    except KeyError:
        wc = ", ".join(f"{k}={v}" for k, v in dict(wildcards.items()).items() if k in step.wildcards)
        sys.stderr.write(f"shuffledp: no {stage.name}/{step.name} job of this configuration has {wc or 'no wildcards'}: "
                         "the requested file is not one this config produces (`snakemake -n` lists what it builds)\n")
        sys.exit(2)


def job_inputs(stage, step, table, stages):
    """An input function: a job's named inputs (lists of paths)."""
    return lambda wildcards: job_io(stage, step, job_of(stage, step, table, wildcards), ROOTS, stages)["input"]


_JOB_FILES = {}


def job_files(stage, step, job):
    """The job's spec and io files ({"spec": path, "io": path}), written once (named by their
    content) and remembered: the params of its rule, and what pruning results/.jobs keeps."""
    key = (stage.name, step.name, tuple(sorted(job.wildcards.items())))
    if key not in _JOB_FILES:
        _JOB_FILES[key] = {
            "spec": content_file(JOBFILES, "spec", job.spec),
            "io": content_file(JOBFILES, "io", job_io(stage, step, job, ROOTS, STAGES, job_tables(STAGES))),
        }
    return _JOB_FILES[key]


def batch_files(stage, step, jobs):
    """A batch's spec and io files (shuffledp.stages.batches): ``{"batch": [...]}`` of its members'
    specs and io files, in order, written once (named by their content): a changed member is a
    changed path, so Snakemake's params trigger reruns the batch that holds it."""
    key = (stage.name, step.name, tuple(tuple(sorted(j.wildcards.items())) for j in jobs))
    if key not in _JOB_FILES:
        tables = job_tables(STAGES)
        _JOB_FILES[key] = {
            "spec": content_file(JOBFILES, "spec", {"batch": [j.spec for j in jobs]}),
            "io": content_file(JOBFILES, "io", {"batch": [job_io(stage, step, j, ROOTS, STAGES, tables) for j in jobs]}),
        }
    return _JOB_FILES[key]


def job_spec_file(stage, step, table):
    """A params function: the path of the job's spec file (written once, named by its content)."""
    return lambda wildcards: job_files(stage, step, job_of(stage, step, table, wildcards))["spec"]


_JOB_TABLES = {}


def job_tables(stages):
    """Every enabled stage's JobTable (built once): what a job's io file says each input must hold."""
    if not _JOB_TABLES:
        from shuffledp.stages.jobs import JobTable

        _JOB_TABLES.update({name: JobTable(s.jobs(config)) for name, s in stages.items() if s.enabled(config)})
    return _JOB_TABLES


def job_data(step):
    """A params function: for a step with an output in the report, the data sources its input tables
    record (real, synthetic or stand-in; shown in the report's captions); "" for the others."""
    if not any(o.report is not None for o in step.outputs):
        return ""
    return lambda wildcards, input: data_summary([str(p) for p in input])


def job_io_file(stage, step, table, stages):
    """A params function: the path of the job's io file (named inputs and outputs, the job's own
    record and the record each input table must carry)."""
    return lambda wildcards: job_files(stage, step, job_of(stage, step, table, wildcards))["io"]
