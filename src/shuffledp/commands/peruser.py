"""``shuffledp peruser ...`` (per-user histogram experiments) and ``shuffledp account peruser``."""

from __future__ import annotations

import json

from shuffledp.cli import UsageError
from shuffledp.commands import _args as A


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("peruser", help="per-user histograms in the shuffle model (issue 7)")
    sub = p.add_subparsers(dest="peruser_cmd", required=True, metavar="SUBCOMMAND")

    r = sub.add_parser("run", help="one job: (method, dataset, eps, split, clustering, batch)")
    r.add_argument("--section", required=True, help="the config's peruser section as JSON")
    r.add_argument("--seed", type=A.nonneg_int, required=True)
    r.add_argument("--scale", default="default", help="the config's name")
    r.add_argument("--method", required=True)
    r.add_argument("--dataset", required=True)
    r.add_argument("--eps", required=True)
    r.add_argument("--split", required=True, help="eps1/eps, thm4 or none")
    r.add_argument("--clustering", required=True, help="kmeans, dbscan or none")
    r.add_argument("--batch", type=A.nonneg_int, required=True)
    r.add_argument("--msnbc", default=None, type=A.parquet_file, help="msnbc_sequences.parquet (msnbc datasets)")
    r.add_argument("--out-runs", required=True)
    r.add_argument("--out-users", required=True)
    r.set_defaults(func=_run)

    c = sub.add_parser("collect", help="concatenate job tables")
    c.add_argument("--out", required=True)
    c.add_argument("inputs", nargs="+", type=A.parquet_file)
    c.set_defaults(func=_collect)

    rep = sub.add_parser("report", help="figures 1-4 and the claims table")
    rep.add_argument("--runs", required=True, type=A.parquet_file)
    rep.add_argument("--users", required=True, type=A.parquet_file)
    rep.add_argument("--section", required=True)
    rep.add_argument("--scale", default="default")
    rep.add_argument("--figures", required=True, help="output prefix, e.g. results/figures/peruser_fig")
    rep.add_argument("--claims", required=True, help="output prefix, e.g. results/tables/peruser_claims")
    rep.set_defaults(func=_report)

    a = account_subparsers.add_parser(
        "peruser", help="Theorem 2's eps' for a user whose subset Q has the given size and diameter")
    a.add_argument("--eps", required=True, help="total local budget (comma list)")
    a.add_argument("--eps1", required=True, help="budget of the clustering copy W (comma list)")
    a.add_argument("--c", required=True, help="neighbourhood fraction c (comma list)")
    a.add_argument("--group-size", required=True, help="|Q| (comma list)")
    a.add_argument("--radius", required=True, help="r(Q), L1 diameter of normalised histograms")
    a.add_argument("--delta", required=True)
    a.add_argument("--bound", default="numeric", help="closed|numeric (comma list)")
    a.set_defaults(func=_account)


def _section(text: str) -> dict:
    try:
        sec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--section: not JSON ({exc.msg})") from None
    if not isinstance(sec, dict):
        raise UsageError("--section: must be a JSON object")
    return sec


def _run(args) -> int:
    from shuffledp.experiments import peruser as E

    sec = _section(args.section)
    if args.method not in E.METHODS:
        raise UsageError(f"--method: {args.method!r} not one of {', '.join(E.METHODS)}")
    try:
        float(args.eps)
    except ValueError:
        raise UsageError(f"--eps: cannot read {args.eps!r} as a number") from None
    runs, users = E.run_job(sec, args.seed, method=args.method, dataset=args.dataset, eps=args.eps,
                            split=args.split, clustering=args.clustering, batch=args.batch,
                            scale=args.scale, msnbc_path=args.msnbc)
    from shuffledp.io import write_parquet

    for path, df in ((args.out_runs, runs), (args.out_users, users)):
        write_parquet(df, path)
    return 0


def _collect(args) -> int:
    from shuffledp.experiments import peruser as E
    from shuffledp.io import write_parquet

    df = E.collect(args.inputs)
    write_parquet(df, args.out)
    return 0


def _report(args) -> int:
    import pandas as pd

    from shuffledp.experiments import peruser as E
    from shuffledp.io import write_parquet, write_text
    from shuffledp.plotting import peruser as F

    sec = _section(args.section)
    runs = pd.read_parquet(args.runs)
    users = pd.read_parquet(args.users)
    F.all_figures(runs, users, sec, args.figures)
    cl = E.claims(runs, users, args.scale)
    notes = sorted({n for n in runs.get("note", pd.Series(dtype=str)).dropna() if n})
    write_parquet(cl, args.claims + ".parquet")
    write_text(args.claims + ".md", E.claims_markdown(cl, "; ".join(notes)))
    return 0


def _account(args) -> int:
    from shuffledp.accountants import peruser as acct
    from shuffledp.commands._grid import int_like, parse_list, run_grid

    grid = {
        "eps": parse_list(args.eps, "eps"),
        "eps1": parse_list(args.eps1, "eps1"),
        "c": parse_list(args.c, "c"),
        "group_size": parse_list(args.group_size, "group-size", int_like),
        "radius": parse_list(args.radius, "radius"),
        "delta": parse_list(args.delta, "delta"),
        "bound": parse_list(args.bound, "bound", str),
    }
    for b in grid["bound"]:
        if b not in ("closed", "numeric"):
            raise UsageError(f"--bound: {b!r} (closed|numeric)")
    for e, e1 in ((e, e1) for e in grid["eps"] for e1 in grid["eps1"]):
        if not 0 <= e1 < e:
            raise UsageError(f"--eps1: {e1} must lie in [0, eps={e})")
    for name, key in (("c", "c"), ("delta", "delta")):
        if any(not 0 < v < 1 + (key == "c") for v in grid[key]):
            raise UsageError(f"--{name}: must lie in (0, 1)")
    if any(r < 0 or r > 2 for r in grid["radius"]):
        raise UsageError("--radius: an L1 distance of normalised histograms lies in [0, 2]")
    if any(m < 1 for m in grid["group_size"]):
        raise UsageError("--group-size: must be >= 1")
    amps = {b: acct.clones_amplifier(b) for b in ("closed", "numeric")}

    def one(eps, eps1, c, group_size, radius, delta, bound):
        eps2 = eps - eps1
        e0 = acct.local_eps(eps2, radius, c)
        sh = amps[bound](e0, group_size, delta) if group_size >= 2 else float("inf")
        return {"eps0_local": e0, "eps_shuffle": min(eps2, sh), "eps_prime": eps1 + min(eps2, sh)}

    return run_grid(grid, one)
