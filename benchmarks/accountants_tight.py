"""Issue 25, items 1-2: the decomposition against the optimal decomposition value, and the lower
bound against the published lower-bound class, per randomizer.

    python benchmarks/accountants_tight.py [--ns 1e3,1e4,1e5] [--eps0s 0.5,1,2,4,8] [--mechs olh2,olh,oue]
        [--out results.jsonl] [--oracle-cells 3e8] [--third-cells 2e8] [--oracle-rel 1e-3]
        [--oracle-blocks 40]

``--mechs`` also takes ``subexp`` (d = 17, s = 4; upper side only), ``subexp:D:S`` and ``oue:D``.

Per point (delta = 1e-6):
* ``before``: the decomposition as it was (the four groups through the three-atom spread,
  ``decomposition.spread_to_three``; OUE's optimal blanket); ``after``: ``best``'s decomposition
  now (independent flags evaluated exactly, :mod:`shuffledp.accountants.upper.flags`; subset-exp's
  dependent ones by :mod:`shuffledp.accountants.upper.dependent_flags`).
* ``opt_lo``: the lower end of the optimal decomposition's eps from tests/_oracle_flags.py (an
  independent tabulation of the joint law of the two flag counts, M in blocks evaluated at both
  ends; for OUE the optimal blanket, whose flags are dependent). Ratios are to ``opt_lo``, so they
  are upper estimates of the true ratio. Skipped (``None``) when its work estimate exceeds
  ``--oracle-cells``.
* ``lower_before``: the two-flag real-pair bound (``pair-group-counts``); ``published``: the
  class Su, Cheng and Wang use for their lower bound (victim at x or x', others at a third input,
  three flags seen), computed exactly by :mod:`shuffledp.accountants.lower.third_flag` (skipped beyond
  ``--third-cells``); ``lower_after``: ``best``'s lower bound now (the larger of the two where the
  third-input bound is within ``best``'s cost budget).

Each point is printed as a JSON line as soon as it is done, then a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

DELTA = 1e-6


def _setup(mech: str, eps0: float):
    from shuffledp.accountants.randomizers import standard as rz
    from shuffledp.accountants.upper import decomposition as dec

    e = math.exp(eps0)
    if mech.startswith("oue"):
        d = int(mech.split(":")[1]) if ":" in mech else 17
        full = rz.oue_optimal_pairs(d, eps0)[0]
        kw = {"d": d}
        plain = full
        ug = [full.p[i] / (full.gamma * full.w[i]) for i in range(4)]  # (e, 1, e, 1)
        vg = [full.q[i] / (full.gamma * full.w[i]) for i in range(4)]
        flags = (full.w, (ug[1], ug[0]), (vg[0], vg[1]), full.gamma)
        mech_name = "oue"
    elif mech.startswith("subexp"):
        # PrivSet's subset exponential mechanism, d = 17, s = 4 ("subexp:D:S" for others), its
        # best subset size; the oracle takes the disjoint victim pair (overlap 0) only, so opt_lo
        # is a lower end of the optimum
        from shuffledp.accountants import best

        d, s = (int(x) for x in mech.split(":")[1:]) if ":" in mech else (17, 4)
        kw = best.mechanism_params("subset-exp", eps0, d=d, s=s)
        pairs = rz.subset_exp_pairs(kw["d"], kw["s"], kw["k"], eps0)
        plain = [dec.GroupedPair(g.w, g.p, g.q, g.gamma) for g in pairs]  # before: every pair spread
        g0 = pairs[0]
        ug = [g0.p[i] / (g0.gamma * g0.w[i]) for i in range(2)]
        vg = [g0.q[i] / (g0.gamma * g0.w[i]) for i in range(2)]
        # k = 1: no output meets both sets (three groups, summed exactly); the oracle gets w11 = 0
        w = g0.w if len(g0.w) == 4 else (g0.w[0], g0.w[1], 0.0, g0.w[2])
        flags = (w, (ug[1], ug[0]), (vg[0], vg[1]), g0.gamma)
        mech_name = "subset-exp"
    else:
        g = 2 if mech == "olh2" else rz.olh_default_g(eps0)
        kw = {"g": g}
        fp = rz.olh_pairs(g, eps0)[0]
        plain = dec.GroupedPair(fp.w, fp.p, fp.q, fp.gamma)
        flags = (fp.w, fp.u, fp.v, fp.gamma)
        mech_name = "olh"
    assert abs(flags[1][1] / flags[1][0] - e) < 1e-9 * e
    return mech_name, kw, plain, flags


def _oracle_cells(n: int, flags) -> float:
    w, _, _, gamma = flags
    N = max(n * gamma, 1.0)
    al = w[0] + w[2]
    sa = 2 * 8 * math.sqrt(N * al * (1 - al)) + 10
    independent = abs(w[2] * w[3] - w[0] * w[1]) < 1e-15
    per_m = sa * sa if independent else sa ** 3  # a convolution per A value
    return per_m * 80 * 10


def point(mech: str, n: int, eps0: float, oracle_cells: float, third_cells: float, oracle_rel: float = 1e-3,
          oracle_blocks: int = 40) -> dict:
    import _oracle_flags as OF

    from shuffledp.accountants import best
    from shuffledp.accountants.lower import third_flag as tf
    from shuffledp.accountants.upper import decomposition as dec

    mech_name, kw, plain, flags = _setup(mech, eps0)
    row: dict = {"mech": mech, **kw, "n": n, "eps0": eps0}
    t = time.perf_counter()
    row["before"] = dec.decomposition_eps(None, n, DELTA, pairs=plain if isinstance(plain, list) else [plain])
    row["s_before"] = time.perf_counter() - t
    t = time.perf_counter()
    res = best.best_eps(mech_name, eps0, n, DELTA, parallel=False, **kw)
    row["s_best"] = time.perf_counter() - t
    b = res["bounds"]
    row["after"] = b["decomposition"]["eps"]
    row["lower_before"] = b["pair-group-counts"]["eps"]
    row["lower_after"] = res["eps_lower"]
    row["third_in_best"] = "pair-third-input" in b
    row["opt_lo"] = None
    if row["after"] < eps0 and _oracle_cells(n, flags) <= oracle_cells:
        t = time.perf_counter()
        w, u, v, gamma = flags
        lo, _ = OF.eps_bracket(w, u, v, gamma, n, DELTA, row["after"], rel=oracle_rel, blocks=oracle_blocks,
                               ends="lower")
        row["opt_lo"] = lo
        row["s_oracle"] = time.perf_counter() - t
    row["published"] = None
    if mech_name == "subset-exp":
        return row  # no published lower-bound class measured for it here
    r3, s3 = tf.third_flag_rates(mech_name, eps0, g=kw.get("g"))
    if tf.third_flag_cells(n, r3, s3) <= third_cells:
        t = time.perf_counter()
        row["published"] = tf.third_flag_lower_eps(n, r3, s3, DELTA, eps0, rtol=1e-4, guess=row["lower_after"])
        row["s_published"] = time.perf_counter() - t
    return row


def _fmt(x, nd=4):
    return "n/a" if x is None else f"{x:.{nd}f}"


def table(rows: list[dict]) -> str:
    out = ["| randomizer | n | eps0 | before | after | optimal (>=) | before/opt | after/opt | lower before "
           "| published class | lower after | lower after / published |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        opt, pub = r.get("opt_lo"), r.get("published")
        name = r["mech"] + (f" g={r['g']}" if "g" in r else f" d={r['d']}")
        name += f" s={r['s']} k={r['k']}" if "s" in r else ""
        ratio_before = None if opt is None else r["before"] / opt
        ratio_after = None if opt is None else r["after"] / opt
        out.append(f"| {name} | {r['n']:.0e} | {r['eps0']} | {_fmt(r['before'])} | {_fmt(r['after'])} | {_fmt(opt)} | "
                   f"{_fmt(ratio_before)} | {_fmt(ratio_after)} | "
                   f"{_fmt(r['lower_before'])} | {_fmt(pub)} | {_fmt(r['lower_after'])} | "
                   f"{_fmt(None if not pub else r['lower_after'] / pub)} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e3,1e4,1e5")
    ap.add_argument("--eps0s", default="0.5,1,2,4,8")
    ap.add_argument("--mechs", default="olh2,olh,oue")
    ap.add_argument("--out", default=None, help="append every point as a JSON line to this file")
    ap.add_argument("--oracle-cells", type=float, default=3e8)
    ap.add_argument("--third-cells", type=float, default=2e8)
    ap.add_argument("--oracle-rel", type=float, default=1e-3, help="the oracle's bracket width (relative)")
    ap.add_argument("--oracle-blocks", type=int, default=40, help="the oracle's blocks of M (its lower end "
                    "charges each block its largest M: more blocks, a higher lower end)")
    args = ap.parse_args(argv)
    rows = []
    for n in (int(float(x)) for x in args.ns.split(",")):
        for mech in args.mechs.split(","):
            for eps0 in (float(x) for x in args.eps0s.split(",")):
                row = point(mech, n, eps0, args.oracle_cells, args.third_cells, args.oracle_rel,
                            args.oracle_blocks)
                rows.append(row)
                line = json.dumps(row)
                print(line, flush=True)
                if args.out:
                    with open(args.out, "a") as fh:
                        fh.write(line + "\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
