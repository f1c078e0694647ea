"""clone_window reuses the tails its window search evaluated and draws the pmf at t - 1 and t in one
call; its window, pmfs and skipped mass must be those of the direct definition (scipy's binomial
evaluated at the window's ends and at every t), bit for bit, degenerate rates included."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from shuffledp.accountants.numerics.clone_counts import clone_window


def _direct(N: int, pc: float, tail: float):
    """The window by its definition: every value computed afresh from scipy.stats.binom."""
    if pc <= 0.0 or N == 0:
        c_lo = c_hi = 0
    elif pc >= 1.0:
        c_lo = c_hi = N
    else:
        sd = math.sqrt(N * pc * (1 - pc))
        z = math.sqrt(2 * math.log(1 / tail))
        c_lo = max(0, int(stats.binom.ppf(tail, N, pc)) - 1)
        while c_lo > 0 and stats.binom.cdf(c_lo, N, pc) > tail:
            c_lo = max(0, c_lo - int(sd) - 1)
        c_hi = min(N, int(math.ceil(N * pc + z * sd)) + 2)
        while c_hi < N and stats.binom.sf(c_hi - 1, N, pc) > tail:
            c_hi = min(N, c_hi + int(sd) + 2)
    tail_lo = float(stats.binom.cdf(c_lo, N, pc)) if c_lo > 0 else 0.0
    tail_hi = float(stats.binom.sf(c_hi - 1, N, pc)) if c_hi < N else 0.0
    t = np.arange(c_lo + 1 if c_lo > 0 else 0, (c_hi if c_hi < N else N + 1) + 1, dtype=np.int64)

    def pmf(k):
        out = np.zeros(k.shape)
        ok = (k >= 0) & (k <= N)
        if pc <= 0.0:
            out[ok & (k == 0)] = 1.0
        elif pc >= 1.0:
            out[ok & (k == N)] = 1.0
        else:
            out[ok] = stats.binom.pmf(k[ok].astype(float), float(N), pc)
        return out

    return t, pmf(t - 1), pmf(t), tail_lo + tail_hi


CASES = [(0, 0.3, 1e-12), (5, 0.0, 1e-12), (5, 1.0, 1e-12), (1, 0.5, 1e-12), (2, 1.0, 1e-5),
         (1000, 0.0, 1e-50), (100, 0.37, 1e-12), (10_000, 2e-4, 1e-15), (99_999, 0.02, 1e-14),
         (10**6, 1e-7, 1e-15), (10**7, 3e-3, 1e-200), (50, 0.999, 1e-300), (3, 0.5, 0.2)]


@pytest.mark.parametrize("N, pc, tail", CASES)
def test_clone_window_equals_its_definition(N, pc, tail):
    clone_window.cache_clear()
    got, want = clone_window(N, pc, tail), _direct(N, pc, tail)
    for g, w in zip(got[:3], want[:3], strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w)
        assert not g.flags.writeable
    assert got[3] == want[3]
