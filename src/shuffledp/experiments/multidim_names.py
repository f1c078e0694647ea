"""Names of the multidimensional experiments (mechanisms, personal-budget methods, Adult's
categorical attributes, the default privacy classes) and the ratio helpers. Light: the workflow
imports them while parsing (through :mod:`shuffledp.stages.multidim`)."""

from __future__ import annotations

from shuffledp.errors import ConfigError

# mhm_paper: MHM under the seed's printed p (Lemma 4) and printed accountant (Theorem 1, Lemma 1), a
# labelled comparison (its randomizer is not eps_l-LDP: column ldp_eps); see docs/multidim.md
MECHANISMS = ("mhm", "flame", "tcm", "mhm_paper")
# Real data beside the paper's IPUMS extracts: the UCI Adult table of the data stage, reduced to its
# categorical attributes (the class label `income` and the six ordinal columns left out).
ADULT = "adult"
ADULT_ATTRIBUTES = ("workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
                    "native_country")
METHODS = ("ogm", "nogm")
DEFAULT_CLASSES = [
    {"name": "conservative", "eps": 0.1, "delta_n": 0.1},
    {"name": "moderate", "eps": 0.5, "delta_n": 1.0},
    {"name": "liberal", "eps": 1.0, "delta_n": 10.0},
]


def parse_ratio(text: str, key: str = "ratio") -> tuple[int, ...]:
    parts = str(text).replace("-", ":").split(":")
    try:
        vals = tuple(int(p) for p in parts)
    except ValueError:
        raise ConfigError(f"config key {key}: {text!r} is not like '2:4:4'") from None
    if len(vals) != 3 or min(vals) < 0 or sum(vals) == 0:
        raise ConfigError(f"config key {key}: {text!r} needs three non-negative integers, not all 0")
    return vals


def ratio_tag(ratio: str) -> str:
    """``"2:4:4"`` -> ``"2-4-4"`` (file-name form of a ratio)."""
    return str(ratio).replace(":", "-")
