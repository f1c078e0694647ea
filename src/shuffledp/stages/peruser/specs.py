"""The typed specs of the peruser stage's steps (:mod:`shuffledp.stages.specs`), each field's type
from this stage's schema section (``schema.yaml``)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictStr, model_validator

from shuffledp.experiments.peruser_names import METHODS
from shuffledp.stages.specs import Name, Reps, Seed, Spec, _unique, from_schema, section_schema

S = section_schema(__file__)
EPS_ITEM = S["peruser"]["properties"]["eps"]["items"]


def _eps_text(text: str) -> str:
    """An eps as the job's wildcard spells it (``1``, ``0.5``): a number in the schema's range."""
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not (math.isfinite(x) and EPS_ITEM["minimum"] <= x <= EPS_ITEM["maximum"]):
        raise ValueError(f"{text!r} must lie in [{EPS_ITEM['minimum']:g}, {EPS_ITEM['maximum']:g}]")
    return text


def _split_text(text: str) -> str:
    """An eps1 split: a fraction in (0, 1) as its wildcard spells it, thm4 (Theorem 4's) or none."""
    if text in ("thm4", "none"):
        return text
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is neither a fraction, thm4 nor none") from None
    if not 0 < x < 1:
        raise ValueError(f"{text!r} must lie in (0, 1)")
    return text


EPS = Annotated[list[Annotated[StrictStr, AfterValidator(_eps_text)]], Field(min_length=1, max_length=20),
                AfterValidator(_unique)]
SPLITS = Annotated[list[Annotated[StrictStr, AfterValidator(_split_text)]], Field(min_length=1),
                   AfterValidator(_unique)]


class Job(Spec):
    dataset: from_schema(S, "peruser.datasets[]", "PeruserDataset")
    method: Literal[METHODS]
    clustering: Literal["kmeans", "dbscan", "none"]
    eps: EPS
    splits: SPLITS
    c: from_schema(S, "peruser.c")
    delta: from_schema(S, "peruser.delta")
    kmeans_k: from_schema(S, "peruser.kmeans_k")
    reps: Reps
    seed: Seed
    user_sample: from_schema(S, "peruser.user_sample")
    dbscan: from_schema(S, "peruser.dbscan", "PeruserDbscan") | None = None

    @model_validator(mode="after")
    def _dataset_rules(self):
        ds = self.dataset
        if ds.source == "synthetic":
            missing = [k for k in ("d", "clusters", "kind") if getattr(ds, k) is None]
            if missing:
                raise ValueError(f"dataset.{missing[0]}: required for source synthetic")
        if ds.views is not None and ds.views[0] > ds.views[1]:
            raise ValueError(f"dataset.views: {ds.views} must be [least, most]")
        for key in ("kmeans_k", "user_sample"):
            if getattr(self, key) > ds.n:
                raise ValueError(f"{key}: {getattr(self, key)} exceeds the dataset's n ({ds.n})")
        return self


class Collect(Spec):
    pass


class Report(Spec):
    figure: from_schema(S, "peruser.figure", "PeruserFigure")
    eps: from_schema(S, "peruser.eps")
    eps1_fractions: from_schema(S, "peruser.eps1_fractions")
    scale: Name

    @model_validator(mode="after")
    def _figure_shows_a_run(self):
        fig = self.figure
        if fig.eps is not None and fig.eps not in self.eps:
            raise ValueError(f"figure.eps: {fig.eps} is not one of eps {self.eps}")
        if fig.split is not None and fig.split not in self.eps1_fractions:
            raise ValueError(f"figure.split: {fig.split} is not one of eps1_fractions {self.eps1_fractions}")
        if fig.c is not None and not 0 < fig.c <= 1:
            raise ValueError(f"figure.c: {fig.c} must lie in (0, 1]")
        return self
