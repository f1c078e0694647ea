import gzip

import numpy as np
import pyarrow.parquet as pq
import pytest

from shuffledp.datasets import msnbc
from shuffledp.datasets.prepare import prepare_msnbc
from shuffledp.datasets.provenance import read_provenance

HEADER = (
    b"% Different categories found in input file:\r\n\r\n"
    b"frontpage news tech local opinion on-air misc weather msn-news health living business msn-sports "
    b"sports summary bbs travel \r\n\r\n\r\n% Sequences:\r\n\r\n"
)


def test_parser_handles_the_real_quirks():
    # CRLF line ends, trailing space on every line, repeated ids, last line without its CRLF
    body = b"1 1 \r\n2 \r\n3 2 2 4 2 2 2 3 3 \r\n17 16 1 \r\n6 7 7"
    seqs = msnbc.parse_seq(HEADER + body)
    assert seqs.n_users == 5
    assert seqs.category_names[0] == "frontpage" and seqs.category_names[-1] == "travel"
    assert seqs.lengths().tolist() == [2, 1, 9, 3, 3]
    assert seqs.values[:3].tolist() == [0, 0, 1]  # 0-based
    off, items = msnbc.distinct_sets(seqs.offsets, seqs.values, 17)
    sets = [items[off[i]:off[i + 1]].tolist() for i in range(5)]
    assert sets == [[0], [1], [1, 2, 3], [0, 15, 16], [5, 6]]


def test_parser_rejects_bad_ids_and_header():
    with pytest.raises(ValueError, match="outside"):
        msnbc.parse_seq(HEADER + b"1 18 \r\n")
    with pytest.raises(ValueError, match="categories"):
        msnbc.parse_seq(HEADER.replace(b"travel ", b"") + b"1 \r\n")


def test_render_roundtrip(tmp_path):
    seqs = msnbc.standin(300, np.random.default_rng(1))
    back = msnbc.parse_seq(msnbc.sample_text(seqs))
    np.testing.assert_array_equal(back.offsets, seqs.offsets)
    np.testing.assert_array_equal(back.values, seqs.values)


def test_standin_is_labelled(tmp_path):
    prov = prepare_msnbc("standin", str(tmp_path / "raw.gz"), str(tmp_path), None, seed=3, standin_users=500,
                         log=lambda m: None)
    assert prov["standin"] is True and prov["source"] == "standin"
    assert read_provenance(tmp_path / "msnbc_sets.parquet")["standin"] is True
    sets = pq.read_table(tmp_path / "msnbc_sets.parquet").to_pandas()
    assert len(sets) == 500 and sets["set_size"].between(1, 17).all()


def test_real_msnbc_through_the_mirror(mirror, tmp_path):
    raw = tmp_path / "raw" / "msnbc990928.seq.gz"
    prov = prepare_msnbc("real", str(raw), str(tmp_path / "out"), str(mirror), seed=0, log=lambda m: None)
    assert prov["source"] == "real" and prov["standin"] is False
    sets = pq.read_table(tmp_path / "out" / "msnbc_sets.parquet")
    sizes = sets.column("set_size").to_numpy().astype(float)
    assert sets.num_rows == 989_818
    assert round(sizes.mean(), 4) == 1.7168
    assert sizes.max() == 17
    seqs = pq.read_table(tmp_path / "out" / "msnbc_sequences.parquet")
    assert seqs.column("n_views").to_numpy().sum() == len(seqs.column("seq").combine_chunks().flatten())
    cats = pq.read_table(tmp_path / "out" / "msnbc_categories.parquet").to_pandas()
    assert cats["name"].tolist()[:3] == ["frontpage", "news", "tech"] and len(cats) == 17
    with gzip.open(raw, "rb") as fh:
        assert fh.read(11) == b"% Different"


def test_distinct_sets_presence_table_is_np_unique():
    """distinct_sets' presence-table path gives np.unique's sorted distinct (user, item) codes, bit
    for bit and dtype for dtype, on random ragged sequences (empty users, repeats, item types)."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        n, d = int(rng.integers(0, 200)), int(rng.integers(1, 30))
        off = np.concatenate(([0], np.cumsum(rng.integers(0, 12, n)))).astype(np.int64)
        vals = rng.integers(0, d, off[-1]).astype(rng.choice([np.int8, np.int16, np.int32]))
        dense = msnbc.distinct_sets(off, vals, d)
        users = np.repeat(np.arange(n, dtype=np.int64), np.diff(off))
        keys = np.unique(users * d + vals.astype(np.int64))
        assert np.array_equal(dense[1], (keys % d).astype(vals.dtype)) and dense[1].dtype == vals.dtype
        assert np.array_equal(dense[0], np.concatenate(([0], np.cumsum(np.bincount(keys // d, minlength=n)))))
