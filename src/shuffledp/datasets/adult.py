"""UCI Adult (census income, id 2): download, verify, preprocess to categorical and ordinal codes.

``adult.data`` (32,561 records) and ``adult.test`` (16,281; first line a header remark, labels
with a trailing dot) are combined. Categorical attributes are coded in the order of their values
as listed in ``adult.names`` (missing ``?`` is its own category). Ordinal attributes keep their
order, cut at PUBLIC edges (:mod:`shuffledp.datasets.coding`, ``datasets.adult.coding``): age and
hours-per-week as integer ranges, education-num as is, fnlwgt in 32 bins of log(fnlwgt) between fixed
bounds, capital-gain and capital-loss in 16 bins of log1p(value) up to fixed caps (clipped). No edge
depends on the data, so one person's record moves no other record's code.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from shuffledp.datasets.adult_schema import CATEGORIES, COLUMNS, ORDINAL  # noqa: F401 (ORDINAL: re-exported)
from shuffledp.datasets.download import Candidate, Checksum, fetch_verified, mirror_candidate

if TYPE_CHECKING:  # numpy and pandas load where a table is read or made: the download job needs neither
    import numpy as np
    import pandas as pd

FILES = {
    "adult.data": "5d7c39d7b8804f071cdd1f2a7c460872",
    "adult.test": "35238206dfdf7f1fe215bbb874adecdc",
}
UCI_ZIP = "https://archive.ics.uci.edu/static/public/2/adult.zip"
UCI_LEGACY = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"


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
    import pandas as pd

    frames = []
    for path in (data_path, test_path):
        with open(path, encoding="ascii") as fh:
            text = "".join(line for line in fh if not line.startswith("|") and line.strip())
        df = pd.read_csv(io.StringIO(text), header=None, names=COLUMNS, skipinitialspace=True)
        df["income"] = df["income"].str.rstrip(".")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def encode(raw: pd.DataFrame, coding: Mapping | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Integer codes (int16) for every attribute and the domain size of each: the public coding of
    :func:`shuffledp.datasets.coding.code_adult` (row ``i`` from raw row ``i`` and ``coding`` only)."""
    from shuffledp.datasets.coding import code_adult

    return code_adult(raw, coding)


def standin(rows: int, rng: np.random.Generator, coding: Mapping | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """A generated table with Adult's schema and domain sizes (independent skewed attributes)."""
    import numpy as np
    import pandas as pd

    from shuffledp.datasets.coding import adult_bins

    domains = {c: len(v.split()) for c, v in CATEGORIES.items()}
    domains.update({a: b.size for a, b in adult_bins(coding).items()})
    order = [c for c in COLUMNS if c in domains]
    data = {}
    for col in order:
        k = domains[col]
        p = rng.dirichlet(np.full(k, 0.5))
        data[col] = rng.choice(k, size=rows, p=p).astype(np.int16)
    return pd.DataFrame(data), {c: domains[c] for c in order}
