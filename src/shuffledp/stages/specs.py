"""Typed job specs: one pydantic model per step, its fields' types taken from the stage's schema.

A step's spec (what ``jobs(config)`` derived for one job) is a :class:`Spec`: strict (no float for
an integer, no string for a list, ``"1000"`` never read as a list of characters, no ``true`` for a
number), closed (``extra="forbid"``: an unknown key is refused) and finite. A field whose value
comes from a config key takes that key's type from the stage's own section of the config schema
(``shuffledp/stages/<stage>/schema.yaml``) with :func:`from_schema`, so a limit is written once, in
the schema, and a step's spec refuses what the config would have refused::

    SECTION = section_schema(__file__)               # this stage's schema.yaml
    D = from_schema(SECTION, "segmented.datasets.*.d")

    class Prepare(Spec):
        d: D
        seed: Seed

Path syntax of :func:`from_schema`: dotted property names; ``*`` steps into a mapping's entries
(``additionalProperties`` or ``patternProperties``), ``[]`` into an array's items.

``shuffledp step`` validates the spec file against its step's model before anything else
(:func:`validate_spec`): the first problem ends the command with one line naming the key, e.g.
``--spec: settings: must be a mapping, got list``. The step then runs on the spec as read (the
model coerces nothing, so the mapping holds exactly the values the model accepted).

This module imports pydantic; only ``shuffledp step`` and the tests import it (a stage's models
live in ``shuffledp/stages/<stage>/specs.py``, never imported while the workflow parses).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from shuffledp.errors import UsageError

__all__ = ["Name", "NonNegInt", "Probability", "Reps", "Seed", "Spec", "from_schema", "section_schema",
           "spec_error", "validate_spec"]

# the smallest positive normal double: a subnormal number (a delta of 1e-320) has lost precision,
# and log() or 1/x of it overflows or fails ("math domain error"); refused wherever a number is
SMALLEST_NORMAL = sys.float_info.min


class Spec(BaseModel):
    """The base of every step's spec: strict, closed, finite, read-only."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


def _normal(x):
    if isinstance(x, float) and x != 0.0 and abs(x) < SMALLEST_NORMAL:
        raise ValueError(f"{x!r} is subnormal (below {SMALLEST_NORMAL:.4g}): too small to compute with")
    return x


def _unique(items):
    seen = []
    for x in items:
        if x in seen:
            raise ValueError(f"repeats {x!r}")
        seen.append(x)
    return items


# number: an int or a float (strict mode accepts an int where a float is expected; never a bool or a string)
Number = Annotated[float, AfterValidator(_normal)]
# a seed: the config's (at most 2**32 - 1) plus an offset (personalized.seeds, at most 2**32 - 1)
Seed = Annotated[StrictInt, Field(ge=0, le=2 * (2**32 - 1))]
NonNegInt = Annotated[StrictInt, Field(ge=0)]
Reps = Annotated[list[NonNegInt], Field(min_length=1), AfterValidator(_unique)]
Name = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64)]
Probability = Annotated[Number, Field(gt=0, lt=1)]


def _inside(path: str) -> str:
    """A path the step writes to (a raw download's file or folder): relative, without ``..`` or
    control characters, so it stays inside the working folder whatever a spec file says."""
    from pathlib import PurePosixPath

    if any(ord(c) < 32 for c in path):
        raise ValueError("must not hold control characters")
    p = PurePosixPath(path)
    if p.is_absolute() or path.startswith("~") or ".." in p.parts:
        raise ValueError(f"{path!r} must be a relative path inside the working folder (no leading / or ~, no ..)")
    return path


# a folder or file inside the working folder that a step writes to (data/raw/...)
WorkPath = Annotated[StrictStr, Field(min_length=1, max_length=4096), AfterValidator(_inside)]


# ---------------------------------------------------------------------------------------- schema -> type


@functools.cache
def _load(path: str) -> dict:
    import yaml

    # libyaml's safe loader when present (the same mapping as yaml.safe_load, several times faster): every
    # job reads its stage's schema.yaml when its specs module is imported
    return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def section_schema(module_file: str) -> dict:
    """The config keys a stage owns with their schemas: ``schema.yaml`` beside ``module_file``."""
    return _load(str(Path(module_file).resolve().parent / "schema.yaml"))


def _node(schema: Mapping, path: str) -> Mapping:
    node: Any = schema
    for part in path.split("."):
        while part.endswith("[]"):
            part = part[:-2]
            if part:
                node = node[part] if part in node and "type" not in node else node["properties"][part]
                part = ""
            node = node["items"]
        if not part:
            continue
        if part == "*":
            extra = node.get("additionalProperties")
            node = extra if isinstance(extra, Mapping) else next(iter(node["patternProperties"].values()))
        elif "properties" in node and part in node["properties"]:
            node = node["properties"][part]
        else:
            node = node[part]  # the top level of a schema.yaml: config key -> schema
    return node


def without_defaults(node):
    """A schema node with every ``default:`` removed: its keys become optional in a spec (a spec
    written by hand may leave out what the config would have filled in)."""
    if isinstance(node, Mapping):
        return {k: without_defaults(v) for k, v in node.items() if k != "default"}
    if isinstance(node, list):
        return [without_defaults(v) for v in node]
    return node


def from_schema(schema: Mapping, path: str, name: str | None = None, fields: Mapping | None = None):
    """The type of the schema node at ``path`` (see the module's docstring for the path syntax).
    ``fields``: for an object node, field name -> type replacing the schema's (the spec holds that
    key in another form, e.g. a mapping as a list of pairs)."""
    return _type(_node(schema, path), name or re.sub(r"\W", "_", path.title()), fields or {})


_BOUNDS = {"minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "exclusiveMaximum": "lt"}


def _type(node: Mapping, name: str, overrides: Mapping | None = None):
    if "enum" in node:
        return Literal[tuple(node["enum"])]
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        inner = _type({**node, "type": kinds[0] if len(kinds) == 1 else kinds}, name)
        return Optional[inner] if "null" in kind else inner  # noqa: UP045 (a runtime type expression)
    bounds = {_BOUNDS[k]: v for k, v in node.items() if k in _BOUNDS}
    if kind == "integer":
        return Annotated[StrictInt, Field(**bounds)]
    if kind == "number":
        return Annotated[Number, Field(**bounds)]
    if kind == "boolean":
        return StrictBool
    if kind == "string":
        opts = {"pattern": node.get("pattern"), "max_length": node.get("maxLength"),
                "min_length": node.get("minLength")}
        return Annotated[StrictStr, Field(**{k: v for k, v in opts.items() if v is not None})]
    if kind == "array":
        item = _type(node.get("items", {}), name + "Item") if node.get("items") else Any
        sizes = {"min_length": node.get("minItems"), "max_length": node.get("maxItems")}
        extra = [AfterValidator(_unique)] if node.get("uniqueItems") else []
        return Annotated[list[item], Field(**{k: v for k, v in sizes.items() if v is not None}), *extra]
    if kind == "object":
        return _object(node, name, overrides or {})
    if not kind:
        return Any
    raise ValueError(f"schema type {kind!r} has no spec type")


def _object(node: Mapping, name: str, overrides: Mapping):
    props = node.get("properties") or {}
    sizes = {"min_length": node.get("minProperties"), "max_length": node.get("maxProperties")}
    sizes = {k: v for k, v in sizes.items() if v is not None}
    if not props:  # a mapping whose keys the user names
        extra = node.get("additionalProperties")
        patterns = node.get("patternProperties") or {}
        value = (_type(extra, name + "Value") if isinstance(extra, Mapping)
                 else _type(next(iter(patterns.values())), name + "Value") if patterns else Any)
        key_node = node.get("propertyNames") or ({"pattern": next(iter(patterns))} if patterns else {})
        key = _type({"type": "string", **key_node}, name + "Key")
        return Annotated[dict[key, value], Field(**sizes)]
    required = set(node.get("required", []))
    fields = {}
    for key, sub in props.items():
        typ = overrides[key] if key in overrides else _type(sub, name + key.title().replace("_", ""))
        # an optional key may be absent (None marks absence; an explicit null is still checked)
        fields[key] = (typ, ...) if key in required or "default" in sub else (typ, None)
    model = create_model(name, __base__=Spec, **fields)
    return model


# ---------------------------------------------------------------------------------------- validation

_JSON_TYPES = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer", float: "number",
               type(None): "null"}


def _got(value) -> str:
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list)):
        return kind
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
    return f"{kind} {text[:60]}"


def _where(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z0-9_-]+", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{str(part)!r}]"
    return out or "(the spec)"


_MESSAGES = {
    "dict_type": "must be a mapping", "model_type": "must be a mapping", "model_attributes_type": "must be a mapping",
    "list_type": "must be a list", "tuple_type": "must be a list", "int_type": "must be an integer",
    "float_type": "must be a number", "string_type": "must be a string", "bool_type": "must be true or false",
    "finite_number": "must be a finite number", "int_from_float": "must be an integer",
}


def _drop_tags(loc: tuple) -> tuple:
    """Pydantic's location without its type tags (``function-after[...]``, ``tuple[...]``)."""
    return tuple(p for p in loc if isinstance(p, int) or not re.search(r"[\[\]]", str(p)))


def spec_error(err: ValidationError) -> str:
    """One line for the first problem of a spec: ``<key path>: <what>, got <type> <value>``."""
    e = err.errors(include_url=False)[0]
    where = _where(_drop_tags(e["loc"]))
    kind, ctx, value = e["type"], e.get("ctx") or {}, e.get("input")
    if kind == "missing":
        return f"{where}: missing key"
    if kind == "extra_forbidden":
        return f"{where}: unknown key"
    if kind in _MESSAGES:
        return f"{where}: {_MESSAGES[kind]}, got {_got(value)}"
    if kind == "literal_error":
        return f"{where}: must be one of {ctx.get('expected')}, got {_got(value)}"
    ops = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if kind in ops:
        limit = next(iter(ctx.values()))
        return f"{where}: must be {ops[kind]} {limit}, got {_got(value)}"
    if kind in ("too_short", "too_long"):
        n = ctx.get("min_length", ctx.get("max_length"))
        return (f"{where}: must hold {'at least' if kind == 'too_short' else 'at most'} {n} "
                f"entr{'y' if n == 1 else 'ies'}, got {ctx.get('actual_length')}")
    if kind == "string_pattern_mismatch":
        return f"{where}: must match {ctx.get('pattern')}, got {_got(value)}"
    if kind == "string_too_long":
        return f"{where}: must be at most {ctx.get('max_length')} characters, got {_got(value)}"
    if kind == "string_too_short":
        return f"{where}: must be at least {ctx.get('min_length')} characters, got {_got(value)}"
    if kind in ("value_error", "assertion_error"):  # a model's own rule (its message names the keys)
        why = str(ctx.get("error", e["msg"]))
        return why if where == "(the spec)" else f"{where}: {why}"
    return f"{where}: {e['msg'].replace('Input should be', 'must be')}, got {_got(value)}"


def validate_spec(model: type[Spec], spec: Mapping, where: str = "--spec") -> Spec:
    """``spec`` (a JSON object, as read from a spec file) as ``model``; the first problem is a
    :class:`UsageError` ``<where>: <key path>: <what>, got <value>``."""
    try:
        return model.model_validate_json(json.dumps(spec, allow_nan=True))
    except ValidationError as err:
        raise UsageError(f"{where}: {spec_error(err)}") from None
