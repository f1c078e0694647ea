"""The typed specs of the audits stage's steps (:mod:`shuffledp.stages.specs`), each field's type from
this stage's schema section (``schema.yaml``: the config's ``audits``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr, model_validator

from shuffledp.experiments.audit_names import DEFAULT_SETTINGS, NAMES
from shuffledp.stages.specs import Name, Number, Seed, Spec, from_schema, section_schema

S = section_schema(__file__)
P = "audits"
SETTING_NODE = S[P]["properties"]["settings"]["additionalProperties"]
KEY = Annotated[StrictStr, Field(pattern=SETTING_NODE["propertyNames"]["pattern"], max_length=64)]
# one setting's value: a number, a name, or a list of numbers (the schema's [number, string, array])
VALUE = Number | StrictStr | Annotated[list[Number], Field(max_length=SETTING_NODE["additionalProperties"]["maxItems"])]
# the trials of either kind of audit (audits.trials or audits.loop_trials; the wider range)
TRIALS = from_schema(S, f"{P}.trials")


class Run(Spec):
    audit: from_schema(S, f"{P}.include[]")
    trials: TRIALS
    alpha: from_schema(S, f"{P}.alpha")
    seed: Seed
    settings: dict[KEY, VALUE]  # the audit's whole setting: its defaults with the config's overrides

    @model_validator(mode="after")
    def _known_audit_and_keys(self):
        if self.audit not in NAMES:
            raise ValueError(f"audit: {self.audit!r} is not an audit (known: {', '.join(NAMES)})")
        unknown = sorted(set(self.settings) - set(DEFAULT_SETTINGS.get(self.audit, {})))
        if unknown:
            raise ValueError(f"settings: unknown key(s) {', '.join(unknown)} for audit {self.audit}")
        return self


class Report(Spec):
    scale: Name
    alpha: from_schema(S, f"{P}.alpha")
