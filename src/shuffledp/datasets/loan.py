"""Lending Club loans ("Loan" of the multidimensional seed, Sec. 6): ordinal attributes for HDG.

Sources (``source`` in the config):

- ``real`` / ``auto``: the real 9,857-loan **subset** of Lending Club loans (Q1 2016) shipped in R's
  ``modeldata`` package (as ``lending_club``), stored as ``lending_club.parquet`` and verified by its
  SHA-256; fetched from the offline mirror (``data_mirror`` / ``SHUFFLEDP_DATA_MIRROR``) or a copy already
  in the raw folder. It is a subset: the seed used a 200,000-record file (Kaggle, wordsforthewise/
  lending-club), which needs an account.
- ``file``: that (or any) Lending Club file the user downloaded, CSV or Parquet, at ``path``; its
  SHA-256 is recorded in the provenance (no published checksum exists); ``records`` rows are sampled.
- ``standin`` (and ``auto`` when the subset cannot be had): a generated table with the same attributes,
  labelled as a stand-in.

The seed gives no attribute list for its 10-attribute Loan table; :data:`ATTRIBUTES` (numeric columns
present both in the subset and in the Kaggle file) is our choice. Each attribute is cut into ``c - 1``
fixed bins of a PUBLIC range (``multidim_frameworks.loan.coding``, :data:`shuffledp.datasets.coding.LOAN_CODING`;
values outside clipped) and a missing value gets code 0 (``c`` a power of two, HDG's common domain); the
codes keep the attribute's order and no code depends on any other record. (Before, the codes were the
data's equal-frequency quantiles, so one record at a tie block moved a whole block of other records.)
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.datasets.download import Checksum, DownloadError, fetch_verified, mirror_candidate

SHA256 = "26c118822e656c466b42e4f130cecec4e3676dd70c9e5df387c4213a58668531"
ROWS = 9857
FILENAME = "lending_club.parquet"
ATTRIBUTES = ["funded_amnt", "int_rate", "annual_inc", "revol_util", "all_util", "total_bal_il",
              "total_il_high_credit_limit", "num_il_tl", "inq_last_12m", "open_il_24m"]
CITATION = ("Lending Club loans, Q1 2016 subset as distributed in the R package modeldata "
            "(data set lending_club); Debian package r-cran-modeldata")


def fetch_subset(raw_dir: str | os.PathLike, mirror: str | None, log: Callable[[str], None] = print) -> str:
    """A verified copy of the subset at ``raw_dir/lending_club.parquet``; returns its origin."""
    dest = Path(raw_dir) / FILENAME
    return fetch_verified(dest, mirror_candidate(mirror, FILENAME), Checksum("sha256", SHA256), log=log)


def read_any(path: str | os.PathLike, attributes: list[str] = ATTRIBUTES) -> pd.DataFrame:
    """The numeric ``attributes`` of a Lending Club table (Parquet or CSV, percent strings accepted)."""
    path = str(path)
    if path.endswith(".parquet"):
        df = pd.read_parquet(path, columns=attributes)
    else:
        df = pd.read_csv(path, usecols=attributes, low_memory=False)
    out = {}
    for a in attributes:
        col = df[a]
        if col.dtype == object:
            col = col.astype(str).str.strip().str.rstrip("%")
        out[a] = pd.to_numeric(col, errors="coerce").astype(float)
    return pd.DataFrame(out)


def quantile_codes(x: np.ndarray, c: int) -> np.ndarray:
    """Equal-frequency codes in ``0..c-1`` (order-preserving; tied values share a code): DATA-DEPENDENT,
    used only for the stand-in's generated values (no person's record), never for real records."""
    edges = np.unique(np.quantile(x, np.arange(1, c) / c))
    return np.searchsorted(edges, x, side="right").astype(np.int16)


def encode(df: pd.DataFrame, c: int, coding: Mapping | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Public codes ``0..c-1`` for every attribute (:func:`shuffledp.datasets.coding.code_loan`: fixed
    bins of a public range, code 0 for a missing value; no record dropped) and the count of missing
    values per attribute."""
    from shuffledp.datasets.coding import code_loan

    missing = {a: int(df[a].isna().sum()) for a in df.columns}
    return code_loan(df, c, coding), missing


def standin(rows: int, c: int, rng: np.random.Generator, attributes: list[str] = ATTRIBUTES) -> pd.DataFrame:
    """Ordinal codes from a latent Gaussian factor model (attributes positively dependent)."""
    z = rng.normal(size=(rows, 1))
    load = rng.uniform(0.3, 0.8, size=len(attributes))
    lat = z * load + rng.normal(size=(rows, len(attributes))) * np.sqrt(1 - load**2)
    skew = np.exp(lat * rng.uniform(0.2, 1.0, size=len(attributes)))  # skewed like money amounts
    return pd.DataFrame({a: quantile_codes(skew[:, j], c) for j, a in enumerate(attributes)})


def sha256_of(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def prepare(source: str, raw_dir: str, out_path: str, mirror: str | None, seed: int, *, c: int = 16,
            path: str | None = None, records: int | None = None, standin_rows: int = ROWS,
            log: Callable[[str], None] = print, coding: Mapping | None = None) -> dict:
    """Write ``out_path`` (one int16 column per attribute, codes ``0..c-1``) with provenance."""
    from shuffledp.datasets.provenance import write_table
    from shuffledp.seeding import rng as make_rng

    if c < 2 or c & (c - 1):
        raise ValueError(f"domain: must be a power of two, got {c}")
    prov: dict = {"dataset": "loan"}
    raw = None
    if source == "file":
        if not path or not Path(path).exists():
            raise ValueError(f"datasets loan: source file needs an existing path, got {path!r}")
        raw = read_any(path)
        prov.update(source="real", standin=False, subset=False, origin="file", file=Path(path).name,
                    sha256=sha256_of(path), citation="Lending Club loans (user-supplied file)")
    elif source in ("auto", "real"):
        try:
            # where the file came from (the mirror, a publisher, or raw_dir's verified copy of an
            # earlier run) is logged, not recorded: the table's provenance must not depend on a cache
            fetch_subset(raw_dir, mirror, log=log)
            raw = read_any(Path(raw_dir) / FILENAME)
            prov.update(source="real", standin=False, subset=True, sha256=SHA256,
                        citation=CITATION,
                        note=f"a real {ROWS}-loan subset, not the paper's 200,000-record file")
        except DownloadError as exc:
            if source == "real" or "checksum mismatch" in str(exc):
                raise
            log(f"WARNING: loan: the real subset cannot be had here; using the labelled OFFLINE STAND-IN.\n{exc}")
    elif source != "standin":
        raise ValueError(f"datasets loan: source must be auto, real, file or standin, got {source!r}")
    if raw is not None:
        if records is not None and records < len(raw):
            idx = np.sort(make_rng(seed, "data", "loan", "records").choice(len(raw), records, replace=False))
            raw = raw.iloc[idx].reset_index(drop=True)
        table, missing = encode(raw, c, coding)
        prov["missing_values"] = missing  # each coded 0 (its own public code); no record is dropped
    else:
        table = standin(standin_rows, c, make_rng(seed, "data", "loan", "standin"))
        prov.update(source="standin", standin=True, generator="shuffledp.datasets.loan.standin (latent factor)")
    if raw is not None:
        from shuffledp.datasets.coding import loan_bins

        binning = {"kind": "public: fixed edges from public ranges, no data-dependent parameter",
                   "ordinal": {a: b.describe() for a, b in loan_bins(c, coding).items()}}
    else:
        binning = f"stand-in: equal-frequency codes of generated values ({c} codes; no real person's record)"
    prov.update(rows=len(table), domains={a: int(c) for a in table.columns}, ordinal=list(table.columns),
                coding=binning)
    write_table(table, out_path, prov)
    log(f"loan: {len(table)} records, {table.shape[1]} attributes ({prov['source']})")
    return prov
