"""Segmented optimiser (Sec. 5.2): MSE bound, lambda_k*, m_k, m*, edge cases, the table."""

from __future__ import annotations

import io
import math

import pytest

from shuffledp.accountants.special import poisson as ps
from shuffledp.accountants.special import segmented_optimizer as so

N, D, S, LEVELS, DELTA = 5000, 17, 4, [0.5, 1.0, 2.0], 0.01 / 5000


def test_mse_bound_formula():
    assert so.mse_bound(100, 2.0, 4, [0.5, 0.5], [1.0, 0.5]) == pytest.approx((200 + 4 * 75) / 75**2)
    assert so.mse_bound(100, 2.0, 4, [1.0], [0.0]) == math.inf


@pytest.mark.parametrize("accountant", ["paper", "sound"])
def test_optimum_beats_the_grid_inside_the_interval(accountant):
    shares = [0.25, 0.5, 0.25]
    out = so.optimize_segmented(N, D, S, LEVELS, shares, DELTA, accountant=accountant)
    lo, hi = out["m_range"]
    assert lo < out["m"] <= hi * (1 + 1e-9) and out["regime"] == "inside" and out["feasible"]
    # m_k are decreasing in the level (liberal levels need fewer blankets) and lambda=1 at m >= m_k
    assert out["m_k"][0] > out["m_k"][1] > out["m_k"][2]
    for mk, lam in zip(out["m_k"], out["lambdas"], strict=True):
        if out["m"] >= mk:
            assert lam == 1.0
    for m in [lo * (hi / lo) ** (i / 7) for i in range(1, 8)]:
        other = so.optimize_segmented(N, D, S, LEVELS, shares, DELTA, m=m, accountant=accountant)
        assert out["mse_bound"] <= other["mse_bound"] * (1 + 1e-3)
    # the lambdas meet the constraint at the user level
    for lam, e, dach in zip(out["lambdas"], LEVELS, out["delta_achieved"], strict=True):
        assert dach <= DELTA * (1 + 1e-12)
        assert ps.poisson_user_delta(lam, N, out["m"], D, S, e, accountant=accountant) <= DELTA * (1 + 1e-9)


def test_paper_accountant_reproduces_paper_optimum_region():
    # Section 6.1: MSNBC (d = 17, s = 4), n = 5000 -> optimal m "around 2.0"
    out = so.optimize_segmented(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, accountant="paper")
    assert 1.0 < out["m"] < 4.0


def test_edge_cases_share_zero_and_m_below_range():
    full = so.optimize_segmented(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, accountant="paper")
    zero = so.optimize_segmented(N, D, S, LEVELS, [0.0, 0.5, 0.5], DELTA, accountant="paper")
    assert zero["active"] == [False, True, True]
    # the inactive conservative level no longer bounds the interval
    assert zero["m_range"][1] == pytest.approx(full["m_k"][1])
    assert zero["lambdas"][0] > 0          # still reported
    below = so.optimize_segmented(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, m=0.05, accountant="paper")
    assert below["regime"] == "below" and all(lam < 1 for lam in below["lambdas"])
    above = so.optimize_segmented(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, m=50.0, accountant="paper")
    assert above["regime"] == "above" and above["lambdas"] == [1.0, 1.0, 1.0]
    assert above["eps_achieved"][2] < 2.0          # liberal users get more than they asked for
    zero_m = so.optimize_segmented(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, m=0.0)
    assert zero_m["feasible"] and zero_m["lambdas"][0] == pytest.approx(DELTA / (S * math.exp(0.5)), rel=1e-6)


@pytest.mark.parametrize("kwargs, name", [
    (dict(shares=[0.5, 0.5, 0.5]), "shares"), (dict(levels=[1.0, 0.5, 2.0]), "levels"),
    (dict(delta=0.0), "delta"), (dict(n=1), "n"), (dict(shares=[0.5, 0.5]), "shares"),
])
def test_input_errors_name_the_argument(kwargs, name):
    args = dict(n=N, d=D, s=S, levels=LEVELS, shares=[0.25, 0.5, 0.25], delta=DELTA)
    args.update(kwargs)
    with pytest.raises(ValueError, match=f"^--{name}:"):
        so.optimize_segmented(**args)


def test_table_columns_rows_and_determinism():
    grid = [0.1, 1.0, 10.0]
    t1 = so.segmented_table(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, grid)
    t2 = so.segmented_table(N, D, S, LEVELS, [0.25, 0.5, 0.25], DELTA, grid)
    assert list(t1.columns) == so.TABLE_COLUMNS
    assert len(t1) == 2 * (len(grid) + 1) * len(LEVELS)
    assert set(t1.accountant) == {"sound", "paper"}
    assert (t1.groupby(["accountant", "m"]).size() == 3).all()
    b1, b2 = io.BytesIO(), io.BytesIO()
    t1.to_parquet(b1, index=False)
    t2.to_parquet(b2, index=False)
    assert b1.getvalue() == b2.getvalue()
    opt = t1[(t1.source == "optimum") & (t1.accountant == "paper")]
    assert opt.mse_bound.iloc[0] <= t1[t1.accountant == "paper"].mse_bound.min() * (1 + 1e-3)
    assert (t1.delta_achieved <= DELTA * (1 + 1e-12)).all()
