"""The typed specs of the personalized stage's steps (:mod:`shuffledp.stages.specs`), each field's
type from this stage's schema section (``schema.yaml``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool

from shuffledp.stages.specs import Name, Number, Probability, Seed, Spec, from_schema, section_schema

S = section_schema(__file__)
BOUNDS = S["personalized"]["properties"]
BOUND = Literal[tuple(dict.fromkeys(BOUNDS["bounds_pure"]["items"]["enum"] + BOUNDS["bounds_approx"]["items"]["enum"]))]
SETTING = from_schema(S, "personalized.table2.setting")
N = from_schema(S, "personalized.n_grid[]")
# the local delta: 0 for the pure (Laplace) bounds, delta_local_approx for the approximate ones
DELTA_LOCAL = Annotated[Number, Field(ge=0, lt=1)]
# a job's seeds: the config's seed plus each offset of personalized.seeds
SEEDS = Annotated[list[Seed], Field(min_length=1, max_length=100)]
CALIBRATION = Literal[tuple(dict.fromkeys(BOUNDS["calibration"]["enum"]
                                          + BOUNDS["table2"]["properties"]["rows"]["items"]["properties"]
                                          ["calibration"]["enum"]))]
ROW = BOUNDS["table2"]["properties"]["rows"]["items"]["properties"]


class Points(Spec):
    bound: BOUND
    settings: from_schema(S, "personalized.settings")
    mechanism: Literal["laplace", "gaussian"]
    n_grid: from_schema(S, "personalized.n_grid")
    seeds: SEEDS
    delta_central: from_schema(S, "personalized.delta_central")
    delta_local: DELTA_LOCAL
    calibration: CALIBRATION | None = None
    variant: StrictBool | None = None


class Row(Spec):
    """One row of Table 2."""

    name: from_schema(S, "personalized.table2.rows[].name")
    bound: from_schema(S, "personalized.table2.rows[].bound")
    setting: SETTING
    n: from_schema(S, "personalized.table2.n")
    seed: Seed
    delta_local: Probability
    eps_grid: from_schema(S, "personalized.table2.eps_central")
    method: from_schema(S, "personalized.table2.rows[].method") | None = None
    calibration: from_schema(S, "personalized.table2.rows[].calibration") | None = None
    clone_factor: from_schema(S, "personalized.table2.rows[].clone_factor") | None = None
    mechanism: from_schema(S, "personalized.table2.rows[].mechanism") | None = None


class Table2(Spec):
    rows: Annotated[list[Row], Field(min_length=1, max_length=50)]


class Report(Spec):
    delta_central: from_schema(S, "personalized.delta_central")
    delta_local: Probability
    t2_setting: SETTING
    t2_n: from_schema(S, "personalized.table2.n")
    scale: Name
