"""How tight ``shuffledp account best --rounds T`` is (issue 38, item 2).

    python benchmarks/composition_tightness.py [--part pair,real,worst,advanced] [--rounds 1,10,100,1000,10000]

Four comparisons, each printed as a Markdown table (ratios of our composed eps at delta = 1e-6):

* ``pair``: the dominating pair's PLD composed by dp_accounting against an independent T-fold
  composition of the same pair (numpy FFT, losses rounded down / up on a finer grid:
  :mod:`shuffledp.accountants.composition.exact`): ``ours / low`` (>= 1: sound) and ``ours / high``;
* ``real``: the composed answer (:func:`composition.composed_eps`, every candidate) against the
  T-fold composition of real shuffled k-RR pairs (victim's two values, the others split 0, half,
  all; lower end of the bracket, the largest over the splits): a lower bound on the truth, so
  ``ours / real`` bounds how loose we can be;
* ``worst``: before (without the ``curve`` candidate) and now, against the exact T-fold
  composition of the worst real pair found for k-RR (k = 2, 3, 10), OUE, OLH and subset-exp
  (:func:`shuffledp.accountants.composition.exact.worst_pair_composed_eps`);
* ``advanced``: the composed answer against the advanced composition theorem applied to the
  one-round eps of ``best_eps`` at delta/(2T) (``ours / advanced``, at most 1 by construction).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from shuffledp.accountants.composition import exact as exact_composition
from shuffledp.accountants.composition import rounds as composition
from shuffledp.accountants.upper import variation_ratio as vr

DELTA = 1e-6


def _h(P, Q, rounds: int, rel: float) -> float:
    L, W, _ = exact_composition.loss_law(P, Q)
    mean = float(np.dot(W, L))
    sd = float(np.sqrt(np.dot(W, (L - mean) ** 2)))
    return max(1e-6, rel * (rounds * mean + 5 * math.sqrt(rounds) * sd) / rounds)


def _rel(rounds: int) -> float:
    return 1e-3 if rounds <= 100 else 5e-3


def part_pair(rounds_list) -> None:
    print("\n| eps0 | n | T | exact low | exact high | ours (pld) | ours/low | ours/high | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for eps0, n in ((1.0, 10), (2.0, 40), (2.0, 200)):
        P, Q = vr.vr_pair_pmf(vr.vr_params("general", eps0), n)
        for t in rounds_list:
            start = time.perf_counter()
            low, high = exact_composition.pair_composed_eps_bracket(P, Q, t, DELTA, _h(P, Q, t, _rel(t)))
            pld, _ = composition.composed_pld("general", eps0, n, t, delta=DELTA)
            ours = float(pld.get_epsilon_for_delta(DELTA))
            print(f"| {eps0} | {n} | {t} | {low:.6g} | {high:.6g} | {ours:.6g} | {ours / low:.4f} | "
                  f"{ours / high:.4f} | {time.perf_counter() - start:.1f} |", flush=True)


def part_real(rounds_list) -> None:
    print("\n| k | eps0 | n | T | ours | by | worst real pair (low) | m | ours/real | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k, eps0, n in ((2, 1.0, 10), (3, 1.0, 10), (2, 2.0, 50), (10, 2.0, 50), (2, 1.0, 200)):
        pairs = {m: exact_composition.krr_pair_pmfs(k, eps0, n, m) for m in sorted({0, (n - 1) // 2, n - 1})}
        for t in rounds_list:
            start = time.perf_counter()
            ours = composition.composed_eps("krr", eps0, n, DELTA, t, k=k)
            low, arg = 0.0, None
            for m, (P, Q) in pairs.items():
                lo, _ = exact_composition.pair_composed_eps_bracket(P, Q, t, DELTA, _h(P, Q, t, _rel(t)))
                if lo > low:
                    low, arg = lo, m
            print(f"| {k} | {eps0} | {n} | {t} | {ours['eps']:.6g} | {ours['by']} | {low:.6g} | {arg} | "
                  f"{ours['eps'] / low:.4f} | {time.perf_counter() - start:.1f} |", flush=True)


WORST_GRID = (("krr", {"k": 2}, 1.0, 40), ("krr", {"k": 2}, 2.0, 16), ("krr", {"k": 3}, 1.0, 10),
              ("krr", {"k": 10}, 2.0, 16), ("subset-exp", {"d": 4, "s": 1}, 1.0, 12), ("oue", {"d": 3}, 1.0, 12),
              ("olh", {"g": 3}, 1.0, 12), ("krr", {"k": 2}, 1.0, 200))


def part_worst(rounds_list) -> None:
    """Ours (every candidate; and without the ``curve`` candidate, i.e. before it existed) against
    the exact T-fold composition of the worst real pair found
    (:func:`exact_composition.worst_pair_composed_eps`: others in one or two configurations)."""
    print("\n| randomizer | eps0 | n | T | exact worst pair | split | before | before/exact | ours | by | "
          "ours/exact | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mech, kw, eps0, n in WORST_GRID:
        vp, vq, configs = exact_composition.group_laws(mech, eps0, **kw)
        P, Q = exact_composition.group_pair_pmfs(vp, vq, [(configs["others_at_x'"], n - 1)])
        for t in rounds_list:
            start = time.perf_counter()
            low, split = exact_composition.worst_pair_composed_eps(mech, eps0, n, t, DELTA, _h(P, Q, t, _rel(t)), **kw)
            before = composition.composed_eps(mech, eps0, n, DELTA, t, candidates=("pld", "profile", "advanced"),
                                              **kw)["eps"]
            ours = composition.composed_eps(mech, eps0, n, DELTA, t, **kw)
            name = mech + "".join(f" {k}={v}" for k, v in kw.items())
            print(f"| {name} | {eps0} | {n} | {t} | {low:.6g} | {split} | {before:.6g} | {before / low:.4f} | "
                  f"{ours['eps']:.6g} | {ours['by']} | {ours['eps'] / low:.4f} | "
                  f"{time.perf_counter() - start:.1f} |", flush=True)


def part_advanced(rounds_list) -> None:
    print("\n| randomizer | n | T | ours | by | advanced | basic | ours/advanced | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mech, kw in (("krr", {"k": 10}), ("oue", {"d": 100}), ("general", {}), ("krr", {"k": 2})):
        for n in (10_000, 100_000):
            for t in rounds_list:
                if t == 1:
                    continue
                start = time.perf_counter()
                res = composition.composed_eps(mech, 2.0, n, DELTA, t, **kw)
                c = res["candidates"]
                name = mech + "".join(f" {k}={v}" for k, v in kw.items())
                print(f"| {name} | {n:g} | {t} | {res['eps']:.6g} | {res['by']} | {c['advanced']:.6g} | "
                      f"{c['basic']:.6g} | {res['eps'] / c['advanced']:.4f} | {time.perf_counter() - start:.1f} |",
                      flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", default="pair,real,advanced")
    ap.add_argument("--rounds", default="1,10,100,1000,10000")
    args = ap.parse_args(argv)
    rounds_list = [int(x) for x in args.rounds.split(",")]
    for part in args.part.split(","):
        {"pair": part_pair, "real": part_real, "worst": part_worst, "advanced": part_advanced}[part](rounds_list)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
