"""Public codings (shuffledp.datasets.coding): changing one raw record changes at most that record's coded
row, on the real Adult and Loan records and on IPUMS-like records with a codebook (property tests over
random records, the extremes and tie blocks), while the old data-dependent codings (kept below as
references, verbatim in behaviour) fail the same check on the pairs of issue 43."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shuffledp.datasets import adult, coding, ipums, loan
from shuffledp.datasets.coding import Bins

PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def moved_others(code_fn, raw: pd.DataFrame, i: int, col: str, value) -> int:
    """Rows other than ``i`` whose coded row differs when raw row ``i``'s ``col`` becomes ``value``."""
    raw = raw.reset_index(drop=True)
    before = code_fn(raw)
    changed = raw.copy()
    changed[col] = changed[col].astype(object if isinstance(value, str) else float)
    changed.iloc[i, changed.columns.get_loc(col)] = value
    after = code_fn(changed)
    diff = (before.to_numpy() != after.to_numpy()).any(axis=1)
    diff[i] = False
    return int(diff.sum())


# --------------------------------------------------------------------- the old codings (references)


def _old_adult_log_bins(x, bins):
    lo, hi = float(x.min()), float(x.max())
    codes = np.floor((x - lo) / (hi - lo) * bins) if hi > lo else np.zeros_like(x)
    return np.clip(codes, 0, bins - 1).astype(np.int16)


def old_adult(raw: pd.DataFrame) -> pd.DataFrame:
    """The data-dependent Adult coding before issue 43 (equal-width bins between the data's min and max)."""
    return pd.DataFrame({"fnlwgt": _old_adult_log_bins(np.log(raw["fnlwgt"].to_numpy(float)), 32),
                         "capital_gain": _old_adult_log_bins(np.log1p(raw["capital_gain"].to_numpy(float)), 16)})


def old_loan(raw: pd.DataFrame, c: int = 16) -> pd.DataFrame:
    """The data-dependent Loan coding before issue 43 (equal-frequency quantile codes)."""
    out = {}
    for a in raw.columns:
        x = raw[a].to_numpy(float)
        edges = np.unique(np.quantile(x, np.arange(1, c) / c))
        out[a] = np.searchsorted(edges, x, side="right")
    return pd.DataFrame(out)


def old_ipums(df: pd.DataFrame, domains) -> pd.DataFrame:
    """The data-dependent IPUMS recoding before issue 43 (ranks among values present, merged by frequency)."""
    out = {}
    for col, size in domains.items():
        values, counts = np.unique(df[col].to_numpy(), return_counts=True)
        if len(values) <= size:
            group = np.arange(len(values))
        else:
            cum = np.cumsum(counts) / counts.sum()
            group = np.maximum.accumulate(
                np.minimum((np.concatenate(([0.0], cum[:-1])) * size).astype(np.int64), size - 1))
        out[col] = group[np.searchsorted(values, df[col].to_numpy())]
    return pd.DataFrame(out)


# --------------------------------------------------------------------- data


@functools.cache
def _adult_raw(mirror: str) -> pd.DataFrame:
    return adult.read_raw(f"{mirror}/adult/adult.data", f"{mirror}/adult/adult.test")


@functools.cache
def _loan_raw(mirror: str) -> pd.DataFrame:
    return loan.read_any(f"{mirror}/lending_club.parquet").reset_index(drop=True)


def _adult_code(raw):
    return adult.encode(raw)[0]


def _adult_ordinal(raw):
    return coding.code_adult_ordinal(raw, 16)


def _loan_code(raw):
    return coding.code_loan(raw, 16)


def _special_rows(raw: pd.DataFrame, col: str) -> list[int]:
    """The extremes of ``col`` and a member of its largest tie block."""
    if raw[col].dtype == object:  # a categorical attribute: a member of its largest and smallest class
        counts = raw[col].value_counts()
        return [int(np.flatnonzero(raw[col].to_numpy() == counts.index[j])[0]) for j in (0, -1)]
    x = raw[col].to_numpy(float)
    ties = pd.Series(x).value_counts().index[0]
    return [int(np.nanargmin(x)), int(np.nanargmax(x)), int(np.flatnonzero(x == ties)[0])]


# --------------------------------------------------------------------- Bins


def test_bins_edges_clipping_and_missing():
    b = Bins("linear", 0, 10, 5)
    assert b.edges().tolist() == [2, 4, 6, 8]
    assert b.codes([-5, 0, 1.99, 2, 9.9, 10, 1e9]).tolist() == [0, 0, 0, 1, 4, 4, 4]
    i = Bins("int", 17, 90)
    assert i.size == 74 and i.codes([16, 17, 18, 90, 99]).tolist() == [0, 0, 1, 73, 73]
    lg = Bins("log", 10, 1000, 2)
    assert lg.edges() == pytest.approx([100.0])
    m = Bins("linear", 0, 10, 5, missing=True)
    assert m.size == 6 and m.codes([np.nan, 0, 10]).tolist() == [0, 1, 5]
    with pytest.raises(ValueError, match="missing"):
        b.codes([np.nan])
    with pytest.raises(ValueError, match="lo > 0"):
        Bins("log", 0, 10, 2)
    d = m.describe()
    assert d["size"] == 6 and d["edges"] == [2, 4, 6, 8]


@pytest.mark.parametrize("args, message", [
    (("linear", 1, 1, 3), "finite lo < hi"), (("linear", 2, 1, 3), "finite lo < hi"),
    (("linear", 0, np.inf, 3), "finite lo < hi"), (("linear", np.nan, 1, 3), "finite lo < hi"),
    (("int", 0.5, 3), "integer lo, hi"), (("linear", 0, 1), "bins >= 1"), (("log", 1, 10, 0), "bins >= 1"),
    (("cubic", 0, 1, 2), "scale must be"), (("log1p", -1, 3, 2), "lo > -1"), (("log", -1, 3, 2), "lo > 0"),
])
def test_bins_refuse_a_bad_range(args, message):
    with pytest.raises(ValueError, match=message):
        Bins(*args)


def test_codings_refuse_unknown_attributes_and_codes_outside_the_domain():
    """A misspelt attribute would keep its default silently; an int scale on Loan would give codes
    outside HDG's domain: both refused by the functions every caller (data stage, audits) goes through."""
    with pytest.raises(ValueError, match="no ordinal attribute 'int_rat'"):
        coding.loan_bins(16, {"int_rat": {"scale": "linear", "lo": 0, "hi": 30}})
    with pytest.raises(ValueError, match="no ordinal attribute 'fnlwgtt'"):
        coding.adult_bins({"fnlwgtt": {"scale": "log", "lo": 1, "hi": 10, "bins": 4}})
    with pytest.raises(ValueError, match="other than 16 codes"):
        coding.loan_bins(16, {"num_il_tl": {"scale": "int", "lo": 0, "hi": 30}})
    assert all(b.size == 16 for b in coding.loan_bins(16).values())


def test_values_outside_the_public_range_take_the_public_end_codes_one_record_at_a_time():
    """Loan's int_rate public range is 5%..31% in 15 bins (codes 1..15, 0 for missing): a value below or
    above it takes the end code (a public top/bottom code), each record's code the same alone as in a
    table; Adult's ages below 17 and above 90 likewise."""
    x = [-np.inf, 2.0, 5.0, 31.0, 35.0, np.inf, np.nan]
    raw = pd.DataFrame({"int_rate": x})
    table = coding.code_loan(raw, 16)["int_rate"].tolist()
    assert table == [1, 1, 1, 15, 15, 15, 0]
    assert [coding.code_loan(raw.iloc[[i]], 16)["int_rate"].item() for i in range(len(x))] == table
    age = coding.adult_bins()["age"]
    assert age.codes([0, 16, 17, 90, 120]).tolist() == [0, 0, 0, 73, 73]


def test_code_loan_takes_nullable_integers():
    raw = pd.DataFrame({"num_il_tl": pd.array([0, None, 30], dtype="Int32")})
    assert coding.code_loan(raw, 16)["num_il_tl"].tolist() == [1, 0, 15]


def test_code_record_is_the_table_coding(mirror):
    raw = _adult_raw(str(mirror))
    row = raw.iloc[123].to_dict()
    assert coding.code_record("adult", row) == {k: int(v) for k, v in _adult_code(raw).iloc[123].items()}
    assert coding.code_record("adult_ordinal", row, c=16) == {
        k: int(v) for k, v in _adult_ordinal(raw).iloc[123].items()}
    lraw = _loan_raw(str(mirror))
    assert coding.code_record("loan", lraw.iloc[7].to_dict(), c=16) == {
        k: int(v) for k, v in _loan_code(lraw).iloc[7].items()}


# --------------------------------------------------------------------- the property, per dataset


ADULT_VALUES = {"fnlwgt": [1, 12285, 178144.5, 1490400, 10**7], "capital_gain": [0, 1, 99999, 10**6],
                "capital_loss": [0, 4356, 10**5], "age": [0, 17, 90, 120], "hours_per_week": [0, 1, 99, 168],
                "education_num": [1, 16], "workclass": ["?", "Private", "Never-worked"],
                "native_country": ["?", "Holand-Netherlands", "United-States"]}


@PROPERTY
@given(data=st.data())
def test_adult_one_record_moves_only_itself(mirror, data):
    raw = _adult_raw(str(mirror))
    col = data.draw(st.sampled_from(sorted(ADULT_VALUES)))
    i = data.draw(st.one_of(st.integers(0, len(raw) - 1), st.sampled_from(_special_rows(raw, col))))
    numbers = st.floats(0, 2e6, allow_nan=False).map(round)
    value = data.draw(st.sampled_from(ADULT_VALUES[col]) if col in adult.CATEGORIES
                      else st.one_of(st.sampled_from(ADULT_VALUES[col]), numbers))
    assert moved_others(_adult_code, raw, i, col, value) == 0
    assert moved_others(_adult_ordinal, raw, i, col, value) == 0


@PROPERTY
@given(data=st.data())
def test_loan_one_record_moves_only_itself(mirror, data):
    raw = _loan_raw(str(mirror))
    col = data.draw(st.sampled_from(list(raw.columns)))
    i = data.draw(st.one_of(st.integers(0, len(raw) - 1), st.sampled_from(_special_rows(raw, col))))
    x = raw[col].to_numpy(float)
    value = data.draw(st.one_of(st.just(math.nan), st.sampled_from([x.min(), x.max(), np.median(x), -1.0, 1e9]),
                                st.floats(-10, 1e6, allow_nan=False)))
    assert moved_others(_loan_code, raw, i, col, value) == 0


IPUMS_CODEBOOK = {"AGE2": list(range(1, 21)) + [98, 99], "MARST": [1, 2, 3, 4, 9], "OCC": list(range(0, 100))}
IPUMS_DOMAINS = {"AGE2": 6, "MARST": 5, "OCC": 12}


@functools.cache
def _ipums_raw() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({a: rng.choice(c, size=3000, p=rng.dirichlet(np.full(len(c), 0.3)))
                         for a, c in IPUMS_CODEBOOK.items()})


def _ipums_code(raw):
    return ipums.recode(raw, IPUMS_DOMAINS, IPUMS_CODEBOOK)[0]


@PROPERTY
@given(data=st.data())
def test_ipums_one_record_moves_only_itself(data):
    raw = _ipums_raw()
    col = data.draw(st.sampled_from(sorted(IPUMS_CODEBOOK)))
    i = data.draw(st.one_of(st.integers(0, len(raw) - 1), st.sampled_from(_special_rows(raw, col))))
    value = data.draw(st.sampled_from(IPUMS_CODEBOOK[col]))
    assert moved_others(lambda r: _ipums_code(r.astype(np.int64)), raw, i, col, value) == 0


# --------------------------------------------------------------------- the same check fails on the old codings


def test_the_check_catches_the_old_adult_coding(mirror):
    """Issue 43's pair: the smallest fnlwgt (held by one record) replaced by the median moves thousands."""
    raw = _adult_raw(str(mirror))
    i = int(raw["fnlwgt"].idxmin())
    assert moved_others(old_adult, raw, i, "fnlwgt", float(raw["fnlwgt"].median())) > 1000
    assert moved_others(_adult_code, raw, i, "fnlwgt", float(raw["fnlwgt"].median())) == 0


def test_the_check_catches_the_old_loan_coding(mirror):
    """At a tie block: moving the lowest int_rate above the maximum moves other records' codes."""
    raw = _loan_raw(str(mirror))[["int_rate"]]
    x = raw["int_rate"].to_numpy()
    moved = 0
    for i in np.argsort(x, kind="stable")[:3]:  # the lowest records, one by one
        raw = raw.copy()
        moved += moved_others(old_loan, raw, int(i), "int_rate", float(x.max() + 1))
        raw.loc[int(i), "int_rate"] = float(x.max() + 1)
    assert moved > 0
    assert moved_others(_loan_code, _loan_raw(str(mirror)), int(np.argmin(x)), "int_rate", float(x.max() + 1)) == 0


def test_the_check_catches_the_old_ipums_recoding():
    """A codebook code absent from the data enters the old ranking with one record and shifts the codes
    of every record above it; the codebook coding moves nobody else."""
    raw = _ipums_raw().astype(np.int64).copy()
    raw.loc[raw["MARST"] == 3, "MARST"] = 4  # code 3 (in the codebook) held by nobody
    old = moved_others(lambda r: old_ipums(r.astype(np.int64), IPUMS_DOMAINS), raw, 0, "MARST", 3)
    assert old >= int((raw["MARST"] > 3).sum()) - 1 > 100
    assert moved_others(lambda r: _ipums_code(r.astype(np.int64)), raw, 0, "MARST", 3) == 0


def test_ipums_value_outside_the_codebook_is_an_error():
    raw = _ipums_raw().astype(np.int64).copy()
    raw.loc[0, "MARST"] = 7
    with pytest.raises(ValueError, match="MARST"):
        _ipums_code(raw)
    with pytest.raises(ValueError, match="no codes"):
        ipums.recode(raw, {"XX": 2}, IPUMS_CODEBOOK)


def test_processed_tables_are_the_public_coding_of_the_raw_records(mirror, tmp_path):
    """The data stage's Adult table, its HDG/CALM ordinal table and the Loan table are exactly the public
    coding of the raw records, and their provenance carries the public parameters and edges."""
    import pyarrow.parquet as pq

    from shuffledp.datasets import adult_ordinal
    from shuffledp.datasets.prepare import prepare_adult
    from shuffledp.datasets.provenance import read_provenance

    quiet = lambda m: None  # noqa: E731
    a_path, o_path, l_path = tmp_path / "adult.parquet", tmp_path / "adult_ordinal.parquet", tmp_path / "loan.parquet"
    prepare_adult("real", str(tmp_path / "raw"), str(a_path), str(mirror), seed=0, log=quiet)
    adult_ordinal.derive(str(a_path), str(o_path), c=16, log=quiet)
    raw = _adult_raw(str(mirror))
    pd.testing.assert_frame_equal(pq.read_table(o_path).to_pandas(), _adult_ordinal(raw), check_dtype=False)
    prov = read_provenance(a_path)
    fnlwgt = prov["coding"]["ordinal"]["fnlwgt"]
    assert fnlwgt["lo"] == 10000 and len(fnlwgt["edges"]) == 31
    loan.prepare("real", str(tmp_path / "raw"), str(l_path), str(mirror), 0, c=16, log=quiet)
    pd.testing.assert_frame_equal(pq.read_table(l_path).to_pandas(), _loan_code(_loan_raw(str(mirror))),
                                  check_dtype=False)
    lprov = read_provenance(l_path)
    assert lprov["coding"]["ordinal"]["int_rate"]["size"] == 16 and lprov["missing_values"]["int_rate"] == 0
    # a changed public parameter changes the table (the config key is what is used)
    adult_ordinal.derive(str(a_path), str(o_path), c=8, log=quiet)
    assert pq.read_table(o_path).to_pandas()["age"].max() <= 7


def test_refuses_a_table_without_public_domain_sizes(tmp_path):
    from shuffledp.datasets.provenance import write_table
    from shuffledp.experiments.multidim_frameworks import load_table

    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"a": np.array([0, 1, 2], dtype=np.int16)}), path, {"dataset": "x"})
    with pytest.raises(ValueError, match="no domain size"):
        load_table(path, None, 0, "x")
