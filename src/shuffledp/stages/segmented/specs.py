"""The typed specs of the segmented stage's steps (:mod:`shuffledp.stages.specs`): each field's type
from this stage's schema section (``schema.yaml``), the derived ones (``delta``, the ``m`` grid)
stated here."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictStr, model_validator

from shuffledp.experiments.segmented import PROTOCOLS
from shuffledp.stages.specs import Name, NonNegInt, Number, Probability, Reps, Seed, Spec, from_schema, section_schema

S = section_schema(__file__)
N = from_schema(S, "segmented.n[]")  # one n
NS = from_schema(S, "segmented.n")
D = from_schema(S, "segmented.datasets.*.d")
SIZE = from_schema(S, "segmented.datasets.*.s")
DATASET_NAME = Annotated[StrictStr, Field(pattern=S["segmented"]["properties"]["datasets"]["propertyNames"]["pattern"],
                                          max_length=64)]
SETTING_NAME = Annotated[StrictStr, Field(pattern=S["segmented"]["properties"]["settings"]["propertyNames"]["pattern"],
                                          max_length=32)]
LEVELS = from_schema(S, "segmented.levels")
SETTINGS = from_schema(S, "segmented.settings")
SHARES = from_schema(S, "segmented.settings.*")
ACCOUNTANT = from_schema(S, "segmented.accountant")
ACCOUNTANTS = from_schema(S, "segmented.accountants")
FIGURES = from_schema(S, "segmented.figures")
OVERSIZE = from_schema(S, "segmented.oversize")
M_GRID = Annotated[list[Annotated[Number, Field(gt=0, le=10000)]], Field(min_length=2, max_length=200)]


def _s_below_d(spec):
    if spec.s >= spec.d:
        raise ValueError(f"s = {spec.s} must be < d = {spec.d}")
    return spec


def _padding_none_or_s(spec):
    """``padding``: the padding domain's size, 0 (every user holds at least ``s`` items) or ``s``
    (stages.segmented.padding_items); whether the data fits it, only ``prepare`` can see."""
    if spec.padding not in (0, spec.s):
        raise ValueError(f"padding: must be 0 or s = {spec.s}, got {spec.padding}")
    return spec


def _shares_per_level(spec):
    for name, shares in spec.settings.items():
        if len(shares) != len(spec.levels):
            raise ValueError(f"settings.{name}: {len(shares)} shares for {len(spec.levels)} levels")
    return spec


class Prepare(Spec):
    dataset: DATASET_NAME
    d: D
    s: SIZE
    seed: Seed
    oversize: OVERSIZE
    padding: NonNegInt  # 0 or s: the padding domain's size

    _s = model_validator(mode="after")(_s_below_d)
    _pad = model_validator(mode="after")(_padding_none_or_s)


class Accountant(Spec):
    n: N
    d: D
    s: SIZE
    levels: LEVELS
    delta: Probability
    m_grid: M_GRID
    accountants: ACCOUNTANTS
    settings: SETTINGS
    padding: NonNegInt  # 0 or s: the padding domain's size

    _s = model_validator(mode="after")(_s_below_d)
    _pad = model_validator(mode="after")(_padding_none_or_s)
    _shares = model_validator(mode="after")(_shares_per_level)


class ParamsPaper(Spec):
    dataset: DATASET_NAME
    n: N
    d: D
    s: SIZE
    levels: LEVELS
    settings: SETTINGS
    delta: Probability
    uniform_eps: from_schema(S, "segmented.uniform_eps")
    padding: NonNegInt  # 0 or s: the padding domain's size

    _s = model_validator(mode="after")(_s_below_d)
    _pad = model_validator(mode="after")(_padding_none_or_s)
    _shares = model_validator(mode="after")(_shares_per_level)


class Params(ParamsPaper):
    accountant: ACCOUNTANT


class Point(Spec):
    """One panel of a ``run`` job: ``data``/``table`` index the job's input lists."""

    dataset: DATASET_NAME
    n: N
    setting: SETTING_NAME
    data: NonNegInt
    table: NonNegInt
    levels: LEVELS | None = None
    shares: SHARES | None = None
    level_histogram: from_schema(S, "segmented.level_histogram") | None = None
    sampler: from_schema(S, "segmented.sampler") | None = None
    accountant: ACCOUNTANT | None = None
    epsilon_p: from_schema(S, "segmented.epsilon_p") | None = None
    delta: Probability | None = None
    wsepmm_power: from_schema(S, "segmented.wsepmm_power") | None = None
    subexp_local_eps: from_schema(S, "segmented.subexp_local_eps") | None = None


class Run(Spec):
    protocol: Literal[PROTOCOLS]
    points: Annotated[list[Point], Field(min_length=1)]
    reps: Reps
    seed: Seed


class TableKey(Spec):
    dataset: DATASET_NAME
    n: N
    setting: SETTING_NAME


class Aggregate(Spec):
    accountant: ACCOUNTANT
    scale: Name
    tables: list[TableKey]


class Figures(Spec):
    figures: FIGURES
    n: NS
    data_datasets: list[DATASET_NAME]
    dataset_labels: dict[StrictStr, StrictStr] | None = None
    paper_baselines: StrictBool | None = None


class Claims(Spec):
    n: NS
    m_grid: M_GRID
    figures: FIGURES
    m_factor: from_schema(S, "segmented.m_factor")
    scale: Name
