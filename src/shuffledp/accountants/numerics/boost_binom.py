"""The binomial pmf and cdf of ``scipy.stats.binom`` without its per-call argument handling, for
the accountants' hot loops (many calls on arrays of a few hundred cells).

``stats.binom.pmf(k, n, p)`` / ``.cdf`` check and broadcast every argument, select the valid
cells and call Boost's binomial pmf / cdf (scipy's ``_binom_pmf`` / ``_binom_cdf`` ufuncs) on
them, clipped to ``[0, 1]``; on small arrays that handling costs more than Boost. Here, when every
cell is one on which scipy would call Boost (``0 <= k <= n`` for the pmf, ``0 <= k < n`` for the
cdf, ``k`` and ``n`` integral and finite, ``0 <= p <= 1``; ``p`` a number or an array), the same
ufunc runs on the same arguments and is clipped the same way: the same numbers, bit for bit
(tests/test_boost_binom.py compares them with scipy's on valid and edge arguments). Any other
call goes to ``stats.binom`` itself. Without the ufuncs (another scipy), every call does.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

try:  # scipy's Boost-backed ufuncs (what stats.binom's _pmf and _cdf call)
    from scipy.special._ufuncs import _binom_cdf as _CDF
    from scipy.special._ufuncs import _binom_pmf as _PMF
except ImportError:  # pragma: no cover - another scipy layout: the public path
    _CDF = _PMF = None


def _integral(x: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(x)) and np.all(x == np.floor(x)))


def binom_pmf(k, n, p) -> np.ndarray:
    """``stats.binom.pmf(k, n, p)`` as a float array."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    if (_PMF is not None and np.all((p >= 0.0) & (p <= 1.0)) and _integral(k) and _integral(n)
            and np.all((k >= 0.0) & (k <= n))):
        return np.clip(_PMF(k, n, p), 0.0, 1.0)
    return np.asarray(stats.binom.pmf(k, n, p), dtype=float)


def binom_cdf(k, n, p) -> np.ndarray:
    """``stats.binom.cdf(k, n, p)`` as a float array."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    p = np.asarray(p, dtype=float)
    if (_CDF is not None and np.all((p >= 0.0) & (p <= 1.0)) and _integral(k) and _integral(n)
            and np.all((k >= 0.0) & (k < n))):
        return np.clip(_CDF(k, n, p), 0.0, 1.0)
    return np.asarray(stats.binom.cdf(k, n, p), dtype=float)
