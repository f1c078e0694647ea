"""The accountants reach scipy through its public API only (issue 25, item 7).

They used to load scipy's private compiled modules under a stand-in parent package
(``accountants/_kernels.py``) to save part of scipy's import time. That module is gone: every
binomial pmf/cdf/sf/quantile is ``scipy.stats.binom``'s, ``betainc`` is ``scipy.special``'s and
the root finder ``scipy.optimize.brentq``. These tests scan the package's source for any way back
to scipy's private names (a private module, a private attribute of a scipy object, the import
system's private ``importlib._bootstrap``), and check that the thin wrappers the accountants keep
around the binomial law give scipy's public numbers bit for bit, edge cases included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import shuffledp

SRC = Path(shuffledp.__file__).resolve().parent


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def _scipy_violations(tree: ast.AST) -> list[str]:
    """Private scipy names reached in one module: ``import scipy._x``, ``from scipy.y._z import w``,
    ``from scipy.y import _w``, ``<name bound to scipy>._attr``, and ``importlib._bootstrap``."""
    bad, scipy_names = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "scipy":
                    scipy_names.add((a.asname or a.name).split(".")[0])
                    if _private(a.name):
                        bad.append(f"line {node.lineno}: import {a.name}")
                if a.name.startswith("importlib._"):
                    bad.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "scipy":
            if _private(node.module):
                bad.append(f"line {node.lineno}: from {node.module} import ...")
            for a in node.names:
                scipy_names.add(a.asname or a.name)
                if a.name.startswith("_"):
                    bad.append(f"line {node.lineno}: from {node.module} import {a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in scipy_names or root.id == "importlib"):
                bad.append(f"line {node.lineno}: {root.id}...{node.attr}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ("_pmf", "_cdf", "_sf"):
            bad.append(f"line {node.lineno}: getattr(..., {node.value!r})")
        # getattr(<anything>, "_private"): a private name spelled as a string (a private ufunc of
        # scipy.special reached as getattr(getattr(special, "_ufuncs"), "_binom_pmf"), say)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str) and node.args[1].value.startswith("_")
                and not node.args[1].value.startswith("__") and node.args[1].value not in ("_pmf", "_cdf", "_sf")):
            bad.append(f"line {node.lineno}: getattr(..., {node.args[1].value!r})")
    return bad


def test_the_scan_finds_each_kind_of_private_access():
    # the scan itself: each construct it must refuse, and the public ones it must let through
    code = ("import scipy._lib\nfrom scipy.special._ufuncs import betainc\nfrom scipy.special import _ufuncs\n"
            "from scipy import stats\nx = stats.binom._pmf\nimport importlib\nimportlib._bootstrap\n"
            "y = getattr(stats.binom, '_cdf')\n")
    assert len(_scipy_violations(ast.parse(code))) == 6
    # a private ufunc reached through strings
    hidden = ("from scipy import special\n"
              "f = getattr(getattr(special, '_ufuncs', None), '_binom_pmf', None)\n")
    assert len(_scipy_violations(ast.parse(hidden))) == 2
    assert _scipy_violations(ast.parse("from scipy import special, stats\nfrom scipy.optimize import brentq\n"
                                       "a = stats.binom.pmf\nb = special.betainc\nc = stats.binom.__name__\n")) == []


def test_no_module_reaches_private_scipy_names():
    files = sorted(SRC.rglob("*.py"))
    assert len(files) > 50 and not (SRC / "accountants" / "_kernels.py").exists()
    found = {str(p.relative_to(SRC)): v for p in files if (v := _scipy_violations(ast.parse(p.read_text())))}
    assert found == {}


def _same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("N,p", [(1, 0.5), (7, 0.3), (100, 1e-12), (10_000, 0.5), (999_999, 0.9), (10**7, 1e-3)])
def test_wrapped_binomials_are_scipys(N, p):
    from shuffledp.accountants.numerics import clone_counts as cc
    from shuffledp.accountants.special import poisson

    k = np.unique(np.clip(np.round(N * p + np.sqrt(N * p * (1 - p)) * np.linspace(-12, 12, 41)), 0, N))
    assert _same(cc.binom_pmf_fast(k, np.full(k.size, N), p), stats.binom.pmf(k, N, p))
    below = k[k < N]
    assert _same(poisson._cdf_fast(below, np.full(below.size, N), p), stats.binom.cdf(below, N, p))
    # variation ratio's pmf with its support edges (0 outside 0..N, point masses at p = 0 and 1)
    kk = np.array([-2, -1, 0, 1, N - 1, N, N + 1], dtype=np.int64)
    assert _same(cc.binom_pmf(kk, N, p), np.where((kk >= 0) & (kk <= N), stats.binom.pmf(kk, N, p), 0.0))
    assert cc.binom_pmf(kk, N, 0.0).tolist() == [float(x == 0) for x in kk]
    assert cc.binom_pmf(kk, N, 1.0).tolist() == [float(x == N) for x in kk]
