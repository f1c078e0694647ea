"""docs/accountants_api.md, the Python page of the accountant, runs as written: every ```python block
executes (each in a fresh namespace; its ``assert`` lines check the relations it states), every name
of ``shuffledp.accountants``' practitioner surface appears on it, and it carries no computed number
(those would go stale)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

PAGE = REPO / "docs" / "accountants_api.md"
TEXT = PAGE.read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_the_page_shows_the_whole_surface():
    from shuffledp.accountants import practitioner

    assert len(PYTHON_BLOCKS) >= 5
    code = "\n".join(PYTHON_BLOCKS)
    for name in practitioner.__all__:
        assert re.search(rf"\b{name}\(", code), name


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(index):
    exec(compile(PYTHON_BLOCKS[index], f"docs/accountants_api.md python block {index}", "exec"), {})  # noqa: S102


def test_readme_links_the_page():
    assert "docs/accountants_api.md" in (REPO / "README.md").read_text()


def test_no_computed_numbers_on_the_page():
    assert not re.findall(r"\b\d+\.\d{4,}", TEXT)
