"""Stages: one paper (or one shared part, such as the data) of the workflow, found by discovery.

A stage is a package ``shuffledp/stages/<name>/`` whose ``__init__`` defines ``STAGE``, a
:class:`Stage`: its config section and check, ``jobs(config)`` (:mod:`shuffledp.stages.jobs`), and
its steps. A :class:`Step` declares its outputs by name (path template, kind, report caption,
whether it is a final target), the spec keys it reads, its wildcards and resources, and the
function that runs one job: ``run(spec, inputs, outputs)`` with ``inputs`` a mapping from input
name to a list of paths and ``outputs`` from output name to a path (to ``{value: path}`` for an
output list, :attr:`Output.over`).

The workflow (``workflow/rules/stages.smk``) makes one rule per step of every discovered stage, all
of one shape: ``shuffledp step <stage> <step> --spec FILE --io FILE``. Nothing lists the stages by
hand: :func:`discover` imports every subpackage of this package, then every stage package in the
folders named by the environment variable ``SHUFFLEDP_STAGE_PATH`` (``os.pathsep``-separated; a
stage outside the package, e.g. a test's).

Stage packages import nothing heavy at module level: the workflow imports them while parsing.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import json
import math
import os
import pkgutil
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path

from shuffledp.environment import STAGE_PATH_ENV
from shuffledp.errors import UsageError
from shuffledp.stages.jobs import Job, JobTable, Ref, canonical

__all__ = ["Job", "JobTable", "Output", "Ref", "Report", "Stage", "Step", "artifact_papers", "discover", "get",
           "run_step"]

ROOTS = ("results", "data")


@dataclass(frozen=True)
class Report:
    """How an output appears in ``snakemake --report``: its caption (an ``.rst`` file, relative to
    the stage's package folder) and its subcategory (the category is the stage's title)."""

    caption: str
    subcategory: str


@dataclass(frozen=True)
class Output:
    """One named output of a step. ``path`` is a ``str.format`` template over the step's wildcards,
    relative to the ``root`` folder (``results``: the config's ``results_dir``; ``data``)."""

    name: str
    path: str
    report: Report | None = None
    final: bool = False
    root: str = "results"
    directory: bool = False  # a folder (Snakemake's directory()), e.g. a raw download
    # an output list (one file per value): ``over`` names a placeholder of ``path`` that is no
    # wildcard, ``values(spec)`` its values for one job (the same for every job of the step). In the
    # io file the output is ``{value: path}``; a Ref names one file by adding ``over`` to its wildcards.
    # With a ``report``, every file of the list is in the report, its caption rendered with the Jinja
    # variable named ``over`` set to the file's value and ``{over}`` in the subcategory replaced by it
    # (:func:`list_caption`).
    over: str | None = None
    values: Callable[[Mapping], Sequence[str]] | None = None
    # an output list whose files are each in the report with a flag of their own, read from the job's
    # spec: ``job_report(spec, value)`` gives (caption file, category, subcategory) of the file of
    # ``value`` (the report stage's pages, each flagged like the table it renders). The workflow then
    # makes one rule per job of the step, its files named outright.
    job_report: Callable[[Mapping, str], tuple[str, str, str]] | None = None

    def __post_init__(self):
        if self.root not in ROOTS:
            raise ValueError(f"output {self.name}: root must be one of {ROOTS}")
        if self.job_report is not None and self.over is None:
            raise ValueError(f"output {self.name}: job_report flags the files of an output list (over)")
        if (self.over is None) != (self.values is None):
            raise ValueError(f"output {self.name}: over and values go together")
        if self.over is not None and f"{{{self.over}}}" not in self.path:
            raise ValueError(f"output {self.name}: {{{self.over}}} must be in its path")


@dataclass(frozen=True)
class Step:
    """One rule: ``run(spec, inputs, outputs)`` computes one job.

    ``spec``: the name of the step's typed spec, a :class:`shuffledp.stages.specs.Spec` in the
    stage package's ``specs`` module (imported only when a job runs): ``shuffledp step`` validates
    every job's spec against it before ``run`` (:func:`spec_model`). A step without one (a stage
    not yet typed) declares ``spec_keys`` (the keys every job's spec holds) and ``optional_keys``
    (keys some jobs' specs hold): a spec with a key outside both, or lacking one of ``spec_keys``,
    is refused before ``run``.
    ``inputs``: the input names its jobs fill. ``wildcards``: name -> regular expression, in the
    order they appear in log and benchmark file names. ``mem_mb``/``runtime`` (minutes): the
    resources of one job (the largest benchmark of the paper scale with ~4x headroom). ``local``: the
    rule runs on the submitting host, never on a cluster node (e.g. a job that may download).
    ``threads``: ``None`` (the default) leaves the rule's threads and the job's BLAS/OpenMP pools
    alone; a number sets the rule's ``threads`` and limits the job's BLAS/OpenMP pools to it
    (``OMP_NUM_THREADS`` before the step's libraries load; :func:`limit_threads`). ``priority``:
    Snakemake's rule priority; a long job that nothing waits on gets a higher one, so that it starts
    first instead of running alone at the end of a run on few cores. ``required_inputs``: inputs that
    hold at least one file in every job (an io file with none is refused before ``run``).
    ``summary_input``: the name of
    an input whose files are the processed data tables the end of every run lists, real or stand-in,
    with checksums (the data stage's ``datasets_table``; the step has one job).
    """

    name: str
    run: Callable[[Mapping, Mapping[str, list[str]], Mapping[str, str]], object]
    outputs: tuple[Output, ...]
    spec: str | None = None  # the class name of its typed spec in the stage's specs module
    spec_keys: frozenset[str] = frozenset()
    optional_keys: frozenset[str] = frozenset()
    inputs: tuple[str, ...] = ()
    wildcards: Mapping[str, str] = field(default_factory=dict)
    mem_mb: int = 1000
    runtime: int = 10
    local: bool = False  # runs on the submitting machine (downloads: cluster nodes often have no internet)
    threads: int | None = None  # None: the rule's default (1); a number also limits the job's BLAS/OpenMP pools
    priority: int = 0
    summary_input: str | None = None
    required_inputs: frozenset[str] = frozenset()  # inputs every job holds at least one file of

    def __post_init__(self):
        if self.summary_input is not None and self.summary_input not in self.inputs:
            raise ValueError(f"step {self.name}: summary_input {self.summary_input!r} is not one of its inputs")
        if not set(self.required_inputs) <= set(self.inputs):
            raise ValueError(f"step {self.name}: required_inputs {sorted(self.required_inputs)} are not all inputs")

    @property
    def rule_per_job(self) -> bool:
        """One rule per job: an output's files each carry a report flag of their own (Output.job_report)."""
        return any(o.job_report is not None for o in self.outputs)

    def output(self, name: str) -> Output:
        for out in self.outputs:
            if out.name == name:
                return out
        raise KeyError(f"step {self.name} has no output {name!r}")


@dataclass(frozen=True)
class Stage:
    """A paper (or shared part) of the workflow.

    ``section``: the config key whose presence enables the stage (``None``: always enabled).
    ``check(config)``: semantic checks beyond the schema, raising ``ConfigError`` naming the key.
    ``jobs(config)``: every job of the stage. ``title``: the report category. ``claims``: its
    claims tables, each ``"<step>.<output>"`` (a Parquet output with the claims columns).
    ``schema``: the JSON schema of ``section``, for a stage that declares it in code (a test's).
    ``config_schema``: the config keys the stage owns, each with its JSON schema (for a discovered
    stage, read when first asked: the stage package's ``schema.yaml``, else ``{section: schema}``);
    the workflow's config schema is ``workflow/schemas/config.schema.yaml`` (the top-level keys) with
    every stage's ``config_schema`` (:func:`shuffledp.config.load_schema`).
    """

    name: str
    title: str
    steps: tuple[Step, ...]
    jobs: Callable[[Mapping], list[Job]]
    check: Callable[[Mapping], None] | None = None
    section: str | None = None
    claims: tuple[str, ...] = ()
    schema: Mapping | None = None
    folder: Path | None = None  # the stage package's folder (set by discover)

    @functools.cached_property
    def config_schema(self) -> Mapping | None:
        """Config key -> JSON schema: read when first asked (the config's validation asks; a job
        never does, so it does not parse every stage's schema.yaml)."""
        return None if self.folder is None else _config_schema(self, self.folder)

    def enabled(self, config: Mapping) -> bool:
        return self.section is None or self.section in config

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(f"stage {self.name} has no step {name!r}")

    def caption(self, report: Report) -> str:
        return str((self.folder or Path(".")) / report.caption)

    def claims_outputs(self) -> list[tuple[Step, Output]]:
        """The (step, output) of each claims table."""
        pairs = []
        for ref in self.claims:
            step_name, _, out_name = ref.partition(".")
            step = self.step(step_name)
            pairs.append((step, step.output(out_name)))
        return pairs


# ------------------------------------------------------------------------------------------- discovery


def _load_package(folder: Path) -> object:
    name = f"shuffledp_stage_{folder.name}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


SCHEMA_FILE = "schema.yaml"


def _config_schema(stage: Stage, folder: Path) -> dict | None:
    """The config keys a stage owns with their JSON schemas: its package's ``schema.yaml`` (a mapping
    of top-level config keys, e.g. ``segmented:``, to their schemas), else its ``schema`` under its
    ``section``."""
    path = folder / SCHEMA_FILE
    if path.is_file():
        import yaml

        # libyaml's loader when present: a stage's schema is read at every workflow parse
        found = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
            raise ValueError(f"{path}: must map config keys to their JSON schemas")
        if stage.section is not None and stage.section not in found:
            raise ValueError(f"{path}: declares {sorted(found)}, not the stage's section {stage.section!r}")
        return found
    if stage.schema is not None and stage.section:
        return {stage.section: dict(stage.schema)}
    return None


def _with_folder(stage: Stage, folder: Path) -> Stage:
    if not isinstance(stage, Stage):
        raise TypeError(f"{folder}: STAGE must be a shuffledp.stages.Stage")
    if stage.name != folder.name:
        raise ValueError(f"{folder}: STAGE.name {stage.name!r} differs from its package name")
    kept = {f.name: getattr(stage, f.name) for f in fields(Stage)}  # not a config_schema read already
    return Stage(**{**kept, "folder": folder})


@functools.cache
def _discover(extra: str) -> dict[str, Stage]:
    found: dict[str, Stage] = {}
    here = Path(__file__).resolve().parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if info.ispkg and not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            found[info.name] = _with_folder(module.STAGE, here / info.name)
    for root in (Path(p) for p in extra.split(os.pathsep) if p):
        if not root.is_dir():
            raise UsageError(f"environment variable {STAGE_PATH_ENV}: {root}: "
                             + ("not a folder" if root.exists() else "no such folder"))
        for folder in sorted(p for p in root.iterdir() if (p / "__init__.py").is_file()):
            if folder.name in found:
                raise UsageError(f"environment variable {STAGE_PATH_ENV}: {folder}: a stage named {folder.name!r} "
                                 "exists already")
            found[folder.name] = _with_folder(_load_external(folder).STAGE, folder.resolve())
    return found


def _load_external(folder: Path):
    """A stage package of ``SHUFFLEDP_STAGE_PATH``: a package that does not import, or has no
    ``STAGE``, is one line naming its file (the user's code, not a bug of shuffledp)."""
    try:
        module = _load_package(folder)
    except SyntaxError as exc:
        sys.modules.pop(f"shuffledp_stage_{folder.name}", None)
        raise UsageError(f"environment variable {STAGE_PATH_ENV}: {exc.filename or folder}:{exc.lineno}: "
                         f"syntax error: {exc.msg}") from None
    except Exception as exc:  # its own code failed while importing: name the package and what failed
        sys.modules.pop(f"shuffledp_stage_{folder.name}", None)
        raise UsageError(f"environment variable {STAGE_PATH_ENV}: stage package {folder} does not import "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
    if not isinstance(getattr(module, "STAGE", None), Stage):
        raise UsageError(f"environment variable {STAGE_PATH_ENV}: {folder}/__init__.py: defines no STAGE "
                         "(a shuffledp.stages.Stage)")
    return module


def discover() -> dict[str, Stage]:
    """Every stage, by name: this package's subpackages, then those under ``SHUFFLEDP_STAGE_PATH``."""
    return dict(_discover(os.environ.get(STAGE_PATH_ENV, "")))


def get(name: str) -> Stage:
    stages = discover()
    if name not in stages:
        raise UsageError(f"unknown stage {name!r} (one of {', '.join(sorted(stages))})")
    return stages[name]


def artifact_papers() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Every stage with a claims table: name -> (title, the claims table's file stem, the benchmark
    folders of its jobs), for the artifact guide's generated tables (:mod:`shuffledp.claims.artifact`)."""
    out = {}
    for stage in discover().values():
        pairs = stage.claims_outputs()
        if pairs:
            out[stage.name] = (stage.title, Path(pairs[0][1].path).stem, (stage.name,))
    return out


# ------------------------------------------------------------------------------------ files of a job


def output_path(stage: Stage, step: Step, output: Output, roots: Mapping[str, str],
                wildcards: Mapping[str, str] | None = None) -> str:
    """The path of ``output``: the pattern (``wildcards`` None) or one job's file."""
    path = f"{roots[output.root]}/{output.path}"
    return path if wildcards is None else path.format(**wildcards)


def output_list(stage: Stage, step: Step, output: Output, roots: Mapping[str, str], values: Sequence[str],
                wildcards: Mapping[str, str] | None = None) -> dict[str, str]:
    """The files of an output list (``output.over``), by value: patterns (``wildcards`` None) or one job's."""
    return {v: output_path(stage, step, output, roots, None if wildcards is None else {**wildcards, output.over: v})
            .replace(f"{{{output.over}}}", v) for v in values}


def ref_path(ref: Ref | str, stage: Stage, roots: Mapping[str, str], stages: Mapping[str, Stage]) -> str:
    """The path a job input names: a fixed path as is, a :class:`Ref` through its step's template."""
    if isinstance(ref, str):
        return ref
    owner = stages[ref.stage] if ref.stage else stage
    step = owner.step(ref.step)
    output = step.output(ref.output)
    if output.over is not None and output.over not in ref.wildcards:
        raise ValueError(f"a Ref to the output list {ref.step}.{ref.output} names one file: give {output.over}")
    return output_path(owner, step, output, roots, ref.wildcards)


def list_caption(stage: Stage, report: Report, over: str, value: str, folder: str | os.PathLike) -> tuple[str, str]:
    """(caption file, subcategory) of one file of a reported output list (``Output.over``): the
    stage's caption with ``{% set <over> = "<value>" -%}`` before it, written (unless there) to
    ``<folder>/caption-<sha256>.rst`` (a file named by its content), and the subcategory with
    ``{<over>}`` replaced by ``value``."""
    from shuffledp.io import write_text

    text = f"{{% set {over} = {json.dumps(str(value))} -%}}\n" + Path(stage.caption(report)).read_text(encoding="utf-8")
    path = Path(folder) / f"caption-{hashlib.sha256(text.encode()).hexdigest()[:32]}.rst"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        # no fsync: a job file is read back and rewritten here at every parse, before any job reads it
        write_text(path, text, durable=False)
    return str(path), report.subcategory.replace(f"{{{over}}}", str(value))


def spec_fingerprint(spec: Mapping) -> str:
    """The fingerprint of a job's spec: the SHA-256 of its canonical JSON (as its spec file is named)."""
    return hashlib.sha256(canonical(spec).encode()).hexdigest()[:32]


def data_summary(paths: Sequence[str]) -> str:
    """One line naming the data sources recorded in the job records of the Parquet tables ``paths``
    (unreadable or missing files are skipped): each dataset as real, synthetic or stand-in, e.g.
    ``real: msnbc; synthetic: synth_T128_s4; stand-in: ipums_br``. Report captions show it (the
    ``data`` param of every rule), so a figure says on what data this run built it."""
    kinds: dict[str, str] = {}
    rank = {"real": 0, "synthetic": 1, "stand-in": 2}
    for p in paths:
        if not str(p).endswith(".parquet") or not os.path.isfile(p):
            continue
        for name, kind in _recorded_sources(p):
            # one record saying stand-in (or synthetic) decides: never reported as more real than it is
            if rank[kind] > rank.get(kinds.get(name, "real"), 0) or name not in kinds:
                kinds[name] = kind
    if not kinds:
        return "no recorded data source (a computation, or inputs not built yet)"
    return "; ".join(f"{k}: {', '.join(sorted(n for n, v in kinds.items() if v == k))}"
                     for k in ("real", "synthetic", "stand-in") if k in kinds.values())


# (path, size, mtime) -> the (dataset, kind) pairs of its job record: Snakemake evaluates a rule's
# params (``data``) for every job while it builds the DAG and again when the job runs, each time
# reading the Parquet footers of every input; a rewritten table is a new key and is read again
_SOURCES: dict[tuple[str, int, int], tuple[tuple[str, str], ...]] = {}


def _recorded_sources(path: str) -> tuple[tuple[str, str], ...]:
    """The (dataset, real/synthetic/stand-in) pairs of the job record of the table ``path``, in
    the record's order (none for a file without a readable record)."""
    from shuffledp.io import file_version, read_job_record

    try:
        key = file_version(path)
    except OSError:
        return ()
    if key not in _SOURCES:
        try:
            record = read_job_record(path) or {}
        except ValueError:
            record = {}
        found = []
        for src in record.get("sources", []):
            if not isinstance(src, Mapping) or "dataset" not in src:
                continue
            inner = src.get("source")
            inner = inner.get("source") if isinstance(inner, Mapping) else inner
            found.append((str(src["dataset"]), "stand-in" if src.get("standin") or inner in ("standin", "stand-in")
                          else "synthetic" if inner == "synthetic" else "real"))
        _SOURCES[key] = tuple(found)
    return _SOURCES[key]


def job_record(stage: str, step: str, wildcards: Mapping, spec: Mapping) -> dict:
    """What a table written by a job says about it (:mod:`shuffledp.io`, "job record")."""
    return {"stage": stage, "step": step, "wildcards": {str(k): str(v) for k, v in sorted(wildcards.items())},
            "spec": spec_fingerprint(spec)}


def _expected(ref: Ref | str, stage: Stage, tables: Mapping) -> dict | None:
    """The job record the input ``ref`` must carry (None: a fixed path, or a producer unknown here)."""
    if isinstance(ref, str):
        return None
    owner = ref.stage or stage.name
    table = tables.get(owner)
    if table is None:
        return None
    producer = table.job(ref.step, ref.wildcards)
    return {**job_record(owner, ref.step, producer.wildcards, producer.spec), "output": ref.output}


def job_io(stage: Stage, step: Step, job: Job, roots: Mapping[str, str], stages: Mapping[str, Stage],
           tables: Mapping | None = None) -> dict:
    """``{"input": {name: [paths]}, "output": {name: path}}`` of one job (an output list: ``{value: path}``).

    With ``tables`` (stage name -> :class:`JobTable` of every enabled stage) it also holds ``"job"``,
    the record this job writes into its tables, and ``"expect"``: for each input the record its
    producer wrote (``None`` for a fixed path), which ``shuffledp step`` checks before it runs.
    """
    io = {
        "input": {name: [ref_path(r, stage, roots, stages) for r in job.inputs.get(name, [])] for name in step.inputs},
        "output": {o.name: output_path(stage, step, o, roots, job.wildcards) if o.over is None
                   else output_list(stage, step, o, roots, o.values(job.spec), job.wildcards) for o in step.outputs},
    }
    if tables is not None:
        io["job"] = job_record(stage.name, step.name, job.wildcards, job.spec)
        io["expect"] = {name: [_expected(r, stage, tables) for r in job.inputs.get(name, [])] for name in step.inputs}
    return io


def content_file(folder: str | os.PathLike, kind: str, obj: Mapping) -> str:
    """Write ``obj`` as canonical JSON to ``<folder>/<kind>-<sha256>.json`` (unless there) and
    return that path: a file named by its content, so a changed spec is a changed path (which
    Snakemake's params trigger sees) and no size limit of a command line applies."""
    from shuffledp.io import write_text

    text = canonical(obj)
    path = Path(folder) / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        # no fsync: a job file is read back and rewritten here at every parse, before any job reads it
        write_text(path, text, durable=False)
    return str(path)


# ------------------------------------------------------------------------------------------- batches

BATCH_KEY = "batch"  # a batch's spec file is {"batch": [member specs]}, its io file {"batch": [member ios]}


def rule_name(stage: Stage, step: Step) -> str:
    """``<stage>_<step>``: the name of a step's rule, and its key under ``workflow.batches``."""
    return f"{stage.name}_{step.name}"


def batches(stage: Stage, step: Step, jobs: Sequence[Job], config: Mapping) -> list[list[Job]] | None:
    """The workflow jobs the jobs of ``step`` run in, when the config batches the step
    (``workflow.batches.<stage>_<step>: k``, unless ``workflow.batching`` is false): the jobs sorted
    by their wildcard values (as text, in the step's order of wildcards), cut into ``k`` consecutive
    batches whose sizes differ by at most one.
    ``None``: one workflow job per job (the step is not named, or ``k`` is at least the number of its
    jobs). The batches depend on the config only (the job list's order does not matter); each member
    keeps its own spec, seed, file names and job record, so its tables do not depend on batching."""
    layout = config.get("workflow") or {}
    if not layout.get("batching", True):
        return None
    want = (layout.get("batches") or {}).get(rule_name(stage, step))
    jobs = list(jobs)
    if not want or int(want) >= len(jobs):
        return None
    from shuffledp.stages.jobs import _key

    # by the wildcards in the step's order (neighbours share the leading ones: a method, a dataset),
    # then the whole identity: a total order fixed by the config
    members = sorted(jobs, key=lambda j: (tuple(str(j.wildcards.get(w, "")) for w in step.wildcards),
                                          _key(j.step, j.wildcards)))
    size, extra = divmod(len(members), int(want))
    out, start = [], 0
    for b in range(int(want)):
        end = start + size + (1 if b < extra else 0)
        out.append(members[start:end])
        start = end
    return out


def batch_label(index: int, count: int) -> str:
    """The identity of batch ``index`` (0-based) of ``count`` in its log, benchmark and rule names."""
    return f"batch{index + 1}of{count}"


def check_batches(config: Mapping, stages: Mapping[str, Stage] | Sequence[Stage]) -> None:
    """Each key of ``workflow.batches`` names the rule of a step of a discovered stage (``<stage>_<step>``);
    one that names none is refused naming the key."""
    from shuffledp.errors import ConfigError

    wanted = ((config.get("workflow") or {}).get("batches") or {})
    stages = list(stages.values()) if isinstance(stages, Mapping) else list(stages)
    known = {rule_name(st, sp) for st in stages for sp in st.steps}
    for key in wanted:
        if key not in known:
            raise ConfigError(f"config key workflow.batches.{key}: no step has that rule name (<stage>_<step>; "
                              f"`snakemake -n` lists the rules)")


def refuse_self_reading_batch(stage: Stage, step: Step, path: str) -> None:
    """A batch one of whose members reads another member's output cannot run (its members are
    checked, inputs included, before the first runs): refused while the workflow is parsed."""
    raise ValueError(f"workflow.batches.{rule_name(stage, step)}: a member reads another member's output "
                     f"({path}); this step's jobs cannot share a batch")


JOB_FILE_NAME = re.compile(r"(spec|io)-[0-9a-f]{32}\.json")  # what content_file names


def prune_job_files(folder: str | os.PathLike, keep, base: str | os.PathLike | None = None,
                    locks: str | os.PathLike | None = ".snakemake/locks") -> int | None:
    """Remove the job files under ``folder`` (``<results>/.jobs``) that are not in ``keep`` (the
    paths :func:`content_file` gave for every job of the current config): a dry run or a changed
    config leaves files that no job reads. Returns how many were removed, or None when nothing was
    pruned because it would not be safe:

    - ``folder`` is a symbolic link, or does not resolve inside ``base`` (default: the working
      folder): nothing outside it is ever removed;
    - another Snakemake run holds a lock on the working folder (``locks`` not empty): its jobs may
      read files of another config.

    Only regular files directly in ``folder`` whose names :func:`content_file` makes are removed
    (never a folder, a link, or a file of another name), and the temporaries of a writer of this
    host that is no longer running (:func:`shuffledp.io.sweep_temporaries`)."""
    base = Path(base or os.getcwd()).resolve()
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return None
    real = folder.resolve()
    if real == base or base not in real.parents:
        return None
    if locks is not None:
        lock_dir = Path(base) / locks if not Path(locks).is_absolute() else Path(locks)
        if lock_dir.is_dir() and any(lock_dir.iterdir()):
            return None
    keep = {os.path.basename(str(p)) for p in keep}
    from shuffledp.io import sweep_temporaries

    removed = sweep_temporaries(real)  # a killed parse's temporaries (content_file does not sweep)
    with os.scandir(real) as entries:
        for entry in entries:
            if entry.name in keep or not JOB_FILE_NAME.fullmatch(entry.name):
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            try:
                os.unlink(entry.path)
                removed += 1
            except FileNotFoundError:  # removed meanwhile
                pass
    return removed


# ---------------------------------------------------------------------------------------- run a job


def _read_json(path: str, flag: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{flag} {path}: not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise UsageError(f"{flag} {path}: must hold a JSON object")
    return obj


def _non_finite(obj, path: str = "") -> str:
    if isinstance(obj, float) and not math.isfinite(obj):
        return path or "value"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        found = _non_finite(value, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return ""


def spec_model(stage: Stage, step: Step):
    """The typed spec of ``step`` (a :class:`shuffledp.stages.specs.Spec` subclass), or None for a
    step that declares none: the class ``step.spec`` of the stage package's ``specs`` module."""
    if step.spec is None:
        return None
    return _spec_model(stage.name, None if stage.folder is None else str(stage.folder), step.spec)


@functools.lru_cache(maxsize=256)
def _spec_model(name: str, folder: str | None, spec: str):
    """The model class, looked up once per (stage, folder, class name): the config check and the
    workflow ask for it once per job."""
    package = (f"{__name__}.{name}" if folder is None
               or Path(folder).resolve().parent == Path(__file__).resolve().parent else f"shuffledp_stage_{name}")
    module = importlib.import_module(f"{package}.specs")
    return getattr(module, spec)


def check_spec(step: Step, spec: Mapping, where: str = "--spec", stage: Stage | None = None) -> None:
    """Refuse a spec that is not the step's: with a typed spec (``stage`` given and ``step.spec``
    set), any value its model refuses, with one line naming the key; else a spec that lacks a key
    the step reads or holds one it does not. A non-finite number is refused either way."""
    bad = _non_finite(spec)
    if bad:
        raise UsageError(f"{where}: {bad} must be a finite number")
    model = spec_model(stage, step) if stage is not None else None
    if model is not None:
        from shuffledp.stages.specs import validate_spec

        validate_spec(model, spec, where)
        return
    missing = sorted(step.spec_keys - set(spec))
    if missing:
        raise UsageError(f"{where}: missing key(s) {', '.join(missing)}")
    unknown = sorted(set(spec) - step.spec_keys - step.optional_keys)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} for step {step.name}")


def _check_io(step: Step, spec: Mapping, io: Mapping, where: str) -> tuple[dict, dict]:
    inputs, outputs = io.get("input"), io.get("output")
    if not isinstance(inputs, dict) or not isinstance(outputs, dict):
        raise UsageError(f"{where}: must hold the objects 'input' and 'output'")
    extra = sorted(set(io) - {"input", "output", "job", "expect"})
    if extra:
        raise UsageError(f"{where}: unknown key(s) {', '.join(extra)} (valid: input, output, job, expect)")
    if set(inputs) != set(step.inputs):
        raise UsageError(f"{where}: inputs {sorted(inputs)} differ from step {step.name}'s {sorted(step.inputs)}")
    names = {o.name for o in step.outputs}
    if set(outputs) != names:
        raise UsageError(f"{where}: outputs {sorted(outputs)} differ from step {step.name}'s {sorted(names)}")
    for name, paths in inputs.items():
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise UsageError(f"{where}: input {name} must be a list of paths")
        if not paths and name in step.required_inputs:
            raise UsageError(f"{where}: input {name} holds no file; step {step.name} reads at least one")
        for p in paths:
            _check_inside(f"input {name}", p, where)
            _check_input(name, p)
    for o in step.outputs:
        paths = outputs[o.name]
        if o.over is not None:  # an output list: {value: path}, one per value of the spec
            if not isinstance(paths, dict) or not paths:
                raise UsageError(f"{where}: output {o.name} must map each {o.over} to a path")
            if set(paths) != set(o.values(spec)):
                raise UsageError(f"{where}: output {o.name}: {sorted(paths)} differ from the spec's "
                                 f"{o.over} values {sorted(o.values(spec))}")
            paths = list(paths.values())
        else:
            paths = [paths]
        if not all(isinstance(p, str) and p for p in paths):
            raise UsageError(f"{where}: every output must be a path")
        for p in paths:
            _check_inside(f"output {o.name}", p, where)
    return inputs, outputs


def _check_inside(key: str, path: str, where: str) -> None:
    """A path of an io file resolves inside the working folder (symbolic links followed, a dangling
    one too): the workflow's own io files never leave it, a hand-written one is refused in one line."""
    here = Path.cwd().resolve()
    try:
        real = Path(path).resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a loop of links
        raise UsageError(f"{where}: {key}: {path!r} is not a usable path ({exc})") from None
    if real != here and here not in real.parents:
        shown = "" if str(real) == path else f" (resolves to {real})"
        raise UsageError(f"{where}: {key}: {path}{shown} is outside the working folder {here}; a job reads and "
                         "writes only inside it (run it from the folder that holds its files)")


def _check_input(name: str, path: str) -> None:
    """An input exists; a Parquet input is a readable Parquet file (its footer parses)."""
    if not os.path.exists(path):
        raise UsageError(f"input {name}: {path}: no such file")
    if path.endswith(".parquet"):
        if not os.path.isfile(path):
            raise UsageError(f"input {name}: {path}: not a regular file")
        import pyarrow as pa
        import pyarrow.parquet as pq

        from shuffledp.errors import DataError

        try:
            pq.read_metadata(path)
        except (pa.ArrowException, OSError) as exc:
            raise DataError(f"input {name}: {path}: not a readable Parquet file ({exc}); "
                            f"{DELETE_HINT.format(path=path)}") from None


# Snakemake rebuilds a missing file, never a damaged one it considers complete
DELETE_HINT = "delete it and rerun (rm {path}; Snakemake rebuilds a missing file, not a damaged one)"

THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def limit_threads(threads: int) -> None:
    """Limit this process's BLAS and OpenMP thread pools to ``threads``: the environment variables
    the runtimes read when they load (numpy's BLAS, scikit-learn's OpenMP), and, for any already
    loaded, threadpoolctl (when installed)."""
    for name in THREAD_ENV:
        os.environ[name] = str(int(threads))
    if "numpy" in sys.modules:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            return
        threadpool_limits(limits=int(threads))


def _is_batch(obj: Mapping) -> bool:
    return set(obj) == {BATCH_KEY} and isinstance(obj[BATCH_KEY], list)


def _members(spec: dict, spec_path: str, io_path: str) -> list[tuple[dict, dict | None, str, str]]:
    """(spec, io or None (read later), where of the spec, where of the io) of each job the files hold:
    one for a job's files, each member in order for a batch's (:func:`batches`)."""
    if not _is_batch(spec):
        return [(spec, None, f"--spec {spec_path}", f"--io {io_path}")]
    io = _read_json(io_path, "--io")
    specs, ios = spec[BATCH_KEY], io.get(BATCH_KEY)
    if not _is_batch(io) or len(ios) != len(specs) or not specs:
        raise UsageError(f"--io {io_path}: a batch's io file must hold {{\"{BATCH_KEY}\": [...]}} with one io per "
                         f"member of its spec file --spec {spec_path} ({len(specs)})")
    out = []
    for i, (s, o) in enumerate(zip(specs, ios, strict=True)):
        if not isinstance(s, dict) or not isinstance(o, dict):
            raise UsageError(f"--spec {spec_path}: batch member {i + 1}: spec and io must be JSON objects")
        out.append((s, o, f"--spec {spec_path} (batch member {i + 1})", f"--io {io_path} (batch member {i + 1})"))
    return out


def run_step(stage_name: str, step_name: str, spec_path: str, io_path: str) -> object:
    """Run one workflow job: read and check its spec and its files, then call the step's ``run``.

    A batch (spec file ``{"batch": [specs]}``, io file ``{"batch": [ios]}``: :func:`batches`) runs
    its members one after another in this process, each exactly as it would run alone (its own spec,
    files, job record and output record); every member is checked before the first one runs."""
    stage = get(stage_name)
    try:
        step = stage.step(step_name)
    except KeyError:
        raise UsageError(f"stage {stage_name} has no step {step_name!r} "
                         f"(one of {', '.join(s.name for s in stage.steps)})") from None
    spec = _read_json(spec_path, "--spec")
    members = []
    for m_spec, m_io, where_spec, where_io in _members(spec, spec_path, io_path):
        check_spec(step, m_spec, where_spec, stage)
        io = _read_json(io_path, "--io") if m_io is None else m_io
        inputs, outputs = _check_io(step, m_spec, io, where_io)
        record = _own_record(stage, step, m_spec, io, where_io)
        record["sources"] = check_input_records(inputs, io.get("expect"), where_io)
        inputs = {name: InputFiles(name, paths, where_io) for name, paths in inputs.items()}
        members.append((m_spec, inputs, outputs, record))
    if step.threads is not None:
        limit_threads(step.threads)
    from shuffledp.io import job_record_context, write_output_record

    result = None
    for i, (m_spec, inputs, outputs, record) in enumerate(members):
        if len(members) > 1:
            wc = ", ".join(f"{k}={v}" for k, v in record["wildcards"].items())
            print(f"shuffledp: batch member {i + 1} of {len(members)}: {stage.name}/{step.name} [{wc}]",
                  file=sys.stderr, flush=True)
        with job_record_context(record, outputs):
            result = step.run(m_spec, inputs, outputs)
        # the content hash of every output as this job wrote it (shuffledp verify checks them later)
        write_output_record(io_path, record, outputs)
    return result


class InputFiles(list):
    """The files of one named input, as a step reads them: asking for a file the io file does not
    hold (``inputs["table"][0]`` of an empty list, a hand-written io file) is one line naming the
    input, exit 2, not an IndexError."""

    def __init__(self, name: str, paths, where: str):
        super().__init__(paths)
        self.name, self.where = name, where

    def __getitem__(self, index):
        try:
            return super().__getitem__(index)
        except IndexError:
            raise UsageError(f"{self.where}: input {self.name} holds {len(self)} file(s); step reads file "
                             f"{index + 1 if isinstance(index, int) and index >= 0 else index}") from None


def _own_record(stage: Stage, step: Step, spec: Mapping, io: Mapping, where: str) -> dict:
    """The record this job writes into its tables: the io file's ``job`` (checked against the spec
    and the step), or, for an io file without one (a job run by hand), one without wildcards."""
    own = io.get("job")
    if own is None:
        return job_record(stage.name, step.name, {}, spec)
    if not isinstance(own, dict) or not isinstance(own.get("wildcards"), dict):
        raise UsageError(f"{where}: 'job' must be an object with stage, step, wildcards and spec")
    made = job_record(stage.name, step.name, own["wildcards"], spec)
    if own != made:
        raise UsageError(f"{where}: its job {own.get('stage')}/{own.get('step')} spec {own.get('spec')} is not this "
                         f"job ({stage.name}/{step.name} spec {made['spec']}): the spec and io files do not belong "
                         "together")
    return made


def _describe_record(record: Mapping | None) -> str:
    if not record:
        return "no job record (written by another version, or not by the workflow)"
    wc = ", ".join(f"{k}={v}" for k, v in sorted(dict(record.get("wildcards") or {}).items()))
    output = f"the {record['output']} output" if record.get("output") else "the output"
    return (f"{output} of {record.get('stage')}/{record.get('step')}" + (f" [{wc}]" if wc else "")
            + f" spec {str(record.get('spec'))[:12]}")


def check_input_records(inputs: Mapping[str, list], expect, where: str) -> list[dict]:
    """Every Parquet input holds what the job expects (its producer's stage, step, wildcards and
    spec fingerprint, from the io file's ``expect``); a mismatch stops the job with one line naming
    the file, what it holds, what was expected and how to rebuild it. Returns the data sources
    of the inputs (for the job's own tables)."""
    from shuffledp.errors import DataError
    from shuffledp.io import merge_sources, read_job_record, read_provenance, source_of

    if expect is not None and (not isinstance(expect, dict) or set(expect) != set(inputs)
                               or any(not isinstance(v, list) or len(v) != len(inputs[k]) for k, v in expect.items())):
        raise UsageError(f"{where}: 'expect' must list one record (or null) per input path")
    sources: list = []
    for name, paths in inputs.items():
        for i, path in enumerate(paths):
            if not path.endswith(".parquet"):
                continue
            want = expect[name][i] if expect is not None else None
            try:
                have = read_job_record(path)
                own = source_of(read_provenance(path))
            except FileNotFoundError as exc:
                raise UsageError(f"input {name}: {exc}") from None
            except ValueError as exc:
                raise DataError(f"input {name}: {exc}; {DELETE_HINT.format(path=path)}") from None
            # a table written before records named their output (no "output") is matched without it
            if want is not None and have is not None and "output" not in have:
                want = {k: v for k, v in want.items() if k != "output"}
            if want is not None and (have is None or {k: have.get(k) for k in want} != want):
                raise DataError(f"input {name}: {path} holds {_describe_record(have)}, but this job expects "
                                f"{_describe_record(want)}; rebuild it: snakemake --forcerun {path} "
                                f"(or delete {path} and rerun)")
            sources = merge_sources(sources, (have or {}).get("sources", []), [own] if own else [])
    return sources
