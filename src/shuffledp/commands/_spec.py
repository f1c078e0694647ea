"""Shared by the stage commands: read a job's ``--spec`` and write its Parquet output."""

from __future__ import annotations

import json

from shuffledp.cli import UsageError


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
    return spec


def write_parquet(df, path: str) -> None:
    """Parquet without the pandas index, written atomically (:mod:`shuffledp.io`)."""
    from shuffledp import io

    io.write_parquet(df, path)
