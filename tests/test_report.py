"""`snakemake --report`: every figure and claims table a stage declares is flagged with a caption and
its stage's category, and the report archive of the shared tiny run holds every figure and claims
table the run produced (read from the run, not from the rules)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import copy_of_tiny_workflow, run_snakemake

from shuffledp.experiments.multidim import dataset_label
from shuffledp.io import read_provenance
from shuffledp.plotting import html_table
from shuffledp.plotting.html_table import VERDICT_COLUMNS, verdict_colour
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]
CAPTIONS = REPO / "workflow" / "report"


def _stage_captions() -> list[Path]:
    """The caption files of the discovered stages (each in its package's ``captions/`` folder)."""
    return sorted(p for s in discover().values() if s.folder for p in (s.folder / "captions").glob("*.rst"))


def test_every_stage_figure_and_claims_table_has_a_caption():
    """Every PNG figure and every claims table a discovered stage declares is flagged for the
    report with a caption file that exists; every caption file of a stage is used."""
    used, unflagged = set(), []
    for stage in discover().values():
        for step in stage.steps:
            for out in step.outputs:
                must = re.fullmatch(r"figures/.+\.png|tables/.*claims\.md", out.path)
                if out.report is None:
                    if must:
                        unflagged.append(f"{stage.name}.{step.name}.{out.name}")
                    continue
                caption = Path(stage.caption(out.report))
                assert caption.is_file(), caption
                used.add(caption)
    assert not unflagged, f"outputs without a report caption: {unflagged}"
    assert set(_stage_captions()) == used

def test_every_caption_states_the_scale_and_the_data_kind():
    assert 'report: "workflow/report/workflow.rst"' in (REPO / "Snakefile").read_text()
    assert sorted(p.name for p in CAPTIONS.glob("*.rst")) == ["workflow.rst"]  # captions live with their stage
    for path in [CAPTIONS / "workflow.rst", *_stage_captions()]:
        name, text = path.name, path.read_text()
        if name not in ("workflow.rst", "datasets_table.rst"):
            # the stand-in label is decided at run time: the caption sends the reader to the title
            assert "stand-in" in text or "synthetic" in text, path
        if name.startswith("fig") or name in ("gain.rst", "msnbc_category_shares.rst"):
            # every figure's caption carries the run's data line (real / synthetic / stand-in per dataset)
            assert "{{ snakemake.params.data }}" in text, path
        assert 'snakemake.config["name"]' in text, f"{path}: the caption must state the scale (config name)"


@pytest.mark.slow
def test_report_archive_holds_the_flagged_files(tiny_workflow, tmp_path):
    workdir = copy_of_tiny_workflow(tiny_workflow, tmp_path / "run")  # Snakemake runs in it: a copy
    archive = workdir / "report.zip"
    run_snakemake("--configfile", str(workdir / "config.yaml"), "--cores", "2", cwd=workdir)  # the report pages
    run_snakemake("--configfile", str(workdir / "config.yaml"), "--report", str(archive), cwd=workdir)
    # every file of results/figures and every claims table this run produced, found from the run itself
    figures = sorted((workdir / "results/figures").iterdir())
    claims = sorted((workdir / "results/tables").glob("*claims.parquet"))
    assert len(figures) >= 20 and len(claims) >= 3, (figures, claims)
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        by_base = {}
        for n in names:
            by_base.setdefault(Path(n).name, []).append(n)
        missing = [p.name for p in figures if p.name not in by_base]
        assert not missing, f"report archive lacks {missing}; it holds {sorted(by_base)}"
        for path in figures:
            assert len(by_base[path.name]) == 1, by_base[path.name]
            assert zf.read(by_base[path.name][0]) == path.read_bytes(), path.name
        # every claims table as a rendered HTML table (no Markdown file to download), verdicts coloured
        assert not [n for n in by_base if n.endswith(".md")], sorted(by_base)
        for path in claims:
            page = f"{path.stem}.html"
            assert page in by_base, f"report archive lacks the claims table {page}"
            _check_claims_page(zf.read(by_base[page][0]).decode(), pd.read_parquet(path))
        html = zf.read(next(n for n in names if n.endswith("report.html"))).decode()
    for category in ("Datasets", "Per-user histograms", "Multidimensional categorical data",
                     "Multidimensional frameworks"):
        assert category in html, category
    # captions are rendered with the run's configuration (its name is the scale) and say on what data
    # this run built each figure, from its input tables' records
    assert re.search(r"configuration <tt class=[^>]*>tiny<", html)
    lines = re.findall(r"Data of this run, from the records of the tables it was drawn from: ([^<]*?)\.", html)
    assert lines and all(re.match(r"(real|synthetic|stand-in): ", x) or x.startswith("no recorded") for x in lines)
    assert any("msnbc" in x for x in lines)
    # the Adult label of the tables follows the prepared table's provenance (real, or stand-in offline)
    label = dataset_label("adult", read_provenance(workdir / "results/multidim/data/adult.parquet"))
    for table in ("multidim_table3.md", "multidim_claims.md"):
        assert label in (workdir / "results/tables" / table).read_text(), table


def _check_claims_page(page: str, df: pd.DataFrame) -> None:
    """The page is an HTML table with every column and row of the Parquet file, each verdict coloured."""
    heads = re.findall(r"<th>(.*?)</th>", page)
    assert heads == [str(c) for c in df.columns], heads
    rows = re.findall(r"<tr>(.*?)</tr>", page, flags=re.S)[1:]
    assert len(rows) == len(df), (len(rows), len(df))
    col = next(c for c in VERDICT_COLUMNS if c in df.columns)
    for row, verdict in zip(rows, df[col], strict=True):
        assert f'<td style="background:{verdict_colour(verdict)}">{verdict}</td>' in row, row


def test_page_renders_every_column_and_colours_the_verdicts():
    df = pd.DataFrame({"id": ["a", "b", "c"], "held": ["held", "not held", "not testable at this scale"],
                       "measured": [0.5, float("nan"), 3.0], "explanation": ["x < y", "", "why"],
                       "scale": ["tiny"] * 3, "data": ["real", "stand-in", "real"]})
    md = "# Title\n\nScale `tiny`: stand-in data.\n\n| id | held |\n|---|---|\n| a | held |\n\nA note.\n"
    page = html_table.page("t", md, df, [("msnbc", "stand-in")])
    assert "<h2>Title</h2>" in page and "<p>Scale tiny: stand-in data.</p>" in page and "<p>A note.</p>" in page
    assert "Data of this table: msnbc: stand-in." in page
    assert "Scale: tiny (3 rows)." in page and "Data of the rows: real (2 rows), stand-in (1 rows)." in page
    assert "<th>explanation</th>" in page and "<td>x &lt; y</td>" in page
    colours = {html_table.verdict_colour(v) for v in df["held"]}
    assert len(colours) == 3  # held, not held and not testable look different
    _check_claims_page(page, df)
    assert page == html_table.page("t", md, df, [("msnbc", "stand-in")])  # deterministic


def _mixed_table() -> pd.DataFrame:
    """Every column type read_rows reads without pandas, nulls included where it accepts them."""
    return pd.DataFrame({
        "name": ["a", None, "c<d>", "e"], "held": ["held", "not held", "", "held"],
        "x": [0.1, float("nan"), None, 1e300], "big": [2**62 + 1, -3, 0, 7],
        "sparse": pd.array([2**53 + 1, None, 1234567, 5], dtype="Int64"), "flag": [True, False, True, False],
        "scale": ["paper", "tiny", "tiny", "tiny"], "data": ["real", "stand-in", "real", "real"]})


def test_a_page_read_with_pyarrow_alone_is_the_page_pandas_gives(tmp_path):
    """The page job reads its table without pandas (read_rows): the page has the same bytes as the
    page of ``pandas.read_parquet``'s frame, for every column type it accepts (an integer column with
    nulls becomes floats, as pandas reads it: 2**53 + 1 shows as 9.0072e+15)."""
    from shuffledp.io import write_table

    path = tmp_path / "t.parquet"
    write_table(_mixed_table(), path)
    md = "# Title\n\n| a |\n|---|\n| 1 |\n"
    rows = html_table.read_rows(path)
    assert rows is not None
    page = html_table.page("t", md, rows, [("msnbc", "real")])
    assert page == html_table.page("t", md, pd.read_parquet(path), [("msnbc", "real")])
    assert "<td class=\"num\">9.0072e+15</td>" in page and "<td class=\"num\">4611686018427387905</td>" in page
    assert "Scale: paper (1 rows), tiny (3 rows)." in page


@pytest.mark.parametrize("column", [pd.Series([True, None, False], dtype=object),  # bool with a null
                                    pd.to_datetime(["2020-01-01"] * 3), pd.Categorical(["a", "b", "a"]),
                                    pd.Series([1.5, 2.5, 3.5], dtype="float32")])
def test_read_rows_leaves_other_columns_to_pandas(tmp_path, column):
    """A column whose pandas values have no sure plain-Python twin (here: a boolean column with a
    null, timestamps, a categorical, float32) makes read_rows give None: the job reads with pandas."""
    from shuffledp.io import write_table

    write_table(pd.DataFrame({"a": [1, 2, 3], "b": column}), tmp_path / "t.parquet")
    assert html_table.read_rows(tmp_path / "t.parquet") is None
    write_table(pd.DataFrame({"a": [1, 2, 3], "scale": [1, 2, 3]}), tmp_path / "s.parquet")
    assert html_table.read_rows(tmp_path / "s.parquet") is None  # the summary counts a string column only


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # docutils' writer_name, as Snakemake calls it
@pytest.mark.parametrize("configfile", ["config.yaml", "paper.yaml"])
def test_every_caption_renders_with_the_shipped_configs(configfile):
    """Snakemake renders captions with Jinja2 and the run's config: a wrong key would break
    `snakemake --report` only after a full run, so every caption is rendered here for both configs."""
    import types

    import jinja2
    from docutils.core import publish_parts

    from shuffledp.config import load_validated

    # as the workflow has it: paper.yaml deep-merged over config.yaml, the schema's defaults filled in
    files = dict.fromkeys(["config.yaml", configfile])
    cfg = load_validated(REPO / "config" / f for f in files)
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for caption in sorted(CAPTIONS.glob("*.rst")) + _stage_captions():
        # the segmented figure caption is rendered once per figure (the value of its output list,
        # set before the caption as the workflow's list_caption does)
        for segfig in cfg["segmented"]["figures"]:
            sm = types.SimpleNamespace(config=cfg, wildcards=types.SimpleNamespace(),
                                       params=types.SimpleNamespace(data="real: msnbc; stand-in: ipums_br"))
            source = f'{{% set segfig = "{segfig}" -%}}\n' + caption.read_text()
            text = env.from_string(source).render(snakemake=sm, categories=[], files=[])
            assert cfg["name"] in text, caption.name
            html = publish_parts(text, writer_name="html", settings_overrides={"report_level": 2,
                                                                                  "halt_level": 2})["body"]
            assert "System Message" not in html, caption.name


def test_data_summary_names_each_dataset_by_its_least_real_record(tmp_path):
    """The captions' data line: stand-in beats synthetic beats real for a dataset named by several
    records; files that are missing, not Parquet or without a record are skipped."""
    from shuffledp.io import job_record_context, write_table
    from shuffledp.stages import data_summary

    def table(name, sources):
        with job_record_context({"stage": "t", "step": "s", "wildcards": {}, "spec": "0", "sources": sources}):
            write_table(pd.DataFrame({"a": [1]}), tmp_path / name)
        return str(tmp_path / name)

    a = table("a.parquet", [{"dataset": "msnbc", "source": "real", "standin": False},
                            {"dataset": "synth", "source": {"source": "synthetic"}, "standin": False}])
    b = table("b.parquet", [{"dataset": "msnbc", "source": "standin", "standin": True},
                            {"dataset": "adult", "source": "real", "standin": False}])
    assert data_summary([a]) == "real: msnbc; synthetic: synth"
    assert data_summary([a, b]) == "real: adult; synthetic: synth; stand-in: msnbc"
    assert data_summary([b, a]) == data_summary([a, b])
    plain = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(plain)
    assert data_summary([str(plain), str(tmp_path / "missing.parquet"), "x.txt"]).startswith("no recorded")


def test_data_summary_reads_a_rewritten_table_again(tmp_path):
    """The data line is remembered per (path, size, mtime) within a process (Snakemake evaluates the
    params of every job several times): a table rewritten with another record is read again."""
    import os

    from shuffledp.io import job_record_context, write_table
    from shuffledp.stages import data_summary

    path = tmp_path / "t.parquet"

    def write(sources, mtime_ns):
        with job_record_context({"stage": "t", "step": "s", "wildcards": {}, "spec": "0", "sources": sources}):
            write_table(pd.DataFrame({"a": [1]}), path)
        os.utime(path, ns=(mtime_ns, mtime_ns))

    write([{"dataset": "msnbc", "source": "real", "standin": False}], 1_000_000_000)
    assert data_summary([str(path)]) == "real: msnbc"
    assert data_summary([str(path)]) == "real: msnbc"  # remembered: the same answer
    write([{"dataset": "msnbc", "source": "standin", "standin": True}], 2_000_000_000)
    assert data_summary([str(path)]) == "stand-in: msnbc"
