"""The typed specs of the multidim stage's steps (:mod:`shuffledp.stages.specs`), each field's type
from this stage's schema section (``schema.yaml``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictStr

from shuffledp.errors import ConfigError
from shuffledp.experiments.multidim_names import ADULT, METHODS, parse_ratio
from shuffledp.stages.specs import Name, Reps, Seed, Spec, from_schema, section_schema

S = section_schema(__file__)
DATASET = from_schema(S, "multidim.datasets[]")


def _ratio(text: str) -> str:
    try:
        parse_ratio(text, "ratio")
    except ConfigError as exc:
        raise ValueError(str(exc).removeprefix("config key ratio: ")) from None
    return text


class Prepare(Spec):
    dataset: Literal[ADULT]
    attributes: Annotated[list[Annotated[StrictStr, Field(min_length=1)]], Field(min_length=1)]


class _Job(Spec):
    dataset: DATASET
    reps: Reps
    records: from_schema(S, "multidim.records")
    seed: Seed


class Uniform(_Job):
    mechanism: Literal[tuple(S["multidim"]["properties"]["mechanisms"]["items"]["enum"])]
    eps: from_schema(S, "multidim.eps")
    topk: from_schema(S, "multidim.topk")
    bound: from_schema(S, "multidim.bound") | None = None
    family_bits: from_schema(S, "multidim.hash_family_bits") | None = None
    np_fraction: from_schema(S, "multidim.flame_np_fraction") | None = None
    flame_variant: from_schema(S, "multidim.flame_variant") | None = None


class Personal(_Job):
    method: Literal[METHODS]
    ratios: Annotated[from_schema(S, "multidim.personal.ratios"), AfterValidator(lambda v: [_ratio(r) for r in v])]
    bound: from_schema(S, "multidim.bound")
    family_bits: from_schema(S, "multidim.hash_family_bits")
    classes: from_schema(S, "multidim.personal.classes", "MultidimClasses")


class Report(Spec):
    datasets: from_schema(S, "multidim.datasets")
    topk: from_schema(S, "multidim.topk")
    scale: Name
