"""Kept for existing imports: Markdown tables now live in :mod:`shuffledp.io` (the one writer module)."""

from shuffledp.io import markdown_table

__all__ = ["markdown_table"]
