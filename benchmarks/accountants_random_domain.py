"""Random points of `shuffledp account best`'s documented domain, each a whole process on one core.

    python benchmarks/accountants_random_domain.py [--seed 7] [--points 200] [--out bench_runs/random_domain.jsonl]

Draws the randomizer uniformly (krr, oue, olh, subset-exp, general, mhm), its sizes, eps0, n and
delta log-uniformly over the whole domain the flags accept (k and OUE's d up to 1e9, subset-exp's
d and s up to 2e4, MHM's d up to 16, eps0 in [0.01, 50], n in [2, 1e15], delta in [1e-300, 0.5]),
runs each query as ``taskset -c 1 shuffledp account best ...`` with a 60 s timeout, and reports:
exit statuses (2 is a one-line domain error, allowed), anything printed on stderr by an answered
query, answers whose lower bound exceeds the upper one, wall times (median, the slowest, how many
over the 2 s budget), CPU times (user + system of each process: less sensitive to the others'
load on a shared machine; how many over 1.6 s, the budget with a margin for noise) and the largest
finite upper/lower ratios. Every query goes to ``--out``
(JSON lines). The points are the same for the same seed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import threading
import time
from pathlib import Path

PIN = ["taskset", "-c", "1"] if shutil.which("taskset") else []


def draw(rng: random.Random) -> list[str]:
    """One query's flags."""
    def lu(a: float, b: float) -> float:
        return math.exp(rng.uniform(math.log(a), math.log(b)))

    m = rng.choice(["krr", "oue", "olh", "subset-exp", "general", "mhm"])
    args = ["--mechanism", m]
    if m == "krr":
        args += ["--k", str(int(lu(2, 1e9)))]
    if m == "oue":
        args += ["--d", str(int(lu(2, 1e9)))]
    if m == "olh" and rng.random() < 0.5:
        args += ["--g", str(int(lu(2, 1e6)))]
    if m == "subset-exp":
        d = int(lu(2, 20000))
        args += ["--d", str(d), "--s", str(int(lu(1, d)))]
    if m == "mhm":
        d = rng.randint(1, 16)
        args += ["--d", str(d)] + (["--g", str(int(lu(d + 1, 1e6)))] if rng.random() < 0.5 else [])
    args += ["--eps0", str(round(lu(0.01, 50), 3)), "--n", str(int(lu(2, 1e15))), "--delta", f"{lu(1e-300, 0.5):.3g}"]
    return args


def run(args: list[str]) -> dict:
    """One query: wall seconds, CPU seconds of the process (user + system, from ``wait4``: on a
    shared machine the wall time grows with the others' load, the CPU time much less), its peak
    resident memory; killed after 60 s."""
    start = time.perf_counter()
    proc = subprocess.Popen([*PIN, "shuffledp", "account", "best", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    timer = threading.Timer(60.0, proc.kill)
    timer.start()
    out, err = proc.stdout.read(), proc.stderr.read()   # stderr is one line at most
    _, status, usage = os.wait4(proc.pid, 0)
    killed = not timer.is_alive()
    timer.cancel()
    rc = "timeout" if killed else os.waitstatus_to_exitcode(status)
    return {"args": args, "rc": rc, "sec": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024.0, "out": out.strip()[-600:], "err": err.strip()[-600:]}


def summary(rows: list[dict]) -> None:
    answered = [r for r in rows if r["rc"] == 0]
    print(f"{len(rows)} queries: {len(answered)} answered, "
          f"{sum(r['rc'] == 2 for r in rows)} one-line domain errors, "
          f"{sum(r['rc'] not in (0, 2) for r in rows)} other exits (timeouts included)")
    secs = sorted(r["sec"] for r in answered)
    cpus = sorted(r["cpu"] for r in answered)
    if secs:
        print(f"wall: median {statistics.median(secs):.2f} s, slowest {secs[-1]:.2f} s, "
              f"{sum(s > 2.0 for s in secs)} over 2 s; CPU: median {statistics.median(cpus):.2f} s, "
              f"slowest {cpus[-1]:.2f} s, {sum(c > 1.6 for c in cpus)} over 1.6 s; load average {os.getloadavg()}")
    for r in rows:
        if r["rc"] not in (0, 2) or (r["rc"] == 0 and r["err"]) or r["sec"] > 2.0 or r["cpu"] > 1.6:
            print(f"  rc={r['rc']} {r['sec']:.2f} s (CPU {r['cpu']:.2f} s)  {' '.join(r['args'])}  {r['err'][-160:]}")
    ratios = []
    for r in answered:
        ans = json.loads(r["out"].splitlines()[-1])
        if ans["eps_lower"] > ans["eps"] * (1 + 1e-9):
            print(f"  LOWER ABOVE UPPER: {' '.join(r['args'])}")
        if isinstance(ans["ratio"], float) and math.isfinite(ans["ratio"]):
            ratios.append((ans["ratio"], " ".join(r["args"]), ans["upper_by"], ans["lower_by"]))
    for ratio, args, up, low in sorted(ratios)[-5:]:
        print(f"  ratio {ratio:.3g}: {args} (upper {up}, lower {low})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--out", default="bench_runs/random_domain.jsonl")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    with out.open("w") as fh:
        for _ in range(a.points):
            rows.append(run(draw(rng)))
            fh.write(json.dumps(rows[-1]) + "\n")
            fh.flush()
    summary(rows)


if __name__ == "__main__":
    main()
