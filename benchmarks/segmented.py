"""Benchmark of the segmented protocol and an estimate of Figures 2-6 at paper scale.

Run manually:  .venv/bin/python benchmarks/segmented.py [--paper config/paper.yaml]

1. Simulated users per second of our protocol at n = 1e6 (synthetic T = 128, s = 4, S1 levels):
   the count-level sampler (used by the jobs) against the per-message simulation (the baseline
   measured in the same run), medians of 5 runs.
2. Per-repetition time of every protocol at n = 5,000 and 50,000 on each dataset shape, scaled
   by the paper-scale job grid (config part), plus the accountant tables and baseline parameters
   (timed on one (dataset, n) each and scaled) and a per-job overhead of snakemake (1 s, measured
   on this machine, see JOB_OVERHEAD_S) -> an estimate of the wall time on 2 cores. Peak memory (max RSS) is reported.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import numpy as np

from shuffledp.experiments import segmented as ex
from shuffledp.protocols import mm, segmented, subexp

# per-job cost outside the simulation: python start-up and imports of the CLI (~1.3 s CPU per run job,
# measured from the default run's benchmark files: 252 runs of ours, 333 s CPU) plus snakemake's
# own bookkeeping; counted as CPU time shared by the 2 cores
JOB_OVERHEAD_S = 1.5


def _sets(n, d, s, rng):
    # uniform s-subsets without an (n, d) matrix: rejection of duplicates is rare for s << d
    out = rng.integers(0, d, size=(n, s))
    for _ in range(50):
        srt = np.sort(out, axis=1)
        dup = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if not dup.any():
            break
        out[dup] = rng.integers(0, d, size=(int(dup.sum()), s))
    return out


def _median_time(fn, reps=5):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def throughput():
    rng = np.random.default_rng(0)
    n, d, s = 1_000_000, 128, 4
    sets = _sets(n, d, s, rng)
    levels = rng.permutation(np.repeat(np.arange(3), ex.level_counts(n, [0.25, 0.5, 0.25])))
    lam, m = [0.3, 0.6, 1.0], 1.0
    tc = _median_time(lambda: segmented.run_segmented(sets, levels, lam, m, d, rng, sampler="counts"))
    tm = _median_time(lambda: segmented.run_segmented(sets, levels, lam, m, d, rng, sampler="messages"))
    print(f"[throughput] n = 1e6, d = 128, s = 4, m = 1: count-level sampler {tc:.3f} s "
          f"({n / tc:,.0f} users/s); per-message simulation {tm:.3f} s ({n / tm:,.0f} users/s); "
          f"ratio {tm / tc:.1f}x")


def _rep_times(sets, lv, n, d, s, rng):
    t = {
        "segmented": _median_time(lambda: segmented.run_segmented(sets, lv, [0.3, 0.6, 1.0], 1.0, d, rng)),
        "subexp": _median_time(lambda: subexp.run_subexp(sets, d, s, 2.0, rng, k=1)),
        "mm": _median_time(lambda: mm.run_mm(sets, 5.0, d, rng)),
        "sepmm": _median_time(lambda: mm.run_sepmm(sets, lv, [9.0, 3.0, 1.0], d, rng)),
    }
    # sampling the users from the MSNBC-sized population (done once per repetition)
    t["sample"] = _median_time(lambda: rng.choice(989_818, size=n, replace=False))
    return t


def per_rep_times(cfg):
    rng = np.random.default_rng(1)
    out = {}
    for ds, dcfg in cfg["datasets"].items():
        d, s = dcfg["d"], dcfg["s"]
        for n in cfg["n"]:
            sets = _sets(n, d, s, rng)
            lv = rng.permutation(np.repeat(np.arange(3), ex.level_counts(n, [0.25, 0.5, 0.25])))
            t = _rep_times(sets, lv, n, d, s, rng)
            out[(ds, n)] = t
            print(f"[per-rep] {ds} n = {n}: " + ", ".join(f"{k2} {v * 1e3:.1f} ms" for k2, v in t.items()))
    return out


def accountant_times(cfg):
    from shuffledp.accountants.special.segmented_optimizer import segmented_table
    from shuffledp.experiments import segmented_params as sp

    grid = ex.m_grid(cfg)
    worst = None
    for ds, dcfg in cfg["datasets"].items():
        n = max(cfg["n"])
        t = time.perf_counter()
        segmented_table(n, dcfg["d"], dcfg["s"], cfg["levels"], cfg["settings"]["S1"],
                        cfg["delta_factor"] / n, list(grid), accountants=cfg["accountants"])
        ta = time.perf_counter() - t
        t = time.perf_counter()
        sp.baseline_params(n, dcfg["d"], dcfg["s"], cfg["levels"], cfg["settings"], cfg["delta_factor"] / n,
                           cfg["uniform_eps"], ex.level_counts)
        tp = time.perf_counter() - t
        print(f"[accountant] {ds} n = {n}: segmented_table over {grid.size} m values {ta:.1f} s; "
              f"baseline params {tp:.1f} s")
        worst = (ta, tp) if worst is None else (max(worst[0], ta), max(worst[1], tp))
    return worst


def estimate(cfg, reps_t, acct):
    grid = ex.m_grid(cfg)
    reps = int(cfg["repetitions"])
    batches = -(-reps // int(cfg["batch_size"]))
    panels = ex.panels(cfg)
    datasets = sorted({d for d, _ in panels})
    ns = cfg["n"]
    compute = 0.0
    jobs = 0
    for ds, _st in panels:
        for n in ns:
            t = reps_t[(ds, n)]
            n_ours = len(ex.ours_protocols(cfg))
            # one job per protocol and batch; a repetition's users are drawn once for every m
            compute += n_ours * reps * (grid.size * t["segmented"] + t["sample"])
            compute += 2 * reps * (t["sepmm"] + t["sample"])
            jobs += n_ours * batches + 2 * batches
    for ds in datasets:
        for n in ns:
            t = reps_t[(ds, n)]
            compute += reps * (2 * t["subexp"] + t["mm"] + 3 * t["sample"])
            jobs += 3 * batches
    acct_s = 0.0
    if acct is not None:
        acct_s = acct[0] * len(panels) * len(ns) + acct[1] * len(datasets) * len(ns)
        jobs += 2 * len(datasets) * len(ns)  # one accountant-table job and one params job per (dataset, n)
    overhead = jobs * JOB_OVERHEAD_S
    wall = (compute + acct_s + overhead) / 2
    print(f"[estimate] paper scale: {jobs} jobs; simulation {compute / 60:.1f} min CPU, accountant+params "
          f"{acct_s / 60:.1f} min CPU (upper: worst dataset times every table), snakemake overhead "
          f"{overhead / 60:.1f} min -> about {wall / 60:.1f} min wall on 2 cores (target < 30)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--paper", default="config/paper.yaml")
    ap.add_argument("--skip-accountant", action="store_true")
    args = ap.parse_args()
    from shuffledp.config import load_validated

    # --paper deep-merged over the default, the schema's defaults filled in (as the workflow has it)
    cfg = load_validated(dict.fromkeys(["config/config.yaml", args.paper]))["segmented"]
    throughput()
    reps_t = per_rep_times(cfg)
    acct = None if args.skip_accountant else accountant_times(cfg)
    estimate(cfg, reps_t, acct)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"[memory] peak RSS of this process (n = 1e6 simulation included): {peak:.0f} MB (target < 4096)")


if __name__ == "__main__":
    main()
