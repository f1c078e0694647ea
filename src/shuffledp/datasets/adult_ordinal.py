"""Adult's ordinal attributes for HDG range queries (the multidimensional seed's 5-attribute Adult).

The seed uses "Adult ... 30 thousands records with 5 attributes ... all with ordinal values" and names
no attributes. Our choice: age, fnlwgt, education_num, capital_gain and hours_per_week, read from the
processed Adult table (``data/processed/adult.parquet``, written by the data stage with checksum and
provenance; :mod:`shuffledp.datasets.adult`) and re-binned to HDG's common power-of-two domain ``c`` by
equal-width merging of consecutive codes (``code * c // |C|``; attributes with ``|C| <= c`` keep their
codes): a function of the record's public code and the public sizes, never of the other records
(:func:`shuffledp.datasets.coding.code_adult_ordinal` does both steps from a raw record).
capital_loss is left out (like capital_gain it is mostly zero; one such attribute is enough).
"""

from __future__ import annotations

import pandas as pd
import pyarrow.parquet as pq

from shuffledp.datasets.adult_schema import ATTRIBUTES
from shuffledp.datasets.coding import rebin  # the merge is part of the public coding

__all__ = ["ATTRIBUTES", "derive", "rebin"]


def derive(adult_path: str, out_path: str, *, c: int = 16, log=print) -> dict:
    """Write the ordinal table (codes ``0..c-1``) with the Adult provenance plus the derivation."""
    from shuffledp.datasets.provenance import read_provenance, write_table

    if c < 2 or c & (c - 1):
        raise ValueError(f"domain: must be a power of two, got {c}")
    prov = read_provenance(adult_path)
    doms = prov.get("domains") or {}
    missing = [a for a in ATTRIBUTES if a not in doms]
    if missing:  # the domain comes from the public coding, never from the data's largest code
        raise ValueError(f"{adult_path}: the provenance gives no domain size of {missing} (rebuild the Adult table)")
    tbl = pq.read_table(adult_path, columns=ATTRIBUTES).to_pandas()
    out = pd.DataFrame({a: rebin(tbl[a].to_numpy(), int(doms[a]), c) for a in ATTRIBUTES})
    new = {k: v for k, v in prov.items() if k not in ("domains", "ordinal", "rows")}
    new.update(dataset="adult_ordinal", derived_from=prov.get("dataset", "adult"),
               rows=len(out), domains={a: int(c) for a in ATTRIBUTES}, ordinal=list(ATTRIBUTES),
               binning=f"the public codes of Adult (coding) merged into {c} codes: code * {c} // |C|")
    write_table(out, out_path, new)
    log(f"adult_ordinal: {len(out)} records, {len(ATTRIBUTES)} attributes ({new.get('source', '?')})")
    return new
