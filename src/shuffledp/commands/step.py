"""``shuffledp step <stage> <step> --spec FILE --io FILE``: run one job of a workflow stage.

Every stage rule of the workflow runs this one command. ``--spec`` holds the job's spec (the keys
the step reads, as ``jobs(config)`` derived them), ``--io`` its named inputs and outputs
(``{"input": {name: [paths]}, "output": {name: path}}``); both are JSON files, so no size limit of a
command line applies. The stages are those of :func:`shuffledp.stages.discover`.
"""

from __future__ import annotations

from shuffledp.commands import _args as A


def register(sub, account_sub) -> None:
    p = sub.add_parser("step", help="run one job of a workflow stage (the command of every stage rule)")
    p.add_argument("stage", help="a stage name (shuffledp.stages)")
    p.add_argument("step", help="a step of that stage")
    p.add_argument("--spec", required=True, type=A.existing_file, help="JSON file: the job's spec")
    p.add_argument("--io", required=True, type=A.existing_file, help="JSON file: the job's inputs and outputs")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from shuffledp.stages import run_step

    run_step(args.stage, args.step, args.spec, args.io)
    return 0
