"""Semantic checks of a workflow configuration beyond its JSON schema.

``check_config`` raises :class:`ConfigError` naming the key and the rule it broke. The workflow
calls it right after ``snakemake.utils.validate``, before any job runs. Experiment sections
register their own checks with :func:`register_check`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

_CHECKS: list[Callable[[Mapping], None]] = []


class ConfigError(ValueError):
    """A configuration value that is well-typed but meaningless (e.g. shares not summing to 1)."""


def register_check(fn: Callable[[Mapping], None]) -> Callable[[Mapping], None]:
    _CHECKS.append(fn)
    return fn


def check_config(config: Mapping) -> None:
    for fn in _CHECKS:
        fn(config)


def check_shares(shares, key: str, tol: float = 1e-9) -> None:
    """Shares must be non-negative and sum to 1."""
    total = math.fsum(shares)
    if any(s < 0 for s in shares) or abs(total - 1.0) > tol:
        raise ConfigError(f"config key {key}: shares {list(shares)} must be >= 0 and sum to 1 (sum {total:g})")


def check_probability(value: float, key: str) -> None:
    if not (0.0 < value < 1.0):
        raise ConfigError(f"config key {key}: {value!r} must lie in the open interval (0, 1)")


@register_check
def _check_synthetic_names(config: Mapping) -> None:
    synth = config.get("datasets", {}).get("synthetic", []) or []
    names = [s["name"] for s in synth]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"config key datasets.synthetic: duplicate names {dupes}")
    for s in synth:
        if s["set_size"] > s["domain"]:
            raise ConfigError(
                f"config key datasets.synthetic[{s['name']}].set_size: {s['set_size']} exceeds domain {s['domain']}"
            )
