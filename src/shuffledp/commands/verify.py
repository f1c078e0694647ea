"""``shuffledp verify [FILE...]``: check every output under ``results/`` against the content hash
its job recorded when it wrote it, and list what no job of the configuration produces.

``FILE...``: the config files, merged in order as the workflow merges them (default:
``config/config.yaml``; the paper scale: ``config/config.yaml config/paper.yaml``). Run it in the
working folder of the run. One line per file that is not as its job wrote it (``changed``), that no
job recorded (``unrecorded``), that no job of this configuration produces (``stale``), or that this
configuration produces and is not built yet (``missing``), then a summary line. Exit 0 when every
file is as its job wrote it (missing files aside), 1 otherwise (:mod:`shuffledp.stages.verify`).
"""

from __future__ import annotations

import sys

from shuffledp.commands import _args as A

LABELS = {"changed": "CHANGED since its job wrote it", "unrecorded": "NO RECORD of the job that wrote it",
          "stale": "NOT PRODUCED by this configuration (an old output)", "missing": "MISSING (not built yet)"}


def register(sub, account_sub) -> None:
    p = sub.add_parser("verify", help="check results/ against the hashes its jobs recorded and the config")
    p.add_argument("files", nargs="*", type=A.existing_file,
                   help="config files, merged in order (default: config/config.yaml)")
    p.set_defaults(func=_verify)


def _verify(args) -> int:
    from shuffledp.config import load_configs, validate_config
    from shuffledp.stages.verify import verify

    config = load_configs(args.files or ["config/config.yaml"])
    validate_config(config)
    verdicts = verify(config)
    for kind, label in LABELS.items():
        for path in verdicts[kind]:
            print(f"{path}: {label}")
    counts = ", ".join(f"{len(verdicts[k])} {k}" for k in ("ok", *LABELS))
    bad = sum(len(verdicts[k]) for k in ("changed", "unrecorded", "stale"))
    print(f"shuffledp verify: {counts} ({'every output is as its job wrote it' if not bad else 'see above'})",
          file=sys.stderr)
    return 1 if bad else 0
