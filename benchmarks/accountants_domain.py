"""Benchmark of ``shuffledp account best`` over its whole documented domain (issue 25, item 3).

    python benchmarks/accountants_domain.py [--n 1e3,1e4,1e6,1e9,1e12,1e15] [--eps0 0.5,2,8,30,50]
        [--delta 1e-6] [--mechanisms krr2,krr10,general,oue,olh,olh2,subset-exp] [--inverse]
        [--rounds] [--skip-forward] [--budget 2] [--json FILE]

Every query runs as a user runs it: a new process (imports included) pinned to one CPU (so
``best_eps`` runs on one thread), its wall time, CPU time (user + system: less sensitive to the
other users of a shared machine) and peak resident memory taken from ``wait4``. For each query the
table shows the upper bound, the lower bound, their ratio, which bound gave each, the exit status
and whether the query met the budget (CPU seconds under ``--budget`` and memory under 1 GB).
``--inverse`` adds the inverse queries (``--solve eps0`` and ``--solve n``) at a few targets,
``--rounds`` the composition over T = 1, 10, 100 rounds (``--rounds T``; its time and memory are
reported, the 2 s budget is the forward query's).

Prints Markdown tables and the load average (the machine is shared: wall times are inflated).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

MECHS = {
    "krr2": ["--mechanism", "krr", "--k", "2"],
    "krr10": ["--mechanism", "krr", "--k", "10"],
    "general": ["--mechanism", "general"],
    "oue": ["--mechanism", "oue", "--d", "100"],
    "olh": ["--mechanism", "olh"],
    "olh2": ["--mechanism", "olh", "--g", "2"],
    "subset-exp": ["--mechanism", "subset-exp", "--d", "20", "--s", "2"],
}
MEMORY_BUDGET_MB = 1024.0


def _one_cpu() -> None:
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})


def measured(args: list[str]) -> dict:
    cmd = [sys.executable, "-m", "shuffledp", "account", "best", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=_one_cpu)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    res = {"args": args, "rc": proc.returncode, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
           "rss_mb": usage.ru_maxrss / 1024.0, "error": err.decode().strip().splitlines()[-1:] or [""]}
    res["error"] = res["error"][0]
    if proc.returncode == 0:
        res["answer"] = json.loads(out.decode().strip().splitlines()[-1])
    return res


def _fmt(x) -> str:
    if isinstance(x, str):
        return x
    if x is None:
        return "-"
    return f"{x:.4g}"


def forward_grid(mechs, ns, eps0s, delta, budget) -> list[dict]:
    rows = []
    print("| randomizer | n | eps0 | eps (upper) | lower | ratio | upper by | lower by | exit | wall s | CPU s "
          "| MB | in budget |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in mechs:
        for n in ns:
            for e in eps0s:
                r = measured([*MECHS[m], "--eps0", e, "--n", n, "--delta", delta])
                a = r.get("answer", {})
                ok = r["cpu"] < budget and r["rss_mb"] < MEMORY_BUDGET_MB and r["rc"] in (0, 2)
                r.update(mechanism=m, n=n, eps0=e, in_budget=ok)
                rows.append(r)
                print(f"| {m} | {n} | {e} | {_fmt(a.get('eps'))} | {_fmt(a.get('eps_lower'))} | "
                      f"{_fmt(a.get('ratio'))} | {a.get('upper_by', r['error'][:40])} | "
                      f"{a.get('lower_by', '-')} | {r['rc']} | {r['wall']:.2f} | {r['cpu']:.2f} | "
                      f"{r['rss_mb']:.0f} | {'yes' if ok else 'NO'} |",
                      flush=True)
    return rows


def inverse_grid(budget) -> list[dict]:
    rows = []
    print("\n| randomizer | query | answer | forward eps | target | exit | wall s | CPU s | MB | in budget |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    cases = []
    for m in ("krr2", "krr10", "oue", "olh", "general"):
        for target in ("0.1", "1"):
            cases.append((m, ["--solve", "eps0", "--target-eps", target, "--n", "1e5", "--delta", "1e-6"]))
            cases.append((m, ["--solve", "n", "--target-eps", target, "--eps0", "4", "--delta", "1e-6"]))
    for m, extra in cases:
        r = measured([*MECHS[m], *extra])
        a = r.get("answer", {})
        ok = r["cpu"] < budget and r["rss_mb"] < MEMORY_BUDGET_MB and r["rc"] in (0, 2)
        r.update(mechanism=m, in_budget=ok)
        rows.append(r)
        solve = extra[1]
        print(f"| {m} | {solve} at target {extra[3]} | {_fmt(a.get(solve))} | {_fmt(a.get('eps'))} | "
              f"{extra[3]} | {r['rc']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | "
              f"{'yes' if ok else 'NO'} |",
              flush=True)
    return rows


def compose_grid(budget) -> list[dict]:
    rows = []
    print("\n| randomizer | n | eps0 | T | eps one round | eps after T rounds | T eps0 | exit | wall s | CPU s | MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for m in ("krr2", "krr10", "general", "oue"):
        for t in ("1", "10", "100"):
            r = measured([*MECHS[m], "--eps0", "1", "--n", "1e4", "--delta", "1e-6", "--rounds", t])
            a = r.get("answer", {})
            r.update(mechanism=m, rounds=t, in_budget=r["rc"] == 0)
            rows.append(r)
            print(f"| {m} | 1e4 | 1 | {t} | {_fmt(a.get('eps'))} | {_fmt(a.get('eps_composed'))} | {t} | "
                  f"{r['rc']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} |", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1e3,1e4,1e6,1e9,1e12,1e15")
    ap.add_argument("--eps0", default="0.5,2,8,30,50")
    ap.add_argument("--delta", default="1e-6")
    ap.add_argument("--mechanisms", default=",".join(MECHS))
    ap.add_argument("--budget", type=float, default=2.0, help="CPU seconds per query")
    ap.add_argument("--inverse", action="store_true", help="also time the inverse queries")
    ap.add_argument("--rounds", action="store_true", help="also T = 1, 10, 100 rounds (--rounds)")
    ap.add_argument("--skip-forward", action="store_true", help="skip the forward grid")
    ap.add_argument("--json", help="write every measurement to this file")
    args = ap.parse_args(argv)
    mechs = [m.strip() for m in args.mechanisms.split(",")]
    unknown = [m for m in mechs if m not in MECHS]
    if unknown:
        ap.error(f"--mechanisms: unknown {', '.join(unknown)}")
    print(f"load average at start: {os.getloadavg()}")
    rows = [] if args.skip_forward else forward_grid(mechs, args.n.split(","), args.eps0.split(","),
                                                      args.delta, args.budget)
    if args.inverse:
        rows += inverse_grid(args.budget)
    if args.rounds:
        rows += compose_grid(args.budget)
    print(f"\nload average at end: {os.getloadavg()}; queries over budget: "
          f"{sum(not r['in_budget'] for r in rows)} of {len(rows)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
