"""``shuffledp config validate FILE...``: the workflow's configuration check, outside snakemake.

The files are merged as the workflow merges ``config/config.yaml`` (the first file) and the
``--configfile`` files (the others: merged among themselves as Snakemake merges them, then over
the first with the README's overlay rule, :func:`shuffledp.config.load_configs`), then checked
by :func:`shuffledp.config.validate_config`, the very function the workflow calls before any job.
A YAML syntax error names the file and line (snakemake's own loader only says that some config file is not valid YAML).
"""

from __future__ import annotations

import sys

from shuffledp.commands import _args as A


def register(sub, account_sub) -> None:
    p = sub.add_parser("config", help="check workflow configuration files")
    csub = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    v = csub.add_parser("validate", help="YAML syntax, schema, finite numbers and cross-key rules")
    v.add_argument("files", nargs="+", type=A.existing_file,
                   help="the defaults, then the --configfile files, merged as the workflow merges them "
                        "(the paper scale: config/config.yaml config/paper.yaml)")
    v.add_argument("--schema", default=None, type=A.existing_file, help="schema file (default: the workflow's)")
    v.set_defaults(func=_validate)


def _validate(args) -> int:
    from shuffledp.config import load_configs, validate_config

    validate_config(load_configs(args.files), args.schema)
    print(f"{', '.join(args.files)}: valid", file=sys.stderr)
    return 0
