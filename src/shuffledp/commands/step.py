"""``shuffledp step <stage> <step> --spec FILE --io FILE``: run one job of a workflow stage.

Every stage rule of the workflow runs this one command. ``--spec`` holds the job's spec (the keys
the step reads, as ``jobs(config)`` derived them), ``--io`` its named inputs and outputs
(``{"input": {name: [paths]}, "output": {name: path}}``); both are JSON files, so no size limit of a
command line applies. A batch (``workflow.batches``) holds several jobs of the step,
``{"batch": [...]}`` in both files: they run one after another in this process, each as it would
alone (:func:`shuffledp.stages.run_step`). The stages are those of :func:`shuffledp.stages.discover`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shuffledp.commands import _args as A


def register(sub, account_sub) -> None:
    p = sub.add_parser("step", help="run one job of a workflow stage (the command of every stage rule)")
    p.add_argument("stage", help="a stage name (shuffledp.stages)")
    p.add_argument("step", help="a step of that stage")
    p.add_argument("--spec", required=True, type=job_file,
                   help="JSON file: the job's spec (a batch's: {\"batch\": [specs]})")
    p.add_argument("--io", required=True, type=job_file,
                   help="JSON file: the job's inputs and outputs (a batch's: {\"batch\": [io]})")
    p.set_defaults(func=_run)


def job_file(text: str) -> str:
    """An existing spec or io file. A missing job file of the workflow (``<results>/.jobs/spec-<hash>.json``)
    was removed by the parse of another run in this folder (pruning keeps only the job files of the
    parsing run's config; a run started with ``--nolock`` holds no lock that stops it): one line
    saying so and how to rerun (the same command writes it again)."""
    path = Path(text)
    if not path.exists() and not path.is_symlink() and path.parent.name == ".jobs":
        from shuffledp.stages import JOB_FILE_NAME

        if JOB_FILE_NAME.fullmatch(path.name):
            raise argparse.ArgumentTypeError(
                f"no such file: {text}: this job file was removed by another snakemake run in this folder that "
                "parsed another config (it keeps only its own jobs' files; a run with --nolock holds no lock that "
                "prevents it); rerun the same snakemake command: it writes the file again")
    return A.existing_file(text)


def _run(args) -> int:
    from shuffledp.stages import run_step

    run_step(args.stage, args.step, args.spec, args.io)
    return 0
