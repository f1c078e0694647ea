"""``shuffledp accountants-compare run | report``: the cross-paper accountant table (issue 17).

Each step reads its job's ``--spec`` (canonical JSON written by the workflow from
``shuffledp.experiments.accountants_compare.jobs``) and writes Parquet (and the report's figure).
"""

from __future__ import annotations

from shuffledp.commands import _args as A
from shuffledp.commands._spec import read_spec, write_parquet
from shuffledp.errors import UsageError

SPEC_KEYS = {"mechanism", "k", "label", "eps0", "n_grid", "deltas", "bounds", "personalized_max_n",
             "exact_max_n", "rtol"}


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("accountants-compare", help="every shuffle accountant on one grid (issue 17)")
    sub = p.add_subparsers(dest="compare_cmd", required=True, metavar="STEP")
    r = sub.add_parser("run", help="one job: every bound at every (n, delta) for one (mechanism, eps0)")
    r.add_argument("--spec", required=True, help="the job's JSON spec (shuffledp.experiments."
                   "accountants_compare.jobs)")
    r.add_argument("--out", required=True, help="output Parquet (every bound's eps; reproducible)")
    r.add_argument("--timings", help="output Parquet of the bounds' run times (wall clock, not reproducible)")
    r.set_defaults(func=_run)
    rep = sub.add_parser("report", help="table (Parquet, Markdown) and figure (PDF, PNG)")
    rep.add_argument("--spec", required=True, help="the report job's JSON spec ({\"scale\": ...})")
    rep.add_argument("--inputs", nargs="+", required=True, type=A.parquet_file, help="the run jobs' tables")
    rep.add_argument("--timings", nargs="*", default=[], type=A.parquet_file, help="the run jobs' run times")
    rep.add_argument("--timings-md", help="output Markdown table of the run times (with --timings)")
    rep.add_argument("--table", required=True, help="output Parquet table")
    rep.add_argument("--md", required=True, help="output Markdown table")
    rep.add_argument("--pdf", required=True)
    rep.add_argument("--png", required=True)
    rep.set_defaults(func=_report)
    g = sub.add_parser("gain", help="what the tighter accountant buys: local eps and MSE, formula and measured")
    g.add_argument("--spec", required=True, help="the gain job's JSON spec")
    g.add_argument("--table", required=True, help="output Parquet table (formula)")
    g.add_argument("--measured", required=True, help="output Parquet table (protocol runs)")
    g.add_argument("--md", required=True, help="output Markdown (both tables)")
    g.add_argument("--pdf", required=True, help="output figure (PDF)")
    g.add_argument("--png", required=True, help="output figure (PNG)")
    g.set_defaults(func=_gain)


def _spec(text: str) -> dict:
    spec = read_spec(text, SPEC_KEYS)
    extra = sorted(set(spec) - SPEC_KEYS)
    if extra:
        raise UsageError(f"--spec: unknown keys {', '.join(extra)}")
    if spec["mechanism"] not in ("krr", "general"):
        raise UsageError(f"--spec: mechanism {spec['mechanism']!r} is not krr or general")
    if spec["mechanism"] == "krr" and not (isinstance(spec["k"], int) and spec["k"] >= 2):
        raise UsageError(f"--spec: k must be an integer >= 2 for krr, got {spec['k']!r}")
    return spec


def _run(args) -> int:
    from shuffledp.experiments import accountants_compare as E

    spec = _spec(args.spec)
    unknown = sorted(set(spec["bounds"]) - set(E.BOUNDS))
    if unknown:
        raise UsageError(f"--spec: unknown bounds {', '.join(unknown)}")
    try:
        df = E.run_job(spec)
    except ValueError as exc:
        raise UsageError(f"--spec: {exc}") from None
    rows, sec = E.split_timings(df)
    write_parquet(rows, args.out)
    if args.timings:
        write_parquet(sec, args.timings)
    print(f"wrote {len(df)} rows to {args.out}")
    return 0


def _report(args) -> int:
    from shuffledp.experiments import accountants_compare as E

    spec = read_spec(args.spec, {"scale"})
    if args.timings and not args.timings_md:
        raise UsageError("--timings-md: required with --timings")
    out = {k: getattr(args, k) for k in ("table", "md", "pdf", "png", "timings_md")}
    E.report(spec, args.inputs, args.timings, out)
    print(f"wrote {', '.join(out.values())}")
    return 0


_GAIN = {"randomizers", "mhm_domain", "eps_s", "n_grid", "delta_n", "rtol", "seed", "measure", "scale"}  # + subexp


def _gain(args) -> int:
    from shuffledp.commands._spec import is_positive_int, require
    from shuffledp.experiments import accountants_gain as G

    spec = read_spec(args.spec, _GAIN)
    require(spec, "randomizers", lambda v: isinstance(v, list) and v and all(isinstance(x, str) for x in v),
            "must be a non-empty list of names")
    for r in spec["randomizers"]:
        try:
            G.check_randomizer(r)
        except ValueError as exc:
            raise UsageError(f"--spec: {exc}") from None
    require(spec, "mhm_domain", lambda v: is_positive_int(v) and v >= 2, "must be an integer >= 2")
    require(spec, "n_grid", lambda v: isinstance(v, list) and v and all(is_positive_int(x) and x >= 2 for x in v),
            "must be a non-empty list of integers >= 2")
    require(spec, "eps_s", lambda v: isinstance(v, list) and v and all(0 < float(x) <= 50 for x in v),
            "must be a non-empty list of numbers in (0, 50]")
    require(spec, "measure", lambda v: isinstance(v, dict) and {"n", "eps_s", "reps", "tolerance"} <= set(v)
            and is_positive_int(v["n"]) and v["n"] >= 2 and is_positive_int(v["reps"]) and v["reps"] >= 2
            and 0 < float(v["eps_s"]) <= 50 and 0 < float(v["tolerance"]) < 1,
            "must hold n >= 2, eps_s in (0, 50], reps >= 2 and tolerance in (0, 1)")
    if "subexp" in spec:  # optional: the segmented experiment's Subexp-shuffle settings
        require(spec, "subexp", lambda v: isinstance(v, list) and all(
            isinstance(c, dict) and {"d", "s", "n", "eps_s", "delta_s"} <= set(c)
            and is_positive_int(c["d"]) and is_positive_int(c["s"]) and c["s"] < c["d"]
            and is_positive_int(c["n"]) and c["n"] >= 2 and 0 < float(c["eps_s"]) <= 50
            and 0 < float(c["delta_s"]) < 1 for c in v),
            "must be a list of settings with integers d >= 2, 1 <= s < d, n >= 2, eps_s in (0, 50] and "
            "delta_s in (0, 1)")
    for n in spec["n_grid"] + [spec["measure"]["n"]]:
        require(spec, "delta_n", lambda v, n=n: 0 < float(v) / n < 1, f"/ n must lie in (0, 1) (n = {n})")
    out = {"table": args.table, "measured": args.measured, "md": args.md, "pdf": args.pdf, "png": args.png}
    G.run_gain(spec, out)
    print(f"wrote {', '.join(out.values())}")
    return 0
