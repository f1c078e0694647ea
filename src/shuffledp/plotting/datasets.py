"""Figures of the data stage."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from shuffledp.datasets.provenance import read_provenance, standin_note
from shuffledp.plotting import PNG_DPI, save_figure, with_note
from shuffledp.plotting._mpl import plt


def _read(path: str, columns: list[str] | None = None):
    """A Parquet table (``pq.ParquetFile``: ``pq.read_table`` imports pyarrow.dataset, which imports
    pandas, about 0.25 s of CPU this job does not need)."""
    with pq.ParquetFile(path) as f:
        return f.read(columns=columns)


def _integers(array) -> np.ndarray:
    """An integer Arrow array as numpy, read from its data buffer where it has no nulls
    (``Array.to_numpy`` imports pandas)."""
    import pyarrow.types as pat

    if array.null_count or not pat.is_integer(array.type):
        return array.to_numpy()
    dtype = np.dtype(f"{'i' if pat.is_signed_integer(array.type) else 'u'}{array.type.bit_width // 8}")
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)


def msnbc_category_shares(sequences_path: str, sets_path: str, categories_path: str, out_base: str) -> list[str]:
    """Share of page views and share of users visiting each of the 17 MSNBC categories."""
    names = _read(categories_path, ["name"]).column("name").to_pylist()
    k = len(names)
    views = _integers(_read(sequences_path, ["seq"]).column("seq").combine_chunks().flatten())
    items = _integers(_read(sets_path, ["items"]).column("items").combine_chunks().flatten())
    n_users = pq.read_metadata(sets_path).num_rows
    view_share = np.bincount(views.astype(np.int64), minlength=k) / max(len(views), 1)
    user_share = np.bincount(items.astype(np.int64), minlength=k) / max(n_users, 1)
    note = standin_note(read_provenance(sets_path))
    fig, ax = plt.subplots(figsize=(9, 4), dpi=PNG_DPI)
    x = np.arange(k)
    ax.bar(x - 0.2, view_share, width=0.4, label="share of page views")
    ax.bar(x + 0.2, user_share, width=0.4, label="share of users visiting")
    ax.set_xticks(x, names, rotation=60, ha="right")
    ax.set_ylabel("share")
    ax.set_title(with_note(f"MSNBC page categories ({n_users:,} users)", note), fontsize=10)
    ax.legend()
    fig.tight_layout()
    return save_figure(fig, out_base)
