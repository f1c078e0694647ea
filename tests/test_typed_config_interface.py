"""The workflow's config through Snakemake's documented interface only (issue 37, "Also"): the
Snakefile has no ``configfile:``, so Snakemake's global ``config`` holds only what the user passed
(its ``--configfile`` files merged among themselves key by key, then ``--config``);
``shuffledp.config.workflow_config`` reads the defaults (``config/config.yaml`` of the working folder)
itself and puts that over them with the README's overlay rule. For the defaults and one overlay the
config is exactly the one the earlier loader (each file over the previous with the overlay rule)
built; for several overlays Snakemake's merge among them comes first (README, "Overlays")."""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest
import yaml
from snakemake.settings.types import ConfigSettings

from shuffledp.config import ConfigError, load_configs, load_yaml, merge, workflow_config

REPO = Path(__file__).resolve().parents[1]
DEFAULT, PAPER = REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"
SHIPPED = sorted((REPO / "config").glob("*.yaml"))


def _main_load_configs(paths, overrides=None) -> dict:
    """The loader of main before this change: each file over the previous with the overlay rule
    (``merge``), then the ``--config`` values the same way."""
    config: dict = {}
    for p in paths:
        config = merge(config, load_yaml(p))
    if overrides:
        config = merge(config, overrides)
    return config


def _snakemake_config(files, overrides=None) -> dict:
    """What Snakemake itself puts in the global ``config`` of a Snakefile without ``configfile:``
    for ``--configfile FILES --config OVERRIDES`` (its own settings object, its own YAML reader)."""
    return copy.deepcopy(ConfigSettings(configfiles=list(files), config=dict(overrides or {})).overwrite_config)


def _figure_overlay(tmp_path: Path, name: str, figure: str) -> Path:
    default = load_yaml(DEFAULT)["segmented"]["figures"]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"segmented": {"figures": {figure: default[next(iter(default))]},
                                                  "repetitions": 3}}))
    return path


def _overlays(tmp_path: Path) -> list[Path]:
    sections = tmp_path / "sections.yaml"
    sections.write_text(yaml.safe_dump({"name": "mine", "segmented": {"m_grid": {"num": 3}},
                                        "datasets": {"ipums": {"br": load_yaml(DEFAULT)["datasets"]["ipums"]["br"]}}}))
    return [*SHIPPED, _figure_overlay(tmp_path, "figs", "only"), sections]


def test_defaults_and_one_overlay_are_main_s_config(tmp_path, monkeypatch):
    """Every shipped config/*.yaml and some overlays (a collection replaced, sections merged, an
    IPUMS sample named), with and without --config values: the same config as main's loader."""
    monkeypatch.chdir(REPO)
    assert [p.name for p in SHIPPED] == ["config.yaml", "paper.yaml"]
    assert workflow_config({}) == _main_load_configs([DEFAULT]) == load_yaml(DEFAULT)  # no --configfile
    for overlay in _overlays(tmp_path):
        for overrides in ({}, {"seed": 7}, {"segmented": {"repetitions": 4}}):
            got = workflow_config(_snakemake_config([overlay], overrides))
            assert got == _main_load_configs([DEFAULT, overlay], overrides), (overlay.name, overrides)
            assert got == load_configs([DEFAULT, overlay], overrides), (overlay.name, overrides)
    figs = workflow_config(_snakemake_config([tmp_path / "figs.yaml"]))
    assert list(figs["segmented"]["figures"]) == ["only"]  # replaced whole, not merged into the default's
    assert figs["segmented"]["settings"] == load_yaml(DEFAULT)["segmented"]["settings"]  # the rest: the default's


def test_several_overlays_merge_among_themselves_then_replace_the_default_collection(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    one, two = _figure_overlay(tmp_path, "one", "first"), _figure_overlay(tmp_path, "two", "second")
    got = workflow_config(_snakemake_config([one, two], {"name": "both"}))
    assert list(got["segmented"]["figures"]) == ["first", "second"]  # Snakemake's merge of the two ...
    assert not set(load_yaml(DEFAULT)["segmented"]["figures"]) & set(got["segmented"]["figures"])  # ... replaces
    assert got["name"] == "both" and got["segmented"]["repetitions"] == 3
    assert got == load_configs([DEFAULT, one, two], {"name": "both"})  # `shuffledp config validate` builds it too
    # the paper scale named twice, or with a fixed-key overlay: the same as main's
    assert workflow_config(_snakemake_config([PAPER, PAPER])) == _main_load_configs([DEFAULT, PAPER])
    assert workflow_config(_snakemake_config([PAPER, one])) == _main_load_configs([DEFAULT, PAPER, one])


def test_without_defaults_the_user_config_is_the_whole_config_and_without_both_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no config/config.yaml here
    whole = load_yaml(DEFAULT)
    assert workflow_config(copy.deepcopy(whole)) == whole
    with pytest.raises(ConfigError) as err:
        workflow_config({})
    assert "\n" not in str(err.value) and str(err.value).startswith("config/config.yaml: no such config file")
    (tmp_path / "config").mkdir()
    shutil.copy(DEFAULT, tmp_path / "config" / "config.yaml")
    assert workflow_config({}) == whole


def test_the_workflow_reads_no_undocumented_snakemake_attribute():
    """No `configfile:` (the defaults are shuffledp's to read) and no ``workflow.<attribute>`` at all
    in the Snakefile and the rule files."""
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    for path in files:
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        assert not re.search(r"^\s*configfile\s*:", code, re.M), path
        assert not re.findall(r"(?<![/\w.])workflow\.(\w+)", code), (path, re.findall(r"(?<![/\w.])workflow\.(\w+)",
                                                                                         code))
    common = (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert re.search(r"^\s+_merged = workflow_config\(config\)$", common, re.M)
