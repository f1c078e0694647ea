"""Adult's ordinal attributes for HDG range queries (the multidimensional seed's 5-attribute Adult).

The seed uses "Adult ... 30 thousands records with 5 attributes ... all with ordinal values" and names
no attributes. Our choice: age, fnlwgt, education_num, capital_gain and hours_per_week, read from the
processed Adult table (``data/processed/adult.parquet``, written by the data stage with checksum and
provenance; :mod:`shuffledp.datasets.adult`) and re-binned to HDG's common power-of-two domain ``c`` by
equal-width merging of consecutive codes (``code * c // |C|``; attributes with ``|C| <= c`` keep their
codes). capital_loss is left out (like capital_gain it is mostly zero; one such attribute is enough).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

ATTRIBUTES = ["age", "fnlwgt", "education_num", "capital_gain", "hours_per_week"]


def rebin(codes: np.ndarray, size: int, c: int) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    if size <= c:
        return codes.astype(np.int16)
    return (codes * c // size).astype(np.int16)


def derive(adult_path: str, out_path: str, *, c: int = 16, log=print) -> dict:
    """Write the ordinal table (codes ``0..c-1``) with the Adult provenance plus the derivation."""
    from shuffledp.datasets.provenance import read_provenance, write_table

    if c < 2 or c & (c - 1):
        raise ValueError(f"domain: must be a power of two, got {c}")
    prov = read_provenance(adult_path)
    doms = prov.get("domains") or {}
    tbl = pq.read_table(adult_path, columns=ATTRIBUTES).to_pandas()
    out = pd.DataFrame({a: rebin(tbl[a].to_numpy(), int(doms.get(a, int(tbl[a].max()) + 1)), c) for a in ATTRIBUTES})
    new = {k: v for k, v in prov.items() if k not in ("domains", "ordinal", "rows")}
    new.update(dataset="adult_ordinal", derived_from=prov.get("dataset", "adult"),
               rows=len(out), domains={a: int(c) for a in ATTRIBUTES}, ordinal=list(ATTRIBUTES),
               binning=f"equal-width merge of the processed codes into {c} codes")
    write_table(out, out_path, new)
    log(f"adult_ordinal: {len(out)} records, {len(ATTRIBUTES)} attributes ({new.get('source', '?')})")
    return new
