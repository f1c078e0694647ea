"""Inverse queries of ``account best`` (issue 25, item 4): ``solve_eps0`` and ``solve_n`` are sound
in direction (the answer's own forward call meets the target; re-checked here by an independent
forward call) and within the stated tolerance of a verified failing point."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shuffledp.accountants import best, inverse, params


@pytest.mark.parametrize("mech,kw,target,n", [
    ("krr", {"k": 2}, 0.3, 2_000), ("krr", {"k": 10}, 1.0, 10_000),
    ("general", {}, 0.5, 5_000), ("oue", {"d": 20}, 1.0, 2_000)])
def test_solve_eps0_direction_and_tolerance(mech, kw, target, n):
    res = inverse.solve_eps0(mech, target, n, 1e-6, **kw)
    eps0 = res["eps0"]
    assert res["eps"] <= target
    again = best.best_eps(mech, eps0, n, 1e-6, parallel=False, **kw)
    assert again["eps"] == res["eps"] <= target          # the forward call, made again
    assert eps0 >= target                                 # eps0 = target always qualifies
    bad = res["fails_at"]
    assert bad is not None and bad > eps0 and bad - eps0 <= res["tolerance"] * eps0
    assert best.best_eps(mech, bad, n, 1e-6, parallel=False, **kw)["eps"] > target


def test_solve_eps0_returns_the_cap_when_it_qualifies():
    res = inverse.solve_eps0("krr", 60.0, 10, 1e-6, k=2)   # above the domain's eps0: its cap answers
    assert res["eps0"] == params.BEST_EPS0_MAX and res["fails_at"] is None and res["eps"] <= 60.0


@pytest.mark.parametrize("mech,kw,target,eps0", [
    ("krr", {"k": 2}, 0.5, 2.0), ("krr", {"k": 10}, 0.3, 3.0), ("general", {}, 1.0, 4.0)])
def test_solve_n_direction_and_tolerance(mech, kw, target, eps0):
    res = inverse.solve_n(mech, target, eps0, 1e-6, **kw)
    n = res["n"]
    assert res["eps"] <= target
    assert best.best_eps(mech, eps0, n, 1e-6, parallel=False, **kw)["eps"] <= target
    bad = res["fails_at"]
    assert bad is not None and bad < n and n - bad <= max(1, res["tolerance"] * bad)
    assert best.best_eps(mech, eps0, bad, 1e-6, parallel=False, **kw)["eps"] > target


def test_solve_n_unreachable_target_names_the_flag():
    with pytest.raises(ValueError, match="target-eps"):
        inverse.solve_n("krr", 1e-12, 4.0, 1e-300, k=2)


def test_cli_inverse_query_and_flag_errors():
    base = [sys.executable, "-m", "shuffledp", "account", "best", "--mechanism", "krr", "--k", "2",
            "--delta", "1e-6"]
    proc = subprocess.run([*base, "--solve", "eps0", "--target-eps", "0.5", "--n", "1000"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["solve"] == "eps0" and out["eps"] <= 0.5 and out["eps0"] >= 0.5
    for extra, flag in ((["--solve", "n", "--target-eps", "0.5", "--eps0", "1", "--n", "10"], "--n"),
                        (["--solve", "n", "--eps0", "1"], "--target-eps"),
                        (["--target-eps", "0.5", "--eps0", "1", "--n", "10"], "--target-eps")):
        proc = subprocess.run([*base, *extra], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2 and flag in proc.stderr.strip().splitlines()[-1], proc.stderr


@pytest.mark.parametrize("shift", [0.7, 1.4])
def test_a_wrong_surrogate_only_costs_forward_calls(monkeypatch, shift):
    """The one-delta surrogate only proposes: candidates far on either side of the boundary are
    caught by the forward calls, and the answer is still verified and within the tolerance."""
    true_eps0 = inverse.solve_eps0("krr", 0.3, 2_000, 1e-6, k=2)
    true_n = inverse.solve_n("krr", 0.5, 2.0, 1e-6, k=2)
    assert true_eps0["forward_calls"] <= 2 and true_n["forward_calls"] <= 3   # the surrogate's cost

    def eps0_cands(*a, **k):
        good = true_eps0["eps0"] * shift
        return good, good * 1.0006

    def n_cands(*a, **k):
        good = int(true_n["n"] * shift)
        return good, good - 1

    monkeypatch.setattr(inverse, "_eps0_candidates", eps0_cands)
    monkeypatch.setattr(inverse, "_n_candidates", n_cands)
    res = inverse.solve_eps0("krr", 0.3, 2_000, 1e-6, k=2)
    assert res["forward_calls"] > 2 and res["eps"] <= 0.3
    assert res["fails_at"] - res["eps0"] <= res["tolerance"] * res["eps0"] and res["eps_at_fail"] > 0.3
    assert abs(res["eps0"] - true_eps0["eps0"]) <= 2 * res["tolerance"] * true_eps0["eps0"]
    res = inverse.solve_n("krr", 0.5, 2.0, 1e-6, k=2)
    assert res["forward_calls"] > 3 and res["eps"] <= 0.5
    assert res["n"] - res["fails_at"] <= max(1, res["tolerance"] * res["fails_at"]) and res["eps_at_fail"] > 0.5
    assert abs(res["n"] - true_n["n"]) <= max(1, 2 * res["tolerance"] * true_n["n"])
