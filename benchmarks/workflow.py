"""Whole-workflow benchmark: wall time, job count, CPU seconds and peak memory per paper.

    python benchmarks/workflow.py --configfile config/paper.yaml [--cores 2] [--results DIR]
    python benchmarks/workflow.py --read results            # an existing results folder

The first form counts the jobs (`snakemake -n`), then runs Snakemake from the repository root with
``results_dir`` pointed at a fresh folder (a temporary one unless ``--results``), so processed data
in ``data/`` is reused and the repository's ``results/`` is untouched; it times the whole run. The
second form only reads. Both read every job's benchmark file (``<results>/benchmarks/**.tsv``,
written by each rule's ``benchmark:``) and print, per paper: jobs, the span from the first job's
start to the last job's end (the stage's wall time, stages overlap), the sum of the jobs' wall
and CPU seconds, the median job and the largest max RSS. The machine's load average is printed
beside the timings: on a shared machine every wall time is inflated by the other work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def step_of(stage: str, stem: str) -> str:
    """The step a benchmark file ``<stage>/<step>[_<wildcards>].tsv`` belongs to (the longest step
    name of the stage that the stem starts with; shuffledp.stages declares them)."""
    from shuffledp.stages import discover

    steps = sorted((s.name for s in discover()[stage].steps), key=len, reverse=True) if stage in discover() else []
    return next((s for s in steps if stem == s or stem.startswith(f"{s}_")), stem)


def snakemake(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), *args]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)


def dry_run_jobs(configfile: str, results: str) -> int:
    proc = snakemake("--configfile", configfile, "--config", f"results_dir={results}", "--cores", "1", "-n",
                     "--forceall")
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "total" and parts[1].isdigit():
            return int(parts[1])
    raise SystemExit(f"snakemake -n failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def read_benchmarks(results: Path) -> list[dict]:
    """One record per job: paper, rule file stem, wall s, CPU s, max RSS (MB), start and end."""
    rows = []
    for tsv in sorted((results / "benchmarks").rglob("*.tsv")):
        lines = tsv.read_text().strip().splitlines()
        if len(lines) < 2:
            continue
        head, vals = lines[0].split("\t"), lines[-1].split("\t")
        rec = dict(zip(head, vals, strict=False))

        def num(key: str, rec=rec) -> float:
            try:
                return float(rec.get(key, "nan"))
            except ValueError:
                return float("nan")

        sub = tsv.relative_to(results / "benchmarks").parts[0]  # the stage: <stage>/<step>_<wildcards>.tsv
        end = tsv.stat().st_mtime
        rows.append({"paper": sub, "rule": f"{sub}/{step_of(sub, tsv.stem)}",
                     "job": str(tsv.relative_to(results / "benchmarks")),
                     "s": num("s"), "cpu": num("cpu_time"), "rss": num("max_rss"), "start": end - num("s"),
                     "end": end})
    return rows


def summarise(rows: list[dict], by: str = "paper") -> list[dict]:
    out = []
    for key in sorted({r[by] for r in rows}) + ["all"]:
        sel = [r for r in rows if key == "all" or r[by] == key]
        if not sel:
            continue
        finite = lambda xs: [x for x in xs if x == x]  # noqa: E731  (drop NaN)
        out.append({
            "paper": key, "jobs": len(sel),
            "span_s": max(r["end"] for r in sel) - min(r["start"] for r in sel),
            "job_s": sum(finite(r["s"] for r in sel)), "cpu_s": sum(finite(r["cpu"] for r in sel)),
            "median_job_s": statistics.median(finite(r["s"] for r in sel)),
            "max_job_s": max(finite(r["s"] for r in sel)),
            "peak_rss_mb": max(finite(r["rss"] for r in sel) or [float("nan")]),
        })
    return out


def print_table(summary: list[dict], by: str = "paper") -> None:
    cols = ["paper", "jobs", "span_s", "job_s", "cpu_s", "median_job_s", "max_job_s", "peak_rss_mb"]
    print("| " + " | ".join([by, *cols[1:]]) + " |")
    print("|" + "---|" * len(cols))
    for r in summary:
        cells = [r["paper"], str(r["jobs"])] + [f"{r[c]:.1f}" for c in cols[2:]]
        print("| " + " | ".join(cells) + " |")


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configfile", help="run the workflow with this configuration")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--results", help="results folder to run into (default: a temporary folder)")
    ap.add_argument("--read", help="only read the benchmark files of this existing results folder")
    ap.add_argument("--by", choices=["paper", "rule"], default="paper", help="one row per paper or per rule")
    args = ap.parse_args(argv)
    if bool(args.read) == bool(args.configfile):
        ap.error("give exactly one of --configfile (run) or --read (existing results)")
    if args.read:
        rows = read_benchmarks(Path(args.read))
        if not rows:
            ap.error(f"--read: no benchmark files under {args.read}/benchmarks")
        print(f"results: {args.read}; load average now: {loadavg()}")
        print_table(summarise(rows, args.by), args.by)
        return 0
    # the workflow writes only below its working directory (results_dir is relative, checked by the
    # config schema), so a fresh folder under bench_runs/ unless --results names one inside the repository
    if args.results:
        base = Path(args.results).resolve()
    else:
        (REPO / "bench_runs").mkdir(exist_ok=True)
        base = Path(tempfile.mkdtemp(prefix="run-", dir=REPO / "bench_runs"))
    results = Path(os.path.relpath(base / "results", REPO))
    if results.parts[:1] == ("..",):
        ap.error(f"--results: {args.results} must lie inside the repository {REPO}")
    n_jobs = dry_run_jobs(args.configfile, str(results))
    print(f"config {args.configfile}: {n_jobs} jobs (snakemake -n); results in {results}")
    load0 = loadavg()
    t0 = time.perf_counter()
    proc = snakemake("--configfile", args.configfile, "--config", f"results_dir={results}",
                     "--cores", str(args.cores), "--forceall")
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        return proc.returncode
    print(f"wall time {wall:.1f} s ({wall / 60:.1f} min) on {args.cores} cores; "
          f"load average before {load0}, after {loadavg()}; {time.strftime('%Y-%m-%d %H:%M %Z')}")
    print_table(summarise(read_benchmarks(REPO / results), args.by), args.by)
    return 0


if __name__ == "__main__":
    sys.exit(main())
