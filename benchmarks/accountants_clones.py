"""Benchmark of the clones and blanket accountants (run manually, once).

    python benchmarks/accountants_clones.py [--apple-dir DIR] [--repeat 3]

Prints median wall times. Baselines measured in the same run:
* our own exact evaluation of the clone pair (every clone count, no blocking), and
* optionally the authors' public code (apple/ml-shuffling-amplification, ``--apple-dir`` pointing
  at a checkout holding computeamplification.py) on its public example (n = 1e5, eps0 = 4,
  delta = 1e-6, T = 10 binary-search steps, step = 100, upper bound).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time

import numpy as np
from scipy import signal, stats

from shuffledp.accountants.upper import blanket as B
from shuffledp.accountants.upper import clones as C


def median_time(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apple-dir", help="checkout of apple/ml-shuffling-amplification (optional baseline)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    r = args.repeat

    print(f"== eps(delta) of the numerical clones bound, delta = 1e-6 (median of {r}) ==")
    print(f"{'variant':8} {'n':>9} {'eps0':>5} {'eps':>12} {'time_s':>8} {'exact_s':>8} {'ratio':>6}")
    for variant in ("fmt21", "fmt23"):
        for n in (10**5, 10**6, 10**7):
            for eps0 in (1.0, 4.0):
                t, eps = median_time(lambda n=n, e=eps0, v=variant: C.eps_clones(e, n, 1e-6, variant=v), r)
                t0, eps_ex = median_time(
                    lambda n=n, e=eps0, v=variant: C.eps_clones(e, n, 1e-6, variant=v, max_points=None), r)
                print(f"{variant:8} {n:9d} {eps0:5.1f} {eps:12.8f} {t:8.3f} {t0:8.3f} {t0 / t:6.1f}"
                      f"   (exact eps {eps_ex:.8f})")

    if args.apple_dir:
        sys.path.insert(0, args.apple_dir)
        CA = importlib.import_module("computeamplification")
        t_a, eps_a = median_time(lambda: CA.numericalanalysis(10**5, 4, 1e-6, 10, 100, True), r)
        t_o, eps_o = median_time(lambda: C.eps_clones(4, 10**5, 1e-6), r)
        print(f"\nauthors' code, public example: eps {eps_a:.6f} in {t_a:.3f} s; ours {eps_o:.6f} "
              f"in {t_o:.3f} s; speed-up {t_a / t_o:.1f}x")

    print("\n== delta_from_clone_pmf, clone count = Bin(5e4, 0.2) + Bin(5e4, 0.6) (n = 1e5) ==")
    pmf = signal.fftconvolve(stats.binom.pmf(np.arange(50_001), 50_000, 0.2),
                             stats.binom.pmf(np.arange(50_001), 50_000, 0.6))
    pmf = np.clip(pmf, 0.0, None)
    for label, kw in (("blocked (default)", {}), ("trimmed 1e-30", {"tail_mass": 1e-30}),
                      ("exact, untrimmed", {"max_points": None})):
        t, d = median_time(lambda kw=kw: C.delta_from_clone_pmf(pmf, 0.02, 0.7, **kw), r)
        print(f"{label:20} delta {d:.6e} {t:8.4f} s")

    print("\n== eps(delta) of the blanket bound, n = 1e6, eps0 = 2, delta = 1e-6 ==")
    for mech, kw in (("generic", {}), ("krr", {"k": 10}), ("laplace", {}), ("mhm", {"d": 5})):
        for bound in B.BOUNDS:
            t, eps = median_time(lambda m=mech, b=bound, kw=kw: B.eps_blanket(2.0, 10**6, 1e-6, mechanism=m,
                                                                               bound=b, **kw), r)
            t2, el = median_time(lambda m=mech, b=bound, kw=kw: B.max_eps_local(0.1, 1e-6, 10**6, mechanism=m,
                                                                                 bound=b, **kw), r)
            print(f"{mech:8} {bound:9} eps {eps:.6f} {t * 1e3:7.2f} ms | max_eps_local(0.1) {el:.4f} "
                  f"{t2 * 1e3:7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
