"""docs/accountants.md, the practitioner's page, runs as written: every ```python block executes
(each in a fresh namespace, its own ``assert`` lines checking the relations it states), every
``shuffledp`` line of its ```bash blocks runs as a whole process and its JSON answer satisfies the
relations the page states (lower <= upper, an inverse answer meets its target, T rounds between
one round and T eps0); its links to the internals page resolve to headings there, and it carries
no computed number (those would go stale)."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys

import pytest
from conftest import REPO

PAGE = REPO / "docs" / "accountants.md"
INTERNALS = REPO / "docs" / "accountants_internals.md"
TEXT = PAGE.read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
COMMANDS = [ln.strip() for block in re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)
            for ln in block.replace("\\\n", " ").splitlines() if ln.strip().startswith("shuffledp ")]


def _flag(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def test_the_page_answers_every_question_with_a_call():
    assert len(PYTHON_BLOCKS) >= 5 and len(COMMANDS) >= 5
    joined = "\n".join(COMMANDS)
    for needle in ("--solve eps0", "--solve n", "--rounds", "--mechanism general"):
        assert needle in joined, needle
    code = "\n".join(PYTHON_BLOCKS)
    for fn in ("best.best_eps", "inverse.solve_eps0", "inverse.solve_n", "composition.composed_eps"):
        assert fn in code, fn


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(index):
    exec(compile(PYTHON_BLOCKS[index], f"docs/accountants.md python block {index}", "exec"), {})  # noqa: S102


def _check_answer(args: list[str], out: dict) -> None:
    assert math.isfinite(out["eps"]) and out["eps"] >= 0
    assert out["eps_lower"] <= out["eps"] * (1 + 1e-9)
    if math.isfinite(out["ratio"]):
        assert out["ratio"] >= 1 - 1e-9
    solve = _flag(args, "--solve")
    if solve is not None:
        target = float(_flag(args, "--target-eps"))
        assert out["eps"] <= target
        if out["fails_at"] is not None:
            assert out["eps_at_fail"] > target
        if solve == "eps0":
            assert out["eps0"] >= target
    else:
        assert out["eps"] <= float(_flag(args, "--eps0"))
    rounds = _flag(args, "--rounds")
    if rounds is not None:
        assert out["eps"] <= out["eps_composed"] <= int(rounds) * float(_flag(args, "--eps0"))
    if "--detail" in args:
        uppers = [b["eps"] for b in out["bounds"].values() if b["kind"] == "upper" and b["eps"] is not None]
        assert out["eps"] == min(uppers)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_runs_and_its_answer_holds(cmd):
    args = shlex.split(re.sub(r"\s+#.*$", "", cmd))
    proc = subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO)
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr[-2000:]}"
    lines = proc.stdout.strip().splitlines()
    assert lines
    for line in lines:
        _check_answer(args, json.loads(line))


def _slug(heading: str) -> str:
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def test_links_to_the_internals_page_resolve():
    anchors = {_slug(h) for h in re.findall(r"^#+ (.*)$", INTERNALS.read_text(), flags=re.M)}
    links = re.findall(r"\(accountants_internals\.md(#[^)]*)?\)", TEXT)
    assert links, "the page links to its internals"
    for anchor in (a for a in links if a):
        assert anchor[1:] in anchors, anchor


def test_no_computed_numbers_on_the_page():
    """Numbers the code computes go stale: the page states relations (asserted) instead. A decimal
    with four or more digits after the point is taken as one."""
    assert not re.findall(r"\b\d+\.\d{4,}", TEXT)
