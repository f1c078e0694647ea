"""The typed specs of the audits stage's steps (:mod:`shuffledp.stages.specs`), each field's type from
this stage's schema section (``schema.yaml``: the config's ``audits``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, StrictStr, model_validator

from shuffledp.experiments.audit_names import DEFAULT_SETTINGS, NAMES, RAW_AUDITS
from shuffledp.stages.specs import Name, Number, Seed, Spec, WorkPath, from_schema, section_schema

S = section_schema(__file__)
P = "audits"
SETTING_NODE = S[P]["properties"]["settings"]["additionalProperties"]
KEY = Annotated[StrictStr, Field(pattern=SETTING_NODE["propertyNames"]["pattern"], max_length=64)]
# one setting's value: a number, a name, or a list of numbers (the schema's [number, string, array])
VALUE = Number | StrictStr | Annotated[list[Number], Field(max_length=SETTING_NODE["additionalProperties"]["maxItems"])]
MIRROR = Annotated[StrictStr, Field(pattern=r"^[^\x00-\x1f]*$")]
PATH = WorkPath  # written to: inside the working folder
BOUND = Annotated[Number, Field(ge=-1.0e12, le=1.0e12)]


class Bins(Spec):
    """One attribute's public bins (the data stage's ``datasets.adult.coding`` entries, or
    ``multidim_frameworks.loan.coding``'s): which coding, the audit's name says."""

    scale: Literal["int", "linear", "log", "log1p"]
    lo: BOUND
    hi: BOUND
    bins: Annotated[StrictInt, Field(ge=1, le=4096)] | None = None


# the trials of either kind of audit (audits.trials or audits.loop_trials; the wider range)
TRIALS = from_schema(S, f"{P}.trials")


class Run(Spec):
    audit: from_schema(S, f"{P}.include[]")
    trials: TRIALS
    alpha: from_schema(S, f"{P}.alpha")
    seed: Seed
    settings: dict[KEY, VALUE]  # the audit's whole setting: its defaults with the config's overrides
    # the raw-record audits (raw_*): the public coding the experiments use; Loan's fetch folder
    coding: dict[KEY, Bins] | None = None
    mirror: MIRROR | None = None
    raw_dir: PATH | None = None
    delta_test: from_schema(S, f"{P}.raw_delta") | None = None  # a raw-record audit's delta bound (raw_delta)

    @model_validator(mode="after")
    def _known_audit_and_keys(self):
        if self.audit not in NAMES:
            raise ValueError(f"audit: {self.audit!r} is not an audit (known: {', '.join(NAMES)})")
        unknown = sorted(set(self.settings) - set(DEFAULT_SETTINGS.get(self.audit, {})))
        if unknown:
            raise ValueError(f"settings: unknown key(s) {', '.join(unknown)} for audit {self.audit}")
        raw = self.audit in RAW_AUDITS
        for key in ("coding", "mirror", "raw_dir", "delta_test"):
            if not raw and key in self.model_fields_set:
                raise ValueError(f"{key}: only a raw-record audit (raw_*) reads it")
        if raw and self.coding is None:
            raise ValueError("coding: missing key (a raw-record audit codes as the experiments do)")
        if raw and "_adult_" not in self.audit and (self.raw_dir is None or self.mirror is None):
            raise ValueError("raw_dir: missing key (the Loan subset is fetched there; mirror too)")
        return self

    @model_validator(mode="after")
    def _coding_makes_bins(self):
        """The rules across a coding's keys (lo < hi, lo > 0 on a log scale, bins unless int)."""
        if self.coding is not None:
            from shuffledp.datasets.coding import adult_bins, loan_bins

            coding = {k: v.model_dump(exclude_none=True) for k, v in self.coding.items()}
            if "_adult_" in self.audit:
                adult_bins(coding)
            elif "domain" in self.settings:
                loan_bins(int(self.settings["domain"]), coding)
        return self


class Report(Spec):
    scale: Name
    alpha: from_schema(S, f"{P}.alpha")
