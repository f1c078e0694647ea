"""``shuffledp segmented ...``: the jobs of the segmented multi-message shuffle experiments.

Steps (one per rule of ``workflow/rules/segmented.smk`` and ``accountant.smk``): ``prepare``
(fixed-width sets and truth), ``accountant`` (the accountant tables of every level setting of one
(dataset, n)), ``params`` (baseline privacy parameters via the accountants), ``run`` (one protocol
on one (dataset, n, setting): every m and every repetition of its batch), ``aggregate``,
``figure``, ``claims``. Each reads its job's ``--spec`` (canonical JSON written by the workflow from
``shuffledp.experiments.segmented.jobs``).
"""

from __future__ import annotations

import json
from pathlib import Path

from shuffledp.commands import _args as A
from shuffledp.commands._spec import is_positive_int, is_reps, read_spec, require, write_parquet
from shuffledp.errors import UsageError


def _prepare(args) -> int:
    from shuffledp.experiments import segmented as ex

    spec = read_spec(args.spec, {"dataset", "d", "s", "seed", "oversize"})
    if spec["s"] < 1 or spec["d"] < 2:
        raise UsageError("--spec: need s >= 1 and d >= 2")
    meta = ex.prepare(args.input, args.out, dataset=spec["dataset"], d=spec["d"], s=spec["s"],
                      seed=spec["seed"], oversize=spec["oversize"])
    print(json.dumps({k: meta[k] for k in ("dataset", "d", "s", "users", "users_padded", "users_selected")}))
    return 0


def _accountant(args) -> int:
    from shuffledp.accountants.segmented_optimizer import segmented_table
    from shuffledp.commands.account_vr import write_table

    spec = read_spec(args.spec, {"n", "d", "s", "levels", "delta", "m_grid", "accountants", "settings"})
    if len(args.out) != len(spec["settings"]):
        raise UsageError(f"--out: {len(args.out)} files for {len(spec['settings'])} settings (one per setting, "
                         "in the spec's order)")
    # one process for every setting: the per-level Poisson rates (the costly part) do not depend on
    # the shares and are cached across settings (shuffledp.accountants.segmented_optimizer)
    for shares, out in zip(spec["settings"].values(), args.out, strict=True):
        table = segmented_table(int(spec["n"]), int(spec["d"]), int(spec["s"]), spec["levels"], shares,
                                float(spec["delta"]), spec["m_grid"], accountants=spec["accountants"])
        write_table(table, out)
        print(out)
    return 0


def _params(args) -> int:
    from shuffledp.experiments import segmented as ex
    from shuffledp.experiments import segmented_params as sp

    spec = read_spec(args.spec, {"dataset", "n", "d", "s", "levels", "settings", "delta", "uniform_eps",
                                 "accountant"})
    n = int(spec["n"])
    df = sp.baseline_params(n, int(spec["d"]), int(spec["s"]), spec["levels"], spec["settings"],
                            float(spec["delta"]), float(spec["uniform_eps"]), ex.level_counts, spec["accountant"])
    df.insert(0, "dataset", spec["dataset"])
    df.insert(1, "n", n)
    write_parquet(df, args.out)
    print(df.to_string(index=False))
    return 0


def _run(args) -> int:
    from shuffledp.experiments import segmented as ex

    spec = read_spec(args.spec, {"protocol", "dataset", "n", "setting", "reps", "seed"})
    if spec["protocol"] not in ex.PROTOCOLS:
        raise UsageError(f"--spec: protocol must be one of {', '.join(ex.PROTOCOLS)}")
    require(spec, "reps", is_reps, "must be a list of distinct non-negative integers")
    require(spec, "n", is_positive_int, "must be a positive integer")
    df = ex.run_job(spec, args.data, args.table)
    write_parquet(df, args.out)
    print(f"{spec['protocol']} {spec['dataset']} n={spec['n']} {spec['setting']}: {len(df)} rows "
          f"({len(spec['reps'])} repetitions), mean error {df['error'].mean():.4g}")
    return 0


def _aggregate(args) -> int:
    from shuffledp.experiments import segmented as ex

    spec = read_spec(args.spec, {"accountant", "scale"})
    require(spec, "accountant", lambda v: v in ("sound", "paper"), "must be sound or paper")
    summ = ex.aggregate(args.runs, args.accountant or [], args.out, spec["accountant"], spec["scale"])
    print(f"{len(summ)} points")
    return 0


def _notes(paths) -> list[str]:
    from shuffledp.experiments import segmented as ex

    return sorted({ex.standin_note(ex.read_meta(p).get("source", {})) for p in paths} - {""})


def _figure(args) -> int:
    import pandas as pd

    from shuffledp.plotting import segmented as pl

    spec = read_spec(args.spec, {"figure", "spec", "n"})
    summ = pd.read_parquet(args.summary)
    fspec = spec["spec"]
    used = [p for p in args.data if Path(p).stem in fspec["datasets"]]
    notes = _notes(used)
    pl.figure(summ, fspec, spec["n"], args.out_base, "; ".join(notes), spec.get("dataset_labels"))
    if notes:
        print("note:", "; ".join(notes))
    return 0


def _claims(args) -> int:
    import pandas as pd

    from shuffledp.experiments import segmented as ex

    spec = read_spec(args.spec, {"n", "m_grid", "figures", "m_factor", "scale"})
    summ = pd.read_parquet(args.summary)
    standin = sorted({Path(p).stem for p in args.data if ex.read_meta(p).get("standin")})
    df = ex.claims(summ, spec, spec["scale"], float(spec["m_factor"]), standin)
    write_parquet(df, args.parquet)
    from shuffledp.io import write_text

    write_text(args.md, ex.claims_markdown(df, "; ".join(_notes(args.data))))
    print(df[["id", "held"]].to_string(index=False))
    return 0


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("segmented", help="segmented multi-message shuffle experiments (Figs 2-6)")
    sub = p.add_subparsers(dest="segmented_cmd", required=True, metavar="STEP")

    def step(name, func, help_):
        q = sub.add_parser(name, help=help_)
        q.add_argument("--spec", required=True, help="the job's spec (JSON object)")
        q.set_defaults(func=func)
        return q

    q = step("prepare", _prepare, "fixed-width s-item sets and the true frequencies")
    q.add_argument("--input", required=True, type=A.parquet_file)
    q.add_argument("--out", required=True)
    q = step("accountant", _accountant, "accountant tables of every level setting of one (dataset, n)")
    q.add_argument("--out", nargs="+", required=True, help="one Parquet file per setting, in the spec's order")
    q = step("params", _params, "baseline privacy parameters (through the accountants)")
    q.add_argument("--out", required=True)
    q = step("run", _run, "one protocol on one (dataset, n, setting): every m, a batch of repetitions")
    q.add_argument("--data", required=True, type=A.parquet_file)
    q.add_argument("--table", type=A.parquet_file, help="accountant table (ours) or baseline parameter table")
    q.add_argument("--out", required=True)
    q = step("aggregate", _aggregate, "mean error and 95%% interval per point")
    q.add_argument("--runs", nargs="+", required=True, type=A.parquet_file)
    q.add_argument("--accountant", nargs="*", type=A.parquet_file)
    q.add_argument("--out", required=True)
    q = step("figure", _figure, "one of Figures 2-6")
    q.add_argument("--summary", required=True, type=A.parquet_file)
    q.add_argument("--data", nargs="*", default=[], type=A.parquet_file)
    q.add_argument("--out-base", required=True, help="writes <out-base>.pdf and <out-base>.png")
    q = step("claims", _claims, "the claims table of Section 6")
    q.add_argument("--summary", required=True, type=A.parquet_file)
    q.add_argument("--data", nargs="*", default=[], type=A.parquet_file)
    q.add_argument("--md", required=True)
    q.add_argument("--parquet", required=True)
