import numpy as np
import pandas as pd
import pytest

from shuffledp.datasets import ipums
from shuffledp.datasets.prepare import prepare_ipums, resolve_ipums_source
from shuffledp.datasets.provenance import read_provenance

DDI = """<?xml version="1.0" encoding="UTF-8"?>
<codeBook xmlns="ddi:codebook:2_5">
  <dataDscr>
    <var ID="YEAR" name="YEAR"><location StartPos="1" EndPos="4" width="4"/></var>
    <var ID="SEX" name="SEX"><location StartPos="5" EndPos="5" width="1"/>
      <catgry><catValu>1</catValu><labl>Male</labl></catgry><catgry><catValu>2</catValu><labl>Female</labl></catgry>
    </var>
    <var ID="AGE" name="AGE"><location StartPos="6" EndPos="8" width="3"/>
      <valrng><range min="0" max="120"/></valrng></var>
    <var ID="MARST" name="MARST"><location StartPos="9" EndPos="9" width="1"/>
      <catgry><catValu>1</catValu></catgry><catgry><catValu>2</catValu></catgry><catgry><catValu>3</catValu></catgry>
      <catgry><catValu>4</catValu></catgry><catgry><catValu>9</catValu></catgry>
    </var>
  </dataDscr>
</codeBook>
"""
ROWS = ["20101 251", "20102 032", "20101 703", "20102 014", "20101 451", "20102 092"]


def _extract(tmp_path):
    ddi = tmp_path / "ipumsi_00001.xml"
    ddi.write_text(DDI)
    dat = tmp_path / "ipumsi_00001.dat"
    dat.write_text("\n".join(ROWS) + "\n")
    return ddi, dat


def test_ddi_layout_and_fixed_width(tmp_path):
    ddi, dat = _extract(tmp_path)
    assert ipums.read_ddi(ddi) == {"YEAR": (0, 4), "SEX": (4, 1), "AGE": (5, 3), "MARST": (8, 1)}
    df = ipums.read_fixed_width(ddi, dat, ["SEX", "AGE", "MARST"])
    assert df["SEX"].tolist() == [1, 2, 1, 2, 1, 2]
    assert df["AGE"].tolist() == [25, 3, 70, 1, 45, 9]
    assert df["MARST"].tolist() == [1, 2, 3, 4, 1, 2]


def test_missing_attribute_is_named(tmp_path):
    ddi, dat = _extract(tmp_path)
    with pytest.raises(ValueError, match="EDATTAIN"):
        ipums.read_fixed_width(ddi, dat, ["SEX", "EDATTAIN"])


def test_recode_merges_codebook_codes_in_order():
    df = pd.DataFrame({"AGE": [1, 3, 9, 25, 45, 70, 70, 80], "SEX": [1, 2, 1, 2, 1, 2, 1, 2]})
    book = {"AGE": list(range(0, 121)), "SEX": [1, 2]}
    out, mapping = ipums.recode(df, {"AGE": 3, "SEX": 2}, book)
    assert out["SEX"].tolist() == [0, 1, 0, 1, 0, 1, 0, 1]
    # 121 codebook codes in 3 groups of ~40 codes, whatever the data holds
    assert out["AGE"].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    assert mapping["AGE"]["40"] == 0 and mapping["AGE"]["41"] == 1 and mapping["AGE"]["120"] == 2
    assert len(mapping["AGE"]) == 121


def test_ddi_codes(tmp_path):
    ddi, _ = _extract(tmp_path)
    codes = ipums.read_ddi_codes(ddi)
    assert codes["SEX"] == [1, 2] and codes["MARST"] == [1, 2, 3, 4, 9] and codes["AGE"] == list(range(121))
    assert "YEAR" not in codes


def test_file_source_end_to_end(tmp_path):
    ddi, dat = _extract(tmp_path)
    spec = {"source": "file", "records": 100, "ddi": str(ddi), "data": str(dat),
            "attributes": {"SEX": 2, "AGE": 4, "MARST": 4}}
    out = tmp_path / "ipums_xx.parquet"
    prov = prepare_ipums("xx", spec, str(tmp_path), str(out), seed=1, log=lambda m: None)
    assert prov["standin"] is False and prov["rows"] == 6
    assert read_provenance(out)["domains"] == {"SEX": 2, "AGE": 4, "MARST": 4}
    assert resolve_ipums_source("auto", spec) == "file"


def test_standin_schema_skew_and_dependence(monkeypatch):
    monkeypatch.delenv("IPUMS_API_KEY", raising=False)
    assert resolve_ipums_source("auto", {"sample": "br2010a"}) == "standin"
    domains = {"A": 5, "B": 4, "C": 2}
    df = ipums.standin(domains, 50000, np.random.default_rng(2))
    assert list(df.columns) == ["A", "B", "C"]
    for col, k in domains.items():
        assert df[col].between(0, k - 1).all()
    pa_ = df["A"].value_counts(normalize=True)
    assert pa_.max() > 1.5 / 5  # skewed, not uniform
    # dependence: the joint of A and B differs from the product of marginals (chi-square test)
    from scipy.stats import chi2_contingency

    table = pd.crosstab(df["A"], df["B"]).to_numpy()
    assert chi2_contingency(table).pvalue < 1e-6
