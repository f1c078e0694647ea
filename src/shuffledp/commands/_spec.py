"""Shared by the stage commands: read a job's ``--spec`` and write its Parquet output."""

from __future__ import annotations

import json

from shuffledp.errors import UsageError
from shuffledp.stages.checks import is_positive_int, is_reps, require  # noqa: F401  (used by the stage commands)


def read_spec(text: str, required: set[str] | frozenset[str] = frozenset()) -> dict:
    """The JSON object of ``--spec``; a one-line usage error when it is not one or lacks a key."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--spec: not valid JSON ({exc.msg})") from None
    if not isinstance(spec, dict):
        raise UsageError("--spec: must be a JSON object")
    missing = sorted(set(required) - set(spec))
    if missing:
        raise UsageError(f"--spec: missing key(s) {', '.join(missing)}")
    bad = _non_finite(spec)
    if bad:
        raise UsageError(f"--spec: {bad} must be a finite number")
    return spec


def _non_finite(obj, path: str = "") -> str:
    """The key path of the first NaN or infinity in a parsed spec ('' when there is none)."""
    import math

    if isinstance(obj, float) and not math.isfinite(obj):
        return path or "value"
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        found = _non_finite(value, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return ""


def write_parquet(df, path: str) -> None:
    """Parquet without the pandas index, written atomically (:mod:`shuffledp.io`)."""
    from shuffledp import io

    io.write_parquet(df, path)
