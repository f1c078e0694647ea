"""The accountants' scipy kernels (shuffledp.accountants._kernels) give scipy's numbers bit for bit.

`_kernels` rebuilds scipy.stats.binom's pmf/cdf/sf/ppf/isf around Boost's ufuncs and calls
brentq's C routine directly, so that the accountants need not import scipy.stats (issue 17: the
import cost more than the computation). These tests compare every function with scipy's public
one, as raw bytes, on a grid with the edge cases (N = 0, k outside the support, non-integer and
infinite k, N up to 1e7, tiny and huge p, invalid parameters, broadcasting), and check in
subprocesses that the accountant modules load without scipy.stats and that the public fallback
gives the same `account best` output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from scipy import optimize, special, stats

from shuffledp.accountants import _kernels as K

# Boost warns (and scipy with it) when a quantile cannot be bracketed at the extreme arguments
pytestmark = pytest.mark.filterwarnings("ignore:Error in function boost:RuntimeWarning")

NS = [0.0, 1.0, 2.0, 7.0, 100.0, 1e4, 999_999.0, 1e7]
PS = [0.0, 1e-300, 1e-12, 1e-3, 0.1, 0.3, 0.5, 0.9, 1.0 - 1e-12, 1.0]
BAD = [(-1.0, 0.5), (2.5, 0.5), (10.0, -0.1), (10.0, 1.5), (np.nan, 0.5), (10.0, np.nan)]


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _ks(N: float, p: float) -> np.ndarray:
    mean, sd = N * p, np.sqrt(N * p * (1 - p))
    core = np.round(mean + sd * np.linspace(-12, 12, 41))
    edges = [-2.0, -1.0, 0.0, 1.0, N - 1.0, N, N + 1.0, N + 5.0, 0.5, N / 2 + 0.25, -0.5,
             np.nan, np.inf, -np.inf]
    return np.concatenate([core, edges])


def test_fast_path_is_active():
    # the point of the module; the fallback is tested in a subprocess below
    assert K.FAST
    assert isinstance(K.binom, K._Binom)


@pytest.mark.parametrize("fn", ["pmf", "cdf", "sf"])
def test_pmf_cdf_sf_bit_for_bit(fn):
    ours, theirs = getattr(K.binom, fn), getattr(stats.binom, fn)
    checked = 0
    for N in NS:
        for p in PS:
            k = _ks(N, p)
            assert _same(ours(k, N, p), theirs(k, N, p)), (fn, N, p)
            # one array of N and p against one k, and scalars (numpy scalar results)
            assert _same(ours(k[:, None], np.array([N, N + 1.0]), p), theirs(k[:, None], np.array([N, N + 1.0]), p))
            for kk in (k[0], k[-4], 0, int(N)):
                a, b = ours(kk, N, p), theirs(kk, N, p)
                assert type(a) is type(b) and _same(a, b), (fn, kk, N, p)
            checked += k.size
    for N, p in BAD:
        k = _ks(10.0, 0.3)
        assert _same(ours(k, N, p), theirs(k, N, p)), (fn, N, p)
    # integer arrays (the lower-bound module passes them), broadcasting, mixed validity
    k = np.arange(-3, 40)
    assert _same(ours(k, 30, 0.25), theirs(k, 30, 0.25))
    Ns = np.array([[0.0], [5.0], [-1.0], [30.0]])
    ps = np.array([0.0, 0.2, 1.0, 2.0])
    assert _same(ours(3.0, Ns, ps), theirs(3.0, Ns, ps))
    assert _same(ours(k[:, None, None], Ns, ps), theirs(k[:, None, None], Ns, ps))
    assert checked > 3000


@pytest.mark.parametrize("fn", ["ppf", "isf"])
def test_quantiles_bit_for_bit(fn):
    ours, theirs = getattr(K.binom, fn), getattr(stats.binom, fn)
    qs = np.array([0.0, 1e-300, 5e-301, 1e-30, 5e-13, 1e-10, 1e-3, 0.3, 0.5, 0.999,
                   1.0 - 1e-16, 1.0, np.nan, -0.1, 1.1])
    for N in NS:
        for p in PS:
            assert _same(ours(qs, N, p), theirs(qs, N, p)), (fn, N, p)
            for q in (0.0, 1e-30, 0.5, 1.0):
                a, b = ours(q, N, p), theirs(q, N, p)
                assert type(a) is type(b) and _same(a, b), (fn, q, N, p)
    for N, p in BAD:
        assert _same(ours(qs, N, p), theirs(qs, N, p)), (fn, N, p)
    Ns = np.array([[0.0], [5.0], [-1.0], [1e6]])
    ps = np.array([0.0, 0.2, 1.0, 2.0])
    for q in (0.0, 1.0, 1e-20):
        assert _same(ours(q, Ns, ps), theirs(q, Ns, ps))
    assert _same(ours(qs[:, None, None], Ns, ps), theirs(qs[:, None, None], Ns, ps))


def test_window_quantiles_as_the_decomposition_uses_them():
    # _t_window / DecomposedPair: ppf(tail/2, N, s) and the mirror ppf(tail/2, N, 1 - s) with
    # arrays of N, then cdf(lo - 1) and sf(hi)
    N = np.arange(0.0, 2e6, 9973.0)
    for s in (1e-6, 0.01, 0.2, 0.5, 1.0 - 1e-9):
        for tail in (1e-300, 1e-30, 5e-15):
            lo = K.binom.ppf(tail / 2, N, s)
            assert _same(lo, stats.binom.ppf(tail / 2, N, s))
            assert _same(K.binom.ppf(tail / 2, N, 1.0 - s), stats.binom.ppf(tail / 2, N, 1.0 - s))
            assert _same(K.binom.cdf(lo - 1.0, N, s), stats.binom.cdf(lo - 1.0, N, s))
            assert _same(K.binom.sf(N - lo, N, s), stats.binom.sf(N - lo, N, s))


def test_raw_pmf_and_betainc_are_scipys():
    k = np.arange(0.0, 51.0)
    assert _same(K.binom._pmf(k, 50.0, 0.37), stats.binom._pmf(k, 50.0, 0.37))
    a = np.linspace(1.0, 1e6, 97)
    assert _same(K.special.betainc(a, a[::-1], 0.5), special.betainc(a, a[::-1], 0.5))
    # names not served by the kernels come from the real modules
    assert K.special.comb is special.comb
    assert K.stats.norm is stats.norm
    assert K.binom.logpmf(3, 10, 0.5) == stats.binom.logpmf(3, 10, 0.5)


def test_brentq_is_scipys():
    cases = [(lambda x: np.log(x) - 0.3, 0.1, 10.0), (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
             (lambda x: np.expm1(x) - 1e-9, 0.0, 1.0)]
    for f, a, b in cases:
        for xtol, rtol in ((2e-12, 4 * np.finfo(float).eps), (1e-15, 1e-6), (1e-9, 1e-3)):
            ours = K.brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=100)
            theirs = optimize.brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=100)
            assert ours.hex() == theirs.hex()
    with pytest.raises(ValueError, match="different signs"):
        K.brentq(lambda x: x * x + 1, -1.0, 1.0)
    with pytest.raises(ValueError, match="NaN"):
        K.brentq(lambda x: np.nan, -1.0, 1.0)
    with pytest.raises(ValueError, match="rtol too small"):
        K.brentq(lambda x: x, -1.0, 1.0, rtol=1e-17)
    with pytest.raises(RuntimeError):
        K.brentq(lambda x: x**3 - 2 * x - 5, 2.0, 3.0, xtol=1e-300, rtol=1e-15, maxiter=2)


def _run(code: str, **env) -> str:
    full = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_accountants_load_without_scipy_stats():
    only = _run("import sys\nimport shuffledp.accountants.decomposition\nprint('scipy.stats' in sys.modules)")
    assert only.strip() == "False"
    code = (
        "import sys\n"
        "import shuffledp.accountants.decomposition, shuffledp.accountants.best\n"
        "from shuffledp.accountants import best, lower_bounds, variation_ratio, clones, blanket\n"
        "best.best_eps('krr', 1.0, 2000, 1e-6, k=5)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2] in (['scipy', 'stats'], "
        "['scipy', 'special'], ['scipy', 'optimize']) and m.count('.') < 2))\n"
        "import scipy.stats, scipy.special, scipy.optimize\n"  # the real packages still load after us
        "print(scipy.stats.binom.pmf(3, 10, 0.5) == 0.1171875, scipy.special._ufuncs.betainc is scipy.special.betainc,"
        " scipy.optimize.brentq(lambda x: x - 1, 0, 2))\n"
    )
    lines = _run(code).splitlines()
    assert lines[0] == "[]"  # neither scipy.stats nor the scipy.special / scipy.optimize packages
    assert lines[1] == "True True 1.0"


def test_public_fallback_gives_the_same_account_best():
    code = (
        "import json, sys\n"
        "from shuffledp.accountants import _kernels, best\n"
        "res = best.best_eps('krr', 2.0, 3000, 1e-6, k=10)\n"
        "print(json.dumps([_kernels.FAST, 'scipy.stats' in sys.modules, res['eps'].hex(), res['eps_lower'].hex(),"
        " {nm: float(v['eps']).hex() for nm, v in res['bounds'].items()}]))\n"
    )
    fast = json.loads(_run(code))
    public = json.loads(_run(code, SHUFFLEDP_PUBLIC_SCIPY="1"))
    assert fast[:2] == [True, False] and public[:2] == [False, True]
    assert fast[2:] == public[2:]
    assert len(fast[4]) == 10
