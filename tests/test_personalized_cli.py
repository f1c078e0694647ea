"""CLI and experiment helpers of the personalized bounds."""

import json

import numpy as np
import pandas as pd
import pytest

from shuffledp.claims.core import COLUMNS
from shuffledp.cli import main
from shuffledp.experiments import personalized as E


def _run(capsys, *args):
    rc = main(["account", "personalized", *args])
    out = capsys.readouterr()
    return rc, out


def test_cli_eps_and_delta(capsys, tmp_path):
    rc, out = _run(capsys, "--bound", "hps,ccc", "--setting", "uniform2", "--seed", "1", "--n", "2000",
                   "--delta-central", "1e-5")
    assert rc == 0
    rows = json.loads(out.out)
    assert [r["bound"] for r in rows] == ["hps", "ccc"]
    assert all(0 < r["eps"] < 2 for r in rows)
    f = tmp_path / "eps.txt"
    np.savetxt(f, np.full(500, 0.8))
    rc, out = _run(capsys, "--bound", "hps", "--mechanism", "gaussian", "--delta-local", "1e-8",
                   "--eps-local-file", str(f), "--eps-central", "0.1,0.2")
    assert rc == 0
    rows = json.loads(out.out)
    assert rows[0]["n_users"] == 500 and rows[0]["delta"] >= rows[1]["delta"]


@pytest.mark.parametrize("args,msg", [
    (["--bound", "xx", "--setting", "uniform1", "--n", "10", "--eps-central", "0.1"], "--bound"),
    (["--bound", "hps", "--setting", "uniform9", "--n", "10", "--eps-central", "0.1"], "--setting"),
    (["--bound", "hps", "--setting", "uniform1", "--eps-central", "0.1"], "--n"),
    (["--bound", "lzx", "--mechanism", "gaussian", "--delta-local", "1e-9", "--setting", "uniform1",
      "--n", "10", "--eps-central", "0.1"], "pure"),
    (["--bound", "hps", "--mechanism", "gaussian", "--setting", "uniform1", "--n", "10",
      "--eps-central", "0.1"], "--delta-local"),
    (["--bound", "hps", "--setting", "uniform1", "--n", "10", "--delta-central", "2"], "--delta-central"),
])
def test_cli_usage_errors(capsys, args, msg):
    rc, out = _run(capsys, *args)
    assert rc == 2
    assert msg in out.err and out.out == ""


def test_claims_and_table2_from_frames():
    rows = []
    for b, v in [("hps", 0.1), ("fv", 0.5), ("ccc", 0.3)]:
        for seed in (0, 1):
            for m in ("laplace", "gaussian"):
                rows.append({"bound": b, "setting": "uniform1", "mechanism": m, "n": 1000, "seed": seed,
                             "eps_central": v * (0.5 if m == "gaussian" else 1)})
    fig = pd.DataFrame(rows)
    parts = [pd.DataFrame({"bound": b, "paper_row": b, "eps_central": E.PAPER_TABLE2_EPS,
                           "delta": np.array(E.PAPER_TABLE2[b]) * 3}) for b in ("fv", "ccc", "hps")]
    t2 = E.table2(parts, "uniform2", 10000)
    assert np.allclose(t2["ratio_measured_over_paper"], 3)
    cl = E.claims(fig, t2, "test").set_index("id")
    assert cl.loc["hps_tightest_everywhere", "held"] == "held"
    # best pure ratio 0.3 / 0.1 = 3, within a factor 2 of "up to 5"
    assert cl.loc["hps_up_to_5x_tighter", "held"] == "held"
    assert "3.00" in cl.loc["hps_up_to_5x_tighter", "measured"]
    assert cl.loc["table2_order_of_magnitude", "held"] == "held"
    assert list(E.claims(fig, t2, "x").columns) == COLUMNS
