"""Largest relative change, per column, between two runs' segmented accountant tables.

    python benchmarks/segmented_tables_compare.py BASELINE_WORKDIR NEW_WORKDIR [grid|optimum]

Each WORKDIR holds ``results/accountant/segmented/*.parquet`` (e.g. two ``profile_job.py --workdir``
folders, one run with the baseline's PYTHONPATH). Prints, for ``m``, ``lambda``, ``eps_achieved``,
``delta_achieved``, ``m_k`` and ``mse_bound``, the largest ``|new - old| / |old|`` over every row
(optionally only the ``grid`` or the ``optimum`` rows) and the row where it occurs, and lists any
other column that is not identical. Equal values (infinities included) count as no change.
"""

from __future__ import annotations

import glob
import os
import sys

COLUMNS = ["m", "lambda", "eps_achieved", "delta_achieved", "m_k", "mse_bound"]


def main(argv: list[str]) -> int:
    import numpy as np
    import pandas as pd

    a_dir, b_dir = argv[0], argv[1]
    source = argv[2] if len(argv) > 2 else None
    worst = {c: (0.0, "") for c in COLUMNS}
    other, nrows = [], 0
    for fa in sorted(glob.glob(os.path.join(a_dir, "results/accountant/segmented/*.parquet"))):
        A = pd.read_parquet(fa)
        B = pd.read_parquet(os.path.join(b_dir, os.path.relpath(fa, a_dir)))
        if source is not None:
            A, B = (t[t.source == source].reset_index(drop=True) for t in (A, B))
        if len(A) != len(B) or list(A.columns) != list(B.columns):
            raise SystemExit(f"{fa}: the two tables have different shapes")
        nrows += len(A)
        for c in A.columns:
            if c not in COLUMNS:
                if not A[c].equals(B[c]):
                    other.append(f"{os.path.basename(fa)}:{c}")
                continue
            x, y = A[c].to_numpy(float), B[c].to_numpy(float)
            rel = np.where(x == y, 0.0, np.abs(x - y) / np.maximum(np.abs(x), 1e-300))
            i = int(np.argmax(rel)) if rel.size else 0
            if rel.size and rel[i] > worst[c][0]:
                row = A.iloc[i]
                worst[c] = (float(rel[i]), f"{os.path.basename(fa)} {row.accountant} m={row.m:.4g} "
                                           f"level {row.level} {row.source}: {x[i]!r} -> {y[i]!r}")
    print(f"rows {nrows}")
    for c in COLUMNS:
        print(f"{c:15s} max |rel diff| = {worst[c][0]:.3g}  {worst[c][1]}")
    print("other columns differing:", ", ".join(other) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
