"""A run job reads its parameter and accountant tables once per file version
(experiments.segmented._read_table_once): a rewritten table is read again, and a caller's change
to its copy never reaches the next caller."""

from __future__ import annotations

import os

import pandas as pd

from shuffledp.experiments import segmented as ex


def test_table_read_once_per_version_and_copied(tmp_path):
    path = tmp_path / "params.parquet"
    pd.DataFrame({"baseline": ["mm_shuffle"], "m": [2.5]}).to_parquet(path)
    first = ex._read_table_once(path)
    assert first["m"].tolist() == [2.5]
    first.loc[0, "m"] = -1.0  # a caller's change stays in its copy
    assert ex._read_table_once(path)["m"].tolist() == [2.5]
    # the file rewritten (another size and modification time): its new content is read
    pd.DataFrame({"baseline": ["mm_shuffle", "sepmm"], "m": [3.0, 4.0]}).to_parquet(path)
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert ex._read_table_once(path)["m"].tolist() == [3.0, 4.0]
