"""``shuffledp accountants-compare run|report``: the cross-paper accountant table (issue 17)."""

from __future__ import annotations

import json
import os

from shuffledp.cli import UsageError

SPEC_KEYS = {"mechanism", "k", "label", "eps0", "n_grid", "deltas", "bounds", "personalized_max_n",
             "exact_max_n", "rtol"}


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("accountants-compare", help="every shuffle accountant on one grid (issue 17)")
    sub = p.add_subparsers(dest="compare_cmd", required=True, metavar="SUBCOMMAND")
    r = sub.add_parser("run", help="one job: every bound at every (n, delta) for one (mechanism, eps0)")
    r.add_argument("--spec", required=True, help="the job's JSON spec (shuffledp.experiments."
                   "accountants_compare.jobs)")
    r.add_argument("--out", required=True, help="output JSON (rows with their run times)")
    r.set_defaults(func=_run)
    rep = sub.add_parser("report", help="table (Parquet, Markdown) and figure (PDF, PNG)")
    rep.add_argument("--table", required=True, help="output Parquet table")
    rep.add_argument("--md", required=True, help="output Markdown table")
    rep.add_argument("--pdf", required=True)
    rep.add_argument("--png", required=True)
    rep.add_argument("--scale", default="default", help="the config's name")
    rep.add_argument("inputs", nargs="+", help="job outputs (JSON)")
    rep.set_defaults(func=_report)


def _spec(text: str) -> dict:
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--spec: not JSON ({exc.msg})") from None
    if not isinstance(spec, dict):
        raise UsageError("--spec: must be a JSON object")
    missing = sorted(SPEC_KEYS - set(spec))
    if missing:
        raise UsageError(f"--spec: missing keys {', '.join(missing)}")
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
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    df.to_json(args.out, orient="records", indent=0)
    print(f"wrote {len(df)} rows to {args.out}")
    return 0


def _report(args) -> int:
    import pandas as pd

    from shuffledp.experiments import accountants_compare as E
    from shuffledp.plotting.accountants_compare import figure

    for path in args.inputs:
        if not os.path.exists(path):
            raise UsageError(f"inputs: {path} does not exist")
    df = E.collect([pd.read_json(p, orient="records") for p in args.inputs])
    df["scale"] = args.scale
    for path in (args.table, args.md):
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    # the Parquet table is deterministic (no run times: byte-identical reruns); the Markdown
    # table carries each bound's seconds
    df.drop(columns=["seconds"]).to_parquet(args.table, index=False)
    with open(args.md, "w") as fh:
        fh.write(E.markdown(df, scale=args.scale))
    figure(df, args.pdf, args.png, scale=args.scale)
    print(f"wrote {args.table}, {args.md}, {args.pdf}, {args.png}")
    return 0
