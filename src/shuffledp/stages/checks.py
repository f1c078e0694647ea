"""Checks a step makes on its job's spec before any work: one usage error naming the key.

The framework (:func:`shuffledp.stages.check_spec`) checks which keys a spec holds and that every
number is finite; a step checks the values it reads with :func:`require`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shuffledp.errors import UsageError


def require(spec: Mapping, key: str, ok: Callable[[object], object], what: str) -> None:
    """A one-line usage error ``--spec: <key> <what>`` unless ``ok(spec[key])`` holds."""
    try:
        good = bool(ok(spec[key]))
    except (TypeError, ValueError, KeyError):
        good = False
    if not good:
        raise UsageError(f"--spec: {key} {what} (got {spec.get(key)!r})")


def is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_positive_int(value) -> bool:
    return is_int(value) and value >= 1


def is_nonneg_int(value) -> bool:
    return is_int(value) and value >= 0


def is_reps(value) -> bool:
    """A list of distinct non-negative repetition indices."""
    return (isinstance(value, list) and all(is_nonneg_int(r) for r in value) and len(set(value)) == len(value))


def is_name(value) -> bool:
    """Letters, digits and underscores (a name that becomes part of a file name)."""
    return isinstance(value, str) and bool(value) and all(c.isalnum() or c == "_" for c in value)
