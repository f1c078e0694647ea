"""MHM's accountant against its optimum at small n (issue 25, item 1).

    python benchmarks/accountants_mhm_gap.py [--d 2,3] [--n 12] [--eps0 0.5,1,2,4,8] [--delta 1e-3]

The optimum is the exact divergence of the blanket-decomposed pair with the true grouped pairs
(collision levels kept, every victim pair m = 1..d), every count vector of the blanket draws
enumerated (``tests/_oracle_decomposition.atoms_expectation``), its eps found by bisection to 1e-7;
the accountant's eps is ``decomposition_eps`` on ``mhm_pairs`` (rtol 1e-7). Prints a Markdown table.
The enumeration grows as C(n + G - 1, G - 1) with up to (d + 1)^2 groups G: small n only.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import _oracle_decomposition as O  # noqa: E402

from shuffledp.accountants import decomposition as dec  # noqa: E402
from shuffledp.accountants import mhm_randomizer as M  # noqa: E402
from shuffledp.accountants.blanket import mhm_domain  # noqa: E402


def optimum_delta(d: int, g: int, eps0: float, n: int, eps: float) -> float:
    """Largest exact decomposed divergence over the victim pairs (each is its own mirror image)."""
    best = 0.0
    for m in range(1, d + 1):
        pr = M.mhm_pair(d, g, eps0, m)
        keep = [i for i, w in enumerate(pr.w) if w > 0]
        w = np.array([pr.w[i] for i in keep])
        z = (np.array([pr.p[i] for i in keep]) - math.exp(eps) * np.array([pr.q[i] for i in keep])) / w
        best = max(best, O.atoms_expectation(w, z, pr.gamma, n))
    return best


def optimum_eps(d: int, g: int, eps0: float, n: int, delta: float) -> float:
    lo, hi = 0.0, eps0
    while hi - lo > 1e-7 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if optimum_delta(d, g, eps0, n, mid) <= delta else (mid, hi)
    return hi


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="2,3")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--eps0", default="0.5,1,2,4,8")
    ap.add_argument("--delta", type=float, default=1e-3)
    args = ap.parse_args(argv)
    print("| d | g | n | eps0 | accountant eps | optimum eps | ratio | seconds |\n|---|---|---|---|---|---|---|---|")
    for d in map(int, args.d.split(",")):
        for eps0 in map(float, args.eps0.split(",")):
            g = mhm_domain(eps0, d)
            t0 = time.perf_counter()
            opt = optimum_eps(d, g, eps0, args.n, args.delta)
            acc = dec.decomposition_eps(None, args.n, args.delta, pairs=M.mhm_pairs(d, g, eps0), rtol=1e-7)
            print(f"| {d} | {g} | {args.n} | {eps0:g} | {acc:.6g} | {opt:.6g} | {acc / opt:.4f} | "
                  f"{time.perf_counter() - t0:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
