"""Benchmark of the blanket-decomposition accountant and ``account best`` (issue 17's goals).

    python benchmarks/accountants_best.py [--anchor /tmp/su_i17] [--anchor-points 10:1000:2] [--reps 3]
        [--cli-reps 5] [--baseline-src DIR] [--cli-no-bytecode] [--skip-grid] [--skip-1e6] [--skip-cli]
        [--skip-anchor] [--skip-grouped]

1. k-RR, k in {3, 10, 100}, eps0 in {0.5, 1, 2, 4}, n in {1e4, 1e5, 1e6}, delta = 1e-6: our upper
   bound (decomposition), every other upper bound we have (variation ratio, FMT21/FMT23 clones,
   blanket Bennett/Hoeffding), the best lower bound (``best.lower_bounds``: issue 12's worst-pair
   search, the others-at-a-third-value pair), the gap, and the seconds of each.
2. Time of ``best_eps`` at n = 1e6 (median of --reps runs; its default: the bounds that do not
   need the lower bound on a second thread when there are two CPUs). The grid of 1. runs
   ``best_eps`` on one thread so that each bound's seconds is its own.
3. ``shuffledp account best`` as a user runs it (a new process each time, imports included) at
   n = 1e6, delta = 1e-6, k in {3, 10, 100}, eps0 in {1, 2}: the median wall time of --cli-reps
   runs and, from the same runs, the median CPU time (user + system; less sensitive to the other
   users of a shared machine, but it adds up both threads) and the median of the in-process
   ``seconds`` the command reports.
   ``--baseline-src DIR`` times another source tree (e.g. ``git archive`` of an older commit)
   in alternation with this one, on the same points, and checks that both print the same numbers.
   Compiled modules are cached as after an install (``--cli-no-bytecode``: as the environment
   says; PYTHONDONTWRITEBYTECODE=1 recompiles the project's modules at every run).
4. The decomposition anchor (Su, Cheng, Wang, arXiv 2504.07414; their public code, run with numpy
   in place of CuPy: put ``from numpy import *`` and ``import numpy.fft as fft`` in a ``cupy.py``
   beside it) at the points of --anchor-points (k:n:eps0, comma separated), each in its own
   process with a time limit; reports their eps and seconds beside ours and the speed ratio.
5. The many-group randomizers (subset-exp, OUE, OLH; the decomposition through the three-atom
   spread), eps0 in {1, 3}, n in {1e4, 1e6}: the decomposition, the best other upper bound, the
   real-pair lower bound, the gap and the seconds.

Prints Markdown tables and the load average (the machine is shared: wall times are inflated).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

DELTA = 1e-6

_ANCHOR_DRIVER = r"""
import contextlib, io, json, sys, time
sys.path.insert(0, sys.argv[1])
from amplification_bounds import FFTbound
from mechanisms import RRMechanism
k, n, eps0, delta = int(sys.argv[2]), int(float(sys.argv[3])), float(sys.argv[4]), float(sys.argv[5])
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    eps = FFTbound(RRMechanism(eps0, k)).get_eps(eps0, n, delta)
print(json.dumps({"eps": eps, "seconds": time.perf_counter() - t}))
"""


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def grid_table(ks, eps0s, ns) -> list[dict]:
    from shuffledp.accountants import best

    rows = []
    for k in ks:
        for eps0 in eps0s:
            for n in ns:
                # one thread: each bound's seconds is its own time, not shared with another
                res = best.best_eps("krr", eps0, n, DELTA, k=k, parallel=False)
                b = res["bounds"]
                others = {nm: v["eps"] for nm, v in b.items()
                          if v["kind"] == "upper" and nm != "decomposition"}
                best_other = min(others, key=others.get)
                rows.append({
                    "k": k, "eps0": eps0, "n": n,
                    "decomposition": b["decomposition"]["eps"],
                    "decomposition_s": b["decomposition"]["seconds"],
                    "best_other": best_other, "best_other_eps": others[best_other],
                    "lower": res["eps_lower"], "lower_by": res["lower_by"],
                    "lower_s": b[res["lower_by"]]["seconds"],
                    "gap_decomposition": b["decomposition"]["eps"] / res["eps_lower"] - 1.0,
                    "best_s": res["seconds"],
                })
                r = rows[-1]
                print(f"| {k} | {eps0} | {n:.0e} | {r['decomposition']:.6g} ({r['decomposition_s']:.2f} s) "
                      f"| {best_other} {r['best_other_eps']:.6g} | {r['lower']:.6g}, {r['lower_by']} "
                      f"({r['lower_s']:.2f} s) "
                      f"| {100 * r['gap_decomposition']:.3f}% | {r['best_s']:.2f} s |", flush=True)
    return rows


def time_1e6(reps: int) -> None:
    """Wall and CPU (process) time at n = 1e6: CPU time is less sensitive to the other users of
    the shared machine."""
    from shuffledp.accountants import best
    from shuffledp.accountants.lower import exact_pairs as xp
    from shuffledp.accountants.upper import decomposition as dec

    for k in (3, 10, 100):
        tb, td, cb, cd = [], [], [], []
        for _ in range(reps):
            xp._pair_table.cache_clear()
            t0, c0 = time.perf_counter(), time.process_time()
            res = best.best_eps("krr", 1.0, 10**6, DELTA, k=k)
            tb.append(time.perf_counter() - t0)
            cb.append(time.process_time() - c0)
            xp._pair_table.cache_clear()
            t0, c0 = time.perf_counter(), time.process_time()
            lo, _ = xp.krr_pair_lower_eps(k, 1.0, 10**6, DELTA)
            dec.decomposition_eps(None, 10**6, DELTA, pairs=dec.krr_pairs(k, 1.0), guess=lo)
            td.append(time.perf_counter() - t0)
            cd.append(time.process_time() - c0)
        med = statistics.median
        print(f"| {k} | 1e6 | {med(td):.2f} s (CPU {med(cd):.2f} s) | {med(tb):.2f} s (CPU {med(cb):.2f} s) "
              f"| {res['eps']:.6g} | load {_load()} |", flush=True)


CLI_POINTS = [(k, eps0) for k in (3, 10, 100) for eps0 in (1.0, 2.0)]


def _cli_command() -> list[str]:
    """The console script installed beside this Python (what a user runs), else ``-m shuffledp``."""
    script = os.path.join(os.path.dirname(sys.executable), "shuffledp")
    return [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "shuffledp"]


def time_cli(reps: int, trees: dict[str, str], bytecode: bool = True) -> None:
    """Wall time of whole ``account best`` processes (median of ``reps``) for each source tree
    (label -> ``src`` folder put first on PYTHONPATH), runs of the trees alternating.

    ``bytecode``: as after an install, Python may cache the compiled modules (``__pycache__``;
    PYTHONDONTWRITEBYTECODE is dropped for these runs) and one untimed run per tree fills the
    cache; ``False`` keeps the caller's environment (with PYTHONDONTWRITEBYTECODE=1 every run
    compiles the project's modules from source)."""
    med = statistics.median
    base_env = dict(os.environ)
    if bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
    for k, eps0 in CLI_POINTS:
        args = _cli_command() + ["account", "best", "--mechanism", "krr", "--k", str(k), "--eps0", str(eps0),
                                 "--n", "1e6", "--delta", str(DELTA), "--detail"]
        if bytecode and (k, eps0) == CLI_POINTS[0]:
            for src in trees.values():
                subprocess.run(args, capture_output=True, env={**base_env, "PYTHONPATH": src}, check=True)
        wall: dict[str, list[float]] = {lb: [] for lb in trees}
        inproc: dict[str, list[float]] = {lb: [] for lb in trees}
        cpu: dict[str, list[float]] = {lb: [] for lb in trees}
        numbers: dict[str, set[str]] = {lb: set() for lb in trees}
        for _ in range(reps):
            for label, src in trees.items():
                env = {**base_env, "PYTHONPATH": src}
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                out = subprocess.run(args, capture_output=True, text=True, env=env, check=True)
                wall[label].append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # runs are sequential: this child
                cpu[label].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
                res = json.loads(out.stdout)
                inproc[label].append(res["seconds"])
                # every number the command prints except the timings
                numbers[label].add(json.dumps([res["eps"], res["eps_lower"], res["upper_by"], res["lower_by"],
                                               res["gap"], {nm: b["eps"] for nm, b in res["bounds"].items()}]))
        same = len(set().union(*numbers.values())) == 1
        for label in trees:
            w = wall[label]
            print(f"| {k} | {eps0} | {label} | {med(w):.2f} s ({min(w):.2f}-{max(w):.2f}) | {med(cpu[label]):.2f} s "
                  f"| {med(inproc[label]):.2f} s | {json.loads(next(iter(numbers[label])))[0]:.6g} "
                  f"| {'yes' if same else 'NO'} | {_load()} |", flush=True)


def anchor(points: list[tuple[int, int, float]], folder: str, limit: float) -> None:
    from shuffledp.accountants.lower import exact_pairs as xp
    from shuffledp.accountants.upper import decomposition as dec

    for k, n, eps0 in points:
        t0 = time.perf_counter()
        lo, _ = xp.krr_pair_lower_eps(k, eps0, n, DELTA)
        ours = dec.decomposition_eps(None, n, DELTA, pairs=dec.krr_pairs(k, eps0), guess=lo)
        t_ours = time.perf_counter() - t0
        try:
            out = subprocess.run([sys.executable, "-c", _ANCHOR_DRIVER, folder, str(k), str(n),
                                  str(eps0), str(DELTA)], capture_output=True, text=True, timeout=limit)
            theirs = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else None
            note = "" if theirs else out.stderr.strip().splitlines()[-1][:80]
        except subprocess.TimeoutExpired:
            theirs, note = None, f"over {limit:.0f} s"
        their_eps = f"{theirs['eps']:.6g}" if theirs else "-"
        their_s = f"{theirs['seconds']:.1f} s" if theirs else note
        ratio = f"{theirs['seconds'] / t_ours:.0f}x" if theirs else "-"
        print(f"| {k} | {n:.0e} | {eps0} | {ours:.6g} | {lo:.6g} | {t_ours:.2f} s | {their_eps} "
              f"| {their_s} | {ratio} | load {_load()} |", flush=True)


GROUPED_POINTS = (("subset-exp", {"d": 17, "s": 1}), ("subset-exp", {"d": 17, "s": 4}),
                  ("subset-exp", {"d": 128, "s": 8}), ("oue", {"d": 17}), ("olh", {}))


def grouped_table(eps0s, ns) -> None:
    """Section 5: the many-group randomizers (four likelihood-ratio groups, the spread reduction):
    decomposition, the best other upper bound (all valid for any eps0-LDP randomizer), the lower
    bound from real pairs, the gap and the seconds (one thread)."""
    from shuffledp.accountants import best

    for mech, kw in GROUPED_POINTS:
        for eps0 in eps0s:
            for n in ns:
                res = best.best_eps(mech, eps0, n, DELTA, parallel=False, **kw)
                b = res["bounds"]
                others = {nm: v["eps"] for nm, v in b.items() if v["kind"] == "upper" and nm != "decomposition"}
                other = min(others, key=others.get)
                dec_eps = b["decomposition"]["eps"]
                params = ", ".join(f"{k}={v}" for k, v in best.mechanism_params(mech, eps0, **kw).items())
                print(f"| {mech} ({params}) | {eps0:g} | {n:.0e} | {dec_eps:.6g} ({b['decomposition']['seconds']:.2f}) "
                      f"| {others[other]:.6g} {other} (+{100 * (others[other] / dec_eps - 1):.1f}%) "
                      f"| {res['eps_lower']:.6g} ({b[res['lower_by']]['seconds']:.2f}) "
                      f"| {100 * res['gap']:.2f}% | {res['seconds']:.2f} |", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--anchor", default=os.environ.get("SHUFFLEDP_ANCHOR_SU", "/tmp/su_i17"))
    ap.add_argument("--anchor-points", default="10:1000:2,100:1000:4,3:1000:1")
    ap.add_argument("--anchor-limit", type=float, default=900.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cli-reps", type=int, default=5)
    ap.add_argument("--baseline-src", help="another src folder to time the command with, beside this one")
    ap.add_argument("--cli-no-bytecode", action="store_true",
                    help="keep the environment's PYTHONDONTWRITEBYTECODE (modules compiled at every run)")
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--skip-1e6", action="store_true")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--skip-anchor", action="store_true")
    ap.add_argument("--skip-grouped", action="store_true")
    args = ap.parse_args(argv)
    print(f"load average at start: {_load()}")
    if not args.skip_grid:
        print("\n| k | eps0 | n | decomposition (s) | best other upper | best lower, by (s) | gap | best_eps s |")
        print("|---|---|---|---|---|---|---|---|")
        grid_table((3, 10, 100), (0.5, 1.0, 2.0, 4.0), (10**4, 10**5, 10**6))
    if not args.skip_1e6:
        print("\n| k | n | decomposition + lower | best_eps (all bounds) | eps | load |")
        print("|---|---|---|---|---|---|")
        time_1e6(args.reps)
    if not args.skip_cli:
        trees = {"this tree": os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")}
        if args.baseline_src:
            trees["baseline"] = os.path.abspath(args.baseline_src)
        cached = "bytecode cached" if not args.cli_no_bytecode else (
            "modules compiled at every run" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "environment as given")
        print(f"\n`shuffledp account best` processes, n = 1e6, delta = {DELTA:g}, median of {args.cli_reps}, {cached}")
        print("\n| k | eps0 | source | wall (min-max) | CPU | in-process seconds | eps | same numbers | load |")
        print("|---|---|---|---|---|---|---|---|---|")
        time_cli(args.cli_reps, trees, bytecode=not args.cli_no_bytecode)
    if not args.skip_anchor:
        if not os.path.exists(os.path.join(args.anchor, "amplification_bounds.py")):
            print(f"\nanchor code not found in {args.anchor}: skipped")
        else:
            pts = [(int(a), int(float(b)), float(c)) for a, b, c in
                   (p.split(":") for p in args.anchor_points.split(","))]
            print("\n| k | n | eps0 | ours (upper) | our lower | our s | anchor FFT | anchor s | speed-up | load |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            anchor(pts, args.anchor, args.anchor_limit)
    if not args.skip_grouped:
        print("\n| randomizer | eps0 | n | decomposition (s) | best other upper | lower (s) | gap | best_eps s |")
        print("|---|---|---|---|---|---|---|---|")
        grouped_table((1.0, 3.0), (10**4, 10**6))
    print(f"\nload average at end: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
