"""``shuffledp peruser ...`` (per-user histogram experiments) and ``shuffledp account peruser``."""

from __future__ import annotations

from shuffledp.commands import _args as A
from shuffledp.commands._spec import is_reps, read_spec, require, write_parquet
from shuffledp.errors import UsageError


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("peruser", help="per-user histograms in the shuffle model")
    sub = p.add_subparsers(dest="peruser_cmd", required=True, metavar="SUBCOMMAND")

    r = sub.add_parser("run", help="one job: (method, dataset, clustering, batch), every eps inside")
    r.add_argument("--spec", required=True, help="the job's spec (JSON object)")
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
    rep.add_argument("--spec", required=True, help="figure, eps, eps1_fractions, scale (JSON object)")
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


def _run(args) -> int:
    from shuffledp.experiments import peruser as E

    spec = read_spec(args.spec, {"dataset", "method", "clustering", "eps", "splits", "c", "delta", "kmeans_k",
                                 "reps", "seed", "user_sample"})
    if spec["method"] not in E.METHODS:
        raise UsageError(f"--spec: method {spec['method']!r} not one of {', '.join(E.METHODS)}")
    require(spec, "eps", _positive_list, "must be a non-empty list of positive numbers")
    require(spec, "reps", is_reps, "must be a list of distinct non-negative integers")
    require(spec, "dataset", lambda v: isinstance(v, dict) and "source" in v, "must be a dataset object with a source")
    if spec["dataset"].get("source") == "msnbc" and not args.msnbc:
        raise UsageError("--msnbc: required for an msnbc dataset")
    runs, users = E.run_job(spec, msnbc_path=args.msnbc)
    write_parquet(runs, args.out_runs)
    write_parquet(users, args.out_users)
    return 0


def _positive_list(value) -> bool:
    try:
        return isinstance(value, list) and len(value) > 0 and all(0 < float(v) < float("inf") for v in value)
    except (TypeError, ValueError):
        return False


def _collect(args) -> int:
    from shuffledp.experiments import peruser as E

    write_parquet(E.collect(args.inputs), args.out)
    return 0


def _report(args) -> int:
    import pandas as pd

    from shuffledp.experiments import peruser as E
    from shuffledp.plotting import peruser as F

    spec = read_spec(args.spec, {"figure", "eps", "eps1_fractions", "scale"})
    runs = pd.read_parquet(args.runs)
    users = pd.read_parquet(args.users)
    F.all_figures(runs, users, spec, args.figures)
    cl = E.claims(runs, users, spec["scale"])
    notes = sorted({n for n in runs.get("note", pd.Series(dtype=str)).dropna() if n})
    from shuffledp.io import write_parquet, write_text

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
