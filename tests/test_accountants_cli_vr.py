"""CLI: shuffledp account vr | poisson | segmented and account-table segmented."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from shuffledp.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_vr_mechanism_form_json(capsys):
    code, out, _ = run(capsys, "account", "vr", "--mechanism", "general", "--eps0", "1", "--n", "1000",
                       "--delta", "1e-6")
    assert code == 0
    obj = json.loads(out)
    assert obj["eps"] == pytest.approx(0.1486706, rel=1e-5)
    assert obj["eps_lower"] == pytest.approx(0.126614, abs=1e-6)   # exact binary RR (witness)
    assert obj["gap"] == pytest.approx(obj["eps"] - obj["eps_lower"])


def test_vr_grid_and_parameter_form(capsys):
    code, out, _ = run(capsys, "account", "vr", "--mechanism", "krr", "--k", "2,3", "--eps0", "1",
                       "--n", "500,1000", "--delta", "1e-6")
    arr = json.loads(out)
    assert code == 0 and len(arr) == 4 and {a["k"] for a in arr} == {2, 3}
    code, out, _ = run(capsys, "account", "vr", "--p", "inf", "--beta", "1", "--q", "17", "--n", "200",
                       "--eps", "1")
    obj = json.loads(out)
    assert code == 0 and obj["p"] == "inf" and 0 < obj["delta_lower"] <= obj["delta"] < 1


def test_poisson_and_segmented(capsys):
    code, out, _ = run(capsys, "account", "poisson", "--n", "5000", "--m", "2", "--d", "17", "--s", "4",
                       "--eps", "1", "--delta", "2e-6", "--accountant", "paper")
    obj = json.loads(out)
    assert code == 0 and obj["feasible"] and 0 < obj["lambda"] <= 1 and obj["delta_user"] <= 2e-6
    code, out, _ = run(capsys, "account", "segmented", "--n", "5000", "--d", "17", "--s", "4",
                       "--levels", "0.5,1,2", "--shares", "0.25,0.5,0.25", "--delta", "2e-6", "--m", "1,2")
    arr = json.loads(out)
    assert code == 0 and [a["m"] for a in arr] == [1.0, 2.0] and len(arr[0]["lambdas"]) == 3


def test_account_table(tmp_path, capsys):
    out_file = tmp_path / "t.parquet"
    code, out, _ = run(capsys, "account-table", "segmented", "--n", "5000", "--d", "17", "--s", "4",
                       "--levels", "0.5,1,2", "--shares", "0.25,0.5,0.25", "--delta", "2e-6",
                       "--m-grid", "log:0.1:10:3", "--out", str(out_file))
    assert code == 0 and out.strip() == str(out_file)
    table = pd.read_parquet(out_file)
    assert sorted(table[table.source == "grid"].m.unique()) == [0.1, 1.0, 10.0]


def test_account_table_several_settings_in_one_process(tmp_path, capsys):
    """The workflow's form: paired --shares/--out write each setting's table, equal (byte for byte)
    to the table of a separate call for that setting."""
    base = ["account-table", "segmented", "--n", "5000", "--d", "17", "--s", "4", "--levels", "0.5,1,2",
            "--delta", "2e-6", "--m-grid", "log:0.3:3:2", "--accountants", "sound"]
    shares = ["0.25,0.5,0.25", "0.5,0.25,0.25"]
    both = [tmp_path / "S1.parquet", tmp_path / "S2.parquet"]
    code, out, _ = run(capsys, *base, "--shares", shares[0], "--out", str(both[0]),
                       "--shares", shares[1], "--out", str(both[1]))
    assert code == 0 and out.split() == [str(p) for p in both]
    for sh, path in zip(shares, both, strict=True):
        alone = tmp_path / f"alone_{path.name}"
        assert run(capsys, *base, "--shares", sh, "--out", str(alone))[0] == 0
        assert alone.read_bytes() == path.read_bytes()
    assert not pd.read_parquet(both[0]).equals(pd.read_parquet(both[1]))
    code, out, err = run(capsys, *base, "--shares", shares[0], "--out", str(both[0]), "--shares", shares[1])
    assert code == 2 and "error: --out:" in err


@pytest.mark.parametrize("argv, flag", [
    (["account", "vr", "--mechanism", "general", "--eps0", "0", "--n", "100", "--delta", "1e-6"], "--eps0"),
    (["account", "vr", "--mechanism", "general", "--eps0", "1", "--n", "1", "--delta", "1e-6"], "--n"),
    (["account", "vr", "--mechanism", "general", "--eps0", "1", "--n", "100", "--delta", "1"], "--delta"),
    (["account", "vr", "--mechanism", "krr", "--eps0", "1", "--n", "100", "--delta", "1e-6"], "--k"),
    (["account", "vr", "--p", "2", "--beta", "0.9", "--q", "2", "--n", "100", "--eps", "1"], "--beta"),
    (["account", "poisson", "--n", "100", "--m", "-1", "--d", "5", "--s", "1", "--eps", "1", "--delta", "1e-3"],
     "--m"),
    (["account", "poisson", "--n", "100", "--m", "1", "--d", "5", "--s", "1", "--eps", "-1", "--delta", "1e-3"],
     "--eps"),
    (["account", "segmented", "--n", "100", "--d", "5", "--s", "1", "--levels", "1,2", "--shares", "0.5,0.6",
      "--delta", "1e-3"], "--shares"),
    (["account", "vr", "--mechanism", "general", "--eps0", "x", "--n", "100", "--delta", "1e-6"], "--eps0"),
])
def test_errors_one_line_naming_the_flag(capsys, argv, flag):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"error: {flag}:" in err
