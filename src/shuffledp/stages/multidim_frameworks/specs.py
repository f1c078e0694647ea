"""The typed specs of the multidim_frameworks stage's steps (:mod:`shuffledp.stages.specs`), each
field's type from this stage's schema section (``schema.yaml``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StrictStr, model_validator

from shuffledp.stages.specs import Name, Seed, Spec, WorkPath, from_schema, section_schema, without_defaults

S = section_schema(__file__)
P = "multidim_frameworks"
DATASET = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9]+$", max_length=64)]
EPS = from_schema(S, f"{P}.eps")


def _power_of_two(c: int) -> int:
    if c & (c - 1):
        raise ValueError(f"{c} is not a power of two")
    return c


DOMAIN = Annotated[from_schema(S, f"{P}.hdg.domain"), AfterValidator(_power_of_two)]
CALM_KEYS = ("view_size", "max_view_cells", "marginals", "marginal_size", "rounds")
HDG_KEYS = ("domain", "queries", "query_dim", "volume", "granularity", "rounds")
# the public ranges of Loan's attributes; an attribute left out keeps its default coding
LOAN_CODING = from_schema(without_defaults(S), f"{P}.loan.coding", "LoanCoding")
COMPONENT_KEYS = {"mhm": ("bound", "family_bits"), "flame": ("np_fraction", "variant")}


class Loan(Spec):
    dataset: Literal["loan"]
    seed: Seed
    domain: DOMAIN
    source: from_schema(S, f"{P}.loan.source")
    path: from_schema(S, f"{P}.loan.path")
    records: from_schema(S, f"{P}.loan.records")
    mirror: Annotated[StrictStr, Field(min_length=1)] | None
    raw_dir: WorkPath  # the Loan subset is fetched there: inside the working folder
    coding: LOAN_CODING | None = None

    @model_validator(mode="after")
    def _file_needs_path(self):
        if self.source == "file" and not self.path:
            raise ValueError("path: source file needs a path")
        return self

    @model_validator(mode="after")
    def _coding_makes_bins(self):
        """The rules across a coding's keys (lo < hi, lo > 0 on a log scale)."""
        if self.coding is not None:
            from shuffledp.datasets.coding import loan_bins

            loan_bins(self.domain, self.coding.model_dump(exclude_none=True))
        return self


class Adult(Spec):
    dataset: Literal["adult"]
    domain: DOMAIN


class Run(Spec):
    framework: Literal["calm", "hdg"]
    component: from_schema(S, f"{P}.components[]")
    dataset: DATASET
    eps: EPS
    records: from_schema(S, f"{P}.calm.records")
    reps: from_schema(S, f"{P}.calm.reps")
    seed: Seed
    bound: from_schema(S, f"{P}.bound") | None = None
    family_bits: from_schema(S, f"{P}.hash_family_bits") | None = None
    np_fraction: from_schema(S, f"{P}.flame_np_fraction") | None = None
    variant: from_schema(S, f"{P}.flame_variant") | None = None
    view_size: from_schema(S, f"{P}.calm.view_size") | None = None
    max_view_cells: from_schema(S, f"{P}.calm.max_view_cells") | None = None
    marginals: from_schema(S, f"{P}.calm.marginals") | None = None
    marginal_size: from_schema(S, f"{P}.calm.marginal_size") | None = None
    rounds: from_schema(S, f"{P}.calm.rounds") | None = None
    domain: DOMAIN | None = None
    queries: from_schema(S, f"{P}.hdg.queries") | None = None
    query_dim: from_schema(S, f"{P}.hdg.query_dim") | None = None
    volume: from_schema(S, f"{P}.hdg.volume") | None = None
    granularity: from_schema(S, f"{P}.hdg.granularity") | None = None

    @model_validator(mode="after")
    def _keys_of_its_framework_and_component(self):
        given = self.model_fields_set
        need = {"calm": CALM_KEYS, "hdg": HDG_KEYS}[self.framework] + COMPONENT_KEYS[self.component]
        missing = [k for k in need if k not in given]
        if missing:
            raise ValueError(f"{missing[0]}: missing key (a {self.framework} run of {self.component} reads it)")
        other = set(CALM_KEYS + HDG_KEYS + sum(COMPONENT_KEYS.values(), ())) - set(need)
        extra = sorted(other & given)
        if extra:
            raise ValueError(f"{extra[0]}: not a key of a {self.framework} run of {self.component}")
        return self


class Report(Spec):
    scale: Name
    eps: EPS
    components: from_schema(S, f"{P}.components")
    calm_datasets: list[DATASET]
    marginals: from_schema(S, f"{P}.calm.marginals") | None
    marginal_size: from_schema(S, f"{P}.calm.marginal_size") | None
    queries: from_schema(S, f"{P}.hdg.queries") | None
    query_dim: from_schema(S, f"{P}.hdg.query_dim") | None
    hdg_datasets: list[from_schema(S, f"{P}.hdg.datasets[]")]
    datasets: Annotated[list[DATASET], Field(min_length=1)]
