"""``shuffledp multidim ...`` (experiment jobs and report) and ``shuffledp account mhm|tcm|flame``."""

from __future__ import annotations

from shuffledp.commands import _args as A
from shuffledp.commands._grid import int_like, parse_list, run_grid
from shuffledp.commands._spec import is_positive_int, is_reps, read_spec, require
from shuffledp.errors import UsageError


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("multidim", help="multidimensional categorical data: MHM, FLAME, TCM, OGM/NOGM")
    sub = p.add_subparsers(dest="multidim_cmd", required=True, metavar="STEP")

    pr = sub.add_parser("prepare", help="Adult's categorical attributes as a multidim input table")
    pr.add_argument("--spec", required=True, help="dataset, attributes (JSON object)")
    pr.add_argument("--input", required=True, type=A.existing_file, help="data/processed/adult.parquet")
    pr.add_argument("--out", required=True)
    pr.set_defaults(func=_prepare)

    u = sub.add_parser("uniform", help="one job: a mechanism at one eps for a batch of repetitions")
    u.add_argument("--spec", required=True, help="the job's spec (JSON object)")
    u.add_argument("--data", required=True, type=A.parquet_file, help="processed table (one int column per attribute)")
    u.add_argument("--out", required=True)
    u.add_argument("--timings", required=True, help="Parquet of wall-clock timings (not reproducible)")
    u.set_defaults(func=_uniform)

    q = sub.add_parser("personal", help="one job: OGM or NOGM at one budget ratio for a batch of repetitions")
    q.add_argument("--spec", required=True, help="the job's spec (JSON object)")
    q.add_argument("--data", required=True, type=A.parquet_file, help="processed table (one int column per attribute)")
    q.add_argument("--out", required=True)
    q.set_defaults(func=_personal)

    r = sub.add_parser("report", help="figures 3, 4, 5, 10, table 3 and the claims table from job tables")
    r.add_argument("--spec", required=True, help="datasets, topk, scale (JSON object)")
    r.add_argument("--uniform", nargs="+", required=True, type=A.parquet_file)
    r.add_argument("--timings", nargs="*", default=[], type=A.parquet_file)
    r.add_argument("--personal", nargs="*", default=[], type=A.parquet_file)
    r.add_argument("--data", nargs="+", required=True, type=A.parquet_file,
                   help="input table of each dataset, in the spec's order")
    r.add_argument("--tables-dir", required=True)
    r.add_argument("--figures-dir", required=True)
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


_JOB_KEYS = {"dataset", "reps", "records", "seed"}


def _load(spec, path):
    from shuffledp.experiments.multidim import load_dataset

    if not 1 <= int(spec.get("family_bits", 32)) <= 62:
        raise UsageError("--spec: family_bits must lie in 1..62")
    require(spec, "reps", is_reps, "must be a list of distinct non-negative integers")
    require(spec, "records", lambda v: v is None or is_positive_int(v), "must be a positive integer")
    data, domains, _, _ = load_dataset(path, spec["records"], spec["seed"], spec["dataset"])
    return data, domains


def _prepare(args) -> int:
    import pyarrow.parquet as pq

    from shuffledp.experiments.multidim import prepare_adult
    from shuffledp.io import read_provenance, write_table

    spec = read_spec(args.spec, {"dataset", "attributes"})
    require(spec, "attributes", lambda v: isinstance(v, list) and v and all(isinstance(a, str) for a in v),
            "must be a non-empty list of column names")
    try:
        table, prov = prepare_adult(pq.read_table(args.input).to_pandas(), read_provenance(args.input),
                                    spec["attributes"])
    except ValueError as exc:
        raise UsageError(f"--input: {exc}") from None
    write_table(table, args.out, prov)
    return 0


def _uniform(args) -> int:
    from shuffledp.experiments.multidim import run_uniform, write_parquet

    spec = read_spec(args.spec, _JOB_KEYS | {"mechanism", "eps", "topk"})
    if not spec["eps"] > 0:
        raise UsageError("--spec: eps must be positive")
    data, domains = _load(spec, args.data)
    kw = {k: spec[k] for k in ("bound", "family_bits", "np_fraction", "flame_variant") if k in spec}
    df, tim = run_uniform(data, domains, spec["mechanism"], spec["eps"], spec["reps"], seed=spec["seed"],
                          dataset=spec["dataset"], topk=spec["topk"], **kw)
    write_parquet(df, args.out)
    write_parquet(tim, args.timings)
    return 0


def _personal(args) -> int:
    from shuffledp.config import ConfigError
    from shuffledp.experiments.multidim import parse_ratio, run_personal, write_parquet

    spec = read_spec(args.spec, _JOB_KEYS | {"method", "ratio", "bound", "family_bits", "classes"})
    require(spec, "classes", lambda v: isinstance(v, list) and len(v) == 3 and all(
        isinstance(c, dict) and {"name", "eps", "delta_n"} <= set(c) for c in v),
        "must be a list of three {name, eps, delta_n} objects")
    try:
        parse_ratio(spec["ratio"], "ratio")
    except ConfigError as exc:
        raise UsageError(f"--spec: {exc}") from None
    data, domains = _load(spec, args.data)
    df = run_personal(data, domains, spec["method"], spec["ratio"], spec["reps"], seed=spec["seed"],
                      dataset=spec["dataset"], classes=spec["classes"], bound=spec["bound"],
                      family_bits=spec["family_bits"])
    write_parquet(df, args.out)
    return 0


def _report(args) -> int:
    from shuffledp.experiments.multidim_report import report

    spec = read_spec(args.spec, {"datasets", "topk", "scale"})
    if len(args.data) != len(spec["datasets"]):
        raise UsageError(f"--data: {len(args.data)} tables for {len(spec['datasets'])} datasets")
    data = dict(zip(spec["datasets"], args.data, strict=True))
    report(args.uniform, args.timings, args.personal, data, scale=spec["scale"], tables_dir=args.tables_dir,
           figures_dir=args.figures_dir, topk=spec["topk"])
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
        except ValueError as exc:
            raise UsageError(f"--eps/--delta/--n/--m: {exc}") from None
        return {"eps_l": st.eps_l, "g": st.g, "amplified": st.amplified, "valid_range": st.valid_range}

    grid = {"eps": parse_list(args.eps, "eps"), "delta": parse_list(args.delta, "delta"),
            "n": parse_list(args.n, "n", int_like), "m": parse_list(args.m, "m", int_like)}
    _check_grid(grid)
    return run_grid(grid, fn)


def _check_grid(grid) -> None:
    """Domain checks shared by ``account mhm`` and ``account tcm``: name the flag before any work."""
    import math

    if any(not (math.isfinite(e) and e > 0) for e in grid["eps"]):
        raise UsageError("--eps: must be finite and > 0")
    if any(not 0 < d < 1 for d in grid["delta"]):
        raise UsageError("--delta: must lie in the open interval (0, 1)")
    if any(n < 2 for n in grid["n"]):
        raise UsageError("--n: must be an integer >= 2")
    for key, low in (("m", 1), ("d", 2)):
        if key in grid and any(v < low for v in grid[key]):
            raise UsageError(f"--{key}: must be an integer >= {low}")
