"""Shared helpers for JSON-printing CLI commands with comma-separated grids.

Every numeric flag of an ``account`` command accepts a comma-separated list; the command
evaluates the Cartesian product and prints one JSON object (a single combination) or a JSON
array (several). Each object carries its inputs beside its outputs. A progress bar (tqdm) goes to
stderr once a grid has run for more than two seconds, only when stderr is a terminal; stdout stays
pure JSON.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping

from shuffledp.errors import UsageError


def one_line_errors(command: Callable[..., int]) -> Callable[..., int]:
    """Wrap an ``account`` command: an argument outside an accountant's domain
    (:class:`~shuffledp.accountants.validation.AccountantDomainError`) or a usage error prints
    ``shuffledp: error: --FLAG: ...`` on stderr and the command returns exit status 2 itself
    (nothing on stdout), whatever the top-level handler of the CLI does."""
    from shuffledp.accountants.validation import AccountantDomainError

    @functools.wraps(command)
    def wrapped(*args, **kwargs) -> int:
        try:
            return command(*args, **kwargs)
        except (AccountantDomainError, UsageError) as exc:
            text = " ".join(str(exc).split())
            sys.stderr.write(f"shuffledp: error: {text}\n")
            return 2

    return wrapped


def parse_list(text: str | None, name: str, kind: Callable[[str], object] = float) -> list:
    """Parse ``"1,2,3"`` into a list; ``inf`` is accepted for floats. ``None`` gives ``[None]``."""
    if text is None:
        return [None]
    out = []
    for token in str(text).split(","):
        token = token.strip()
        if not token:
            raise UsageError(f"--{name}: empty value in {text!r}")
        try:
            value = kind(token)
        except ValueError:
            raise UsageError(f"--{name}: cannot read {token!r} as {kind.__name__}") from None
        if isinstance(value, float) and math.isnan(value):
            raise UsageError(f"--{name}: NaN is not allowed")
        out.append(value)
    return out


def int_like(token: str) -> int:
    """Read an integer, also written as ``1e5`` or ``100000.0``."""
    value = float(token)
    if not value.is_integer():
        raise ValueError(token)
    return int(value)
int_like.__name__ = "integer"


PROGRESS_DELAY_S = 2.0  # a bar appears only for work that takes longer than this


def progress(iterable: Iterable, total: int | None = None, desc: str | None = None) -> Iterable:
    """``iterable`` with a tqdm progress bar on stderr: shown after :data:`PROGRESS_DELAY_S` seconds,
    and only when stderr is a terminal (a log file or a pipe gets nothing)."""
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, disable=not sys.stderr.isatty(),
                delay=PROGRESS_DELAY_S, leave=False, dynamic_ncols=True)


def run_grid(grid: Mapping[str, Iterable], fn: Callable[..., Mapping[str, object]]) -> int:
    """Evaluate ``fn(**combo)`` over the product of ``grid`` and print JSON on stdout."""
    names = list(grid)
    combos = list(itertools.product(*[list(grid[k]) for k in names]))
    results = []
    for values in progress(combos, desc="combinations") if len(combos) > 1 else combos:
        combo = dict(zip(names, values, strict=True))
        out = dict(fn(**combo))
        row = {k: _jsonable(v) for k, v in combo.items() if v is not None}
        row.update({k: _jsonable(v) for k, v in out.items()})
        results.append(row)
    payload = results[0] if len(results) == 1 else results
    json.dump(payload, sys.stdout, allow_nan=False, default=_jsonable)
    sys.stdout.write("\n")
    return 0


def _jsonable(v: object) -> object:
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict)):
        try:
            return _jsonable(v.item())
        except (AttributeError, ValueError):
            pass
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v
