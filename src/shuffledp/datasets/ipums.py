"""IPUMS International census extracts (the "BR" and "MX" tables of the multidimensional papers).

IPUMS data cannot be redistributed and needs a registered account, so three sources exist:

- ``ipums``: submit and download an extract with ipumspy, using ``IPUMS_API_KEY``;
- ``file``: read an extract the user downloaded (DDI codebook + fixed-width data file, optionally
  gzipped), parsed here with the standard library (no ipumspy needed);
- ``standin``: a generated census-like table with the same schema (attribute names, domain sizes),
  skewed marginals and dependence between attributes through a latent-class model. It is a
  stand-in, named as such in its provenance and in everything built from it.

Every attribute is recoded to 0..C-1 where C is its configured domain size, from the CODEBOOK's codes
(the DDI's category list, or its value range), never from the values present: the codebook codes
are ranked in numeric order; when there are more than C, consecutive codes are merged into C groups
of near-equal number of codes (the mapping is stored in the provenance). So a record's code is a
function of that record and the public codebook. (Before, codes were ranked among the values present
and merged by cumulative frequency: one record could move others' codes.)
"""

from __future__ import annotations

import gzip
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

API_KEY_ENV = "IPUMS_API_KEY"


def read_ddi(path: str | os.PathLike) -> dict[str, tuple[int, int]]:
    """Variable name -> (0-based start column, width) from an IPUMS DDI codebook."""
    tree = ET.parse(path)
    layout = {}
    for var in tree.iter():
        if _local(var.tag) != "var":
            continue
        name = var.get("name") or var.get("ID")
        loc = next((c for c in var if _local(c.tag) == "location"), None)
        if name is None or loc is None:
            continue
        start = int(loc.get("StartPos"))
        width = int(loc.get("width") or (int(loc.get("EndPos")) - start + 1))
        layout[name.upper()] = (start - 1, width)
    if not layout:
        raise ValueError(f"{path}: no <var> with a <location> found; is this an IPUMS DDI codebook?")
    return layout


def read_fixed_width(ddi_path: str | os.PathLike, data_path: str | os.PathLike,
                     attributes: list[str]) -> pd.DataFrame:
    """The integer codes of ``attributes`` from an IPUMS fixed-width extract."""
    layout = read_ddi(ddi_path)
    missing = [a for a in attributes if a.upper() not in layout]
    if missing:
        raise ValueError(f"{ddi_path}: attributes {missing} are not in the extract (has {sorted(layout)})")
    colspecs = [(layout[a.upper()][0], layout[a.upper()][0] + layout[a.upper()][1]) for a in attributes]
    opener = gzip.open if str(data_path).endswith(".gz") else open
    with opener(data_path, "rt", encoding="ascii") as fh:
        df = pd.read_fwf(fh, colspecs=colspecs, names=list(attributes), header=None, dtype=np.int64)
    return df


def read_ddi_codes(path: str | os.PathLike) -> dict[str, list[int]]:
    """Variable name -> its codebook codes, ascending: the ``<catgry><catValu>`` list of an IPUMS DDI
    codebook, else its ``<valrng><range min max>`` (every integer in it). Public: the codebook, not the data."""
    tree = ET.parse(path)
    out = {}
    for var in tree.iter():
        if _local(var.tag) != "var":
            continue
        name = (var.get("name") or var.get("ID") or "").upper()
        codes = set()
        for el in var.iter():
            tag = _local(el.tag)
            if tag == "catValu" and el.text and el.text.strip().lstrip("-").isdigit():
                codes.add(int(el.text.strip()))
            elif tag == "range" and el.get("min") is not None and el.get("max") is not None:
                codes.update(range(int(float(el.get("min"))), int(float(el.get("max"))) + 1))
        if name and codes:
            out[name] = sorted(codes)
    return out


def recode(df: pd.DataFrame, domains: Mapping[str, int],
           codebook: Mapping[str, list[int]]) -> tuple[pd.DataFrame, dict[str, dict]]:
    """Codes 0..C-1 per attribute from the CODEBOOK's codes (see module docstring) and the mapping used.

    The ``m`` codebook codes of an attribute, in numeric order, are merged into ``C`` consecutive groups
    of near-equal NUMBER OF CODES (``rank * C // m``; kept as they are when ``m <= C``): the mapping is a
    function of the public codebook only, so a record's code depends on that record alone. A value that
    is not in the codebook, or an attribute the codebook has no codes for, is an error."""
    out, mapping = {}, {}
    for col, size in domains.items():
        codes = codebook.get(col.upper())
        if not codes:
            raise ValueError(f"ipums: the codebook lists no codes of {col} (no <catgry> or <valrng>)")
        values = np.asarray(sorted(set(codes)), dtype=np.int64)
        m = len(values)
        group = np.arange(m) if m <= size else np.arange(m) * size // m
        x = df[col].to_numpy().astype(np.int64)
        pos = np.searchsorted(values, x)
        bad = (pos >= m) | (values[np.minimum(pos, m - 1)] != x)
        if bad.any():
            raise ValueError(f"ipums: {col} has values not in the codebook: {sorted(set(x[bad].tolist()))[:5]}")
        out[col] = group[pos].astype(np.int16)
        mapping[col] = {str(k): int(v) for k, v in zip(values.tolist(), group.tolist(), strict=True)}
    return pd.DataFrame(out), mapping


def sample_rows(df: pd.DataFrame, records: int, rng: np.random.Generator) -> pd.DataFrame:
    if len(df) <= records:
        return df.reset_index(drop=True)
    idx = np.sort(rng.choice(len(df), size=records, replace=False))
    return df.iloc[idx].reset_index(drop=True)


def standin(domains: Mapping[str, int], records: int, rng: np.random.Generator,
            latent_classes: int = 12) -> pd.DataFrame:
    """A census-like stand-in: a latent-class mixture gives skewed marginals and dependence.

    Each record draws a latent class from a skewed Dirichlet weight vector; each attribute is
    then drawn from that class's own skewed categorical distribution, so attributes are dependent
    through the class, as real census attributes are through unobserved demographics.
    """
    weights = rng.dirichlet(np.full(latent_classes, 0.7))
    cls = rng.choice(latent_classes, size=records, p=weights)
    data = {}
    for col, size in domains.items():
        base = rng.dirichlet(np.full(size, 0.6))  # skewed marginal shared by all classes
        table = rng.dirichlet(base * 8.0 + 0.05, size=latent_classes)  # per-class perturbation
        u = rng.random(records)
        cdf = np.cumsum(table, axis=1)
        cdf[:, -1] = 1.0
        data[col] = (u[:, None] > cdf[cls]).sum(axis=1).astype(np.int16)
    return pd.DataFrame(data)


def find_extract(raw_dir: str | os.PathLike) -> tuple[Path, Path] | None:
    """The newest (DDI, data) pair already downloaded into ``raw_dir``, if any."""
    raw_dir = Path(raw_dir)
    ddi = sorted(raw_dir.glob("*.xml"))
    dat = sorted(raw_dir.glob("*.dat.gz")) or sorted(raw_dir.glob("*.dat"))
    return (ddi[-1], dat[-1]) if ddi and dat else None


def find_or_download(sample: str, attributes: list[str], raw_dir: str | os.PathLike,
                     log: Callable[[str], None] = print) -> tuple[Path, Path]:
    found = find_extract(raw_dir)
    if found:
        log(f"IPUMS extract already in {raw_dir}: {found[0].name}, {found[1].name}")
        return found
    return download_extract(sample, attributes, raw_dir, log=log)


def download_extract(sample: str, attributes: list[str], raw_dir: str | os.PathLike,
                     log: Callable[[str], None] = print) -> tuple[Path, Path]:
    """Submit an IPUMS International extract, wait, download; return (ddi, data) paths."""
    key = os.environ.get(API_KEY_ENV)
    if not key:
        raise RuntimeError(f"source ipums needs the environment variable {API_KEY_ENV} (an IPUMS API key)")
    try:
        from ipumspy import IpumsApiClient, MicrodataExtract
    except ImportError as exc:  # pragma: no cover - depends on the optional extra
        raise RuntimeError("source ipums needs ipumspy: pip install 'shuffledp[ipums]'") from exc
    client = IpumsApiClient(key)
    extract = MicrodataExtract("ipumsi", [sample], [a.upper() for a in attributes],
                               description=f"shuffledp {sample}")
    client.submit_extract(extract)
    log(f"IPUMS extract {extract.extract_id} submitted; waiting")
    client.wait_for_extract(extract)
    raw_dir = Path(raw_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    client.download_extract(extract, download_dir=raw_dir)
    found = find_extract(raw_dir)
    if not found:
        raise RuntimeError(f"IPUMS extract downloaded to {raw_dir} but no DDI (.xml) and data (.dat[.gz]) found")
    return found


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
