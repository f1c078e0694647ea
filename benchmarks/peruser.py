"""Benchmark: every job behind the per-user-histogram figures at paper scale (n = 100,000, d = 17).

Runs the job list of config/paper.yaml (or --config FILE's peruser section) in-process
on a pool of --workers processes (default 2), then the collect and report steps, and prints the
wall-clock total, the median job time per method and the ratio of each method's median to the
Laplace-LDP baseline's median measured in the same run. Snakemake's per-job start-up (a fresh
Python process per job) is not included; see docs/peruser.md.

    python benchmarks/peruser.py [--config config/paper.yaml] [--workers 2]
        [--msnbc data/processed/msnbc_sequences.parquet] [--out /tmp/peruser_bench]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _one(args):
    job, msnbc, out = args
    from shuffledp.experiments import peruser as E

    t = time.perf_counter()
    c0 = time.process_time()
    runs, users = E.run_job(job.spec, msnbc_path=msnbc)
    dt = time.perf_counter() - t
    cpu = time.process_time() - c0
    tag = "{dataset}_{method}_{clustering}_b{batch}".format(**job.wildcards)
    runs.to_parquet(f"{out}/{tag}.runs.parquet", index=False)
    users.to_parquet(f"{out}/{tag}.users.parquet", index=False)
    return job, dt, cpu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="config/paper.yaml")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20241122)
    ap.add_argument("--msnbc", default="data/processed/msnbc_sequences.parquet")
    ap.add_argument("--out", default="/tmp/peruser_bench")
    a = ap.parse_args()
    from shuffledp.config import load_validated

    # --config deep-merged over the default, the schema's defaults filled in (as the workflow has it)
    cfg = load_validated(dict.fromkeys(["config/config.yaml", a.config]))
    sec = cfg["peruser"]
    msnbc = a.msnbc if os.path.exists(a.msnbc) else None
    if msnbc is None:
        sec["datasets"] = [d for d in sec["datasets"] if d["source"] != "msnbc"]
        print(f"note: {a.msnbc} missing, MSNBC dataset skipped", file=sys.stderr)
    from shuffledp.experiments import peruser as E
    from shuffledp.stages.peruser import jobs as peruser_jobs

    os.makedirs(a.out, exist_ok=True)
    jobs = [j for j in peruser_jobs({**cfg, "seed": a.seed, "peruser": sec}) if j.step == "job"]
    t0 = time.perf_counter()
    times = []
    with ProcessPoolExecutor(a.workers) as ex:
        for i, (job, dt, cpu) in enumerate(ex.map(_one, [(j, msnbc, a.out) for j in jobs]), 1):
            job = job.wildcards
            times.append((job, dt, cpu))
            print(f"[{i}/{len(jobs)}] {job['dataset']} {job['method']} {job['clustering']} (every eps): "
                  f"wall {dt:.1f}s cpu {cpu:.1f}s", file=sys.stderr, flush=True)
    t_jobs = time.perf_counter() - t0
    from shuffledp.plotting import peruser as F

    t1 = time.perf_counter()
    runs = E.collect([f"{a.out}/{f}" for f in os.listdir(a.out) if f.endswith(".runs.parquet")])
    users = E.collect([f"{a.out}/{f}" for f in os.listdir(a.out) if f.endswith(".users.parquet")])
    F.all_figures(runs, users, sec, F.figure_paths(f"{a.out}/peruser_fig"))
    cl = E.claims(runs, users, "benchmark")
    t_report = time.perf_counter() - t1
    total = time.perf_counter() - t0
    by = {}
    cpu_total = 0.0
    for job, dt, cpu in times:
        by.setdefault(f"{job['method']}/{job['clustering']}", []).append(dt)
        cpu_total += cpu
    base = statistics.median(by.get("ldp/none", [float("nan")]))
    print(f"jobs: {len(jobs)} on {a.workers} workers, n per dataset "
          f"{[d.get('n') for d in sec['datasets']]}, d = 17")
    print(f"wall clock: jobs {t_jobs:.1f}s, collect+figures+claims {t_report:.1f}s, total {total:.1f}s "
          f"({total / 60:.2f} min; target < 15 min)")
    print(f"CPU time of all jobs {cpu_total:.1f}s = {cpu_total / a.workers / 60:.2f} min of wall clock on "
          f"{a.workers} idle cores (the machine's load inflates the wall clock above)")
    print("median job time per method (ratio to the Laplace-LDP baseline job):")
    for k in sorted(by):
        med = statistics.median(by[k])
        print(f"  {k:16s} {med:7.2f}s  x{med / base:6.2f}  ({len(by[k])} jobs)")
    print(cl[["id", "held"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
