"""The accountants comparison's shortcuts (issue 36) give the numbers of the plain code: binary
RR's exact laws built in one batched FFT (``lower_bounds._binary_rr_laws``), bit for bit the
row-by-row ``scipy.signal.fftconvolve`` they replace, and cached across deltas."""

import math

import numpy as np
import pytest
from scipy import signal, stats

from shuffledp.accountants.lower import lower_bounds as lb


def _laws_row_by_row(eps0, n):
    """The laws as built before: one binomial pair and one fftconvolve per configuration."""
    e = math.exp(eps0)
    p, q = e / (e + 1.0), 1.0 / (e + 1.0)
    N = n - 1
    rows = []
    for j in range(N + 1):
        a = stats.binom.pmf(np.arange(j + 1), j, p)
        b = stats.binom.pmf(np.arange(N - j + 1), N - j, q)
        rows.append(np.clip(signal.fftconvolve(a, b), 0.0, None) if j and j < N else (a if j else b))
    others = np.array([np.pad(r, (0, N + 1 - r.size)) for r in rows])
    shifted = np.pad(others, ((0, 0), (1, 0)))
    base = np.pad(others, ((0, 0), (0, 1)))
    return p * shifted + q * base, q * shifted + p * base


@pytest.mark.parametrize("eps0", [0.5, 1.0, 4.0, 8.0])
@pytest.mark.parametrize("n", [2, 3, 4, 17, 250, 1000])
def test_batched_laws_equal_the_row_by_row_laws_bit_for_bit(eps0, n):
    lb._binary_rr_laws.cache_clear()
    P, Q = lb._binary_rr_laws(eps0, n)
    P0, Q0 = _laws_row_by_row(eps0, n)
    assert P.shape == P0.shape == (n, n + 1)
    assert np.array_equal(P, P0) and np.array_equal(Q, Q0)


def test_laws_are_cached_read_only():
    lb._binary_rr_laws.cache_clear()
    first = lb.binary_rr_exact_eps(1.0, 300, 1e-6)
    hits = lb._binary_rr_laws.cache_info().hits
    assert lb.binary_rr_exact_eps(1.0, 300, 1e-8) > first   # a smaller delta costs more eps
    assert lb._binary_rr_laws.cache_info().hits == hits + 1
    P, _ = lb._binary_rr_laws(1.0, 300)
    with pytest.raises(ValueError):
        P[0, 0] = 1.0
