"""The typed specs of the accountants_compare stage's steps (:mod:`shuffledp.stages.specs`), each
field's type from this stage's schema section (``schema.yaml``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictInt, model_validator

from shuffledp.stages.specs import Name, NonNegInt, Probability, Seed, Spec, from_schema, section_schema

S = section_schema(__file__)
P = "accountants_compare"
N = from_schema(S, f"{P}.n_grid[]")
EPS_S = from_schema(S, f"{P}.gain.eps_s[]")


def _randomizer(name: str) -> str:
    from shuffledp.experiments.accountants_gain import check_randomizer

    check_randomizer(name)  # a ValueError naming it
    return name


class Run(Spec):
    mechanism: Literal["krr", "general"]
    k: Annotated[StrictInt, Field(ge=2, le=999999)] | None
    label: from_schema(S, f"{P}.mechanisms[]")
    eps0: from_schema(S, f"{P}.eps0")
    n_grid: from_schema(S, f"{P}.n_grid")
    deltas: from_schema(S, f"{P}.deltas")
    bounds: from_schema(S, f"{P}.bounds")
    personalized_max_n: from_schema(S, f"{P}.personalized_max_n")
    exact_max_n: from_schema(S, f"{P}.exact_max_n")
    rtol: from_schema(S, f"{P}.rtol")

    @model_validator(mode="after")
    def _k_for_krr(self):
        if (self.k is None) != (self.mechanism == "general"):
            raise ValueError(f"k: {self.k!r} for mechanism {self.mechanism} "
                             "(an integer >= 2 for krr, null for general)")
        return self


class Report(Spec):
    scale: Name


class Subexp(Spec):
    """One Subexp-shuffle setting of the segmented experiment; ``params`` indexes the job's params inputs."""

    d: Annotated[StrictInt, Field(ge=2, le=1000000)]
    s: Annotated[StrictInt, Field(ge=1, le=10000)]
    n: N
    eps_s: EPS_S
    delta_s: Probability
    params: NonNegInt | None = None

    @model_validator(mode="after")
    def _s_below_d(self):
        if self.s >= self.d:
            raise ValueError(f"s = {self.s} must be < d = {self.d}")
        return self


class Gain(Spec):
    randomizers: Annotated[from_schema(S, f"{P}.gain.randomizers"),
                           AfterValidator(lambda v: [_randomizer(r) for r in v])]
    mhm_domain: from_schema(S, f"{P}.gain.mhm_domain")
    eps_s: from_schema(S, f"{P}.gain.eps_s")
    n_grid: from_schema(S, f"{P}.gain.n_grid")
    delta_n: from_schema(S, f"{P}.gain.delta_n")
    rtol: from_schema(S, f"{P}.gain.rtol")
    seed: Seed
    measure: from_schema(S, f"{P}.gain.measure", "GainMeasure")
    scale: Name
    subexp: list[Subexp] | None = None

    @model_validator(mode="after")
    def _delta_below_one(self):
        for n in [*self.n_grid, self.measure.n]:
            if self.delta_n / n >= 1:
                raise ValueError(f"delta_n: delta_n / n = {self.delta_n / n} must be < 1 (n = {n})")
        return self
