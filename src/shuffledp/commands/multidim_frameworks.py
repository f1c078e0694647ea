"""``shuffledp multidim-frameworks prepare|run|report``: CALM marginals and HDG range queries with MHM
or FLAME as the frequency component (Figs 6-9). Each step takes the job's JSON ``--spec`` written by
:func:`shuffledp.experiments.multidim_frameworks.jobs`."""

from __future__ import annotations

import sys
from pathlib import Path

from shuffledp.commands._spec import read_spec
from shuffledp.errors import UsageError


def _spec(text: str, required: tuple[str, ...]) -> dict:
    return read_spec(text, set(required))


def register(sub, account_sub) -> None:
    p = sub.add_parser("multidim-frameworks", help="CALM marginals and HDG range queries with MHM/FLAME (Figs 6-9)")
    s = p.add_subparsers(dest="mdf_cmd", required=True, metavar="STEP")
    q = s.add_parser("prepare", help="HDG's ordinal tables: loan (Lending Club) or adult (from processed Adult)")
    q.add_argument("--spec", required=True)
    q.add_argument("--in", dest="inp", default=None, help="processed Adult table (adult only)")
    q.add_argument("--raw-dir", default="data/raw", help="raw folder (loan)")
    q.add_argument("--out", required=True)
    q.set_defaults(func=_prepare)
    q = s.add_parser("run", help="one (framework, component, dataset) job: every eps_s and repetition")
    q.add_argument("--spec", required=True)
    q.add_argument("--in", dest="inp", required=True, help="the dataset's processed table")
    q.add_argument("--out", required=True)
    q.set_defaults(func=_run)
    q = s.add_parser("report", help="figures 6-9 and the claims table")
    q.add_argument("--spec", required=True)
    q.add_argument("--in", dest="inp", nargs="+", required=True, help="run tables")
    q.add_argument("--data", nargs="+", required=True, help="dataset=path of each input table (provenance)")
    q.add_argument("--tables-dir", required=True)
    q.add_argument("--figures-dir", required=True)
    q.set_defaults(func=_report)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _prepare(args) -> int:
    from shuffledp.datasets.download import mirror_location

    spec = _spec(args.spec, ("dataset", "domain"))
    c = spec["domain"]
    if not isinstance(c, int) or c < 2 or c & (c - 1):
        raise UsageError(f"--spec: domain must be a power of two, got {c!r}")
    if spec["dataset"] == "loan":
        from shuffledp.datasets import loan

        if spec.get("source", "auto") not in ("auto", "real", "file", "standin"):
            raise UsageError("--spec: source must be auto, real, file or standin")
        if spec.get("source") == "file" and not spec.get("path"):
            raise UsageError("--spec: source file needs a path")
        try:
            loan.prepare(spec.get("source", "auto"), args.raw_dir, args.out, mirror_location(spec.get("mirror")),
                         int(spec.get("seed", 0)), c=c, path=spec.get("path"), records=spec.get("records"), log=_log)
        except ValueError as exc:
            raise UsageError(f"--spec: {exc}") from None
    elif spec["dataset"] == "adult":
        from shuffledp.datasets import adult_ordinal

        if not args.inp or not Path(args.inp).is_file():
            raise UsageError("--in: the processed Adult table is required (an existing file)")
        adult_ordinal.derive(args.inp, args.out, c=c, log=_log)
    else:
        raise UsageError(f"--spec: dataset must be loan or adult, got {spec['dataset']!r}")
    return 0


def _run(args) -> int:
    from shuffledp.experiments import multidim_frameworks as ex

    spec = _spec(args.spec, ("framework", "component", "dataset", "eps", "seed", "reps"))
    if spec["framework"] not in ex.FRAMEWORKS:
        raise UsageError(f"--spec: framework must be one of {', '.join(ex.FRAMEWORKS)}")
    if spec["component"] not in ("mhm", "flame", "exact"):
        raise UsageError("--spec: component must be mhm, flame or exact")
    eps = spec["eps"] if isinstance(spec["eps"], list) else [spec["eps"]]
    if not eps or not all(isinstance(e, (int, float)) and not isinstance(e, bool) and e > 0 for e in eps):
        raise UsageError("--spec: eps must be a positive number or a non-empty list of them")
    if not Path(args.inp).is_file():
        raise UsageError(f"--in: no such file {args.inp!r}")
    try:
        df = ex.run_job(spec, args.inp)
    except ValueError as exc:
        raise UsageError(f"--in: {exc}") from None
    ex.write_parquet(df, args.out)
    print(df.drop(columns=["standin"]).to_string(index=False))
    return 0


def _report(args) -> int:
    from shuffledp.experiments import multidim_frameworks as ex

    spec = _spec(args.spec, ("scale", "calm_datasets", "hdg_datasets"))
    data = {}
    for item in args.data:
        if "=" not in item:
            raise UsageError(f"--data: expected dataset=path, got {item!r}")
        k, v = item.split("=", 1)
        data[k] = v
    missing = [p for p in [*args.inp, *data.values()] if not Path(p).is_file()]
    if missing:
        raise UsageError(f"--in/--data: no such file {missing[0]!r}")
    cl = ex.report(args.inp, data, spec, args.tables_dir, args.figures_dir)
    print(cl.to_string(index=False))
    return 0
