"""Speed of the personalized shuffle bounds (Liu et al. CIKM'24 reproduction).

    python benchmarks/personalized.py [--authors-code DIR] [--workers 2] [--quick]

1. Table 2 at the paper's scale (Uniform2, n = 10,000, delta_l = 1e-10, Gaussian; eps_s in
   {0.01, 0.03, 0.05, 0.08, 0.1}; rows FV, CCC, HPS): wall time per row.
2. Figure 4 at the paper's scale (config/paper.yaml, section personalized: 4 settings, pure bounds
   hps/bgn/fv/ccc/lzx and approximate bounds hps/fv/ccc, 10 n from 1e3 to 1e5, 5 seeds), computed
   in-process with ``--workers`` processes (no Snakemake overhead): total wall time.
3. Side by side with the authors' code (Emory-AIMS/HPS, not part of this project; pass its checkout
   with --authors-code, default /tmp/hps): their HPS Table-2 row at n = 10,000 against ours at the
   same values, ratio of wall times. Skipped with a message when the directory is absent.
Prints medians; timings are not written into any result table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from shuffledp.accountants.special import personalized as P

EPS_T2 = [0.01, 0.03, 0.05, 0.08, 0.1]
ROOT = Path(__file__).resolve().parents[1]


def table2_row(bound: str, e: np.ndarray) -> list[float]:
    return [P.personalized_delta(bound, e, 1e-10, x, mechanism="gaussian") for x in EPS_T2]


def fig4_point(args):
    bound, setting, mech, n, seed, delta = args
    e = P.draw_local_eps(setting, n, seed)
    dl = 0.0 if mech == "laplace" else 1e-10
    return P.personalized_eps(bound, e, dl, delta, mechanism=mech)


def authors_row(code_dir: Path, n: int) -> float:
    """Wall time of the authors' HPS delta for the five Table-2 eps values (their own process)."""
    prog = f"""
import sys, time, numpy as np
sys.path.insert(0, {str(code_dir)!r})
import computeamplification_HP_fDP as H
rng = np.random.default_rng(0)
eps = rng.uniform(0.5, 2.0, {n}); dl = np.full({n}, 1e-10)
t = time.perf_counter()
out = [H.numericalanalysis_delta({n}, eps, dl, x, 10, 100, True, "gaussian", 0.1) for x in {EPS_T2!r}]
print(time.perf_counter() - t, out)
"""
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, cwd=code_dir, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    line = r.stdout.strip().splitlines()[-1]
    print(f"  authors' output: {line[:200]}")
    return float(line.split()[0])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--authors-code", default=os.environ.get("HPS_CODE_DIR", "/tmp/hps"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="Figure 4 with 2 seeds and 4 n only")
    a = ap.parse_args()

    print(f"load average at start: {os.getloadavg()}")
    e = P.draw_local_eps("uniform2", 10_000, 0)
    print("Table 2 (Uniform2, n=10,000, Gaussian, delta_l=1e-10), median of", a.repeats)
    t2_total = 0.0
    ours_hps = None
    for b in ("fv", "ccc", "hps"):
        ts = []
        for _ in range(a.repeats):
            t = time.perf_counter()
            vals = table2_row(b, e)
            ts.append(time.perf_counter() - t)
        med = float(np.median(ts))
        t2_total += med
        if b == "hps":
            ours_hps = med
        print(f"  {b:4s} {med:8.3f} s  deltas {[f'{v:.3g}' for v in vals]}")

    from shuffledp.config import load_validated

    # paper.yaml deep-merged over the default (it holds only what differs), as the workflow has it
    cfg = load_validated([ROOT / "config" / "config.yaml", ROOT / "config" / "paper.yaml"])["personalized"]
    ns, seeds = cfg["n_grid"], cfg["seeds"]
    if a.quick:
        ns, seeds = ns[::3], seeds[:2]
    jobs = [(b, s, m, n, seed, cfg["delta_central"])
            for m, bs in (("laplace", cfg["bounds_pure"]), ("gaussian", cfg["bounds_approx"]))
            for b in bs for s in cfg["settings"] for n in ns for seed in seeds]
    t = time.perf_counter()
    with ProcessPoolExecutor(a.workers) as ex:
        res = list(ex.map(fig4_point, jobs, chunksize=4))
    t_fig = time.perf_counter() - t
    nan = sum(1 for r in res if r != r)
    print(f"Figure 4: {len(jobs)} points ({len(ns)} n x {len(seeds)} seeds) in {t_fig:.1f} s with "
          f"{a.workers} workers ({nan} not computed)")
    print(f"Table 2 + Figure 4 total: {t2_total + t_fig:.1f} s (target < 300 s); load {os.getloadavg()}")

    code = Path(a.authors_code)
    if not (code / "computeamplification_HP_fDP.py").is_file():
        print(f"authors' code not found in {code}: side-by-side comparison skipped")
        return 0
    print("Authors' HPS Table-2 row (n=10,000, Gaussian), one run:")
    theirs = authors_row(code, 10_000)
    print(f"  authors {theirs:.2f} s vs ours {ours_hps:.3f} s: {theirs / ours_hps:.0f}x faster (target >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
