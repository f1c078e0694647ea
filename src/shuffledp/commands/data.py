"""``shuffledp data ...``: download, preprocess and summarise the datasets (used by data.smk)."""

from __future__ import annotations

import sys

from shuffledp.commands import _args as A
from shuffledp.errors import UsageError


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def register(sub, account_sub) -> None:
    data = sub.add_parser("data", help="download, verify and preprocess datasets")
    dsub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")

    p = dsub.add_parser("download", help="fetch and verify a real dataset's raw files (no fallback)")
    p.add_argument("dataset", choices=["msnbc", "adult", "ipums"])
    p.add_argument("--raw-dir", required=True)
    p.add_argument("--key", help="IPUMS extract key (br, mx)")
    p.add_argument("--spec", type=A.json_object, help="IPUMS spec as JSON (sample, attributes)")
    p.add_argument("--mirror", default=None, help="folder or URL prefix (SHUFFLEDP_DATA_MIRROR wins)")
    p.set_defaults(func=_download)

    p = dsub.add_parser("prepare", help="raw data (or stand-in) -> Parquet with provenance")
    p.add_argument("dataset", choices=["msnbc", "adult", "ipums"])
    p.add_argument("--source", required=True, choices=["auto", "real", "standin", "ipums", "file"])
    p.add_argument("--raw-dir", required=True)
    p.add_argument("--out", required=True, help="output folder (msnbc) or file (adult, ipums)")
    p.add_argument("--mirror", default=None)
    p.add_argument("--seed", type=A.nonneg_int, required=True)
    p.add_argument("--standin-users", type=A.int_at_least(2), default=20000)
    p.add_argument("--key", help="IPUMS extract key (br, mx)")
    p.add_argument("--spec", type=A.json_object,
                   help="IPUMS spec as JSON (source, records, sample, ddi, data, attributes)")
    p.set_defaults(func=_prepare)

    p = dsub.add_parser("synthetic", help="generate a synthetic set-valued dataset")
    p.add_argument("--name", required=True)
    p.add_argument("--domain", type=A.int_at_least(2), required=True)
    p.add_argument("--set-size", type=A.positive_int, required=True)
    p.add_argument("--users", type=A.positive_int, required=True)
    p.add_argument("--distribution", choices=["uniform", "zipf"], default="uniform")
    p.add_argument("--zipf-exponent", type=A.positive_float, default=1.0)
    p.add_argument("--seed", type=A.nonneg_int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_synthetic)

    p = dsub.add_parser("summary", help="one row per processed dataset: Parquet and Markdown")
    p.add_argument("inputs", nargs="+", type=A.parquet_file)
    p.add_argument("--out", required=True)
    p.add_argument("--md", required=True)
    p.set_defaults(func=_summary)

    register_figure(dsub)


def _mirror(args) -> str | None:
    from shuffledp.datasets.download import mirror_location

    return mirror_location(args.mirror)


def _download(args) -> int:
    from pathlib import Path

    from shuffledp.datasets import adult, msnbc

    if args.dataset == "msnbc":
        msnbc.download(Path(args.raw_dir) / "msnbc990928.seq.gz", _mirror(args), log=_log)
    elif args.dataset == "ipums":
        from shuffledp.datasets import ipums

        if not args.spec:
            raise UsageError("--spec is required for ipums")
        spec = args.spec
        if not isinstance(spec.get("attributes"), dict) or not spec["attributes"]:
            raise UsageError("--spec: needs a non-empty \"attributes\" object")
        ipums.find_or_download(spec.get("sample", ""), list(spec["attributes"]), args.raw_dir, log=_log)
    else:
        adult.download(args.raw_dir, _mirror(args), log=_log)
    return 0


def _prepare(args) -> int:
    from shuffledp.datasets import prepare

    if args.dataset == "msnbc":
        if args.source not in ("auto", "real", "standin"):
            raise UsageError(f"--source: {args.source!r} is not auto, real or standin")
        prepare.prepare_msnbc(args.source, f"{args.raw_dir}/msnbc990928.seq.gz", args.out, _mirror(args),
                              args.seed, args.standin_users, log=_log)
    elif args.dataset == "adult":
        if args.source not in ("auto", "real", "standin"):
            raise UsageError(f"--source: {args.source!r} is not auto, real or standin")
        prepare.prepare_adult(args.source, args.raw_dir, args.out, _mirror(args), args.seed, log=_log)
    else:
        if not args.key or not args.spec:
            raise UsageError("--key and --spec are required for ipums")
        spec = args.spec
        for key in ("source", "records", "attributes"):
            if key not in spec:
                raise UsageError(f"--spec: missing key {key!r}")
        attrs = spec["attributes"]
        if not isinstance(attrs, dict) or not attrs or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 2 for v in attrs.values()):
            raise UsageError("--spec: \"attributes\" must map attribute names to domain sizes >= 2")
        if not isinstance(spec["records"], int) or isinstance(spec["records"], bool) or spec["records"] < 1:
            raise UsageError("--spec: \"records\" must be a positive integer")
        prepare.prepare_ipums(args.key, spec, args.raw_dir, args.out, args.seed, log=_log)
    return 0


def _synthetic(args) -> int:
    from shuffledp.datasets import prepare

    if args.set_size > args.domain:
        raise UsageError(f"--set-size: {args.set_size} exceeds --domain {args.domain}")
    if not args.name or not all(c.isalnum() or c == "_" for c in args.name):
        raise UsageError(f"--name: {args.name!r} must be letters, digits and underscores")
    prepare.prepare_synthetic(args.name, args.domain, args.set_size, args.users, args.distribution,
                              args.seed, args.out, args.zipf_exponent, log=_log)
    return 0


def _summary(args) -> int:
    from shuffledp.datasets import prepare
    from shuffledp.datasets.provenance import merge_provenance
    from shuffledp.io import markdown_table, read_provenance, write_table, write_text

    df = prepare.summary_table(args.inputs)
    provs = [read_provenance(p) for p in args.inputs]
    meta = merge_provenance(provs)
    write_table(df, args.out, meta)
    caption = "Datasets used by the workflow (one row per processed table)."
    if meta["standin_note"]:
        caption += f" Includes {meta['standin_note']}: rows with standin = True are generated stand-ins."
    text = markdown_table(df, caption)
    write_text(args.md, text)
    return 0


def register_figure(dsub) -> None:  # called from register()
    p = dsub.add_parser("figure", help="data-stage figures")
    p.add_argument("name", choices=["msnbc-shares"])
    p.add_argument("--sequences", required=True, type=A.parquet_file)
    p.add_argument("--sets", required=True, type=A.parquet_file)
    p.add_argument("--categories", required=True, type=A.parquet_file)
    p.add_argument("--out-base", required=True, help="output path without extension (.pdf and .png written)")
    p.set_defaults(func=_figure)


def _figure(args) -> int:
    from shuffledp.plotting.datasets import msnbc_category_shares

    msnbc_category_shares(args.sequences, args.sets, args.categories, args.out_base)
    return 0
