"""Validation of a workflow configuration: YAML syntax, JSON schema, finite numbers, cross-key rules.

:func:`validate_config` is the one entry point; ``workflow/rules/common.smk`` calls exactly it
before any job is scheduled, and ``shuffledp config validate FILE...`` runs it on files. Every
problem is a :class:`ConfigError` whose message starts with ``config key <path>:`` (or names the
file and line for YAML syntax errors), so a user sees which key to fix and never a traceback:

- the schema (``workflow/schemas/config.schema.yaml``: the top-level keys; each stage's section in
  its package, ``shuffledp/stages/<stage>/schema.yaml``) forbids unknown keys at every level; an
  unknown key is reported with the closest valid key (``difflib``);
- optional keys get their ``default:`` from the schema, filled into the config mapping in place
  (:func:`fill_defaults`, as ``snakemake.utils.validate(..., set_default=True)``), so the code reads
  every key with ``config[...]`` and a default is written once, in the schema;
- the config is bounded before anything walks it: at most :data:`MAX_VALUES` values, counting each
  use of a YAML alias (an alias "bomb" is refused at once, naming the top-level key that holds it);
- numbers must be finite (YAML's ``.nan``/``.inf`` pass a JSON schema, so Python walks the config);
- a whole-number float where the schema wants an integer (``n: 300.0``) is the integer: it is
  converted once, in place (:func:`coerce_integers`), so jobs, specs and tables are those of ``300``;
- cross-key rules (shares summing to 1, a setting that needs tables another key must build, ...)
  are each stage's ``check`` (:mod:`shuffledp.stages`), run in discovery order.
"""

from __future__ import annotations

import copy
import difflib
import functools
import math
import os
import re
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

from shuffledp.errors import ConfigError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
MAX_ERRORS = 8
# the most values (mapping entries and list items, each alias use counted again) a config may hold:
# config/paper.yaml merged over config/config.yaml holds about 600
MAX_VALUES = 100_000
MAX_CONFIG_BYTES = 1 << 20  # a config file is a few kilobytes
MAX_DEPTH = 32  # levels of nesting (the schema's deepest key is 6 levels down)
# the most jobs a configuration may make; more is refused before any job is built or written (a typo
# such as ``repetitions: 1000000`` with ``batch_size: 1``). Set from the dry run's cost
# (benchmarks/dryrun.py; README, "How long it takes"): a first `snakemake -n` took a median 10.1 CPU s
# at 2,511 jobs and 15.2 at 4,911 (about 2.5 s plus 2.6 ms per job), so 5,000 jobs stay under 30 s
# with about twice the headroom for a slower machine. The paper scale makes 182 jobs.
MAX_JOBS = 5_000


# ---------------------------------------------------------------------------------------- entry point


def validate_config(config: Mapping, schema_path: str | os.PathLike | None = None) -> None:
    """Everything the workflow checks before any job: finite numbers, schema, semantic rules.

    Raises :class:`ConfigError` (one message, one problem per line, each naming its key).
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: must be a mapping of keys to values, got {type(config).__name__}")
    from shuffledp.stages import discover

    stages = discover().values()
    check_size(config)
    check_finite(config)
    schema = load_schema(schema_path)
    fill_defaults(config, schema)  # first: the defaults are then checked like any value
    coerce_integers(config, schema)
    check_schema(config, schema)
    canonicalize(config, schema)
    check_results_dir(config)
    for stage in stages:  # each stage's own rules, in discovery order
        if stage.check is None:
            continue
        try:
            stage.check(config)
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError) as exc:
            # a check that trips over a value the schema let through: still name the section
            key = stage.section if stage.section in config else "(top level)"
            raise ConfigError(f"config key {key}: invalid value ({type(exc).__name__}: {exc})") from exc
    from shuffledp.stages import check_batches

    check_batches(config, stages)
    check_job_count(config, stages)


def order_of(sch: Mapping) -> str | None:
    """A list's or user-named mapping's ``x-order`` in the schema: ``canonical`` (its order carries no
    meaning: sorted before any job, so two orders are the same config and give the same bytes) or
    ``significant: <why>`` (its order is part of the experiment, e.g. a table's column order)."""
    mark = sch.get("x-order") if isinstance(sch, Mapping) else None
    return None if mark is None else str(mark).split(":", 1)[0].strip()


def _sort_key(sch: Mapping):
    items = sch.get("items") if isinstance(sch.get("items"), Mapping) else {}
    enum = items.get("enum")
    if enum:  # the schema's order of the names (e.g. mhm before flame)
        return lambda v: (enum.index(v) if v in enum else len(enum), str(v))
    return lambda v: (isinstance(v, str), v)


def canonicalize(config, schema: Mapping) -> None:
    """Each list and user-named mapping whose schema says ``x-order: canonical`` put in its canonical
    order, in place: a list sorted (by the schema's enum order for names, else by value), a mapping
    by key. Runs on a config the schema accepted, before any job is built."""
    def walk(node, sch):
        if not isinstance(sch, Mapping):
            return
        if isinstance(node, MutableMapping):
            props = sch.get("properties", {})
            for key, value in node.items():
                sub = props.get(key)
                if sub is None:
                    sub = next((s for p, s in sch.get("patternProperties", {}).items() if re.search(p, str(key))),
                               sch.get("additionalProperties"))
                walk(value, sub)
            if order_of(sch) == "canonical" and list(node) != sorted(node):
                items = sorted(node.items())
                node.clear()
                node.update(items)
        elif isinstance(node, list):
            if isinstance(sch.get("items"), Mapping):
                for item in node:
                    walk(item, sch["items"])
            if order_of(sch) == "canonical":
                node[:] = sorted(node, key=_sort_key(sch))

    walk(config, schema)


def check_results_dir(config: Mapping) -> None:
    """``results_dir`` (relative to the working folder) is a folder or can become one: no part of it
    is an existing file, and no part is a symbolic link leading out of the working folder."""
    results = config.get("results_dir")
    if not isinstance(results, str):
        return
    here = Path.cwd().resolve()
    part = Path()
    for name in Path(results).parts:
        part = part / name
        if part.is_symlink() and not _inside(part.resolve(), here):
            raise ConfigError(f"config key results_dir: {part} is a symbolic link to {part.resolve()}, outside the "
                              f"working folder {here}; the workflow writes only inside it")
        if part.exists() and not part.is_dir():
            raise ConfigError(f"config key results_dir: {part} is a file, not a folder; name another folder "
                              "(or move the file away)")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


BATCH_KEYS = (("repetitions", "batch_size"), ("reps", "reps_per_job"))


def _batch_pairs(section) -> list[tuple[MutableMapping, str, str]]:
    """Each (mapping, repetitions key, batch key) of a section and its sub-mappings (``multidim.personal``)."""
    found = []
    nodes = [section] if isinstance(section, MutableMapping) else []
    nodes += [v for v in section.values() if isinstance(v, MutableMapping)] if nodes else []
    for node in nodes:
        for reps, size in BATCH_KEYS:
            if isinstance(node.get(reps), int) and isinstance(node.get(size), int) and node[size] >= 1:
                found.append((node, reps, size))
    return found


def _count_jobs(stage, config: Mapping) -> int:
    """The number of ``stage``'s jobs without building them all: the job count is affine in each
    batch count (fixed jobs, plus per batch), so the jobs of 1 and 2 batches of each pair give it."""
    import copy

    if stage.section is None or not _batch_pairs(config.get(stage.section)):
        return len(stage.jobs(config))
    small = copy.deepcopy(dict(config))
    pairs = _batch_pairs(small[stage.section])
    batches = []
    for node, reps, size in pairs:
        batches.append(-(-node[reps] // node[size]))
        node[reps] = node[size]  # one batch
    one = len(stage.jobs(small))
    total = one
    for (node, reps, size), count in zip(pairs, batches, strict=True):
        node[reps] = 2 * node[size]  # two batches of this pair only
        total += (count - 1) * (len(stage.jobs(small)) - one)
        node[reps] = node[size]
    return total


def check_job_count(config: Mapping, stages, limit: int | None = None) -> None:
    """Count every enabled stage's jobs, as the workflow will build them: a failure names the
    stage's section (never a traceback while the workflow parses), and more than ``limit`` jobs in
    all (:data:`MAX_JOBS`) is refused, naming the section that makes the most, before any is built."""
    limit = MAX_JOBS if limit is None else limit
    counts = {}
    # the stages of a section first: a stage without one (data, report) derives its jobs from the
    # others' (the report stage builds every stage's job list), so a config over the limit is refused
    # from the sections' counts before any whole list is built
    for stage in sorted(stages, key=lambda s: s.section is None):
        if not stage.enabled(config):
            continue
        key = stage.section or "datasets"
        try:
            counts[key] = counts.get(key, 0) + _count_jobs(stage, config)
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError) as exc:
            raise ConfigError(f"config key {key}: the jobs cannot be built from it "
                              f"({type(exc).__name__}: {exc})") from exc
        total = sum(counts.values())
        if total > limit:
            worst = max(counts, key=counts.get)
            raise ConfigError(f"config key {worst}: the configuration makes at least {total} jobs ({counts[worst]} of "
                              f"them from {worst}), more than the limit of {limit}; use fewer values or larger batches")
    check_job_specs(config, stages)


def check_job_specs(config: Mapping, stages) -> None:
    """Every job's spec passes its step's typed spec (:mod:`shuffledp.stages.specs`) before any job
    runs: a value derived from the config that a step would refuse (``delta = delta_factor / n``
    below the smallest normal number, two eps values written alike in file names, ...) is refused
    here, naming the section, the job and the spec key."""
    from shuffledp.errors import UsageError
    from shuffledp.stages import check_spec

    for stage in stages:
        if not stage.enabled(config):
            continue
        key = stage.section or "datasets"
        for job in stage.jobs(config):
            try:
                check_spec(stage.step(job.step), job.spec, "spec", stage)
            except UsageError as exc:
                wc = ", ".join(f"{k}={v}" for k, v in job.wildcards.items())
                raise ConfigError(f"config key {key}: job {stage.name}/{job.step}" + (f" [{wc}]" if wc else "")
                                  + f" would be refused: {exc}") from None


# ---------------------------------------------------------------------------------------- YAML


def load_yaml(path: str | os.PathLike) -> dict:
    """Read one YAML config file; a syntax error names the file, line and column."""
    import yaml

    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a config file")
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; a config file is a few kilobytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); "
                          "save the file as UTF-8") from None
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise ConfigError(f"{path}: nested more than Python can read (a config is at most {MAX_DEPTH} levels "
                          "deep)") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        raise ConfigError(f"{path}:{mark.line + 1 if mark else '?'}: YAML syntax error at {where}: "
                          f"{exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML error: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys, got {type(data).__name__}")
    try:
        check_size(data)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return data


def is_collection(sch) -> bool:
    """A schema of a mapping whose keys the user names (datasets, settings, figures, attributes,
    IPUMS samples): no fixed ``properties``, its entries described by ``additionalProperties`` or
    ``patternProperties``."""
    return (isinstance(sch, Mapping) and not sch.get("properties")
            and (isinstance(sch.get("additionalProperties"), Mapping) or bool(sch.get("patternProperties"))))


def _sub_schema(sch, key) -> Mapping | None:
    if not isinstance(sch, Mapping):
        return None
    props = sch.get("properties", {})
    if key in props:
        return props[key]
    found = next((s for p, s in sch.get("patternProperties", {}).items() if re.search(p, str(key))), None)
    if found is None and isinstance(sch.get("additionalProperties"), Mapping):
        found = sch["additionalProperties"]
    return found


def merge(base: dict, overlay: Mapping, schema: Mapping | None = None) -> dict:
    """``overlay`` over ``base``, the semantics of config overlays (README, "Configuration"):

    - a mapping with fixed keys (a section, ``m_grid``, ``datasets.msnbc``, ...) is merged key by key;
    - a mapping whose keys the user names (:func:`is_collection` in ``schema``: ``segmented.datasets``,
      ``segmented.settings``, ``segmented.figures``, ``datasets.ipums``, an IPUMS sample's
      ``attributes``) is replaced whole by the overlay's: the collection the user writes is the one used;
    - anything else (a list, a number, a string) is replaced.

    ``schema`` ``None``: the workflow's schema (with every stage's section).
    """
    if schema is None:
        schema = _full_schema()
    out = dict(base)
    for k, v in overlay.items():
        sub = _sub_schema(schema, k)
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) and not is_collection(sub):
            out[k] = merge(dict(out[k]), v, sub if isinstance(sub, Mapping) else {})
        else:
            out[k] = v
    return out


def _full_schema() -> dict:
    return load_schema()


# the defaults: read by the workflow itself (never through Snakemake's ``configfile:``), relative to
# the working folder, as Snakemake reads a ``configfile:`` path
DEFAULTS_FILE = "config/config.yaml"


def snakemake_merge(base: Mapping, overlay: Mapping) -> dict:
    """``overlay`` over ``base`` as Snakemake merges its ``--configfile`` files and ``--config``
    values (its documentation, "Configuration": mappings key by key, at every level; any other value
    replaced): a copy, neither argument changed."""
    out = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping):
            below = out.get(key)
            out[key] = snakemake_merge(below if isinstance(below, Mapping) else {}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_configs(paths: Iterable[str | os.PathLike], overrides: Mapping | None = None) -> dict:
    """The config the workflow builds from ``snakemake --configfile B C ... --config K=V`` run where
    the first of ``paths`` is ``config/config.yaml``: the later files and ``overrides`` merged among
    themselves as Snakemake merges them (:func:`snakemake_merge`), that result over the first file
    with the overlay rule (:func:`merge`: a collection it names replaces the first file's). One or two
    files: the second file over the first."""
    paths = list(paths)
    if not paths:
        return merge({}, dict(overrides or {}))
    user: dict = {}
    for p in paths[1:]:
        user = snakemake_merge(user, load_yaml(p))
    if overrides:
        user = snakemake_merge(user, overrides)
    return merge(load_yaml(paths[0]), user, _full_schema())


def workflow_config(user: Mapping, defaults: str | os.PathLike = DEFAULTS_FILE) -> dict:
    """The config the workflow's jobs see. ``user``: Snakemake's documented global ``config``, which
    holds only what the user passed (each ``--configfile``, merged by Snakemake among themselves
    key by key, then ``--config``): the Snakefile has no ``configfile:``. ``defaults``
    (``config/config.yaml`` of the working folder), read here, when it exists; ``user`` goes over it
    with the overlay rule (:func:`merge`: a collection the user names replaces the default's, a
    section is merged key by key). Neither file nor ``--configfile``: one line naming the file."""
    try:  # before anything walks it: an alias "bomb" in a --configfile (Snakemake keeps the aliases shared)
        check_size(user)
    except ConfigError as exc:
        raise ConfigError(f"--configfile/--config: {exc}") from None
    base: dict = {}
    if os.path.lexists(defaults):
        base = load_yaml(defaults)
    elif not user:
        raise ConfigError(f"{defaults}: no such config file in the working folder {Path.cwd()}, and no --configfile "
                          "given: run in the repository's folder or pass a whole config with --configfile")
    return merge(base, copy.deepcopy(dict(user)), _full_schema())


def load_validated(paths: Iterable[str | os.PathLike]) -> dict:
    """The config the workflow's jobs see: the files deep-merged (:func:`load_configs`), then
    validated with every schema default filled in (:func:`validate_config`)."""
    config = load_configs(paths)
    validate_config(config)
    return config


# ---------------------------------------------------------------------------------------- bounded size


def check_size(config: Mapping, limit: int = MAX_VALUES) -> None:
    """Refuse a config with more than ``limit`` values, each use of a YAML alias counted again (the
    walk stops at the limit, so an alias bomb costs ``limit`` steps, not its expansion)."""
    count = 0
    for top, value in config.items():
        stack = [(value, 1)]
        while stack:
            node, depth = stack.pop()
            count += 1
            if count > limit:
                raise ConfigError(f"config key {key_path([str(top)])}: more than {limit} values in the configuration "
                                  "(a YAML alias repeated into a huge tree?)")
            if depth > MAX_DEPTH:
                raise ConfigError(f"config key {key_path([str(top)])}: nested more than {MAX_DEPTH} levels deep")
            if isinstance(node, Mapping):
                stack.extend((v, depth + 1) for v in node.values())
            elif isinstance(node, (list, tuple)):
                stack.extend((v, depth + 1) for v in node)


# ---------------------------------------------------------------------------------------- finite numbers


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def key_path(parts: Iterable) -> str:
    """``a.b[0].c``; a key that is not a plain word is shown quoted: ``attributes['<x>']``."""
    out = ""
    for p in parts:
        if isinstance(p, int) and not isinstance(p, bool):
            out += f"[{p}]"
        elif _PLAIN_KEY.match(str(p)):
            out += f".{p}" if out else str(p)
        else:
            out += f"[{str(p)!r}]"
    return out or "(top level)"


def check_finite(config: Mapping) -> None:
    """NaN, infinities and subnormal numbers (below 2.2e-308, where a double loses precision and a
    logarithm or reciprocal fails) are refused wherever they appear (a JSON schema cannot say so)."""
    import sys

    def walk(node, path):
        if isinstance(node, float) and not math.isfinite(node):
            raise ConfigError(f"config key {key_path(path)}: {node!r} is not a finite number")
        if isinstance(node, float) and node != 0.0 and abs(node) < sys.float_info.min:
            raise ConfigError(f"config key {key_path(path)}: {node!r} is subnormal (below {sys.float_info.min:.4g}): "
                              "too small to compute with")
        if isinstance(node, Mapping):
            for k, v in node.items():
                if not isinstance(k, str):
                    raise ConfigError(f"config key {key_path([*path, str(k)])}: keys must be strings, "
                                      f"got {type(k).__name__} {k!r}")
                walk(v, [*path, k])
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                walk(v, [*path, i])

    walk(config, [])


# ---------------------------------------------------------------------------------------- schema


def load_schema(schema_path: str | os.PathLike | None = None) -> dict:
    """The workflow's config schema: the top-level keys of ``schema_path`` (default
    ``workflow/schemas/config.schema.yaml``) with the section(s) every discovered stage declares in
    its package (``shuffledp/stages/<stage>/schema.yaml``, :attr:`shuffledp.stages.Stage.config_schema`)."""
    from shuffledp.stages import discover

    path = Path(schema_path) if schema_path else SCHEMA_PATH
    stat = path.stat()
    return with_stage_schemas(_load_schema(str(path.resolve()), stat.st_mtime_ns, stat.st_size), discover().values())


def with_stage_schemas(schema: Mapping, stages) -> dict:
    """``schema`` with the config sections every stage declares (:attr:`Stage.config_schema`: a
    stage package's ``schema.yaml``, or the ``schema`` of a stage outside the package) added under
    their keys. A key declared twice with different schemas (two owners of one config key) is an
    error naming it."""
    props = dict(schema.get("properties", {}))
    for stage in stages:
        for key, sub in (stage.config_schema or {}).items():
            if key in props and props[key] != sub:
                raise ValueError(f"config key {key}: its schema is declared twice (stage {stage.name} and another "
                                 "stage or workflow/schemas/config.schema.yaml)")
            props[key] = sub
    return {**schema, "properties": props}


@functools.lru_cache(maxsize=4)
def _load_schema(path: str, mtime_ns: int, size: int) -> dict:
    import yaml

    # libyaml's safe loader when present (the same mapping as yaml.safe_load, several times faster): the
    # workflow's own schema file, read at every parse
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.lru_cache(maxsize=4)
def _validator(schema_id: int, schema_json: str):
    import json

    import jsonschema

    schema = json.loads(schema_json)
    return jsonschema.validators.validator_for(schema)(schema)


def check_schema(config: Mapping, schema: Mapping) -> None:
    """JSON-schema validation with messages that name the key (and the closest valid key)."""
    import json

    validator = _validator(id(schema), json.dumps(schema, sort_keys=True))
    # unknown keys first (a typo also makes the intended key "missing"), then by key path
    errors = sorted(validator.iter_errors(_plain(config)),
                    key=lambda e: (e.validator != "additionalProperties", list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    lines = []
    for err in errors:
        for line in _describe(err):
            if line not in lines:
                lines.append(line)
    more = f"\n({len(lines) - MAX_ERRORS} more)" if len(lines) > MAX_ERRORS else ""
    raise ConfigError("\n".join(lines[:MAX_ERRORS]) + more)


def fill_defaults(config, schema: Mapping | None = None) -> None:
    """Fill each missing key that has a ``default:`` in ``schema`` into ``config``, in place.

    Objects are walked through ``properties``, ``patternProperties`` and ``additionalProperties``,
    arrays through ``items``; a default is filled only into an object that exists (an object with a
    default of its own is created first, then filled). Defaults are copied, never shared. A node of
    the wrong type is left alone (the schema check then names it).
    """
    import copy

    if schema is None:
        schema = load_schema()

    def walk(node, sch):
        if not isinstance(sch, Mapping):
            return
        if isinstance(node, MutableMapping):
            props = sch.get("properties", {})
            for key, sub in props.items():
                if key not in node and isinstance(sub, Mapping) and "default" in sub:
                    node[key] = copy.deepcopy(sub["default"])
            for key, value in node.items():
                if key in props:
                    walk(value, props[key])
                    continue
                pattern = next((s for p, s in sch.get("patternProperties", {}).items() if re.search(p, str(key))),
                               None)
                if pattern is not None:
                    walk(value, pattern)
                elif isinstance(sch.get("additionalProperties"), Mapping):
                    walk(value, sch["additionalProperties"])
        elif isinstance(node, list) and isinstance(sch.get("items"), Mapping):
            for item in node:
                walk(item, sch["items"])

    walk(config, schema)


def _wants_integer(sch: Mapping) -> bool:
    kind = sch.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    return "integer" in kinds and "number" not in kinds


def coerce_integers(config, schema: Mapping) -> None:
    """A whole-number float (``300.0``) where ``schema`` wants an integer becomes that integer, in
    place; any other value is left for the schema check (``300.5`` is refused there, naming its key)."""
    def fix(value, sch):
        if (isinstance(sch, Mapping) and isinstance(value, float) and math.isfinite(value)
                and value.is_integer() and _wants_integer(sch)):
            return int(value)
        walk(value, sch)
        return value

    def walk(node, sch):
        if not isinstance(sch, Mapping):
            return
        if isinstance(node, MutableMapping):
            props = sch.get("properties", {})
            for key in list(node):
                sub = props.get(key)
                if sub is None:
                    sub = next((s for p, s in sch.get("patternProperties", {}).items() if re.search(p, str(key))),
                               sch.get("additionalProperties"))
                node[key] = fix(node[key], sub)
        elif isinstance(node, list) and isinstance(sch.get("items"), Mapping):
            node[:] = [fix(v, sch["items"]) for v in node]

    walk(config, schema)


def _plain(node):
    """Mappings and sequences as dict/list (snakemake hands over OrderedDicts and such)."""
    if isinstance(node, Mapping):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_plain(v) for v in node]
    return node


def _describe(err) -> list[str]:
    path = list(err.absolute_path)
    where = key_path(path)
    kind = err.validator
    if kind == "additionalProperties" and isinstance(err.instance, Mapping):
        schema = err.schema
        allowed = sorted(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        out = []
        for key in err.instance:
            if key in allowed or any(re.search(p, str(key)) for p in patterns):
                continue
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            valid = ", ".join(allowed) if allowed else f"keys matching {', '.join(patterns)}"
            out.append(f"config key {key_path([*path, key])}: unknown key; {hint}valid keys here: {valid}")
        if out:
            return out
    if kind == "required":
        missing = err.message.split("'")[1] if "'" in err.message else err.message
        return [f"config key {key_path([*path, missing])}: required key is missing"]
    if kind == "enum":
        return [f"config key {where}: {err.instance!r} is not one of {', '.join(map(str, err.validator_value))}"]
    if kind == "type":
        want = err.validator_value if isinstance(err.validator_value, str) else " or ".join(err.validator_value)
        return [f"config key {where}: {err.instance!r} is not of type {want}"]
    why = " ".join(str(err.schema.get("description", "")).split()) if isinstance(err.schema, Mapping) else ""
    why = f" ({why})" if why else ""
    if kind == "pattern":
        if list(err.schema_path)[-3:-1] == ["propertyNames"] or "propertyNames" in list(err.schema_path):
            return [f"config key {key_path([*path, str(err.instance)])}: the name {err.instance!r} is not allowed here "
                    f"(names become file names: letters, digits, _ and -, matching {err.validator_value})"]
        return [f"config key {where}: {err.instance!r} does not match the pattern {err.validator_value}{why}"]
    if kind == "uniqueItems":
        dups = sorted({repr(v) for i, v in enumerate(err.instance) if v in err.instance[:i]})
        return [f"config key {where}: duplicate entries {', '.join(dups)}; list each once"]
    if kind in ("maximum", "exclusiveMaximum"):
        return [f"config key {where}: {err.instance!r} is above the limit {err.validator_value}{why}"]
    if kind == "maxItems":
        return [f"config key {where}: {len(err.instance)} entries, at most {err.validator_value} allowed{why}"]
    if kind == "maxProperties":
        return [f"config key {where}: {len(err.instance)} entries, at most {err.validator_value} allowed{why}"]
    if kind == "maxLength":
        return [f"config key {where}: {err.instance!r} is longer than {err.validator_value} characters"]
    if kind == "minProperties" and not err.instance:
        return [f"config key {where}: the mapping is empty; give at least {err.validator_value} entr"
                + ("y" if err.validator_value == 1 else "ies") + why]
    if kind == "minItems" and not err.instance:
        return [f"config key {where}: the list is empty; give at least {err.validator_value} entr"
                + ("y" if err.validator_value == 1 else "ies")]
    return [f"config key {where}: {err.message}"]
