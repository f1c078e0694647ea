"""Benchmark of Figs 6-9 (CALM marginals, HDG range queries) at paper scale (run manually, once).

    python benchmarks/multidim_frameworks.py --proc data/processed [--workers 2] [--config config/paper.yaml]

Runs every ``run`` job of config/paper.yaml's ``multidim_frameworks`` section (one per framework,
component and dataset, every eps_s and repetition inside) in a pool of ``--workers`` processes and prints the
wall time, the slowest jobs, the peak resident memory and the load average before and after (the
machine is shared: record the load beside the time). Needs ``<proc>/ipums_{br,mx}.parquet``,
``<proc>/adult_ordinal.parquet`` and ``<proc>/loan.parquet`` (``snakemake --until multidim_frameworks_loan
multidim_frameworks_adult`` or the workflow's data stage).
"""

from __future__ import annotations

import argparse
import resource
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from shuffledp.experiments.multidim_frameworks import run_job
from shuffledp.stages.multidim_frameworks import jobs


def _path(proc: Path, spec: dict) -> str:
    ds = spec["dataset"]
    if ds not in ("adult", "loan"):  # CALM's IPUMS extracts; Adult and Loan: the ordinal tables (CALM and HDG)
        return str(proc / f"ipums_{ds}.parquet")
    return str(proc / ("adult_ordinal.parquet" if ds == "adult" else "loan.parquet"))


def _one(args):
    spec, path = args
    t0 = time.perf_counter()
    run_job(spec, path)
    return spec["framework"], spec["dataset"], spec["component"], time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--proc", default="data/processed")
    ap.add_argument("--config", default="config/paper.yaml")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    from shuffledp.config import load_validated

    # --config deep-merged over the default, the schema's defaults filled in (as the workflow has it)
    cfg = load_validated(dict.fromkeys(["config/config.yaml", a.config]))
    runs = [j.spec for j in jobs(cfg) if j.step == "run"]
    work = [(s, _path(Path(a.proc), s)) for s in runs]
    work.sort(key=lambda w: (w[0]["framework"] != "calm", w[0]["component"] != "mhm"))  # longest first
    load0 = open("/proc/loadavg").read().split()[:3]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        done = list(ex.map(_one, work))
    wall = time.perf_counter() - t0
    load1 = open("/proc/loadavg").read().split()[:3]
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{len(work)} jobs, {a.workers} workers: wall {wall:.1f} s, job seconds {sum(d[-1] for d in done):.1f}, "
          f"peak RSS {peak:.0f} MB, loadavg before {' '.join(load0)} after {' '.join(load1)}")
    for d in sorted(done, key=lambda d: -d[-1])[:8]:
        print(f"  {d[0]} {d[1]} {d[2]} (every eps_s): {d[3]:.1f} s")


if __name__ == "__main__":
    main()
