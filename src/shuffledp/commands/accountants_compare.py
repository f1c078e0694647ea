"""``shuffledp accountants-compare run | report``: the cross-paper accountant table (issue 17).

Each step reads its job's ``--spec`` (canonical JSON written by the workflow from
``shuffledp.experiments.accountants_compare.jobs``) and writes Parquet (and the report's figure).
"""

from __future__ import annotations

from shuffledp.cli import UsageError
from shuffledp.commands import _args as A
from shuffledp.commands._spec import read_spec, write_parquet

SPEC_KEYS = {"mechanism", "k", "label", "eps0", "n_grid", "deltas", "bounds", "personalized_max_n",
             "exact_max_n", "rtol"}


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("accountants-compare", help="every shuffle accountant on one grid (issue 17)")
    sub = p.add_subparsers(dest="compare_cmd", required=True, metavar="STEP")
    r = sub.add_parser("run", help="one job: every bound at every (n, delta) for one (mechanism, eps0)")
    r.add_argument("--spec", required=True, help="the job's JSON spec (shuffledp.experiments."
                   "accountants_compare.jobs)")
    r.add_argument("--out", required=True, help="output Parquet (rows with their run times)")
    r.set_defaults(func=_run)
    rep = sub.add_parser("report", help="table (Parquet, Markdown) and figure (PDF, PNG)")
    rep.add_argument("--spec", required=True, help="the report job's JSON spec ({\"scale\": ...})")
    rep.add_argument("--inputs", nargs="+", required=True, type=A.parquet_file, help="the run jobs' tables")
    rep.add_argument("--table", required=True, help="output Parquet table")
    rep.add_argument("--md", required=True, help="output Markdown table")
    rep.add_argument("--pdf", required=True)
    rep.add_argument("--png", required=True)
    rep.set_defaults(func=_report)


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
    write_parquet(df, args.out)
    print(f"wrote {len(df)} rows to {args.out}")
    return 0


def _report(args) -> int:
    from shuffledp.experiments import accountants_compare as E

    spec = read_spec(args.spec, {"scale"})
    out = {k: getattr(args, k) for k in ("table", "md", "pdf", "png")}
    E.report(spec, args.inputs, out)
    print(f"wrote {', '.join(out.values())}")
    return 0
