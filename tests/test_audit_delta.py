"""The lower bound on delta at a claimed epsilon (shuffledp.experiments.audits.distinguish_delta), the
raw-record audits' second bound: sound against the exact delta of k-RR at the smallest domains, blind to
a selection half that is not repeated in the held-out half, and more powerful than the epsilon bound on a
partial shift."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from shuffledp.experiments.audits import cp_lower, cp_upper, distinguish, distinguish_delta


def _krr(v: int, eps0: float, k: int, size: int, rng) -> np.ndarray:
    """k-RR reports of the value ``v`` (keep with e^eps0 / (e^eps0 + k - 1), else uniform over the rest)."""
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    keep = rng.random(size) < p
    other = (v + rng.integers(1, k, size)) % k
    return np.where(keep, v, other)


def _krr_delta(eps0: float, k: int, eps: float) -> float:
    """Exact delta(eps) of k-RR on the pair (0, 1) by enumeration of the k outputs (hockey stick)."""
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    q = (1 - p) / (k - 1)
    law0 = [p, q] + [q] * (k - 2)
    law1 = [q, p] + [q] * (k - 2)
    return sum(max(a - math.exp(eps) * b, 0.0) for a, b in zip(law0, law1, strict=True))


def test_cp_lower_is_the_mirror_of_cp_upper():
    x, m = np.array([0, 3, 10]), 10
    assert np.allclose(cp_lower(x, m, 0.01), 1 - cp_upper(m - x, m, 0.01))
    assert cp_lower(np.array([0]), 10, 0.01)[0] == 0.0


def test_cp_upper_gives_the_beta_quantiles_of_scipy_stats():
    """The Clopper-Pearson bounds (``scipy.special.betaincinv``) are ``scipy.stats.beta.ppf``'s doubles bit
    for bit, at the audits' trial counts and levels (every count near both ends, random ones between),
    and 1 at ``x = m``, as they were when ``cp_upper`` called ``scipy.stats``."""
    from scipy.stats import beta

    rng = np.random.default_rng(7)
    for m in (1, 2, 10, 1000, 5000, 150_000, 300_000):
        x = np.unique(np.concatenate([np.arange(min(m, 300)), m - 1 - np.arange(min(m, 300)),
                                      rng.integers(0, m, 2000)])).astype(float)
        for a in (0.025, 0.0125, 0.005, 0.0025, 1e-6):
            got = cp_upper(np.append(x, m), m, a)
            want = beta.ppf(1 - a, x + 1, m - x)
            assert np.array_equal(got[:-1].view(np.int64), want.view(np.int64)), (m, a)
            assert got[-1] == 1.0


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.5])
def test_delta_bound_below_the_exact_delta_of_krr(k, eps):
    """k-RR at eps0 = 2 on k = 2, 3 values: the bound never exceeds the exact delta(eps) (20 seeds at
    confidence 1 - 1e-3: a bound above it would be a 1e-3 event, 20 of them about 2%); where eps >= eps0
    the exact delta is 0 and so is the bound; below eps0, with 20,000 trials a side, the bound is within
    0.08 of the exact value (at 10,000 held-out trials and level 2.5e-4 the one-sided Clopper-Pearson
    margins are about 0.014 on Pr_D[S] = 0.79 and e x 0.011 on Pr_D'[S] = 0.11: 0.044 together at eps = 1,
    plus the held-out sample's own deviation, whose sd is about 0.01)."""
    eps0 = 2.0
    exact = _krr_delta(eps0, k, eps)
    for s in range(20):
        rng = np.random.default_rng(s)
        x0, x1 = _krr(0, eps0, k, 20_000, rng), _krr(1, eps0, k, 20_000, rng)
        lb = distinguish_delta(x0, x1, eps, 1e-3).delta_lb
        assert lb <= exact + 1e-12
        if exact > 0:
            assert lb > exact - 0.08
        else:
            assert lb == 0.0


def test_event_is_chosen_on_the_selection_half_only():
    """Separated on the first half, identical on the second: the held-out bound is 0."""
    rng = np.random.default_rng(1)
    same = rng.normal(size=500)
    x0 = np.r_[rng.normal(5.0, 1.0, 500), same]
    x1 = np.r_[rng.normal(0.0, 1.0, 500), same]
    assert distinguish_delta(x0, x1, 1.0, 1e-3).delta_lb == 0.0
    assert distinguish(x0, x1, 1e-4, 1e-3).eps_lb == 0.0


def test_delta_bound_is_more_powerful_on_a_partial_shift():
    """A Gaussian statistic shifted by 1.5 standard deviations (the Gaussian mechanism's pair, exact
    delta(1) = Phi(0.5/1.5 ... ) = 0.32), 1,000 trials a side, the claim (1, 1e-3), each bound at level
    5e-4 as in an audit of both: over 20 seeds the delta bound at eps = 1 flags the claim at least 17
    times (19 measured) and more often than the eps bound at delta = 1e-3 (14 measured); every delta
    bound stays below the exact 0.32."""
    mu = 1.5
    exact = norm.cdf(-1 / mu + mu / 2) - math.e * norm.cdf(-1 / mu - mu / 2)
    by_delta = by_eps = 0
    for s in range(20):
        r = np.random.default_rng(s)
        x0, x1 = r.normal(mu, 1.0, 1000), r.normal(0.0, 1.0, 1000)
        d = distinguish_delta(x0, x1, 1.0, 5e-4).delta_lb
        assert d <= exact
        by_delta += d > 1e-3
        by_eps += distinguish(x0, x1, 1e-3, 5e-4).eps_lb > 1.0
    assert by_delta >= 17 and by_delta > by_eps


def test_report_shows_the_delta_bound(tmp_path):
    """The report step's table carries delta_lb and mutant_delta_lb (NaN where the audit bounds only
    eps) and draws the delta panel for the rows that have one."""
    import pandas as pd

    from shuffledp.experiments import audits as A

    row, sec = A.audit_row("krr_shuffle", 2000, 1e-3, 0)
    raw = dict(row, audit="raw_hdg_loan_split", delta=1e-4, delta_lb=0.0, mutant_delta_lb=0.43,
               verdict="consistent")
    files = []
    for i, r in enumerate((row, raw)):
        pd.DataFrame([r]).to_parquet(tmp_path / f"r{i}.parquet")
        timing = pd.DataFrame([{"audit": r["audit"], "trials": r["trials"], "seconds": sec}])
        timing.to_parquet(tmp_path / f"t{i}.parquet")
        files.append(i)
    out = {k: str(tmp_path / f"out.{k}") for k in ("table", "md", "timings", "pdf", "png")}
    df = A.report([str(tmp_path / f"r{i}.parquet") for i in files], [str(tmp_path / f"t{i}.parquet") for i in files],
                  {"scale": "test", "alpha": 1e-3}, out)
    assert list(df["audit"]) == ["krr_shuffle", "raw_hdg_loan_split"]
    assert np.isnan(df.loc[0, "delta_lb"]) and df.loc[1, "mutant_delta_lb"] == 0.43
    md = open(out["md"]).read()
    assert "delta_lb" in md and "mutant_delta_lb" in md
    assert all((tmp_path / f"out.{k}").stat().st_size > 0 for k in ("pdf", "png"))
