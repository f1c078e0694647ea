"""Benchmark of the variation-ratio accountants (run manually, once; prints medians and ratios).

    python benchmarks/accountants.py [--authors /tmp/PrivacyAmplification] [--skip-authors]

1. eps(delta) of the variation-ratio bound for a general eps0-LDP randomizer at n = 1e5 to 1e-6
   relative precision, against wangsw/PrivacyAmplification's ``amplificationUB`` (T = 30) measured
   in the same run (their code is imported from the folder given by --authors or the environment
   variable SHUFFLEDP_AUTHORS_VR; the comparison is skipped with a message when absent).
2. The same at n = 1e7 (target: under one second).
3. The accountant tables of the paper-scale segmented experiments: d in {17, 128}, s in {4, 8},
   n in {5000, 50000}, settings S1-S3 over levels (0.5, 1, 2), delta = 0.01/n, m grid log 0.1..10
   (21 points), both accountants (sound, paper), on 2 worker processes (target: under a minute).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

EPS0, DELTA = 1.0, 1e-6
LEVELS = [0.5, 1.0, 2.0]
SETTINGS = {"S1": [0.25, 0.5, 0.25], "S2": [0.5, 0.25, 0.25], "S3": [0.25, 0.25, 0.5]}


def _median_time(fn, reps):
    """Median wall time over ``reps`` cold calls (the clone-count window cache is cleared)."""
    from shuffledp.accountants.numerics import clone_counts

    times, value = [], None
    for _ in range(reps):
        clone_counts.clone_window.cache_clear()
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def _tables_for(args):
    d, s, n, accountants = args
    from shuffledp.accountants.special.segmented_optimizer import segmented_table
    from shuffledp.commands.account_vr import log_grid

    grid = log_grid(0.1, 10.0, 21)
    t0 = time.perf_counter()
    rows = 0
    for shares in SETTINGS.values():
        # MSNBC (d = 17) pads as the workflow does (accountants over d + s items); synthetic does not
        rows += len(segmented_table(n, d, s, LEVELS, shares, 0.01 / n, grid, accountants=accountants,
                                    padding=s if d == 17 else 0))
    return d, s, n, rows, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--authors", default=os.environ.get("SHUFFLEDP_AUTHORS_VR", "/tmp/PrivacyAmplification"))
    ap.add_argument("--skip-authors", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)

    from shuffledp.accountants.upper.variation_ratio import vr_eps, vr_params

    params = vr_params("general", EPS0)
    print(f"[1] general eps0-LDP, eps0 = {EPS0}, delta = {DELTA}, n = 1e5, rtol = 1e-6")
    ours_t, ours_eps = _median_time(lambda: vr_eps(params, 100_000, DELTA, rtol=1e-6), 5)
    print(f"    shuffledp vr_eps: eps = {ours_eps:.9f}, median {ours_t * 1e3:.1f} ms (5 cold runs)")
    path = os.path.join(args.authors, "unifiedamplification.py")
    if args.skip_authors or not os.path.exists(path):
        print(f"    authors' code not found at {args.authors} (or skipped): no speed ratio measured")
    else:
        sys.path.insert(0, args.authors)
        import warnings

        warnings.filterwarnings("ignore")
        ua = importlib.import_module("unifiedamplification")
        p, beta, q0, q1 = ua.computeUBParameters(EPS0, None, None)
        t0 = time.perf_counter()
        theirs = ua.amplificationUB(p, beta, q0, q1, 100_000, DELTA, 30)
        their_t = time.perf_counter() - t0
        print(f"    authors' amplificationUB (T = 30): eps = {theirs:.9f}, {their_t:.1f} s (1 run)")
        print(f"    speed ratio: {their_t / ours_t:.0f}x; |difference| = {abs(theirs - ours_eps):.2e}")

    print("[2] same at n = 1e7")
    t7, e7 = _median_time(lambda: vr_eps(params, 10_000_000, DELTA, rtol=1e-6), 3)
    print(f"    shuffledp vr_eps: eps = {e7:.9f}, median {t7:.3f} s (3 cold runs)")

    for accountants in (("paper",), ("sound",)):
        print(f"[3] paper-scale segmented accountant tables, accountant {accountants[0]}, {args.workers} workers")
        jobs = [(d, s, n, accountants) for d in (17, 128) for s in (4, 8) for n in (5000, 50000)]
        t0 = time.perf_counter()
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            results = list(pool.map(_tables_for, jobs))
        wall = time.perf_counter() - t0
        for d, s, n, rows, secs in results:
            print(f"    d = {d:3d}, s = {s}, n = {n:5d}: 3 settings, {rows} rows, {secs:.1f} s")
        print(f"    total: {len(jobs) * 3} tables, wall {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
