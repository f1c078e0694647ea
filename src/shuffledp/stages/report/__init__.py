"""Report: every results table a stage flags for ``snakemake --report``, as an HTML page.

A stage flags a Markdown table for the report (an ``.md`` output with a :class:`Report`); a Markdown
file downloads from the report instead of showing, so this stage renders it: every flagged table
whose Parquet twin (same folder and stem, an output of the same step) the run builds, as
``report/<stem>.html`` (:mod:`shuffledp.plotting.html_table`: the Markdown file's caption text and
the Parquet table, verdicts coloured). One job per stage renders its pages, and the workflow makes
one rule per job (``report_pages_<stage>``), flagging each page with its own table's caption,
category (the owning stage's title) and subcategory (:func:`page_report`); the Markdown file
itself is then not flagged (:func:`rendered`). A figure's PDF is flagged like its PNG twin
(:func:`figure_report`), so every file of ``results/figures`` is in the report. Nothing here is
listed by hand: a new stage's flagged tables appear by themselves.
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
    """The report flag of a PDF figure (or list of figures): its PNG twin's (same folder and stem,
    the same list), or None."""
    if not output.path.endswith(".pdf"):
        return output.report
    want = str(PurePosixPath(output.path).with_suffix(".png"))
    twin = next((o for o in step.outputs if o.path == want and o.root == output.root and o.over == output.over),
                None)
    return output.report or (twin.report if twin is not None else None)


def _stages() -> dict[str, Stage]:
    from shuffledp.stages import discover

    return {name: s for name, s in discover().items() if name != "report"}


def jobs(config: Mapping) -> list[Job]:
    """One job per enabled stage with flagged Markdown tables whose steps have jobs in this config:
    it renders that stage's pages (a page is a fraction of a process's start-up; a stage's pages
    need nothing of the other stages)."""
    out = []
    for stage in _stages().values():
        if not stage.enabled(config):
            continue
        built = {j.step for j in stage.jobs(config)}
        pages, md, parquet = [], [], []
        for step in stage.steps:
            if step.name not in built:
                continue
            for o in step.outputs:
                if rendered(step, o):
                    pages.append({"stage": stage.name, "step": step.name, "output": o.name,
                                  "title": PurePosixPath(o.path).stem})
                    md.append(Ref(step.name, o.name, stage=stage.name))
                    parquet.append(Ref(step.name, parquet_twin(step, o).name, stage=stage.name))
        if pages:
            out.append(Job("pages", {"pstage": stage.name}, {"pages": pages},
                           inputs={"md": md, "parquet": parquet}))
    return out


def page_titles(spec: Mapping) -> list[str]:
    """The pages of the ``pages`` job (its output list's values): each table's file stem."""
    return [p["title"] for p in spec["pages"]]


def page_report(page: Mapping) -> tuple[str, str, str]:
    """(caption file, category, subcategory) of a page: those of the table it renders."""
    stage = _stages()[page["stage"]]
    report = stage.step(page["step"]).output(page["output"]).report
    return stage.caption(report), stage.title, report.subcategory


def _page_flag(spec: Mapping, title: str) -> tuple[str, str, str]:
    """The report flag of the page ``title`` of a ``pages`` job (Output.job_report)."""
    return page_report(next(p for p in spec["pages"] if p["title"] == title))


def _pages(spec, inputs, outputs) -> None:
    from pathlib import Path

    from shuffledp.errors import UsageError
    from shuffledp.io import read_provenance, write_text
    from shuffledp.plotting.html_table import data_kinds, page, read_rows

    pages = spec["pages"]
    if not (len(pages) == len(inputs["md"]) == len(inputs["parquet"])):
        raise UsageError(f"--spec: pages names {len(pages)} tables, the inputs hold {len(inputs['md'])} Markdown "
                         f"and {len(inputs['parquet'])} Parquet files")
    for p, md, parquet in zip(pages, inputs["md"], inputs["parquet"], strict=True):
        markdown = Path(md).read_text(encoding="utf-8")
        df = read_rows(parquet)
        if df is None:  # a column pyarrow alone cannot give as pandas would: pandas reads it
            import pandas as pd

            df = pd.read_parquet(parquet)
        write_text(outputs["html"][p["title"]], page(p["title"], markdown, df, data_kinds(read_provenance(parquet))))


STAGE = Stage(
    name="report",
    title="Report pages",
    jobs=jobs,
    steps=(
        Step("pages", _pages, spec="Pages", inputs=("md", "parquet"), wildcards={"pstage": "[A-Za-z0-9_]+"},
             outputs=(Output("html", "report/{table}.html", final=True, over="table", values=page_titles,
                            job_report=_page_flag),),
             mem_mb=1000, runtime=5),
    ),
)
