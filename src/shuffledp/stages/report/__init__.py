"""Report: every results table a stage flags for ``snakemake --report``, as an HTML page.

A stage flags a Markdown table for the report (an ``.md`` output with a :class:`Report`); a Markdown
file downloads from the report instead of showing, so this stage renders it: one job per flagged
table whose Parquet twin (same folder and stem, an output of the same step) the run builds, writing
``report/<stem>.html`` (:mod:`shuffledp.plotting.html_table`: the Markdown file's caption text and
the Parquet table, verdicts coloured). The workflow makes one rule per job of this stage, so that
each page keeps its own table's caption, category (the owning stage's title) and subcategory
(:func:`job_report`); the Markdown file itself is then not flagged (:func:`rendered`). A figure's
PDF is flagged like its PNG twin (:func:`figure_report`), so every file of ``results/figures`` is
in the report. Nothing here is listed by hand: a new stage's flagged tables appear by themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from shuffledp.stages import Output, Report, Stage, Step
from shuffledp.stages.jobs import Job, Ref


def parquet_twin(step: Step, output: Output) -> Output | None:
    """The Parquet output of ``step`` holding the data of a flagged Markdown table, or None."""
    if output.report is None or not output.path.endswith(".md") or output.over is not None:
        return None
    want = str(PurePosixPath(output.path).with_suffix(".parquet"))
    return next((o for o in step.outputs if o.path == want and o.root == output.root), None)


def rendered(step: Step, output: Output) -> bool:
    """True when this stage renders ``output`` (a flagged Markdown table of a step without wildcards)."""
    return not step.wildcards and parquet_twin(step, output) is not None


def figure_report(step: Step, output: Output) -> Report | None:
    """The report flag of a PDF figure: its PNG twin's (same folder and stem), or None."""
    if not output.path.endswith(".pdf") or output.over is not None:
        return output.report
    want = str(PurePosixPath(output.path).with_suffix(".png"))
    twin = next((o for o in step.outputs if o.path == want and o.root == output.root), None)
    return output.report or (twin.report if twin is not None else None)


def _stages() -> dict[str, Stage]:
    from shuffledp.stages import discover

    return {name: s for name, s in discover().items() if name != "report"}


def jobs(config: Mapping) -> list[Job]:
    """One job per flagged Markdown table of an enabled stage whose step has jobs in this config."""
    out = []
    for stage in _stages().values():
        if not stage.enabled(config):
            continue
        built = {j.step for j in stage.jobs(config)}
        for step in stage.steps:
            if step.name not in built:
                continue
            for o in step.outputs:
                if rendered(step, o):
                    stem = PurePosixPath(o.path).stem
                    out.append(Job("table", {"table": stem},
                                   {"stage": stage.name, "step": step.name, "output": o.name, "title": stem},
                                   inputs={"md": [Ref(step.name, o.name, stage=stage.name)],
                                           "parquet": [Ref(step.name, parquet_twin(step, o).name,
                                                           stage=stage.name)]}))
    return out


def job_report(spec: Mapping) -> tuple[str, str, str]:
    """(caption file, category, subcategory) of a page: those of the table it renders."""
    stage = _stages()[spec["stage"]]
    report = stage.step(spec["step"]).output(spec["output"]).report
    return stage.caption(report), stage.title, report.subcategory


def _table(spec, inputs, outputs) -> None:
    from pathlib import Path

    import pandas as pd

    from shuffledp.io import read_provenance, write_text
    from shuffledp.plotting.html_table import data_kinds, page

    markdown = Path(inputs["md"][0]).read_text(encoding="utf-8")
    parquet = inputs["parquet"][0]
    df = pd.read_parquet(parquet)
    write_text(outputs["html"], page(spec["title"], markdown, df, data_kinds(read_provenance(parquet))))


STAGE = Stage(
    name="report",
    title="Report pages",
    jobs=jobs,
    steps=(
        Step("table", _table, inputs=("md", "parquet"), wildcards={"table": "[A-Za-z0-9_]+"},
             spec_keys=frozenset({"stage", "step", "output", "title"}),
             outputs=(Output("html", "report/{table}.html", final=True),),
             mem_mb=1000, runtime=5),
    ),
)
