"""Write the generated tables of ARTIFACT-EVALUATION.md from a results folder of a paper-scale run.

    python benchmarks/artifact_tables.py [--results results] [--guide ARTIFACT-EVALUATION.md]
        [--scale paper] [--stdout]

Reads results/tables/*_claims.parquet and the Snakemake benchmark files results/benchmarks/**/*.tsv
and replaces the text between the guide's markers (see shuffledp.claims.artifact). --stdout prints
the tables instead of rewriting the guide.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    from shuffledp.claims.artifact import ArtifactError, rewrite, tables
    from shuffledp.stages import artifact_papers

    ap = argparse.ArgumentParser(prog="artifact_tables", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="results folder of a paper-scale run")
    ap.add_argument("--guide", default=str(Path(__file__).resolve().parents[1] / "ARTIFACT-EVALUATION.md"))
    ap.add_argument("--scale", default="paper", help="the scale the claims tables should have (default: paper)")
    ap.add_argument("--stdout", action="store_true", help="print the tables, do not rewrite the guide")
    args = ap.parse_args(argv)
    try:
        body = tables(args.results, artifact_papers(), args.scale)
        if args.stdout:
            sys.stdout.write(body)
            return 0
        text = rewrite(args.guide, body)
    except ArtifactError as exc:
        print(f"artifact_tables: error: {exc}", file=sys.stderr)
        return 2
    Path(args.guide).write_text(text)
    print(f"wrote the generated tables of {args.guide}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
