"""``shuffledp personalized points | table2-row | report``: the jobs of the personalized-bounds stage.

Each step reads its job's ``--spec`` (canonical JSON written by the workflow from
``shuffledp.experiments.personalized.jobs``) and writes Parquet.
"""

from __future__ import annotations

from shuffledp.commands import _args as A
from shuffledp.commands._spec import read_spec, write_parquet


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("personalized", help="personalized shuffle bounds (Liu et al.): Fig. 4, Table 2")
    sub = p.add_subparsers(dest="personalized_cmd", required=True, metavar="STEP")
    q = sub.add_parser("points", help="one (bound, setting, mechanism): eps_s over the n grid and seeds")
    q.add_argument("--spec", required=True)
    q.add_argument("--out", required=True)
    q.set_defaults(func=_points)
    q = sub.add_parser("table2-row", help="one row of Table 2: delta_s over the eps_s grid")
    q.add_argument("--spec", required=True)
    q.add_argument("--out", required=True)
    q.set_defaults(func=_row)
    q = sub.add_parser("report", help="Figure 4, Table 2 and the claims table")
    q.add_argument("--spec", required=True)
    q.add_argument("--points", nargs="+", required=True, type=A.parquet_file)
    q.add_argument("--rows", nargs="+", required=True, type=A.parquet_file)
    for key in ("fig-table", "pdf", "png", "t2", "t2-md", "claims", "claims-md"):
        q.add_argument(f"--{key}", required=True)
    q.set_defaults(func=_report)


_POINTS = {"bound", "setting", "mechanism", "n_grid", "seeds", "delta_central", "delta_local"}
_ROW = {"bound", "setting", "n", "seed", "delta_local", "eps_grid"}
_REPORT = {"delta_central", "delta_local", "t2_setting", "t2_n", "scale"}


def _points(args) -> int:
    from shuffledp.experiments import personalized as E

    df = E.run_points(read_spec(args.spec, _POINTS))
    write_parquet(df, args.out)
    print(df.to_string())
    return 0


def _row(args) -> int:
    from shuffledp.experiments import personalized as E

    df = E.run_table2_row(read_spec(args.spec, _ROW))
    write_parquet(df, args.out)
    print(df.to_string())
    return 0


def _report(args) -> int:
    from shuffledp.experiments import personalized as E

    out = {k: getattr(args, k) for k in ("fig_table", "pdf", "png", "t2", "t2_md", "claims", "claims_md")}
    cl = E.report(read_spec(args.spec, _REPORT), args.points, args.rows, out)
    print(cl.to_string())
    return 0
