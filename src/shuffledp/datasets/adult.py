"""UCI Adult (census income, id 2): download, verify, preprocess to categorical and ordinal codes.

``adult.data`` (32,561 records) and ``adult.test`` (16,281; first line a header remark, labels
with a trailing dot) are combined. Categorical attributes are coded in the order of their values
as listed in ``adult.names`` (missing ``?`` is its own category). Ordinal attributes keep their
order: age and hours-per-week as integer ranges, education-num as is, fnlwgt in 32 equal-width
bins of log(fnlwgt), capital-gain and capital-loss in 16 equal-width bins of log1p(value).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable

import numpy as np
import pandas as pd

from shuffledp.datasets.download import Candidate, Checksum, fetch_verified, mirror_candidate

FILES = {
    "adult.data": "5d7c39d7b8804f071cdd1f2a7c460872",
    "adult.test": "35238206dfdf7f1fe215bbb874adecdc",
}
UCI_ZIP = "https://archive.ics.uci.edu/static/public/2/adult.zip"
UCI_LEGACY = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
    "relationship", "race", "sex", "capital_gain", "capital_loss", "hours_per_week", "native_country",
    "income",
]
CATEGORIES = {
    "workclass": "Private Self-emp-not-inc Self-emp-inc Federal-gov Local-gov State-gov Without-pay "
    "Never-worked ?",
    "education": "Preschool 1st-4th 5th-6th 7th-8th 9th 10th 11th 12th HS-grad Some-college Assoc-voc "
    "Assoc-acdm Bachelors Masters Prof-school Doctorate",
    "marital_status": "Married-civ-spouse Divorced Never-married Separated Widowed Married-spouse-absent "
    "Married-AF-spouse",
    "occupation": "Tech-support Craft-repair Other-service Sales Exec-managerial Prof-specialty "
    "Handlers-cleaners Machine-op-inspct Adm-clerical Farming-fishing Transport-moving Priv-house-serv "
    "Protective-serv Armed-Forces ?",
    "relationship": "Wife Own-child Husband Not-in-family Other-relative Unmarried",
    "race": "White Asian-Pac-Islander Amer-Indian-Eskimo Other Black",
    "sex": "Female Male",
    "native_country": "United-States Cambodia England Puerto-Rico Canada Germany "
    "Outlying-US(Guam-USVI-etc) India Japan Greece South China Cuba Iran Honduras Philippines Italy "
    "Poland Jamaica Vietnam Mexico Portugal Ireland France Dominican-Republic Laos Ecuador Taiwan Haiti "
    "Columbia Hungary Guatemala Nicaragua Scotland Thailand Yugoslavia El-Salvador Trinadad&Tobago Peru "
    "Hong Holand-Netherlands ?",
    "income": "<=50K >50K",
}
ORDINAL = ["age", "education_num", "hours_per_week", "fnlwgt", "capital_gain", "capital_loss"]


def candidates(name: str, mirror: str | None) -> list[Candidate]:
    return [
        *mirror_candidate(mirror, f"adult/{name}"),
        Candidate(UCI_ZIP, member=name),
        Candidate(UCI_LEGACY + name),
    ]


def download(raw_dir: str | os.PathLike, mirror: str | None, log: Callable[[str], None] = print) -> dict:
    """Fetch and verify both files into ``raw_dir``; return {file: origin}."""
    return {
        name: fetch_verified(os.path.join(raw_dir, name), candidates(name, mirror), Checksum("md5", md5), log=log)
        for name, md5 in FILES.items()
    }


def read_raw(data_path: str | os.PathLike, test_path: str | os.PathLike) -> pd.DataFrame:
    frames = []
    for path in (data_path, test_path):
        with open(path, encoding="ascii") as fh:
            text = "".join(line for line in fh if not line.startswith("|") and line.strip())
        df = pd.read_csv(io.StringIO(text), header=None, names=COLUMNS, skipinitialspace=True)
        df["income"] = df["income"].str.rstrip(".")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def encode(raw: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Integer codes (int16) for every attribute and the domain size of each."""
    out, domains = {}, {}
    for col, values in CATEGORIES.items():
        cats = values.split()
        codes = raw[col].map({c: i for i, c in enumerate(cats)}).fillna(-1).to_numpy(np.int64)
        if (codes < 0).any():
            bad = sorted(set(raw[col][codes < 0]))[:5]
            raise ValueError(f"adult: unknown {col} values {bad}")
        out[col], domains[col] = codes.astype(np.int16), len(cats)
    out["age"], domains["age"] = _int_range(raw["age"], 17, 90)
    out["education_num"], domains["education_num"] = _int_range(raw["education_num"], 1, 16)
    out["hours_per_week"], domains["hours_per_week"] = _int_range(raw["hours_per_week"], 1, 99)
    out["fnlwgt"], domains["fnlwgt"] = _log_bins(np.log(raw["fnlwgt"].to_numpy(float)), 32)
    out["capital_gain"], domains["capital_gain"] = _log_bins(np.log1p(raw["capital_gain"].to_numpy(float)), 16)
    out["capital_loss"], domains["capital_loss"] = _log_bins(np.log1p(raw["capital_loss"].to_numpy(float)), 16)
    order = [c for c in COLUMNS if c in out]
    return pd.DataFrame({c: out[c] for c in order}), {c: domains[c] for c in order}


def _int_range(values: pd.Series, lo: int, hi: int) -> tuple[np.ndarray, int]:
    v = values.to_numpy(np.int64)
    if v.min() < lo or v.max() > hi:
        raise ValueError(f"adult: {values.name} outside {lo}..{hi}")
    return (v - lo).astype(np.int16), hi - lo + 1


def _log_bins(x: np.ndarray, bins: int) -> tuple[np.ndarray, int]:
    lo, hi = float(x.min()), float(x.max())
    codes = np.floor((x - lo) / (hi - lo) * bins) if hi > lo else np.zeros_like(x)
    return np.clip(codes, 0, bins - 1).astype(np.int16), bins


def standin(rows: int, rng: np.random.Generator) -> tuple[pd.DataFrame, dict[str, int]]:
    """A generated table with Adult's schema and domain sizes (independent skewed attributes)."""
    domains = {c: len(v.split()) for c, v in CATEGORIES.items()}
    domains.update(age=74, education_num=16, hours_per_week=99, fnlwgt=32, capital_gain=16, capital_loss=16)
    order = [c for c in COLUMNS if c in domains]
    data = {}
    for col in order:
        k = domains[col]
        p = rng.dirichlet(np.full(k, 0.5))
        data[col] = rng.choice(k, size=rows, p=p).astype(np.int16)
    return pd.DataFrame(data), {c: domains[c] for c in order}
