"""The Loan table's provenance does not depend on whether its raw file was already fetched: a fresh
working folder (the file copied from the mirror) and a second run (raw_dir's verified copy) write the
same bytes (an absolute mirror path in the first and data/raw/... in the second used to differ)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shuffledp.datasets import loan

MIRROR = os.environ.get("SHUFFLEDP_DATA_MIRROR")


@pytest.mark.skipif(not MIRROR or not (Path(MIRROR) / loan.FILENAME).is_file(), reason="needs the data mirror")
def test_fresh_and_cached_raw_file_give_the_same_table_bytes(tmp_path):
    raw = tmp_path / "raw"
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    p1 = loan.prepare("real", str(raw), str(first), MIRROR, 7, log=lambda *_: None)
    assert (raw / loan.FILENAME).is_file()          # the second run finds the verified copy
    p2 = loan.prepare("real", str(raw), str(second), MIRROR, 7, log=lambda *_: None)
    assert p1 == p2 and first.read_bytes() == second.read_bytes()
