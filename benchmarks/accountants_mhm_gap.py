"""MHM's accountant against its optimum at small n (issue 25, item 1).

    python benchmarks/accountants_mhm_gap.py [--d 2,5,8] [--n 12] [--eps0 0.5,1,2,4,8] [--delta 1e-3]

The optimum is the exact divergence of the blanket-decomposed pair with the true ratio levels
(collisions kept), its eps found by bisection to 1e-7. The all-attributes-differ pair (m = d) is
evaluated by the independent oracle ``tests/_oracle_mhm.all_differ_delta`` (every count vector of
the d + 1 ratio levels of each side enumerated); for d <= --full-d the pairs m < d too, by
``tests/_oracle_decomposition.atoms_expectation`` (every count vector of their groups: slow), and
the optimum is the largest. For d > --full-d the m < d pairs are left out: the column is then a
lower bound on the optimum and the ratio an upper bound on the true one (marked "m=d").
"accountant" is ``decomposition_eps`` on ``mhm_pairs`` (rtol 1e-7); "flags" the same with the
lattice switched off (each miss level spread to {1, e^eps0}: the method before the lattice).
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from _mhm_optimum import optimum_delta  # noqa: E402

from shuffledp.accountants import decomposition as dec  # noqa: E402
from shuffledp.accountants import mhm_randomizer as M  # noqa: E402
from shuffledp.accountants.blanket import mhm_domain  # noqa: E402


def optimum_eps(d: int, g: int, eps0: float, n: int, delta: float, full: bool) -> float:
    lo, hi = 0.0, eps0
    while hi - lo > 1e-7 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if optimum_delta(d, g, eps0, n, mid, full) <= delta else (mid, hi)
    return hi


def flags_only(d: int, g: int, eps0: float) -> list:
    """``mhm_pairs`` with the lattice switched off (the flag pair evaluates the m = d pair)."""
    pair = M.mhm_pairs(d, g, eps0)[0]
    object.__setattr__(pair, "lattice", None)
    return [pair]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", default="2,5,8")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--eps0", default="0.5,1,2,4,8")
    ap.add_argument("--delta", type=float, default=1e-3)
    ap.add_argument("--full-d", type=int, default=2, help="largest d whose m < d pairs are enumerated too")
    args = ap.parse_args(argv)
    print("| d | g | n | eps0 | optimum eps | pairs | accountant eps | ratio | flags eps | flags ratio | seconds |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")
    for d in map(int, args.d.split(",")):
        for eps0 in map(float, args.eps0.split(",")):
            g = mhm_domain(eps0, d)
            t0 = time.perf_counter()
            full = d <= args.full_d
            opt = optimum_eps(d, g, eps0, args.n, args.delta, full)
            acc = dec.decomposition_eps(None, args.n, args.delta, pairs=M.mhm_pairs(d, g, eps0), rtol=1e-7)
            old = dec.decomposition_eps(None, args.n, args.delta, pairs=flags_only(d, g, eps0), rtol=1e-7)
            print(f"| {d} | {g} | {args.n} | {eps0:g} | {opt:.6g} | {'all' if full else 'm=d'} | {acc:.6g} | "
                  f"{acc / opt:.4f} | {old:.6g} | {old / opt:.4f} | {time.perf_counter() - t0:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
