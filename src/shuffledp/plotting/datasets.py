"""Figures of the data stage."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from shuffledp.datasets.provenance import read_provenance, standin_note
from shuffledp.plotting import save_figure, with_note
from shuffledp.plotting._mpl import plt


def msnbc_category_shares(sequences_path: str, sets_path: str, categories_path: str, out_base: str) -> list[str]:
    """Share of page views and share of users visiting each of the 17 MSNBC categories."""
    cats = pq.read_table(categories_path).to_pandas()
    k = len(cats)
    views = pq.read_table(sequences_path, columns=["seq"]).column("seq").combine_chunks().flatten().to_numpy()
    items = pq.read_table(sets_path, columns=["items"]).column("items").combine_chunks().flatten().to_numpy()
    n_users = pq.read_metadata(sets_path).num_rows
    view_share = np.bincount(views.astype(np.int64), minlength=k) / max(len(views), 1)
    user_share = np.bincount(items.astype(np.int64), minlength=k) / max(n_users, 1)
    note = standin_note(read_provenance(sets_path))
    fig, ax = plt.subplots(figsize=(9, 4))
    x = np.arange(k)
    ax.bar(x - 0.2, view_share, width=0.4, label="share of page views")
    ax.bar(x + 0.2, user_share, width=0.4, label="share of users visiting")
    ax.set_xticks(x, cats["name"], rotation=60, ha="right")
    ax.set_ylabel("share")
    ax.set_title(with_note(f"MSNBC page categories ({n_users:,} users)", note), fontsize=10)
    ax.legend()
    fig.tight_layout()
    return save_figure(fig, out_base)
