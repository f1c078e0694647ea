"""The practitioner's queries of ``shuffledp account best``, timed as a user runs them (issue 25).

    python benchmarks/accountants_practitioner.py [--n 1e3,1e4,1e6,1e9,1e12,1e15] [--eps0 0.5,2,8,30,50]
        [--mechanisms krr,oue,olh,subset-exp,general,mhm2,mhm5] [--reps 3] [--skip-forward] [--skip-inverse]
        [--skip-rounds] [--out-dir bench_runs] [--old-src DIR/src]

Three kinds of query, each a new process (``python -m shuffledp account best ...``, imports
included) pinned to one CPU with ``taskset -c 0`` when it exists:

* forward: ``best`` per randomizer at every (n, eps0) of the grid;
* inverse: ``--solve eps0 --target-eps E --n N`` and ``--solve n --target-eps E --eps0 E0``;
* composition: ``--rounds T`` for T = 1, 10, 100, 1,000, 10,000 (``--rounds-list``), n = 1e3
  (where the profile's ``curve`` candidate is evaluated), 1e4 and 1e5 (``--rounds-n``).

Per query: the median wall time and the median CPU time (user + system, ``wait4``) over ``--reps``
runs, the wall time's ratio to a cheap baseline measured in the same run, interleaved with the
queries (``python -c 'import shuffledp'``: the machine is shared and its load changes), the peak
resident memory of the process (``wait4``'s ``ru_maxrss``, the per-child value of
``resource.getrusage(RUSAGE_CHILDREN)``), the exit status (2 = a one-line domain error), the
answer, its upper/lower ratio as the CLI reports it, and whether it met the budget (median CPU
time under 2 s, the whole process on one core, and memory under 1 GB, or a domain error; CPU time,
not wall time: on a shared machine the wall time counts the waits for a core). With
``--old-src``, the same medians for the older tree, run in turn with the new one, and the ratios
new/old of the medians. A Markdown table goes to stdout, every measurement to
``<out-dir>/accountants_practitioner_<UTC time>.csv``.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

MECHS = {
    "krr": ["--mechanism", "krr", "--k", "10"],
    "krr2": ["--mechanism", "krr", "--k", "2"],
    "oue": ["--mechanism", "oue", "--d", "100"],
    "olh": ["--mechanism", "olh"],
    "olh2": ["--mechanism", "olh", "--g", "2"],
    "subset-exp": ["--mechanism", "subset-exp", "--d", "20", "--s", "2"],
    "general": ["--mechanism", "general"],
    "mhm2": ["--mechanism", "mhm", "--d", "2"],  # g: Eq. (3) of the multidimensional seed, rounded
    "mhm5": ["--mechanism", "mhm", "--d", "5"],
}
DELTA = "1e-6"
CPU_BUDGET = 2.0  # seconds of CPU time (user + system) of the whole process
MEMORY_BUDGET_MB = 1024.0
PIN = ["taskset", "-c", "0"] if shutil.which("taskset") else []
FIELDS = ["kind", "mechanism", "query", "rc", "wall_median", "wall_min", "cpu_median", "baseline_median", "vs_baseline",
          "old_median", "vs_old", "old_cpu_median", "cpu_vs_old",
          "rss_mb", "answer", "old_answer", "eps", "eps_lower", "ratio", "upper_by", "forward_calls", "composed_by",
          "in_budget", "error"]


def run_once(argv: list[str], src: str | None = None) -> dict:
    """One process: wall time, exit status, peak memory (``wait4``: this child's own ``ru_maxrss``),
    the last lines of stdout and stderr."""
    env = None if src is None else {**os.environ, "PYTHONPATH": src}
    start = time.perf_counter()
    proc = subprocess.Popen([*PIN, sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    lines = out.decode().strip().splitlines()
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime, "rc": proc.returncode,
            "rss_mb": usage.ru_maxrss / 1024.0,
            "out": lines[-1] if lines else "", "err": (err.decode().strip().splitlines() or [""])[-1]}


def measure(args: list[str], reps: int, baseline: list[float], old_src: str | None) -> dict:
    """``reps`` runs of the query, each followed by one baseline run (appended to ``baseline``) and,
    with ``old_src``, one run of the same query with that source tree first on ``PYTHONPATH``
    (whose answer must be the same: a differing one is reported in ``old_answer``)."""
    runs, old = [], []
    for _ in range(reps):
        runs.append(run_once(["-m", "shuffledp", "account", "best", *args]))
        baseline.append(run_once(["-c", "import shuffledp"])["wall"])
        if old_src is not None:
            old.append(run_once(["-m", "shuffledp", "account", "best", *args], old_src))
    walls = [r["wall"] for r in runs]
    last = runs[-1]
    res = {"rc": last["rc"], "wall_median": statistics.median(walls), "wall_min": min(walls),
           "cpu_median": statistics.median(r["cpu"] for r in runs),
           "rss_mb": max(r["rss_mb"] for r in runs), "error": last["err"] if last["rc"] else ""}
    res["answer_json"] = json.loads(last["out"]) if last["rc"] == 0 and last["out"] else {}
    res["old_median"] = statistics.median(r["wall"] for r in old) if old else None
    res["old_cpu_median"] = statistics.median(r["cpu"] for r in old) if old else None
    res["old_answer"] = old[-1]["out"] if old and _answer(old[-1]) != _answer(last) else ""
    return res


def _answer(run: dict):
    """A run's printed answer without its timings (``seconds``), or its exit status and error."""
    if run["rc"] != 0 or not run["out"]:
        return run["rc"], run["err"]
    return {k: v for k, v in json.loads(run["out"]).items() if k != "seconds"}


def _row(kind: str, mech: str, query: str, res: dict, answer_key: str, baseline: list[float]) -> dict:
    a = res.pop("answer_json")
    base = statistics.median(baseline) if baseline else float("nan")
    ok = res["rss_mb"] < MEMORY_BUDGET_MB and (res["rc"] == 2 or (res["rc"] == 0 and res["cpu_median"] < CPU_BUDGET))
    return {"kind": kind, "mechanism": mech, "query": query, **res, "baseline_median": base,
            "vs_baseline": res["wall_median"] / base,
            "vs_old": None if res["old_median"] is None else res["wall_median"] / res["old_median"],
            "cpu_vs_old": None if res["old_cpu_median"] is None else res["cpu_median"] / res["old_cpu_median"],
            "answer": a.get(answer_key), "eps": a.get("eps"), "composed_by": a.get("composed_by"),
            "eps_lower": a.get("eps_lower"), "ratio": a.get("ratio"), "upper_by": a.get("upper_by"),
            "forward_calls": a.get("forward_calls"), "in_budget": ok}


def _fmt(x) -> str:
    if x is None or x == "":
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _print_header() -> None:
    print("| kind | randomizer | query | exit | wall s (median) | CPU s (median) | x baseline | old tree wall s | "
          "old tree CPU s | CPU new/old | MB | answer | by | eps | lower | upper/lower | calls | in budget |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def _print_row(r: dict) -> None:
    answer = r["answer"] if r["rc"] == 0 else r["error"][:60]
    print(f"| {r['kind']} | {r['mechanism']} | {r['query']} | {r['rc']} | {r['wall_median']:.2f} | "
          f"{r['cpu_median']:.2f} | {r['vs_baseline']:.1f} | {_fmt(r['old_median'])} | {_fmt(r['old_cpu_median'])} | "
          f"{_fmt(r['cpu_vs_old'])} | "
          f"{r['rss_mb']:.0f} | {_fmt(answer)} | {_fmt(r['composed_by'])} | {_fmt(r['eps'])} | "
          f"{_fmt(r['eps_lower'])} | {_fmt(r['ratio'])} | {_fmt(r['forward_calls'])} | {_fmt(r['in_budget'])} |",
          flush=True)


def queries(mechs, ns, eps0s, skip, rounds=("1", "10", "100", "1000", "10000"),
            rounds_n=("1e3", "1e4", "1e5")) -> list[tuple[str, str, str, list[str], str]]:
    """(kind, randomizer, label, flags, answer key) of every query to time."""
    out = []
    for m in mechs:
        if "forward" not in skip:
            out += [("forward", m, f"n={n} eps0={e}", [*MECHS[m], "--eps0", e, "--n", n, "--delta", DELTA], "eps")
                    for n in ns for e in eps0s]
        if "inverse" not in skip:
            for target, n in (("0.1", "1e4"), ("0.5", "1e6")):
                out.append(("inverse", m, f"solve eps0: target {target}, n={n}",
                            [*MECHS[m], "--solve", "eps0", "--target-eps", target, "--n", n, "--delta", DELTA], "eps0"))
            for target, e in (("0.1", "2"), ("0.5", "8")):
                out.append(("inverse", m, f"solve n: target {target}, eps0={e}",
                            [*MECHS[m], "--solve", "n", "--target-eps", target, "--eps0", e, "--delta", DELTA], "n"))
        if "rounds" not in skip:
            out += [("rounds", m, f"T={t} n={n} eps0=2",
                     [*MECHS[m], "--eps0", "2", "--n", n, "--delta", DELTA, "--rounds", t], "eps_composed")
                    for n in rounds_n for t in rounds]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1e3,1e4,1e6,1e9,1e12,1e15", help="forward grid: numbers of users")
    ap.add_argument("--eps0", default="0.5,2,8,30,50", help="forward grid: local epsilons")
    ap.add_argument("--mechanisms", default="krr,oue,olh,subset-exp,general",
                    help=f"comma list of {', '.join(MECHS)}")
    ap.add_argument("--reps", type=int, default=3, help="runs per query (the median is reported)")
    ap.add_argument("--skip-forward", action="store_true")
    ap.add_argument("--skip-inverse", action="store_true")
    ap.add_argument("--skip-rounds", action="store_true")
    ap.add_argument("--rounds-list", default="1,10,100,1000,10000", help="composition: the T of --rounds")
    ap.add_argument("--rounds-n", default="1e3,1e4,1e5", help="composition: the n of the --rounds queries")
    ap.add_argument("--out-dir", default="bench_runs", help="where the CSV goes (ignored by git)")
    ap.add_argument("--old-src", help="also run every query with this source tree (its src/ folder) first "
                    "on PYTHONPATH, interleaved: the median wall time before a change and the ratio new/old")
    args = ap.parse_args(argv)
    mechs = [m.strip() for m in args.mechanisms.split(",")]
    unknown = [m for m in mechs if m not in MECHS]
    if unknown or args.reps < 1:
        ap.error(f"--mechanisms: unknown {', '.join(unknown)}" if unknown else "--reps: at least 1")
    skip = {k for k in ("forward", "inverse", "rounds") if getattr(args, f"skip_{k}")}
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    print(f"started {stamp}, load average {os.getloadavg()}, pinned: {' '.join(PIN) or 'no (no taskset)'}, "
          f"delta {DELTA}, {args.reps} run(s) per query\n")
    _print_header()
    rows, baseline = [], []
    for kind, m, label, flags, key in queries(mechs, args.n.split(","), args.eps0.split(","), skip,
                                                 args.rounds_list.split(","), args.rounds_n.split(",")):
        rows.append(_row(kind, m, label, measure(flags, args.reps, baseline, args.old_src), key, baseline))
        _print_row(rows[-1])
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"accountants_practitioner_{stamp}.csv"
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    over = [r for r in rows if not r["in_budget"]]
    print(f"\nbaseline `python -c 'import shuffledp'`: median {statistics.median(baseline):.3f} s over "
          f"{len(baseline)} runs; load average at end {os.getloadavg()}; over budget: {len(over)} of {len(rows)}; "
          f"CSV: {path}")
    if args.old_src:
        differ = [r for r in rows if r["old_answer"]]
        print(f"answers of the old tree that differ (timings aside): {len(differ)} of {len(rows)}"
              + "".join(f"\n  {r['kind']} {r['mechanism']} {r['query']}: old {r['old_answer']}" for r in differ))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
