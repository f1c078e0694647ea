"""Dataset preparation: raw file (or stand-in) -> processed Parquet with provenance.

Source policy (config ``datasets.<name>.source``):

- ``real`` (``ipums``/``file`` for IPUMS): the real data or a clear error;
- ``auto``: the real data when it can be had (a verified file in the raw folder, the offline
  mirror, or the publisher), else -- only when no source could be reached at all -- the labelled
  stand-in with a warning. A damaged file (checksum mismatch, or a file that cannot be read or
  decompressed) is never papered over by a stand-in: it is an error in every mode, naming the
  file, unless a later source gives a verified copy;
- ``standin``: the generated stand-in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from shuffledp.datasets import adult as adult_mod
from shuffledp.datasets import ipums as ipums_mod
from shuffledp.datasets import msnbc as msnbc_mod
from shuffledp.datasets import synthetic as synth_mod
from shuffledp.datasets.download import DownloadError
from shuffledp.datasets.provenance import write_table
from shuffledp.seeding import rng as make_rng

Log = Callable[[str], None]


def _fallback_allowed(source: str, exc: DownloadError, log: Log, name: str) -> bool:
    if source != "auto":
        return False
    if getattr(exc, "corrupt", True):  # a damaged file was reached: never replaced by a stand-in
        return False
    log(f"WARNING: {name}: the real data cannot be had here; using the labelled OFFLINE STAND-IN.\n{exc}")
    return True


def prepare_msnbc(source: str, raw_path: str, out_dir: str, mirror: str | None, seed: int,
                  standin_users: int = 20000, log: Log = print) -> dict:
    out = Path(out_dir)
    prov = {"dataset": "msnbc"}
    seqs = None
    if source in ("auto", "real"):
        try:
            msnbc_mod.download(raw_path, mirror, log=log)
            seqs = msnbc_mod.read_gz(raw_path)
            prov.update(source="real", standin=False, url=msnbc_mod.UCI_ZIP,
                        sha256_uncompressed=msnbc_mod.SHA256_UNCOMPRESSED, licence="CC BY 4.0",
                        citation="UCI ML Repository id 133, DOI 10.24432/C5390X")
        except DownloadError as exc:
            if not _fallback_allowed(source, exc, log, "msnbc"):
                raise
    if seqs is None:
        seqs = msnbc_mod.standin(standin_users, make_rng(seed, "data", "msnbc", "standin"))
        prov.update(source="standin", standin=True,
                    generator="shuffledp.datasets.msnbc.standin (Zipf category popularity, geometric lengths)")
    prov["rows"] = seqs.n_users
    prov["domain"] = msnbc_mod.N_CATEGORIES
    write_table(msnbc_mod.sequences_table(seqs), out / "msnbc_sequences.parquet", prov)
    write_table(msnbc_mod.sets_table(seqs), out / "msnbc_sets.parquet", prov)
    write_table(msnbc_mod.categories_table(seqs.category_names), out / "msnbc_categories.parquet", prov)
    log(f"msnbc: {seqs.n_users} users ({prov['source']})")
    return prov


def prepare_adult(source: str, raw_dir: str, out_path: str, mirror: str | None, seed: int,
                  log: Log = print, coding: Mapping | None = None) -> dict:
    """``coding``: the public bins of the ordinal attributes (``datasets.adult.coding``; ``None``: the
    defaults of :data:`shuffledp.datasets.coding.ADULT_CODING`), written into the provenance."""
    from shuffledp.datasets.coding import adult_bins

    prov = {"dataset": "adult"}
    table = None
    if source in ("auto", "real"):
        try:
            adult_mod.download(raw_dir, mirror, log=log)
            raw = adult_mod.read_raw(os.path.join(raw_dir, "adult.data"), os.path.join(raw_dir, "adult.test"))
            table, domains = adult_mod.encode(raw, coding)
            prov.update(source="real", standin=False, url=adult_mod.UCI_ZIP, md5=adult_mod.FILES,
                        licence="CC BY 4.0",
                        citation="UCI ML Repository id 2")
        except DownloadError as exc:
            if not _fallback_allowed(source, exc, log, "adult"):
                raise
    if table is None:
        table, domains = adult_mod.standin(48842, make_rng(seed, "data", "adult", "standin"), coding)
        prov.update(source="standin", standin=True, generator="shuffledp.datasets.adult.standin")
    prov.update(rows=len(table), domains=domains, ordinal=adult_mod.ORDINAL,
                coding={"kind": "public: fixed edges from public ranges, no data-dependent parameter",
                        "categorical": "the value lists of adult.names ('?' its own code)",
                        "ordinal": {a: b.describe() for a, b in adult_bins(coding).items()}})
    write_table(table, out_path, prov)
    log(f"adult: {len(table)} records ({prov['source']})")
    return prov


def prepare_synthetic(name: str, domain: int, set_size: int, users: int, distribution: str, seed: int,
                      out_path: str, zipf_exponent: float = 1.0, log: Log = print) -> dict:
    rng = make_rng(seed, "data", "synthetic", name)
    sets = synth_mod.generate_sets(users, domain, set_size, distribution, rng, zipf_exponent)
    prov = {"dataset": name, "source": "synthetic", "standin": False, "rows": users, "domain": domain,
            "set_size": set_size, "distribution": distribution,
            "generator": "shuffledp.datasets.synthetic.generate_sets"}
    if distribution == "zipf":
        prov["zipf_exponent"] = zipf_exponent
    write_table(synth_mod.sets_table(sets), out_path, prov)
    log(f"{name}: {users} users, domain {domain}, set size {set_size} ({distribution})")
    return prov


def resolve_ipums_source(source: str, spec: Mapping) -> str:
    if source != "auto":
        return source
    if os.environ.get(ipums_mod.API_KEY_ENV) and spec.get("sample"):
        return "ipums"
    if spec.get("ddi") and spec.get("data") and Path(spec["ddi"]).exists() and Path(spec["data"]).exists():
        return "file"
    return "standin"


def prepare_ipums(key: str, spec: Mapping, raw_dir: str, out_path: str, seed: int, log: Log = print) -> dict:
    domains = dict(spec["attributes"])
    attrs = list(domains)
    source = resolve_ipums_source(spec["source"], spec)
    prov = {"dataset": f"ipums_{key}"}
    rng = make_rng(seed, "data", "ipums", key)
    if source in ("ipums", "file"):
        if source == "ipums":
            ddi, dat = ipums_mod.find_or_download(spec["sample"], attrs, Path(raw_dir) / f"ipums_{key}", log=log)
        else:
            ddi, dat = spec.get("ddi"), spec.get("data")
            if not ddi or not dat:
                raise ValueError(f"datasets.ipums.{key}: source file needs the keys ddi and data")
        raw = ipums_mod.read_fixed_width(ddi, dat, attrs)
        raw = ipums_mod.sample_rows(raw, int(spec["records"]), rng)
        table, mapping = ipums_mod.recode(raw, domains, ipums_mod.read_ddi_codes(ddi))
        prov.update(source="real", standin=False, origin=source, sample=spec.get("sample"),
                    ddi=Path(ddi).name, data=Path(dat).name, recoding=mapping,
                    coding="public: the DDI codebook's codes merged in order (no data-dependent parameter)",
                    licence="IPUMS International terms of use (no redistribution)")
    else:
        if spec["source"] == "auto":
            log(f"WARNING: ipums_{key}: no IPUMS_API_KEY/sample or extract file; using the labelled "
                "OFFLINE STAND-IN (generated census-like data with the same schema)")
        table = ipums_mod.standin(domains, int(spec["records"]), rng)
        prov.update(source="standin", standin=True,
                    generator="shuffledp.datasets.ipums.standin (latent-class census-like model)")
    prov.update(rows=len(table), domains=domains)
    write_table(table, out_path, prov)
    log(f"ipums_{key}: {len(table)} records, {len(attrs)} attributes ({prov['source']})")
    return prov


def summary_row(path: str) -> dict:
    """One row of the datasets table from a processed file's provenance and content."""
    from shuffledp.datasets.provenance import read_provenance

    prov = read_provenance(path)
    import pyarrow.parquet as pq

    tbl = pq.read_table(path)
    row = {
        "dataset": prov.get("dataset", Path(path).stem),
        "file": Path(path).name,
        "source": prov.get("source", "?"),
        "standin": bool(prov.get("standin", False)),
        "checksum": _checksum_text(prov),
        "rows": int(tbl.num_rows),
        "attributes": None,
        "domain": None,
        "mean_set_size": None,
        "max_set_size": None,
    }
    if "domains" in prov:
        row["attributes"] = len(prov["domains"])
        row["domain"] = int(sum(prov["domains"].values()))
    elif "domain" in prov:
        row["domain"] = int(prov["domain"])
    if "set_size" in tbl.column_names:
        sizes = tbl.column("set_size").to_numpy().astype(np.float64)
        row["mean_set_size"] = float(np.round(sizes.mean(), 6))
        row["max_set_size"] = int(sizes.max())
    return row


def summary_table(paths: list[str]) -> pd.DataFrame:
    cols = ["dataset", "file", "source", "standin", "checksum", "rows", "attributes", "domain",
            "mean_set_size", "max_set_size"]
    df = pd.DataFrame([summary_row(p) for p in paths], columns=cols)
    return df.astype({"attributes": "Int64", "domain": "Int64", "max_set_size": "Int64"})


def _checksum_text(prov: Mapping) -> str:
    if "sha256_uncompressed" in prov:
        return "sha256(uncompressed) " + prov["sha256_uncompressed"]
    if "md5" in prov:
        return "; ".join(f"md5 {k} {v}" for k, v in prov["md5"].items())
    return ""
