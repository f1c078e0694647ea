"""Small helpers for result tables: Markdown rendering with a caption."""

from __future__ import annotations

import math

import pandas as pd


def markdown_table(df: pd.DataFrame, caption: str, float_format: str = "{:.6g}") -> str:
    """A GitHub-flavoured Markdown table preceded by its caption (no extra dependency)."""
    cols = [str(c) for c in df.columns]
    lines = [caption, "", "| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, float_format) for v in row) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v: object, float_format: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, float):
        return float_format.format(v)
    return str(v).replace("|", "\\|")
