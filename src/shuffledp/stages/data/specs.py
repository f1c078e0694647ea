"""The typed specs of the data stage's steps (:mod:`shuffledp.stages.specs`), each field's type from
this stage's schema section (``schema.yaml``: the config's ``datasets``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr, model_validator

from shuffledp.stages.specs import Seed, Spec, WorkPath, from_schema, section_schema, without_defaults

S = section_schema(__file__)
# "" when no mirror is configured (SHUFFLEDP_DATA_MIRROR may still name one)
MIRROR = Annotated[StrictStr, Field(pattern=r"^[^\x00-\x1f]*$")]
PATH = WorkPath  # written to: inside the working folder
ATTRIBUTE = from_schema(S, "datasets.ipums.*.attributes", "IpumsAttributes")
ATTR_NAME, ATTR_SIZE = ATTRIBUTE.__origin__.__args__
# the attributes as [name, domain size] pairs: their order is the table's column order
ATTRIBUTES = Annotated[list[tuple[ATTR_NAME, ATTR_SIZE]], Field(min_length=1, max_length=64)]
EXTRACT = from_schema(S, "datasets.ipums.*", "IpumsExtract", fields={"attributes": ATTRIBUTES | None})
# the public bins of Adult's ordinal attributes; an attribute left out keeps its default coding
ADULT_CODING = from_schema(without_defaults(S), "datasets.adult.coding", "AdultCoding")


class Download(Spec):
    mirror: MIRROR


class PreprocessMsnbc(Spec):
    source: from_schema(S, "datasets.msnbc.source")
    raw: PATH
    mirror: MIRROR
    seed: Seed
    standin_users: from_schema(S, "datasets.msnbc.standin_users")


class PreprocessAdult(Spec):
    source: from_schema(S, "datasets.adult.source")
    raw_dir: PATH
    mirror: MIRROR
    seed: Seed
    coding: ADULT_CODING | None = None

    @model_validator(mode="after")
    def _coding_makes_bins(self):
        """The rules across a coding's keys (lo < hi, lo > 0 on a log scale, bins unless int)."""
        if self.coding is not None:
            from shuffledp.datasets.coding import adult_bins

            adult_bins(self.coding.model_dump(exclude_none=True))  # a ValueError names the attribute's rule
        return self


SYNTH = "datasets.synthetic[]"


class Synthetic(Spec):
    name: from_schema(S, f"{SYNTH}.name")
    domain: from_schema(S, f"{SYNTH}.domain")
    set_size: from_schema(S, f"{SYNTH}.set_size")
    users: from_schema(S, f"{SYNTH}.users")
    distribution: from_schema(S, f"{SYNTH}.distribution")
    zipf_exponent: from_schema(S, f"{SYNTH}.zipf_exponent")
    seed: Seed

    @model_validator(mode="after")
    def _set_fits(self):
        if self.set_size > self.domain:
            raise ValueError(f"set_size: {self.set_size} exceeds domain {self.domain}")
        return self


class DownloadIpums(EXTRACT):
    """The extract as configured (``datasets.ipums.<key>``), its attributes as pairs."""

    @model_validator(mode="after")
    def _has_attributes(self):
        if not self.attributes:
            raise ValueError("attributes: missing key (attribute name -> domain size pairs)")
        return self


class PreprocessIpums(Spec):
    key: Annotated[StrictStr, Field(pattern=next(iter(S["datasets"]["properties"]["ipums"]["patternProperties"])))]
    extract: DownloadIpums
    raw_dir: PATH
    seed: Seed


class Nothing(Spec):
    """A step that reads no spec key (its inputs say everything)."""
