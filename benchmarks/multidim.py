"""Benchmark of the multidimensional experiments at paper scale (run manually, once).

    .venv/bin/python benchmarks/multidim.py [--records 100000] [--reps 10] [--workers 2]

1. The curator's estimation (Algorithm 2) for 100,000 MX users: median of 5 runs, against the
   cheapest possible pass over the same users (a non-private histogram: np.bincount per attribute),
   measured in the same run.
2. Every job of Figures 3, 4, 5, 10 and Table 3 at paper scale (all eps, 10 repetitions, five ratios),
   in a pool of ``--workers`` processes: total wall time and the peak resident memory of any process.
Needs data/processed/ipums_{br,mx}.parquet (snakemake data/processed/ipums_mx.parquet).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from shuffledp.experiments.multidim import load_dataset, run_personal, run_uniform
from shuffledp.mechanisms.hashing import HashFamily
from shuffledp.protocols import mhm

EPS = [0.1, 0.2, 0.4, 0.8, 1.0]
RATIOS = ["6:2:2", "4:3:3", "2:4:4", "2:2:6", "1:1:8"]


def _job(args):
    kind, ds, key, reps, records = args
    data, doms, _, _ = load_dataset(f"data/processed/ipums_{ds}.parquet", records, 1, ds)
    if kind == "uniform":
        mech, eps = key
        run_uniform(data, doms, mech, eps, reps, seed=1, dataset=ds)
    else:
        method, ratio = key
        run_personal(data, doms, method, ratio, reps, seed=1, dataset=ds)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)


def curator_bench(records: int) -> None:
    data, doms, _, _ = load_dataset("data/processed/ipums_mx.parquet", records, 1, "mx")
    n, d = data.shape
    st = mhm.mhm_eps_local(1.0, 1 / n, n, d)
    rng = np.random.default_rng(0)
    fam = HashFamily(st.g, seed=1)
    t, y = mhm.mhm_randomize(data, st.eps_l, st.g, fam, rng)
    times, base = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        mhm.mhm_estimate(t, y, doms, st.eps_l, st.g, fam)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        [np.bincount(data[:, j], minlength=c) for j, c in enumerate(doms)]
        base.append(time.perf_counter() - t0)
    med, bmed = statistics.median(times), statistics.median(base)
    print(f"curator estimation, MX, n={n}, d={d}, sum|C|={sum(doms)}, g={st.g}: median {med:.3f} s "
          f"(target < 2 s); non-private histogram baseline {bmed * 1e3:.2f} ms; ratio {med / bmed:.0f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    curator_bench(args.records)
    reps = list(range(args.reps))
    jobs = [("uniform", ds, (m, e), reps, args.records) for ds in ("br", "mx") for m in ("mhm", "flame", "tcm")
            for e in EPS]
    half = [reps[: len(reps) // 2], reps[len(reps) // 2:]]
    jobs += [("personal", ds, (m, r), h, args.records) for ds in ("br", "mx") for m in ("ogm", "nogm")
             for r in RATIOS for h in half if h]
    jobs.sort(key=lambda j: j[0] != "personal")  # long jobs first
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as ex:
        peaks = list(ex.map(_job, jobs))
    wall = time.perf_counter() - t0
    print(f"all Figures 3, 4, 5, 10 + Table 3 jobs ({len(jobs)} jobs, {args.records} records, {args.reps} reps, "
          f"{args.workers} workers): {wall:.0f} s wall (target < 1200 s); peak RSS of a worker {max(peaks):.0f} MiB "
          f"(target < 4096 MiB, total for {args.workers} workers at most {args.workers * max(peaks):.0f} MiB)")


if __name__ == "__main__":
    main()
