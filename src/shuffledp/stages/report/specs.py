"""The typed spec of the report stage's step (:mod:`shuffledp.stages.specs`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr

from shuffledp.stages.specs import Spec

WORD = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_]+$", max_length=64)]


class Page(Spec):
    """One page: the table of ``stage``/``step`` output ``output``, named ``title`` (its file stem)."""

    stage: WORD
    step: WORD
    output: WORD
    title: Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$", max_length=128)]


class Pages(Spec):
    pages: Annotated[list[Page], Field(min_length=1)]
