"""Defaults live in the schema only: validation fills them into the config in place
(shuffledp.config.fill_defaults), nested objects and array items too, only into objects that exist
unless the object itself has a default; a stage section has none."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from shuffledp.config import ConfigError, fill_defaults, load_schema, load_yaml, validate_config

REPO = Path(__file__).resolve().parents[1]
SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "integer", "default": 1},
        "opt": {"type": "object", "properties": {"x": {"type": "string", "default": "x0"}}},
        "made": {"type": "object", "default": {}, "properties": {"y": {"type": "number", "default": 0.5}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"z": {"default": [1, 2]}}}},
        "by_name": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"w": {"type": "boolean", "default": False}}}},
        "by_pattern": {"type": "object", "patternProperties": {
            "^[a-z]{2}$": {"type": "object", "properties": {"v": {"type": "string", "default": ""}}}}},
    },
}


def test_fills_missing_keys_nested_and_in_array_items():
    cfg = {"a": 5, "items": [{}, {"z": [3]}], "by_name": {"k": {}}, "by_pattern": {"br": {"v": "s"}, "mx": {}}}
    fill_defaults(cfg, SCHEMA)
    assert cfg == {"a": 5, "made": {"y": 0.5}, "items": [{"z": [1, 2]}, {"z": [3]}],
                   "by_name": {"k": {"w": False}}, "by_pattern": {"br": {"v": "s"}, "mx": {"v": ""}}}


def test_an_optional_object_without_a_default_is_not_created():
    cfg = {}
    fill_defaults(cfg, SCHEMA)
    assert "opt" not in cfg and "items" not in cfg
    cfg = {"opt": {}}
    fill_defaults(cfg, SCHEMA)
    assert cfg["opt"] == {"x": "x0"}


def test_defaults_are_copies_and_wrong_types_are_left_to_the_schema():
    one, two = {"items": [{}]}, {"items": [{}]}
    fill_defaults(one, SCHEMA)
    fill_defaults(two, SCHEMA)
    one["items"][0]["z"].append(9)
    assert two["items"][0]["z"] == [1, 2]
    odd = {"opt": [1], "items": {"not": "a list"}}
    fill_defaults(odd, SCHEMA)
    assert odd["opt"] == [1] and odd["items"] == {"not": "a list"}


def test_validation_fills_the_workflow_config_in_place():
    cfg = load_yaml(REPO / "config" / "config.yaml")
    del cfg["segmented"]["oversize"], cfg["datasets"]["msnbc"]
    validate_config(cfg)
    assert cfg["segmented"]["oversize"] == "random"
    assert cfg["datasets"]["msnbc"] == {"source": "auto", "standin_users": 50000}
    assert all(s["zipf_exponent"] == 1.0 for s in cfg["datasets"]["synthetic"])


def test_a_missing_stage_section_stays_missing():
    cfg = load_yaml(REPO / "config" / "config.yaml")
    for section in ("multidim", "peruser", "segmented", "personalized", "accountants_compare", "multidim_frameworks"):
        del cfg[section]
    validate_config(cfg)
    assert not {"multidim", "peruser", "segmented"} & set(cfg)
    top = load_schema()["properties"]
    assert not [k for k, v in top.items() if v.get("type") == "object" and "default" in v]


def test_a_bad_value_of_a_defaulted_key_still_names_the_key():
    cfg = load_yaml(REPO / "config" / "config.yaml")
    cfg["segmented"]["sampler"] = "bogus"
    with pytest.raises(ConfigError, match="config key segmented.sampler"):
        validate_config(copy.deepcopy(cfg))
    cfg = load_yaml(REPO / "config" / "config.yaml")
    cfg["datasets"]["msnbc"] = {"standin_users": 5}
    with pytest.raises(ConfigError, match="config key datasets.msnbc.standin_users"):
        validate_config(cfg)


def test_the_default_privacy_classes_are_the_experiments():
    """multidim.personal.classes: the schema's default is the one the experiment functions fall back on."""
    from shuffledp.experiments.multidim_names import DEFAULT_CLASSES

    personal = load_schema()["properties"]["multidim"]["properties"]["personal"]
    assert personal["properties"]["classes"]["default"] == DEFAULT_CLASSES
