"""Deterministic seeds derived from a base seed and a job's identifying parts.

Every random draw in the project comes from ``rng(base_seed, *parts)`` where ``parts`` are the
job's wildcards (strings or numbers). The derivation hashes a canonical JSON encoding with
SHA-256, so it is stable across Python versions, platforms and processes (unlike ``hash()``).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np


def derive_seed(base_seed: int, *parts: object) -> int:
    """A 63-bit seed from ``base_seed`` and any JSON-encodable ``parts``."""
    payload = json.dumps([int(base_seed), *[_canon(p) for p in parts]], separators=(",", ":"))
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def rng(base_seed: int, *parts: object) -> np.random.Generator:
    """A numpy Generator seeded by :func:`derive_seed`."""
    return np.random.default_rng(derive_seed(base_seed, *parts))


def _canon(p: object) -> object:
    if isinstance(p, float) and p.is_integer():
        return int(p)
    if isinstance(p, (np.integer,)):
        return int(p)
    if isinstance(p, (np.floating,)):
        return _canon(float(p))
    if isinstance(p, (list, tuple)):
        return [_canon(x) for x in p]
    return p
