"""The toy stage's typed specs: a stage outside the package declares them the same way."""

from typing import Annotated

from pydantic import Field, StrictInt, StrictStr

from shuffledp.stages.specs import Seed, Spec


class Draw(Spec):
    k: Annotated[StrictInt, Field(ge=1)]
    seed: Seed


class Report(Spec):
    scale: StrictStr
