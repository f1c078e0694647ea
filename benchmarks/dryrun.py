"""The dry run's cost against the number of jobs (issue 37, class 6): `snakemake -n` of the shipped
configs, then of the default config with per-user repetition batches of one repetition each, so that
the job count grows and nothing else changes. Each point: the job count Snakemake reports, the wall
and CPU seconds of the whole `snakemake -n` process (median of ``--repeat`` runs) and the load.

    python benchmarks/dryrun.py [--repeat 3] [--reps 10 50 100 200] [--workdir DIR]

A dry run writes job files under results/.jobs of the work folder; by default the folder is a fresh
temporary one (the configs' own results/ are untouched). The job cap (shuffledp.config.MAX_JOBS) is
set from these numbers: README, "How long it takes".
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dry_run(configs: list[str], workdir: Path) -> tuple[int, float, float, int, list[str]]:
    """(jobs, wall s, CPU s of the child, exit status, last stderr line) of one `snakemake -n`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(["snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
                           "-n", "--configfile", *configs], capture_output=True, text=True, cwd=workdir)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"^total\s+(\d+)", proc.stdout + proc.stderr, re.M)
    return (int(found.group(1)) if found else -1), wall, cpu, proc.returncode, proc.stderr.strip().splitlines()[-1:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reps", type=int, nargs="*", default=[10, 50, 100, 200],
                    help="per-user repetitions (batch size 1): one job per repetition and method, dataset, clustering")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-shipped", action="store_true", help="skip the shipped configs")
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="shuffledp-dryrun-"))
    work.mkdir(parents=True, exist_ok=True)
    default, paper = str(REPO / "config" / "config.yaml"), str(REPO / "config" / "paper.yaml")
    points = [] if args.no_shipped else [("config/config.yaml", [default]), ("config/paper.yaml", [default, paper])]
    for reps in args.reps:
        extra = work / f"peruser_reps{reps}.yaml"
        extra.write_text(f"peruser:\n  repetitions: {reps}\n  batch_size: 1\n")
        points.append((f"default, peruser repetitions {reps} (batch 1)", [default, str(extra)]))
    print(f"work folder {work}; load average {os.getloadavg()[0]:.1f}; cores {os.cpu_count()}")
    print(f"{'config':45s} {'jobs':>6s} {'wall s (median)':>16s} {'CPU s (median)':>15s}  runs (wall)")
    for name, configs in points:
        runs = [dry_run(configs, work) for _ in range(args.repeat)]
        jobs = {r[0] for r in runs}
        bad = [r for r in runs if r[3] != 0]
        walls, cpus = [r[1] for r in runs], [r[2] for r in runs]
        note = f"  exit {bad[0][3]}: {bad[0][4]}" if bad else ""
        print(f"{name:45s} {'/'.join(map(str, sorted(jobs))):>6s} {statistics.median(walls):16.1f} "
              f"{statistics.median(cpus):15.1f}  {', '.join(f'{w:.1f}' for w in walls)}{note}", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
