"""``shuffledp segmented ...``: the jobs of the segmented multi-message shuffle experiments.

Subcommands: ``prepare`` (fixed-width sets and truth), ``params`` (baseline privacy parameters via
the accountants), ``run`` (one batch of repetitions of one protocol), ``aggregate``, ``figures``,
``claims``. Job specs are compact JSON objects (``--spec``) written by the workflow.
"""

from __future__ import annotations

import json
from pathlib import Path

from shuffledp.cli import UsageError


def _spec(text: str) -> dict:
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--spec: not valid JSON ({exc.msg})") from None
    if not isinstance(spec, dict):
        raise UsageError("--spec: must be a JSON object")
    return spec


def _prepare(args) -> int:
    from shuffledp.experiments import segmented as ex

    if args.s < 1 or args.d < 2:
        raise UsageError("--s/--d: need s >= 1 and d >= 2")
    meta = ex.prepare(args.input, args.output, dataset=args.dataset, d=args.d, s=args.s, seed=args.seed,
                      oversize=args.oversize)
    print(json.dumps({k: meta[k] for k in ("dataset", "d", "s", "users", "users_padded", "users_selected")}))
    return 0


def _params(args) -> int:
    from shuffledp.experiments import segmented as ex
    from shuffledp.experiments import segmented_params as sp

    spec = _spec(args.spec)
    n = int(spec["n"])
    df = sp.baseline_params(n, int(spec["d"]), int(spec["s"]), spec["levels"], spec["settings"],
                            float(spec["delta_factor"]) / n, float(spec["uniform_eps"]), ex.level_counts,
                            spec.get("accountant", "sound"))
    df.insert(0, "dataset", spec["dataset"])
    df.insert(1, "n", n)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(args.output, index=False)
    print(df.to_string(index=False))
    return 0


def _run(args) -> int:
    from shuffledp.experiments import segmented as ex

    spec = _spec(args.spec)
    if spec.get("protocol") not in ex.PROTOCOLS:
        raise UsageError(f"--spec: protocol must be one of {', '.join(ex.PROTOCOLS)}")
    if spec["protocol"] in ex.OURS_ALL and not args.accountant:
        raise UsageError("--accountant: required for the segmented protocol")
    if spec["protocol"] in ("subexp_shuffle", "mm_shuffle", "sepmm", "wsepmm") and not args.params:
        raise UsageError("--params: required for this baseline")
    df = ex.run_job(spec, args.data, args.output, accountant=args.accountant, params=args.params)
    print(f"{spec['protocol']} {spec['dataset']} n={spec['n']} {spec['setting']} "
          f"m_index={spec.get('m_index')}: "
          f"{len(df)} repetitions, mean error {df['error'].mean():.4g}")
    return 0


def _aggregate(args) -> int:
    from shuffledp.experiments import segmented as ex

    summ = ex.aggregate(args.runs, args.accountant or [], args.output, args.variant)
    print(f"{len(summ)} points")
    return 0


def _figures(args) -> int:
    import pandas as pd

    from shuffledp.experiments import segmented as ex
    from shuffledp.plotting import segmented as pl

    spec = _spec(args.spec)
    summ = pd.read_parquet(args.summary)
    notes = sorted({ex.standin_note(ex.read_meta(p).get("source", {})) for p in args.data} - {""})
    for fig, fspec in spec["figures"].items():
        if args.only and fig not in args.only:
            continue
        used = [p for p in args.data if Path(p).stem in fspec["datasets"]]
        fnotes = sorted({ex.standin_note(ex.read_meta(p).get("source", {})) for p in used} - {""})
        pl.figure(summ, fspec, spec["n"], f"{args.outdir}/segmented_{fig}", "; ".join(fnotes),
                  spec.get("dataset_labels"))
    if notes:
        print("note:", "; ".join(notes))
    return 0


def _claims(args) -> int:
    import pandas as pd

    from shuffledp.experiments import segmented as ex

    spec = _spec(args.spec)
    summ = pd.read_parquet(args.summary)
    standin = sorted({Path(p).stem for p in args.data if ex.read_meta(p).get("standin")})
    df = ex.claims(summ, spec, spec.get("scale", ""), float(spec.get("m_factor", 2.0)), standin)
    notes = sorted({ex.standin_note(ex.read_meta(p).get("source", {})) for p in args.data} - {""})
    Path(args.parquet).parent.mkdir(parents=True, exist_ok=True)
    df.to_parquet(args.parquet, index=False)
    Path(args.md).write_text(ex.claims_markdown(df, "; ".join(notes)))
    print(df[["id", "held"]].to_string(index=False))
    return 0


def register(subparsers, account_subparsers) -> None:
    p = subparsers.add_parser("segmented", help="segmented multi-message shuffle experiments (Figs 2-6)")
    sub = p.add_subparsers(dest="segmented_cmd", required=True, metavar="STEP")

    q = sub.add_parser("prepare", help="fixed-width s-item sets and the true frequencies")
    q.add_argument("--input", required=True)
    q.add_argument("--output", required=True)
    q.add_argument("--dataset", required=True)
    q.add_argument("--d", type=int, required=True)
    q.add_argument("--s", type=int, required=True)
    q.add_argument("--seed", type=int, required=True)
    q.add_argument("--oversize", choices=["random", "first"], default="random")
    q.set_defaults(func=_prepare)

    q = sub.add_parser("params", help="baseline privacy parameters (through the accountants)")
    q.add_argument("--spec", required=True)
    q.add_argument("--output", required=True)
    q.set_defaults(func=_params)

    q = sub.add_parser("run", help="one batch of repetitions of one protocol")
    q.add_argument("--spec", required=True)
    q.add_argument("--data", required=True)
    q.add_argument("--output", required=True)
    q.add_argument("--accountant")
    q.add_argument("--params")
    q.set_defaults(func=_run)

    q = sub.add_parser("aggregate", help="mean error and 95%% interval per point")
    q.add_argument("--runs", nargs="+", required=True)
    q.add_argument("--accountant", nargs="*")
    q.add_argument("--variant", default="sound", help="accountant variant of the MSE bound (sound|paper)")
    q.add_argument("--output", required=True)
    q.set_defaults(func=_aggregate)

    q = sub.add_parser("figures", help="Figures 2-6")
    q.add_argument("--summary", required=True)
    q.add_argument("--spec", required=True)
    q.add_argument("--data", nargs="*", default=[])
    q.add_argument("--outdir", required=True)
    q.add_argument("--only", nargs="*")
    q.set_defaults(func=_figures)

    q = sub.add_parser("claims", help="the claims table of Section 6")
    q.add_argument("--summary", required=True)
    q.add_argument("--spec", required=True)
    q.add_argument("--data", nargs="*", default=[])
    q.add_argument("--md", required=True)
    q.add_argument("--parquet", required=True)
    q.set_defaults(func=_claims)
