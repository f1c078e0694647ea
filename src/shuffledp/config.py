"""Validation of a workflow configuration: YAML syntax, JSON schema, finite numbers, cross-key rules.

:func:`validate_config` is the one entry point; ``workflow/rules/common.smk`` calls exactly it
before any job is scheduled, and ``shuffledp config validate FILE...`` runs it on files. Every
problem is a :class:`ConfigError` whose message starts with ``config key <path>:`` (or names the
file and line for YAML syntax errors), so a user sees which key to fix and never a traceback:

- the schema (``workflow/schemas/config.schema.yaml``) forbids unknown keys at every level; an
  unknown key is reported with the closest valid key (``difflib``);
- optional keys get their ``default:`` from the schema, filled into the config mapping in place
  (:func:`fill_defaults`, as ``snakemake.utils.validate(..., set_default=True)``), so the code reads
  every key with ``config[...]`` and a default is written once, in the schema;
- numbers must be finite (YAML's ``.nan``/``.inf`` pass a JSON schema, so Python walks the config);
- cross-key rules (shares summing to 1, a setting that needs tables another key must build, ...)
  are each stage's ``check`` (:mod:`shuffledp.stages`), run in discovery order.
"""

from __future__ import annotations

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


# ---------------------------------------------------------------------------------------- entry point


def validate_config(config: Mapping, schema_path: str | os.PathLike | None = None) -> None:
    """Everything the workflow checks before any job: finite numbers, schema, semantic rules.

    Raises :class:`ConfigError` (one message, one problem per line, each naming its key).
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: must be a mapping of keys to values, got {type(config).__name__}")
    from shuffledp.stages import discover

    stages = discover().values()
    check_finite(config)
    schema = with_stage_schemas(load_schema(schema_path), stages)
    fill_defaults(config, schema)  # first: the defaults are then checked like any value
    check_schema(config, schema)
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


# ---------------------------------------------------------------------------------------- YAML


def load_yaml(path: str | os.PathLike) -> dict:
    """Read one YAML config file; a syntax error names the file, line and column."""
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    try:
        data = yaml.safe_load(text)
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
    return data


def merge(base: dict, overlay: Mapping) -> dict:
    """Snakemake's merge of config files: nested mappings merged, anything else replaced."""
    out = dict(base)
    for k, v in overlay.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = merge(dict(out[k]), v)
        else:
            out[k] = v
    return out


def load_configs(paths: Iterable[str | os.PathLike]) -> dict:
    """The config files deep-merged in order, as Snakemake merges ``--configfile`` over the Snakefile's."""
    config: dict = {}
    for p in paths:
        config = merge(config, load_yaml(p))
    return config


def load_validated(paths: Iterable[str | os.PathLike]) -> dict:
    """The config the workflow's jobs see: the files deep-merged (:func:`load_configs`), then
    validated with every schema default filled in (:func:`validate_config`)."""
    config = load_configs(paths)
    validate_config(config)
    return config


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
    """NaN and infinities are refused wherever they appear (a JSON schema cannot say so)."""
    def walk(node, path):
        if isinstance(node, float) and not math.isfinite(node):
            raise ConfigError(f"config key {key_path(path)}: {node!r} is not a finite number")
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
    path = Path(schema_path) if schema_path else SCHEMA_PATH
    stat = path.stat()
    return _load_schema(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


def with_stage_schemas(schema: Mapping, stages) -> dict:
    """``schema`` with the section schema of each stage that declares its own (a stage outside the
    package, e.g. a test's) added under its section; a section the schema has already is kept."""
    extra = {s.section: dict(s.schema) for s in stages
             if s.schema is not None and s.section and s.section not in schema.get("properties", {})}
    if not extra:
        return dict(schema)
    return {**schema, "properties": {**schema.get("properties", {}), **extra}}


@functools.lru_cache(maxsize=4)
def _load_schema(path: str, mtime_ns: int, size: int) -> dict:
    import yaml

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


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
        from shuffledp.stages import discover

        schema = with_stage_schemas(load_schema(), discover().values())

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
    if kind == "pattern":
        why = " ".join(str(err.schema.get("description", "")).split())
        return [f"config key {where}: {err.instance!r} does not match the pattern {err.validator_value}"
                + (f" ({why})" if why else "")]
    return [f"config key {where}: {err.message}"]
