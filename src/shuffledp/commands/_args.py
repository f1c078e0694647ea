"""argparse ``type=`` helpers: each turns a bad value into argparse's one-line
``argument --flag: ...`` error (exit 2) instead of a traceback later on."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def _number(text: str, kind: type) -> float | int:
    try:
        value = float(text) if kind is float else int(text)
    except ValueError:
        if kind is int:  # accept 1e5 / 100000.0 for integers
            try:
                f = float(text)
            except ValueError:
                f = math.nan
            if math.isfinite(f) and f.is_integer():
                return int(f)
        what = "a number" if kind is float else "an integer"
        raise argparse.ArgumentTypeError(f"cannot read {text!r} as {what}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def finite_float(text: str) -> float:
    return _number(text, float)


def positive_float(text: str) -> float:
    value = _number(text, float)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
    return value


def fraction(text: str) -> float:
    """A number in the open interval (0, 1)."""
    value = _number(text, float)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must lie in the open interval (0, 1)")
    return value


def unit_interval(text: str) -> float:
    """A number in the half-open interval (0, 1]."""
    value = _number(text, float)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must lie in (0, 1]")
    return value


def positive_int(text: str) -> int:
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive integer")
    return value


def nonneg_int(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a non-negative integer")
    return value


def int_at_least(low: int):
    def parse(text: str) -> int:
        value = _number(text, int)
        if value < low:
            raise argparse.ArgumentTypeError(f"{text!r} must be an integer >= {low}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def existing_file(text: str) -> str:
    """A path to a readable regular file (checked before any work starts)."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"not a regular file: {text}")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {exc.strerror}") from None
    return text


def parquet_file(text: str) -> str:
    """An existing, readable Parquet file (its footer is read: a truncated or foreign file is refused)."""
    existing_file(text)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_schema(text)
    except (pa.ArrowException, OSError) as exc:
        raise argparse.ArgumentTypeError(f"{text}: not a readable Parquet file ({_first_line(exc)})") from None
    return text


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def output_file(text: str) -> str:
    """A path a command may write a file to: not a folder, and no folder on its way is a file (its
    missing folders are created when it is written). Checked before any work, so the error names
    the flag and the path, never a temporary file beside it."""
    path = Path(text)
    if not text or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text or '(empty)'}: is a folder; give a file name")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise argparse.ArgumentTypeError(f"{text}: {parent} is a file, not a folder")
    return text


def existing_dir(text: str) -> str:
    if not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {text}")
    return text


def json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value
