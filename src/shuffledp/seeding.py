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


def rng_under(base_seed: int, *prefix: object):
    """``rng(base_seed, *prefix, *rest)`` as a function of ``rest``: the same generators (the same
    seeds, tests/test_seeding.py), with the prefix's JSON encoded once instead of at every call
    (a run job derives one generator per grid point and repetition under the same prefix)."""
    head = json.dumps([int(base_seed), *[_canon(p) for p in prefix]], separators=(",", ":"))[:-1]

    def make(*rest: object) -> np.random.Generator:
        if all(type(p) is int for p in rest):  # JSON writes an int as str() does
            tail = "".join("," + str(p) for p in rest) + "]"
        else:
            tail = "," + json.dumps([_canon(p) for p in rest], separators=(",", ":"))[1:] if rest else "]"
        digest = hashlib.sha256((head + tail).encode("utf-8")).digest()
        return np.random.default_rng(int.from_bytes(digest[:8], "big") >> 1)

    return make


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
