"""End-to-end audits of CALM and HDG from raw Adult and Loan records (shuffledp.experiments.audits_raw).

They need the real raw files (the data mirror, SHUFFLEDP_DATA_MIRROR); without them they are skipped.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from shuffledp.experiments import audit_mutants as M
from shuffledp.experiments import audits as A
from shuffledp.experiments import audits_raw as AR

PATHS = AR.mirror_paths()
HAVE = all(os.path.isfile(p) for p in PATHS.values()) and bool(os.environ.get("SHUFFLEDP_DATA_MIRROR"))
pytestmark = pytest.mark.skipif(not HAVE, reason="needs the raw Adult and Loan files (SHUFFLEDP_DATA_MIRROR)")


@pytest.fixture(scope="module")
def raws():
    return {ds: AR.read_raw(ds, PATHS) for ds in ("adult", "loan")}


@pytest.mark.parametrize("fixture", list(AR.FIXTURES))
def test_fixture_is_a_neighbouring_pair_of_sampled_raw_records(raws, fixture):
    ds, attr, _ = AR.FIXTURES[fixture]
    raw = raws[ds]
    d0, d1, info = AR.neighbours(raw, fixture, 500, seed=3)
    assert len(d0) == len(d1) == 500
    # a sample without replacement: no raw row twice (rows of the file, identified by their index)
    assert info["victim_row"] in set(range(len(raw)))
    diff = (d0.ne(d1) & ~(d0.isna() & d1.isna()))
    assert int(diff.to_numpy().sum()) == 1 and diff[attr].sum() == 1  # one raw value of one record
    x = raw[attr].to_numpy(float)
    if fixture == "adult_min":
        assert info["old"] == np.nanmin(x) and info["new"] == np.nanquantile(x, 0.5, method="lower")
    if fixture == "adult_max":
        assert info["old"] == np.nanmax(x)
    if fixture in ("loan_low", "loan_tie"):
        assert info["new"] > np.nanmax(x)
    if fixture == "loan_split":  # a zero moved to the public top; the block of zeros sized for the split
        from shuffledp.datasets.coding import LOAN_CODING

        assert info["old"] == 0 and info["new"] == LOAN_CODING[attr]["hi"]
        assert (d0[attr] == 0).sum() == info["block"] == np.floor(499 * info["edges_in_block"] / 15) + 2
    if fixture == "loan_tie":  # the lowest loan already moved above the maximum, in both datasets
        assert (d0[attr] == info["new"]).sum() == 1 and info["old"] >= np.nanmin(x)
    # the same seed gives the same sample; another seed another one
    again, _, _ = AR.neighbours(raw, fixture, 500, seed=3)
    other, _, _ = AR.neighbours(raw, fixture, 500, seed=4)
    assert again.equals(d0) and not other.equals(d0)


@pytest.mark.parametrize("fixture", list(AR.FIXTURES))
def test_public_coding_moves_only_the_victims_row_and_the_mutant_moves_others(raws, fixture):
    ds = AR.FIXTURES[fixture][0]
    d0, d1, _ = AR.neighbours(raws[ds], fixture, 2000, seed=1)
    c0, c1 = AR.code(ds, d0, 16), AR.code(ds, d1, 16)
    assert int((c0 != c1).any(axis=1).sum()) <= 1
    with M.planted(f"raw_hdg_{fixture}"):
        m0, m1 = AR.code(ds, d0, 16), AR.code(ds, d1, 16)
    moved = int((m0 != m1).any(axis=1).sum())
    if fixture != "loan_tie":  # a tie block need not fall in a sample of 2,000 (the row says so)
        assert moved > 10
    # the planted bug is gone after the block
    assert np.array_equal(AR.code(ds, d0, 16), c0)


def test_audited_coders_are_the_data_stages():
    from shuffledp.datasets import adult, loan

    assert AR.coder("adult") is adult.encode and AR.coder("loan") is loan.encode
    assert A.target("adult_encode") is adult.encode and A.target("loan_encode") is loan.encode


def test_end_to_end_audit_consistent_and_catches_data_dependent_edges():
    """HDG with MHM on Adult's smallest-fnlwgt pair: the public coding is consistent with the claimed
    (eps_s, 1/n); the old equal-width bins between the data's min and max are a violation."""
    settings = {"n": 1000, "eps_s": 1.0, "domain": 16}
    row, _ = A.run_audit("raw_hdg_adult_min", 200, 0.001, 0, settings, raw_paths=PATHS)
    assert row["verdict"] == "consistent" and row["eps_lb"] <= row["eps_ub"] == 1.0
    assert row["delta"] == pytest.approx(1e-3) and row["trials"] == 200
    mrow, _ = A.run_audit("raw_hdg_adult_min", 200, 0.001, 0, settings, raw_paths=PATHS, mutant=True)
    assert mrow["verdict"] == "violation" and mrow["eps_lb"] > 1.0


@pytest.mark.parametrize("name", ["raw_hdg_adult_min", "raw_calm_loan_low"])
def test_raw_audit_calls_the_data_stages_coder(name, monkeypatch):
    """A spy put at the data stage's coder is what the audit calls (no re-implementation)."""
    import importlib

    mod, attr = A.SITES[A.AUDITS[name].site]
    module = importlib.import_module(mod)
    real, calls = getattr(module, attr), []

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(module, attr, spy)
    settings = {"n": 200, "eps_s": 1.0, "domain": 16, **({"view_size": 2} if "calm" in name else {})}
    row, _ = A.run_audit(name, 20, 0.001, 0, settings, raw_paths=PATHS)
    assert len(calls) == 2 and row["n"] == 200 and row["trials"] == 20


def test_raw_row_reports_how_far_the_planted_coding_crosses_users():
    row, _ = A.audit_row("raw_hdg_adult_min", 20, 0.001, 0, {"n": 300, "eps_s": 1.0, "domain": 16}, raw_paths=PATHS)
    assert "coded rows that differ: 1;" in row["notes"]
    moved = int(row["notes"].split("under the planted bug: ")[1].split(";")[0])
    assert moved > 10


def _quantile_edges(x: np.ndarray, k: int = 15) -> np.ndarray:
    """The planted bug's equal-frequency edges (np.quantile at i / k, ties merged)."""
    return np.unique(np.quantile(x[~np.isnan(x)], np.arange(1, k) / k))


@pytest.mark.parametrize("n", [1000, 9000])
def test_split_pair_separates_two_tied_edges(raws, n):
    """loan_split: in D two or more equal-frequency edges coincide at 0; in D' one of them leaves the
    block of zeros, so the equal-frequency coding gains a code and renumbers every loan above zero (most of
    the population), while the public coding moves the victim's row only."""
    d0, d1, info = AR.neighbours(raws["loan"], "loan_split", n, seed=0, domain=16)
    attr = info["attribute"]
    q0, q1 = (np.quantile(d[attr].to_numpy(float), np.arange(1, 15) / 15) for d in (d0, d1))
    j = info["edges_in_block"]
    assert j >= 2 and (q0[:j] == 0).all() and (q1[: j - 1] == 0).all() and 0 < q1[j - 1] < 1
    assert len(_quantile_edges(d1[attr].to_numpy(float))) == len(_quantile_edges(d0[attr].to_numpy(float))) + 1
    c0, c1 = AR.code("loan", d0, 16), AR.code("loan", d1, 16)
    assert int((c0 != c1).any(axis=1).sum()) == 1
    with M.planted("raw_hdg_loan_split"):
        m0, m1 = AR.code("loan", d0, 16), AR.code("loan", d1, 16)
    moved = int((m0 != m1).any(axis=1).sum())
    assert moved == int((d0[attr] > 0).sum()) + 1  # every loan above zero, and the victim
    assert moved > 0.7 * n


def test_split_pair_refused_where_it_does_not_exist(raws):
    with pytest.raises(ValueError, match="loan_split: n=9857 needs"):
        AR.neighbours(raws["loan"], "loan_split", 9857, seed=0)
    x = np.r_[np.zeros(5), np.arange(1.0, 96.0)]  # the lowest block covers no edge of 15 bins
    with pytest.raises(ValueError, match="no split pair"):
        AR.split_population(x, 50, 15, np.random.default_rng(0))


@pytest.mark.slow
def test_raw_audit_catches_data_dependent_edges_on_loan():
    """HDG with MHM on the loan_split pair (9,000 loans, eps_s = 1, delta_s = 1/n), 100 trials a side, the
    audit's two bounds each at level alpha / 2 = 5e-4: the public coding is consistent with (1, 1/n); the
    equal-frequency codes of the data (the planted bug: 7,200 of the 9,000 coded rows move) are flagged
    by both bounds (seed 0: eps >= 1.71 and delta >= 0.43 at eps = 1, the most 50 held-out trials a side
    can show: the released outputs separate completely). A sound coding is flagged with probability at
    most 1e-3; at this fixed seed the public coding's bounds are 0. About a minute and a half."""
    settings = dict(A.DEFAULT_SETTINGS["raw_hdg_loan_split"])
    assert settings["n"] == 9000
    row, _ = A.run_audit("raw_hdg_loan_split", 100, 0.001, 0, settings, raw_paths=PATHS, delta_test=True)
    assert row["verdict"] == "consistent"
    assert row["eps_lb"] <= 1.0 and row["delta_lb"] <= row["delta"] == pytest.approx(1 / 9000)
    mrow, _ = A.run_audit("raw_hdg_loan_split", 100, 0.001, 0, settings, raw_paths=PATHS, delta_test=True,
                          mutant=True)
    assert mrow["verdict"] == "violation" and mrow["delta_lb"] > 0.3 and mrow["eps_lb"] > 1.0
    assert "delta lower bound at eps = 1" in mrow["notes"]


def test_raw_table_read_again_is_a_fresh_equal_copy(tmp_path):
    """A raw file read again (an audit and its mutant run) comes from the last read: equal to a fresh parse,
    a caller's change never reaches the next reader, and a changed file is parsed again."""
    import shutil

    import pandas as pd

    paths = {k: str(shutil.copy(PATHS[k], tmp_path / os.path.basename(PATHS[k]))) for k in ("data", "test")}
    first = AR.read_raw("adult", paths)
    first.loc[0, "fnlwgt"] = -1
    again = AR.read_raw("adult", paths)
    pd.testing.assert_frame_equal(again, AR._read_raw("adult", paths))
    assert again.loc[0, "fnlwgt"] != -1
    again.loc[1, "age"] = -5
    assert AR.read_raw("adult", paths).loc[1, "age"] != -5
    with open(paths["test"], "a", encoding="ascii") as fh:
        rows = [r for r in open(PATHS["test"], encoding="ascii").read().splitlines() if r.strip() and r[0] != "|"]
        fh.write("\n" + rows[0] + "\n")
    assert len(AR.read_raw("adult", paths)) == len(again) + 1
