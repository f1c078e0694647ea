"""Property-based sweep of the accountants over their domain (issue 12).

Mechanism (general eps0-LDP, k-RR with k = 2..5), eps0 in [0.05, 60], n in [2, 1e9] (log-uniform),
delta in [1e-12, 0.5] (log-uniform). At every drawn point:

* every answer is a finite number in [0, eps0] (or a clean AccountantDomainError -- none is
  expected inside the domain);
* the variation-ratio and FMT23 clones bounds do not increase with n (x4) nor with delta (x10),
  up to their rounding (relative 2e-6 and 2e-7);
* sound against the oracle where it applies: n <= 6 -> exact worst case (tests/_oracle.py);
  n <= 1e5 -> exact divergences of the two one-group pairs (a lower bound on the truth). The
  reported lower bound (witness) is never above the upper bound.

``derandomize=True``: the same examples every run; the count keeps the sweep near 30 s.
"""

from __future__ import annotations

import math

import _oracle as oracle
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.accountants.upper import blanket as B
from shuffledp.accountants.upper import clones as C
from shuffledp.accountants.upper import variation_ratio as vr

ROUND = 2e-6      # two roundings of rtol = 1e-6


def _pairs_lower(k: int, eps0: float, n: int, delta: float) -> float:
    if n <= 6:
        return oracle.exact_krr_eps(k, eps0, n, delta)[0]
    if n <= 100_000:
        return max(oracle.pair_count_eps(k, eps0, n, delta, m) for m in (0, n - 1))
    return 0.0


@settings(max_examples=30, derandomize=True, deadline=None)
@given(
    mechanism=st.sampled_from(["general", "krr"]),
    k=st.integers(2, 5),
    eps0=st.floats(0.05, 60.0),
    log_n=st.floats(math.log(2.0), math.log(1e9)),
    log_delta=st.floats(math.log(1e-12), math.log(0.5)),
)
def test_sweep_sound_monotone_finite(mechanism, k, eps0, log_n, log_delta):
    n = max(2, min(10**9, round(math.exp(log_n))))
    delta = math.exp(log_delta)
    params = vr.vr_params(mechanism, eps0, k=k if mechanism == "krr" else None)
    eps = vr.vr_eps(params, n, delta)
    assert math.isfinite(eps) and 0.0 <= eps <= eps0 * (1 + 1e-12)
    # monotone in n and in delta
    assert vr.vr_eps(params, min(4 * n, 10**9 + 1), delta) <= eps * (1 + ROUND) + 1e-15
    assert vr.vr_eps(params, n, min(0.5, 10 * delta)) <= eps * (1 + ROUND) + 1e-15
    # the other accountants: finite, within [0, eps0]
    others = {
        "fmt23": C.eps_clones(eps0, n, delta, variant="fmt23"),
        "blanket": B.eps_blanket(eps0, n, delta, mechanism="krr", bound="bennett", k=k),
    }
    for name, val in others.items():
        assert math.isfinite(val) and 0.0 <= val <= eps0 * (1 + 1e-12), name
    # the clones bound is monotone too (one more clone is a post-processing); rtol 1e-7 rounding
    assert C.eps_clones(eps0, min(4 * n, 10**9 + 1), delta, variant="fmt23") <= others["fmt23"] * (1 + 2e-7) + 1e-15
    assert C.eps_clones(eps0, n, min(0.5, 10 * delta), variant="fmt23") <= others["fmt23"] * (1 + 2e-7) + 1e-15
    # sound against the oracle (k-RR is eps0-LDP, so the general bounds must cover it too)
    truth_lower = _pairs_lower(k, eps0, n, delta)
    for name, val in {"vr": eps, **others}.items():
        assert val >= truth_lower * (1 - 1e-9), (name, val, truth_lower)
    low = vr.witness_eps("krr", eps0, n, delta, k=k)
    assert 0.0 <= low <= eps * (1 + 1e-9)
    if n <= 6:
        assert low <= truth_lower * (1 + 1e-9)


@settings(max_examples=10, derandomize=True, deadline=None)
@given(
    mechanism=st.sampled_from(["subset-exp", "oue", "olh"]),
    size=st.integers(3, 40),
    s=st.integers(1, 3),
    eps0=st.floats(0.1, 8.0),
    log_n=st.floats(math.log(2.0), math.log(1e6)),
    log_delta=st.floats(math.log(1e-10), math.log(0.1)),
)
def test_sweep_grouped_randomizers(mechanism, size, s, eps0, log_n, log_delta):
    """Issue 17's decomposition for the many-group randomizers: finite in [0, eps0], the lower bound
    (exact coarse counts of real pairs) never above it, and monotone in n (x4) and delta (x10) up to
    the search precision (each eps is a verified point rounded up by at most rtol)."""
    from shuffledp.accountants import best as BE
    from shuffledp.accountants.upper import decomposition as D

    n = max(2, min(10**6, round(math.exp(log_n))))
    delta = math.exp(log_delta)
    kw = {"subset-exp": {"d": size, "s": s}, "oue": {"d": size}, "olh": {"g": 2 + size % 6}}[mechanism]
    params = BE.mechanism_params(mechanism, eps0, **kw)
    pairs = BE.grouped_pairs_for(mechanism, eps0, params)
    eps = D.decomposition_eps(None, n, delta, pairs=pairs)
    assert math.isfinite(eps) and 0.0 <= eps <= eps0 * (1 + 1e-12)
    lows = BE.lower_bounds(mechanism, eps0, n, delta, **kw)
    # every registered lower bound (the pair search only up to HEAVY_N_MAX users, the O(1) count bound always)
    assert "group-one-count" in lows and ("pair-group-counts" in lows) == (n <= BE.HEAVY_N_MAX[mechanism])
    for name, fn in lows.items():
        assert fn() <= eps * (1 + 1e-9), name
    tol = 3e-5  # two searches at rtol = 1e-5, each within rtol of its own root
    assert D.decomposition_eps(None, min(4 * n, 10**6), delta, pairs=pairs) <= eps * (1 + tol) + 1e-15
    assert D.decomposition_eps(None, n, min(0.5, 10 * delta), pairs=pairs) <= eps * (1 + tol) + 1e-15
