"""Validation of a workflow configuration: YAML syntax, JSON schema, finite numbers, cross-key rules.

:func:`validate_config` is the one entry point; ``workflow/rules/common.smk`` calls exactly it
before any job is scheduled, and ``shuffledp config validate FILE...`` runs it on files. Every
problem is a :class:`ConfigError` whose message starts with ``config key <path>:`` (or names the
file and line for YAML syntax errors), so a user sees which key to fix and never a traceback:

- the schema (``workflow/schemas/config.schema.yaml``) forbids unknown keys at every level; an
  unknown key is reported with the closest valid key (``difflib``);
- numbers must be finite (YAML's ``.nan``/``.inf`` pass a JSON schema, so Python walks the config);
- cross-key rules (shares summing to 1, a setting that needs tables another key must build, ...)
  are checks registered with :func:`register_check` by the experiment modules, plus the ones here.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from shuffledp.errors import ConfigError

_CHECKS: list[Callable[[Mapping], None]] = []

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
# transitional: the experiment modules of the stages not yet moved to shuffledp.stages, whose import
# registers their semantic checks; every stage in shuffledp.stages declares its own check
_CHECK_MODULES = ("peruser", "multidim", "accountants_compare", "multidim_frameworks")
MAX_ERRORS = 8


def register_check(fn: Callable[[Mapping], None]) -> Callable[[Mapping], None]:
    if fn not in _CHECKS:
        _CHECKS.append(fn)
    return fn


def check_config(config: Mapping) -> None:
    """Run every registered semantic check (the experiment modules register theirs on import)."""
    for fn in list(_CHECKS):
        fn(config)


def check_shares(shares, key: str, tol: float = 1e-9) -> None:
    """Shares must be non-negative and sum to 1."""
    total = math.fsum(shares)
    if any(s < 0 for s in shares) or abs(total - 1.0) > tol:
        raise ConfigError(f"config key {key}: shares {list(shares)} must be >= 0 and sum to 1 (sum {total:g})")


def check_probability(value: float, key: str) -> None:
    if not (0.0 < value < 1.0):
        raise ConfigError(f"config key {key}: {value!r} must lie in the open interval (0, 1)")


# ---------------------------------------------------------------------------------------- entry point


def validate_config(config: Mapping, schema_path: str | os.PathLike | None = None) -> None:
    """Everything the workflow checks before any job: finite numbers, schema, semantic rules.

    Raises :class:`ConfigError` (one message, one problem per line, each naming its key).
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"config: must be a mapping of keys to values, got {type(config).__name__}")
    check_finite(config)
    check_schema(config, load_schema(schema_path))
    import importlib

    from shuffledp.stages import discover

    for stage in discover().values():
        if stage.check is not None:
            register_check(stage.check)
    for name in _CHECK_MODULES:
        module = importlib.import_module(f"shuffledp.experiments.{name}")
        fn = getattr(module, "check_config", None)
        if fn is not None:
            register_check(fn)
    for fn in list(_CHECKS):
        try:
            fn(config)
        except ConfigError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError) as exc:
            # a check that trips over a value the schema let through: still name the section
            section = getattr(fn, "__module__", "").rsplit(".", 1)[-1]
            key = section if section in config else "(top level)"
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
    config: dict = {}
    for p in paths:
        config = merge(config, load_yaml(p))
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


# ---------------------------------------------------------------------------------------- cross-key rules


@register_check
def _check_synthetic_names(config: Mapping) -> None:
    synth = config.get("datasets", {}).get("synthetic", []) or []
    names = [s["name"] for s in synth]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"config key datasets.synthetic: duplicate names {dupes}")
    for i, s in enumerate(synth):
        if s["set_size"] > s["domain"]:
            raise ConfigError(
                f"config key datasets.synthetic[{i}].set_size: {s['set_size']} exceeds domain {s['domain']} "
                f"(dataset {s['name']})"
            )


@register_check
def _check_segmented_accountants(config: Mapping) -> None:
    """The run jobs read the accountant tables of ``segmented.accountant`` (and of ``paper`` when
    ``compare_paper_accountant`` is set); ``segmented.accountants`` says which tables are built."""
    cfg = config.get("segmented")
    if not cfg:
        return
    built = list(cfg.get("accountants", ["sound", "paper"]))
    used = cfg.get("accountant", "sound")
    if used not in built:
        raise ConfigError(f"config key segmented.accountant: {used!r} needs {used!r} in segmented.accountants "
                          f"(which builds {built})")
    if cfg.get("compare_paper_accountant", False) and used != "paper" and "paper" not in built:
        raise ConfigError("config key segmented.compare_paper_accountant: true needs 'paper' in "
                          f"segmented.accountants (which builds {built})")
    if len(set(built)) != len(built):
        raise ConfigError(f"config key segmented.accountants: duplicate entries in {built}")


@register_check
def _check_peruser_sources(config: Mapping) -> None:
    sec = config.get("peruser")
    if not sec:
        return
    for i, ds in enumerate(sec.get("datasets", [])):
        if ds.get("source") == "synthetic":
            for key in ("d", "clusters", "kind"):
                if key not in ds:
                    raise ConfigError(f"config key peruser.datasets[{i}].{key}: required for source synthetic")
            lo, hi = ds.get("views", [10, 60])
            if lo > hi:
                raise ConfigError(f"config key peruser.datasets[{i}].views: [{lo}, {hi}] must be [min, max]")


@register_check
def _check_ipums_sources(config: Mapping) -> None:
    """``source: file`` needs an existing codebook and data file; ``source: ipums`` needs a sample."""
    for key, spec in (config.get("datasets", {}).get("ipums", {}) or {}).items():
        where = f"datasets.ipums.{key}"
        if "attributes" not in spec:
            raise ConfigError(f"config key {where}.attributes: required (attribute name -> domain size)")
        if spec["source"] == "file":
            for k in ("ddi", "data"):
                if not spec.get(k):
                    raise ConfigError(f"config key {where}.{k}: required for source file")
                if not Path(spec[k]).is_file():
                    raise ConfigError(f"config key {where}.{k}: no such file: {spec[k]}")
        if spec["source"] == "ipums" and not spec.get("sample"):
            raise ConfigError(f"config key {where}.sample: required for source ipums (e.g. br2010a)")


@register_check
def _check_tables_exist(config: Mapping) -> None:
    """Experiments read processed tables; each must be one the data stage of this config builds."""
    ds = config.get("datasets", {}) or {}
    ipums = ds.get("ipums", {}) or {}
    synth = {s["name"] for s in ds.get("synthetic", []) or []}
    md = config.get("multidim")
    if md:
        names = list(md.get("datasets", []))
        if len(set(names)) != len(names):
            raise ConfigError(f"config key multidim.datasets: duplicate entries in {names}")
        for name in names:
            if name == "adult":  # Adult's categorical attributes (real, from the data stage's Adult table)
                continue
            if name not in ipums:
                raise ConfigError(f"config key multidim.datasets: {name!r} needs datasets.ipums.{name} or 'adult' "
                                  f"(configured: {sorted(ipums)})")
            if md["records"] > ipums[name]["records"]:
                raise ConfigError(f"config key multidim.records: {md['records']} exceeds datasets.ipums.{name}.records "
                                  f"{ipums[name]['records']} (the processed table has that many rows)")
    seg = config.get("segmented")
    if seg:
        for name, spec in seg.get("datasets", {}).items():
            table = spec["table"]
            if table != "msnbc_sets" and not table.startswith("synthetic_"):
                raise ConfigError(f"config key segmented.datasets.{name}.table: {table!r} is not a set-valued table "
                                  f"the data stage builds (msnbc_sets or synthetic_<name>, with <name> in "
                                  f"datasets.synthetic: {sorted(synth)})")
            if table == "msnbc_sets" and spec["d"] != 17:
                raise ConfigError(f"config key segmented.datasets.{name}.d: msnbc_sets has 17 categories, "
                                  f"not {spec['d']}")
    pu = config.get("peruser")
    if pu:
        smallest = min((d["n"] for d in pu.get("datasets", [])), default=None)
        if smallest is not None and pu["kmeans_k"] > smallest:
            raise ConfigError(f"config key peruser.kmeans_k: {pu['kmeans_k']} clusters exceed the smallest "
                              f"peruser.datasets n ({smallest})")
