"""Domains of the accountants: one error type and the checks every accountant uses.

An accountant answers inside its domain with a sound number and outside it with
:class:`AccountantDomainError`, which names the offending argument by its CLI flag. The
``shuffledp account ...`` commands print it as one line, ``shuffledp: error: --FLAG: message``
(exit status 2).

Domains (also in docs/accountants_internals.md, "Domains"):

=========================  ==================================================================
argument                   domain
=========================  ==================================================================
``eps0`` (local eps)       finite, ``0 < eps0 <= EPS0_MAX`` (= 500: ``e^eps0`` stays a double)
``eps`` (central eps)      finite, ``eps >= 0``
``delta``                  ``0 < delta < 1``
``n`` (users)              integer, ``2 <= n <= N_MAX`` (= 1e15: every count is an exact
                           double below 2^53; larger sizes are refused, not approximated)
``n`` (poisson, segmented) at most ``POISSON_N_MAX`` (= 1e9 users)
``n`` (personalized)       at most ``PERSONALIZED_N_MAX`` (= 1e6) users, one local eps each
``k`` (k-RR values)        integer, ``2 <= k <= K_MAX`` (= 1e9)
``rtol``                   ``1e-12 <= rtol <= 0.1``
=========================  ==================================================================
"""

from __future__ import annotations

import math
import numbers

from shuffledp.errors import DomainError

__all__ = [
    "AccountantDomainError",
    "EPS0_MAX",
    "N_MAX",
    "PERSONALIZED_N_MAX",
    "POISSON_N_MAX",
    "K_MAX",
    "check_eps0",
    "check_eps",
    "check_delta",
    "check_n",
    "check_int",
    "check_positive",
    "check_rtol",
    "check_choice",
]

EPS0_MAX = 500.0
N_MAX = 10**15
POISSON_N_MAX = 10**9        # Poisson randomizer / segmented: 20 s at 1e9 (non-integer m), ~60 s at 1e10
PERSONALIZED_N_MAX = 10**6   # personalized accountants: one local eps per user (45 s at 1e6, 5 bounds)
K_MAX = 10**9


class AccountantDomainError(DomainError):
    """An argument outside an accountant's domain. ``flag`` is the CLI flag without dashes."""

    def __init__(self, flag: str, message: str):
        self.flag = str(flag)
        self.message = " ".join(str(message).split())
        super().__init__(self.flag, self.message)

    def __str__(self) -> str:
        return f"--{self.flag}: {self.message}"


def _number(value, flag: str) -> float:
    if value is None:
        raise AccountantDomainError(flag, "required")
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str)):
        raise AccountantDomainError(flag, f"{value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        raise AccountantDomainError(flag, f"{value!r} is not a number") from None


def check_positive(value, flag: str, *, upper: float = math.inf) -> float:
    """A finite number in ``(0, upper]``."""
    x = _number(value, flag)
    if not (math.isfinite(x) and 0 < x <= upper):
        bound = "" if math.isinf(upper) else f" and <= {upper:g}"
        raise AccountantDomainError(flag, f"{x!r} must be a finite number > 0{bound}")
    return x


def check_eps0(value, flag: str = "eps0", *, upper: float = EPS0_MAX) -> float:
    """Local epsilon: ``0 < eps0 <= upper``."""
    return check_positive(value, flag, upper=upper)


def check_eps(value, flag: str = "eps") -> float:
    """Central epsilon: finite and ``>= 0``."""
    x = _number(value, flag)
    if not (math.isfinite(x) and x >= 0):
        raise AccountantDomainError(flag, f"{x!r} must be a finite number >= 0")
    return x


def check_delta(value, flag: str = "delta") -> float:
    """``0 < delta < 1``."""
    x = _number(value, flag)
    if not (0.0 < x < 1.0):
        raise AccountantDomainError(flag, f"{x!r} must lie in the open interval (0, 1)")
    return x


def check_int(value, flag: str, low: int, high: int | None = None) -> int:
    """An integer (also given as an integral float such as ``1e5``) in ``[low, high]``."""
    if value is None:
        raise AccountantDomainError(flag, "required")
    if isinstance(value, bool):
        raise AccountantDomainError(flag, f"{value!r} is not an integer")
    if isinstance(value, numbers.Integral):
        xi = int(value)
    else:
        x = _number(value, flag)
        if not (math.isfinite(x) and x.is_integer()):
            raise AccountantDomainError(flag, f"{value!r} must be an integer")
        xi = int(x)
    if xi < low or (high is not None and xi > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high:.0e}]" if high >= 10**6 else f"in [{low}, {high}]"
        raise AccountantDomainError(flag, f"{value!r} must be an integer {rng}")
    return xi


def check_n(value, flag: str = "n", *, low: int = 2) -> int:
    """Number of users: an integer in ``[low, N_MAX]``."""
    return check_int(value, flag, low, N_MAX)


def check_rtol(value, flag: str = "rtol") -> float:
    x = _number(value, flag)
    if not (1e-12 <= x <= 0.1):
        raise AccountantDomainError(flag, f"{x!r} must lie in [1e-12, 0.1]")
    return x


def check_choice(value, flag: str, choices) -> str:
    if value not in choices:
        raise AccountantDomainError(flag, f"{value!r} is not one of {', '.join(map(str, choices))}")
    return value
