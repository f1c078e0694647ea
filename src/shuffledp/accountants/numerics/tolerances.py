"""Tolerances every evaluation charges: the relative error of scipy's binomial values, the
absolute guard below the normal range of doubles and the smallest mass left outside a window."""

from __future__ import annotations

import numpy as np

# scipy's binomial pmf / cdf / sf lose digits as the law widens: measured against 50-digit mpmath
# (tests/test_blocked_pairs.py) the relative error stays below 2e-14 x its standard deviation
# (2.4e-7 at n = 1e15, p = 1/2, 36 standard deviations out); charged with a margin of 13
RTOL_BASE, RTOL_PER_SD = 1e-11, 2e-13


SUBNORMAL_GUARD = 1e-306  # absolute error charged on a binomial mass or tail beside its relative one: below
# the normal range (2.2e-308) doubles lose relative digits, never this much absolutely
TAIL_MIN = 1e-304  # smallest mass left outside a window: a few such charges stay near 1e-3 of delta = 1e-300


def binom_rtol(N, p: float):
    """Relative error charged on a binomial pmf / cdf / sf value of Bin(N, p) (arrays broadcast)."""
    return RTOL_BASE + RTOL_PER_SD * np.sqrt(np.maximum(np.asarray(N, dtype=np.float64), 0.0) * p * (1.0 - p))
