"""scipy's compiled kernels for the accountants, without the cost of importing scipy's packages.

The accountants need the binomial pmf/cdf/sf/quantiles, the regularised incomplete beta
function and Brent's root finder. All three are compiled code in scipy (Boost's binomial and
``betainc`` ufuncs in ``scipy.special._ufuncs``, ``_brentq`` in ``scipy.optimize._zeros``), but the
ordinary imports run the ``__init__`` of ``scipy.stats``, ``scipy.special`` and ``scipy.optimize``,
which load scipy's array-API layer and most of the library: about 1 s on the project's 2-core
machine, more than ``shuffledp account best`` then spends computing at n = 1e6.

This module imports the two compiled modules with a bare stand-in for their parent package
(under the package's import lock, removed again at once; a later ``import scipy.special`` runs normally and
reuses them) and rebuilds, around the very same ufuncs, the thin Python layers scipy puts on top:

* :data:`binom` -- ``pmf``, ``cdf``, ``sf``, ``ppf``, ``isf`` with the semantics of
  ``scipy.stats.binom`` (invalid parameters give NaN, arguments outside the support give the
  limits, values clipped to [0, 1]); any other attribute is read from ``scipy.stats.binom``;
* :data:`stats` / :data:`special` -- stand-ins for the modules ``scipy.stats`` and
  ``scipy.special``: ``stats.binom`` is :data:`binom`, ``special.betainc`` the ufunc; any other name
  imports the real module on first use (so code written against scipy keeps working);
* :func:`brentq` -- ``scipy.optimize.brentq`` (same argument checks, same C routine).

Every number is the one scipy's public functions give, bit for bit
(``tests/test_binom_backend.py`` compares them on a grid). If the private names are missing
(another scipy) or ``SHUFFLEDP_PUBLIC_SCIPY=1`` is set, everything falls back to the public
functions: slower to import, the same numbers.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import operator
import os
import sys
import types

import numpy as np

__all__ = ["FAST", "binom", "stats", "special", "brentq"]


def _load_compiled(package: str, module: str) -> types.ModuleType:
    """``import package.module`` without running ``package/__init__.py`` (when not yet imported).

    The stand-in is put in ``sys.modules`` under the package's import lock and marked as being
    initialised, so that another thread importing the package meanwhile waits for the lock (as
    for any module being imported) and then imports the real package."""
    full = f"{package}.{module}"
    if package in sys.modules:
        return importlib.import_module(full)
    lock = getattr(importlib._bootstrap, "_ModuleLockManager", None)  # private; absent: no lock
    with lock(package) if lock is not None else contextlib.nullcontext():
        if package in sys.modules:
            return importlib.import_module(full)
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"{package} is not a package")
        spec._initializing = True
        stand_in = types.ModuleType(package)
        stand_in.__path__ = list(spec.submodule_search_locations)
        stand_in.__spec__ = spec
        sys.modules[package] = stand_in
        try:
            return importlib.import_module(full)
        finally:
            if sys.modules.get(package) is stand_in:
                del sys.modules[package]


FAST = os.environ.get("SHUFFLEDP_PUBLIC_SCIPY", "") not in ("1", "true", "yes")
if FAST:
    try:
        _uf = _load_compiled("scipy.special", "_ufuncs")
        _zeros = _load_compiled("scipy.optimize", "_zeros")
        _ufuncs = (_uf._binom_pmf, _uf._binom_cdf, _uf._binom_sf, _uf._binom_ppf, _uf._binom_isf,
                   _uf.betainc, _zeros._brentq)
    except (ImportError, AttributeError):  # pragma: no cover - a scipy without these private names
        FAST = False


class _Lazy:
    """Stands for the module ``name``: the attributes in ``fast`` are served from here, any other
    is read from the real module, imported on first use."""

    def __init__(self, name: str, fast: dict):
        self._name = name
        self._fast = fast

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        try:
            return self._fast[attr]
        except KeyError:
            return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<scipy kernels standing for {self._name} (fast: {', '.join(self._fast) or 'none'})>"


_NAN = np.nan


def _argcheck(n, p):
    # scipy.stats.binom's parameter check: n a non-negative integer, 0 <= p <= 1
    return (n >= 0) & (n == np.round(n)) & (p >= 0) & (p <= 1)


def _reduce(cond, *args):
    """The arguments at the positions where ``cond`` holds, in C order (size-1 arguments are
    passed as they are and broadcast by the ufunc), as scipy.stats' ``argsreduce``."""
    if np.all(cond):
        return np.broadcast_arrays(*(np.atleast_1d(a) for a in args), cond)[:-1]
    return [a if np.size(a) == 1 else np.extract(cond, np.broadcast_to(a, cond.shape)) for a in args]


def _finish(out):
    return out[()] if out.ndim == 0 else out


class _Binom:
    """``scipy.stats.binom``'s pmf, cdf, sf, ppf and isf on Boost's ufuncs (see the module doc)."""

    def __init__(self, pmf, cdf, sf, ppf, isf):
        self._pmf = pmf  # the raw ufunc, as scipy.stats.binom._pmf: valid arguments only
        self._cdf_u, self._sf_u, self._ppf_u, self._isf_u = cdf, sf, ppf, isf

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        from scipy import stats as _stats

        return getattr(_stats.binom, attr)

    @staticmethod
    def _shift(k, n, p):
        loc = np.asarray(0)
        k, n, p = np.asarray(k), np.asarray(n), np.asarray(p)
        return np.asarray(k - loc), n, p

    def pmf(self, k, n, p):
        k, n, p = self._shift(k, n, p)
        cond0 = _argcheck(n, p)
        cond = cond0 & ((k >= 0) & (k <= n)) & (np.floor(k) == k)
        out = np.zeros(np.shape(cond), "d")
        np.place(out, (1 - cond0) + np.isnan(k), _NAN)
        if np.any(cond):
            np.place(out, cond, np.clip(self._pmf(*_reduce(cond, k, n, p)), 0, 1))
        return _finish(out)

    def cdf(self, k, n, p):
        k, n, p = self._shift(k, n, p)
        cond0 = _argcheck(n, p)
        cond1 = (k >= 0) & (k < n)
        cond2 = k >= n
        cond3 = np.isneginf(k)
        cond = cond0 & cond1 & np.isfinite(k)
        out = np.zeros(np.shape(cond), "d")
        np.place(out, cond2 * (cond0 == cond0), 1.0)
        np.place(out, cond3 * (cond0 == cond0), 0.0)
        np.place(out, (1 - cond0) + np.isnan(k), _NAN)
        if np.any(cond):
            kk, nn, pp = _reduce(cond, k, n, p)
            np.place(out, cond, np.clip(self._cdf_u(np.floor(kk), nn, pp), 0, 1))
        return _finish(out)

    def sf(self, k, n, p):
        k, n, p = self._shift(k, n, p)
        cond0 = _argcheck(n, p)
        cond1 = (k >= 0) & (k < n)
        cond2 = ((k < 0) | np.isneginf(k)) & cond0
        cond = cond0 & cond1 & np.isfinite(k)
        out = np.zeros(np.shape(cond), "d")
        np.place(out, (1 - cond0) + np.isnan(k), _NAN)
        np.place(out, cond2, 1.0)
        if np.any(cond):
            kk, nn, pp = _reduce(cond, k, n, p)
            np.place(out, cond, np.clip(self._sf_u(np.floor(kk), nn, pp), 0, 1))
        return _finish(out)

    def _quantile(self, fn, q, n, p, *, q_low: float):
        """ppf (``q_low = 0``) or isf (``q_low = 1``): ``fn`` inside (0, 1); at ``q = q_low`` the
        left end of the support minus one (-1), at the other end of [0, 1] the right end (n)."""
        loc = np.asarray(0)
        q, n, p = np.asarray(q), np.asarray(n), np.asarray(p)
        cond0 = _argcheck(n, p) & (loc == loc)
        cond = cond0 & ((q > 0) & (q < 1))
        at_left = (q == q_low) & cond0
        at_right = (q == 1.0 - q_low) & cond0
        out = np.full(np.shape(cond), fill_value=_NAN, dtype="d")
        np.place(out, at_left, _reduce(at_left, np.atleast_1d(-1 + loc))[0])
        np.place(out, at_right, _reduce(at_right, np.atleast_1d(n + loc))[0])
        if np.any(cond):
            np.place(out, cond, fn(*_reduce(cond, q, n, p)) + loc)
        return _finish(out)

    def ppf(self, q, n, p):
        """Smallest k with cdf(k) >= q (q = 0: -1; q = 1: n), as scipy.stats.binom.ppf."""
        return self._quantile(self._ppf_u, q, n, p, q_low=0.0)

    def isf(self, q, n, p):
        """Smallest k with sf(k) <= q (q = 1: -1; q = 0: n), as scipy.stats.binom.isf."""
        return self._quantile(self._isf_u, q, n, p, q_low=1.0)


if FAST:
    binom = _Binom(*_ufuncs[:5])
    stats = _Lazy("scipy.stats", {"binom": binom})
    special = _Lazy("scipy.special", {"betainc": _ufuncs[5]})
else:
    binom = _Lazy("scipy.stats", {}).binom
    stats = _Lazy("scipy.stats", {})
    special = _Lazy("scipy.special", {})


def _raise_on_nan(f):
    def wrapped(x, *args):
        fx = f(x, *args)
        wrapped.calls += 1
        if np.isnan(fx):
            err = ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
            err._x = x
            err._function_calls = wrapped.calls
            raise err
        return fx

    wrapped.calls = 0
    return wrapped


_BRENTQ_RTOL = 4 * np.finfo(float).eps


def brentq(f, a, b, args=(), xtol=2e-12, rtol=_BRENTQ_RTOL, maxiter=100):
    """``scipy.optimize.brentq(f, a, b, args, xtol, rtol, maxiter)`` (root only, ``disp=True``)."""
    if not FAST:
        from scipy.optimize import brentq as _brentq

        return _brentq(f, a, b, args=args, xtol=xtol, rtol=rtol, maxiter=maxiter)
    if not isinstance(args, tuple):
        args = (args,)
    maxiter = operator.index(maxiter)
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < _BRENTQ_RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {_BRENTQ_RTOL:g})")
    return _ufuncs[6](_raise_on_nan(f), a, b, xtol, rtol, maxiter, args, False, True)
