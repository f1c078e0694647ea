"""The input ``domain`` reaches every practitioner entry point and the composition (issue 38): where
it is unknown, OLH's third-input lower bounds refuse; given, they run; the upper bounds do not
depend on it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shuffledp.accountants import ShuffleAccountant, ShuffleEvent, best, best_bounds, rounds_eps, solve_eps0

DELTA = 1e-6


def test_best_bounds_takes_the_domain():
    known = best_bounds("olh", 1.0, 5_000, DELTA, g=3, domain=10)
    unknown = best_bounds("olh", 1.0, 5_000, DELTA, g=3)
    assert known["eps"] == pytest.approx(unknown["eps"], rel=1e-5)
    assert "third" in known["lower_by"] and "third" not in unknown["lower_by"]
    assert not any("third" in name for name in unknown["bounds"])
    with pytest.raises(ValueError, match="domain"):
        best_bounds("olh", 1.0, 5_000, DELTA, g=3, domain=1)


def _spy(monkeypatch):
    """Record the domain of every best_eps call: in `best` and in `inverse`, which binds the name at
    import (imported before this test in a whole run, after it when the test runs alone)."""
    from shuffledp.accountants import inverse

    seen = []
    real = best.best_eps

    def spy(*args, **kw):
        seen.append(kw.get("domain"))
        return real(*args, **kw)

    monkeypatch.setattr(best, "best_eps", spy)
    monkeypatch.setattr(inverse, "best_eps", spy)
    return seen


def test_rounds_and_events_pass_the_domain(monkeypatch):
    seen = _spy(monkeypatch)
    rounds_eps("olh", 1.0, 2_000, DELTA, 1, g=3, domain=7)
    assert seen and set(seen) == {7}
    seen.clear()
    ShuffleAccountant().compose(ShuffleEvent("olh", 1.0, 2_000, g=3, domain=9), 1).get_epsilon(DELTA)
    assert seen and set(seen) == {9}


def test_inverse_query_takes_the_domain(monkeypatch):
    seen = _spy(monkeypatch)
    solve_eps0("olh", 0.5, 2_000, DELTA, g=3, domain=5)
    assert seen and set(seen) == {5}


def test_cli_rounds_with_domain():
    cmd = [sys.executable, "-m", "shuffledp", "account", "best", "--mechanism", "olh", "--g", "3",
           "--domain", "10", "--eps0", "1", "--n", "2000", "--delta", "1e-6", "--rounds", "10"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "third" in out["lower_by"] and out["eps_composed"] >= out["eps"]
