"""``shuffledp multidim ...`` (experiment jobs and report) and ``shuffledp account mhm|tcm|flame``."""

from __future__ import annotations

import argparse
import json
import math

from shuffledp.cli import UsageError
from shuffledp.commands import _args as A
from shuffledp.commands._grid import int_like, parse_list, run_grid


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("multidim", help="multidimensional categorical data: MHM, FLAME, TCM, OGM/NOGM")
    sub = p.add_subparsers(dest="multidim_cmd", required=True, metavar="STEP")

    u = sub.add_parser("uniform", help="one job: a mechanism at one eps for a batch of repetitions")
    _common(u)
    u.add_argument("--mechanism", required=True, choices=["mhm", "flame", "tcm"])
    u.add_argument("--eps", required=True, type=A.positive_float)
    u.add_argument("--timings", required=True, help="Parquet of wall-clock timings (not reproducible)")
    u.add_argument("--np-fraction", type=A.unit_interval, default=1 / 3, help="FLAME's N_p / n")
    u.add_argument("--flame-variant", default="balle", choices=["balle", "seed33"])
    u.add_argument("--topk", type=A.positive_int, default=50)
    u.set_defaults(func=_uniform)

    q = sub.add_parser("personal", help="one job: OGM or NOGM at one budget ratio for a batch of repetitions")
    _common(q)
    q.add_argument("--method", required=True, choices=["ogm", "nogm"])
    q.add_argument("--ratio", required=True, help="conservative:moderate:liberal, e.g. 2:4:4")
    q.add_argument("--classes", default=None, help="JSON list of three {name, eps, delta_n} (delta = delta_n / n)")
    q.set_defaults(func=_personal)

    r = sub.add_parser("report", help="figures 3, 4, 5, 10, table 3 and the claims table from job tables")
    r.add_argument("--uniform", nargs="+", required=True, type=A.parquet_file)
    r.add_argument("--timings", nargs="*", default=[], type=A.parquet_file)
    r.add_argument("--personal", nargs="*", default=[], type=A.parquet_file)
    r.add_argument("--data", nargs="+", required=True, help="dataset=path of each input table (provenance)")
    r.add_argument("--scale", required=True)
    r.add_argument("--tables-dir", required=True)
    r.add_argument("--figures-dir", required=True)
    r.add_argument("--topk", type=A.positive_int, default=50)
    r.set_defaults(func=_report)

    a = account_subparsers.add_parser("mhm", help="MHM's local budget eps_l and g for (eps_s, delta_s, n, d)")
    a.add_argument("--eps", required=True)
    a.add_argument("--delta", required=True)
    a.add_argument("--n", required=True)
    a.add_argument("--d", required=True)
    a.add_argument("--bound", default="bennett", choices=["hoeffding", "bennett"])
    a.set_defaults(func=_account_mhm)
    t = account_subparsers.add_parser("tcm", help="TCM's local budget (closed form) for (eps_s, delta_s, n, m)")
    t.add_argument("--eps", required=True)
    t.add_argument("--delta", required=True)
    t.add_argument("--n", required=True)
    t.add_argument("--m", required=True, help="items per user (= number of attributes)")
    t.set_defaults(func=_account_tcm)


def _common(p) -> None:
    p.add_argument("--data", required=True, help="processed table (one int column per attribute)")
    p.add_argument("--dataset", required=True)
    p.add_argument("--reps", required=True, help="comma list of repetition indices")
    p.add_argument("--records", type=A.positive_int, default=None, help="seeded sample of this many records")
    p.add_argument("--seed", type=A.nonneg_int, required=True)
    p.add_argument("--bound", default="bennett", choices=["hoeffding", "bennett"])
    p.add_argument("--family-bits", type=A.positive_int, default=32, help="hash family size 2**bits")
    p.add_argument("--out", required=True)


def _load(args):
    from shuffledp.experiments.multidim import load_dataset

    if not 1 <= args.family_bits <= 62:
        raise UsageError("--family-bits: must lie in 1..62")
    try:  # checked here, after the job's own flags (--ratio, --eps), not by argparse
        A.parquet_file(args.data)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--data: {exc}") from None
    reps = parse_list(args.reps, "reps", int_like)
    data, domains, _, _ = load_dataset(args.data, args.records, args.seed, args.dataset)
    return data, domains, reps


def _uniform(args) -> int:
    from shuffledp.experiments.multidim import run_uniform, write_parquet

    if not args.eps > 0:
        raise UsageError("--eps: must be positive")
    data, domains, reps = _load(args)
    df, tim = run_uniform(data, domains, args.mechanism, args.eps, reps, seed=args.seed, dataset=args.dataset,
                          bound=args.bound, family_bits=args.family_bits, np_fraction=args.np_fraction,
                          flame_variant=args.flame_variant, topk=args.topk)
    write_parquet(df, args.out)
    write_parquet(tim, args.timings)
    return 0


def _personal(args) -> int:
    from shuffledp.config import ConfigError
    from shuffledp.experiments.multidim import parse_ratio, run_personal, write_parquet

    try:
        parse_ratio(args.ratio, "--ratio")
    except ConfigError as exc:
        raise UsageError(f"--ratio: {exc}") from None
    try:
        classes = json.loads(args.classes) if args.classes else None
    except json.JSONDecodeError as exc:
        raise UsageError(f"--classes: not valid JSON ({exc.msg})") from None
    if classes is not None and (not isinstance(classes, list) or len(classes) != 3
                                or not all(isinstance(c, dict) and {"name", "eps", "delta_n"} <= set(c)
                                           for c in classes)):
        raise UsageError("--classes: must be a JSON list of three {name, eps, delta_n} objects")
    data, domains, reps = _load(args)
    df = run_personal(data, domains, args.method, args.ratio, reps, seed=args.seed, dataset=args.dataset,
                      classes=classes, bound=args.bound, family_bits=args.family_bits)
    write_parquet(df, args.out)
    return 0


def _report(args) -> int:
    from shuffledp.experiments.multidim_report import report

    data = {}
    for item in args.data:
        if "=" not in item:
            raise UsageError(f"--data: expected dataset=path, got {item!r}")
        k, v = item.split("=", 1)
        try:
            data[k] = A.parquet_file(v)
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"--data: {exc}") from None
    report(args.uniform, args.timings, args.personal, data, scale=args.scale, tables_dir=args.tables_dir,
           figures_dir=args.figures_dir, topk=args.topk)
    return 0


def _account_mhm(args) -> int:
    from shuffledp.protocols.mhm import approx_variance, mhm_eps_local

    def fn(eps, delta, n, d):
        try:
            st = mhm_eps_local(eps, delta, n, d, bound=args.bound)
        except ValueError as exc:
            raise UsageError(f"--eps/--delta/--n/--d: {exc}") from None
        return {"eps_l": st.eps_l, "g": st.g, "amplified": st.amplified,
                "variance_times_n": approx_variance(st.eps_l, d, st.g, 1)}

    grid = {"eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
            "n": parse_list(args.n, "n", int_like), "d": parse_list(args.d, "d", int_like)}
    _check_grid(grid)
    return run_grid(grid, fn)


def _account_tcm(args) -> int:
    from shuffledp.protocols.tcm import tcm_eps_local

    def fn(eps, delta, n, m):
        try:
            st = tcm_eps_local(eps, delta, n, m)
        except (ValueError, ArithmeticError) as exc:
            raise UsageError(f"--eps/--delta/--n/--m: {exc}") from None
        return {"eps_l": st.eps_l, "g": st.g, "amplified": st.amplified, "valid_range": st.valid_range}

    grid = {"eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
            "n": parse_list(args.n, "n", int_like), "m": parse_list(args.m, "m", int_like)}
    _check_grid(grid)
    return run_grid(grid, fn)


def _check_grid(grid) -> None:
    """Domain checks shared by ``account mhm`` and ``account tcm``: name the flag before any work."""
    if any(not (math.isfinite(e) and e > 0) for e in grid["eps"]):
        raise UsageError("--eps: must be finite and > 0")
    if any(not 0 < d < 1 for d in grid["delta"]):
        raise UsageError("--delta: must lie in the open interval (0, 1)")
    if any(n < 2 for n in grid["n"]):
        raise UsageError("--n: must be an integer >= 2")
    for key, low in (("m", 1), ("d", 2)):
        if key in grid and any(v < low for v in grid[key]):
            raise UsageError(f"--{key}: must be an integer >= {low}")
