"""Equivalent randomizers get the same bounds from ``account best`` (issue 38).

* MHM with one attribute is OLH with the same hash range ``g``: a user reports ``(t, y)`` with ``y``
  its one hashed value with probability ``e^eps0 / (e^eps0 + g - 1)`` and every other value with
  ``1 / (e^eps0 + g - 1)``, over the same family of hash functions (and the same input ``domain``).
* subset-exp with ``s = 1`` and subset size ``k = 1`` over ``d + 1`` items is ``(d + 1)``-RR: the
  output ``{z}`` meets the input ``{x}`` only when ``z = x``.
* k-RR with ``k = 2`` is binary RR: at ``n <= 41`` its worst-pair search covers every split of the
  others, and the count of ones is sufficient, so it meets the exact enumeration (``exact``).

Both the upper bound (the least of the registered ones) and the lower bound (the largest) must
agree within the searches' tolerance (``rtol`` each side).
"""

from __future__ import annotations

import pytest

from shuffledp.accountants import best, registry

RTOL = 1e-5
POINTS = [(1.0, 1000, 1e-6), (2.0, 10_000, 1e-6), (0.5, 50, 1e-3)]
PAIRS = [
    (("mhm", {"d": 1, "g": 5, "domain": 3}), ("olh", {"g": 5, "domain": 3})),   # third-input bounds too
    (("mhm", {"d": 1, "g": 5}), ("olh", {"g": 5})),                             # domain unknown: refused
    (("mhm", {"d": 1, "g": 2, "domain": 50}), ("olh", {"g": 2, "domain": 50})),
    (("subset-exp", {"d": 2, "s": 1, "k": 1}), ("krr", {"k": 3})),
    (("subset-exp", {"d": 9, "s": 1, "k": 1}), ("krr", {"k": 10})),
]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 3 * RTOL * max(a, b)


@pytest.mark.parametrize("left,right", PAIRS, ids=[f"{a[0]}{a[1]}-{b[0]}{b[1]}" for a, b in PAIRS])
def test_equivalent_randomizers_same_bounds(left, right):
    for eps0, n, delta in POINTS:
        a = best.best_eps(left[0], eps0, n, delta, rtol=RTOL, parallel=False, **left[1])
        b = best.best_eps(right[0], eps0, n, delta, rtol=RTOL, parallel=False, **right[1])
        where = (eps0, n, delta, a["upper_by"], b["upper_by"], a["lower_by"], b["lower_by"])
        assert _close(a["eps"], b["eps"]), (a["eps"], b["eps"], where)
        assert _close(a["eps_lower"], b["eps_lower"]), (a["eps_lower"], b["eps_lower"], where)


@pytest.mark.parametrize("eps0,n,delta", [(1.0, 8, 0.1), (0.5, 30, 1e-3), (3.0, 41, 1e-4)])
def test_binary_rr_worst_pair_is_exact(eps0, n, delta):
    exact = registry.get("exact").eps_for_delta("krr", eps0, n, delta, k=2, rtol=RTOL)
    res = best.best_eps("krr", eps0, n, delta, k=2, rtol=RTOL, parallel=False)
    assert res["eps_lower"] <= exact * (1 + 2 * RTOL)
    assert _close(res["eps_lower"], exact), (res["eps_lower"], exact, res["lower_by"])
    assert res["eps"] >= exact * (1 - 1e-9)
