"""A results table as a stand-alone HTML page for ``snakemake --report``.

The page holds the Markdown table's own caption text (the lines around its table: the title and the
run-time stand-in label) and the Parquet table itself, every column the file has (a claims table's
``explanation`` or ``quote`` column shows like any other). A verdict column (``held`` or
``verdict``) is coloured: held green, not held red, anything else (not testable at this scale) grey.
The data kind of every input table named in the Parquet provenance, and a claims table's scale and
data kinds (its ``scale`` and ``data`` columns, row counts), are listed under the caption.

A page job reads its Parquet table with pyarrow alone (:func:`read_rows`) when every column has a
plain-Python twin of what ``pandas.read_parquet`` and ``itertuples`` give (strings, doubles,
integers, booleans without nulls): the same values, so the same bytes, without pandas' import
(about 0.25 s of CPU in a job of about 0.6 s). Any other table is read with pandas, as before.
"""

from __future__ import annotations

import html
import math
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import pandas as pd

VERDICT_COLUMNS = ("held", "verdict")
_COLOURS = {"held": "#d4edda", "not held": "#f8d7da"}
_OTHER = "#e9ecef"

_STYLE = """
body { font-family: sans-serif; font-size: 14px; margin: 1em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: 3px 6px; vertical-align: top; text-align: left; }
th { background: #f2f2f2; position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
p.kinds { color: #444; }
"""


def verdict_colour(value: object) -> str:
    """The background of a verdict cell: held, not held, or anything else."""
    if isinstance(value, bool):  # a boolean verdict column: True is held
        value = "held" if value else "not held"
    text = str(value).strip("* ").lower()
    return _COLOURS.get(text, _OTHER)


def caption_lines(markdown: str) -> tuple[list[str], list[str]]:
    """The non-table lines of a Markdown table file: those before its first table, those after its last."""
    lines = markdown.splitlines()
    rows = [i for i, line in enumerate(lines) if line.lstrip().startswith("|")]
    if not rows:
        return [line for line in lines if line.strip()], []
    before = [line for line in lines[: rows[0]] if line.strip()]
    after = [line for line in lines[rows[-1] + 1:] if line.strip() and not line.lstrip().startswith("|")]
    return before, after


def _text(line: str) -> str:
    """One Markdown line as HTML: a heading or a paragraph (emphasis and code marks dropped)."""
    stripped = line.lstrip("#").strip()
    level = len(line) - len(line.lstrip("#"))
    body = html.escape(stripped.replace("`", "").replace("**", ""))
    return f"<h{min(level + 1, 4)}>{body}</h{min(level + 1, 4)}>" if level else f"<p>{body}</p>"


class Rows(NamedTuple):
    """A table as plain Python values: its column names and its rows (tuples of str, float, int,
    bool or None), the values ``DataFrame.itertuples`` gives once each numpy scalar is ``.item()``-ed."""

    columns: list[str]
    rows: list[tuple]


SUMMARY_COLUMNS = (("scale", "Scale"), ("data", "Data of the rows"))


def rows_of_frame(df: pd.DataFrame) -> Rows:
    """The rows of a DataFrame (numpy scalars as Python values)."""
    return Rows([str(c) for c in df.columns],
                [tuple(v.item() if hasattr(v, "item") else v for v in row) for row in df.itertuples(index=False)])


def _column_values(column, name: str) -> list | None:
    """The values ``pandas.read_parquet`` then ``itertuples`` give for one Arrow column (nulls as
    None: pandas' NaN and None both show as an empty cell), or None where no plain twin is sure."""
    import pyarrow.types as pat

    t, nulls = column.type, column.null_count
    if name in dict(SUMMARY_COLUMNS) and not (pat.is_string(t) and nulls == 0):
        return None  # column_summary counts str() of pandas' values: a plain string column only
    if pat.is_string(t) or pat.is_large_string(t) or pat.is_float64(t) or (pat.is_boolean(t) and nulls == 0):
        return column.to_pylist()
    if pat.is_integer(t):  # pandas reads an integer column with nulls as float64
        return column.to_pylist() if nulls == 0 else [None if v is None else float(v) for v in column.to_pylist()]
    return None


def read_rows(path) -> Rows | None:
    """A Parquet table's rows read with pyarrow alone, or None where pandas must read it (a column of
    another type, pandas metadata that would rename columns or restore an index, repeated names)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:  # not pq.read_table: it imports pyarrow.dataset, which imports pandas
        table = f.read()
    names = [str(n) for n in table.column_names]
    if b"pandas" in (table.schema.metadata or {}) or not names or len(set(names)) != len(names):
        return None
    columns = [_column_values(table.column(i), n) for i, n in enumerate(names)]
    if any(c is None for c in columns):
        return None
    return Rows(names, list(zip(*columns, strict=True)))


def _cell(value: object, column: str) -> str:
    pd = sys.modules.get("pandas")  # pd.NA exists only where pandas was imported
    if value is None or (pd is not None and value is pd.NA) or (isinstance(value, float) and math.isnan(value)):
        return "<td></td>"
    if isinstance(value, float):
        return f'<td class="num">{value:.6g}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    text = html.escape(str(value))
    if column in VERDICT_COLUMNS:
        return f'<td style="background:{verdict_colour(value)}">{text}</td>'
    return f"<td>{text}</td>"


def table_html(table: Rows | pd.DataFrame) -> str:
    table = table if isinstance(table, Rows) else rows_of_frame(table)
    cols = table.columns
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = []
    for values in table.rows:
        body.append("<tr>" + "".join(_cell(v, c) for v, c in zip(values, cols, strict=True)) + "</tr>")
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>"


def data_kinds(provenance: Mapping) -> list[tuple[str, str]]:
    """(dataset, kind) of every input table named in a product's provenance, sorted, without repeats."""
    found = set()
    for prov in [provenance, *provenance.get("inputs", [])]:
        if "dataset" in prov and "source" in prov:
            found.add((str(prov["dataset"]), "stand-in" if prov.get("standin") else str(prov["source"])))
    return sorted(found)


def _counts(table: Rows | pd.DataFrame, col: str) -> Mapping[str, int]:
    if isinstance(table, Rows):  # read_rows keeps these columns as non-null strings only
        i = table.columns.index(col)
        return Counter(row[i] for row in table.rows)
    return table[col].astype(str).value_counts(sort=False)


def column_summary(table: Rows | pd.DataFrame) -> list[str]:
    """The scale and the data kinds of a claims table's rows (its ``scale`` and ``data`` columns)."""
    lines = []
    columns = table.columns if isinstance(table, Rows) else list(table.columns)
    for col, label in SUMMARY_COLUMNS:
        if col in columns and len(table.rows if isinstance(table, Rows) else table):
            counts = _counts(table, col)
            lines.append(f"{label}: " + ", ".join(f"{k} ({n} rows)" for k, n in sorted(counts.items())) + ".")
    return lines


def page(title: str, markdown: str, df: Rows | pd.DataFrame, kinds: Sequence[tuple[str, str]] = ()) -> str:
    """The whole HTML page of one table (deterministic: the same inputs give the same bytes)."""
    before, after = caption_lines(markdown)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"]
    parts += [_text(line) for line in before]
    if kinds:
        listed = "; ".join(f"{html.escape(d)}: {html.escape(k)}" for d, k in kinds)
        parts.append(f'<p class="kinds">Data of this table: {listed}.</p>')
    parts += [f'<p class="kinds">{html.escape(line)}</p>' for line in column_summary(df)]
    parts.append(table_html(df))
    parts += [_text(line) for line in after]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
