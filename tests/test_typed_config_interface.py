"""The workflow's config from Snakemake (issue 37, "Also"): shuffledp.config.workflow_config builds it
from the config files when the running Snakemake exposes them (the README's overlays: a collection a
later file names replaces the earlier one's whole), and else from Snakemake's documented, merged
``config`` with a one-line note; for the shipped configurations both give the same config."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from snakemake.utils import update_config

from shuffledp.config import load_configs, load_yaml, workflow_config

REPO = Path(__file__).resolve().parents[1]
DEFAULT, PAPER = REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"


def _snakemake_merge(*paths, overrides=None) -> dict:
    """Snakemake's documented merge: each file deep-merged over the previous, then --config."""
    merged: dict = {}
    for p in paths:
        update_config(merged, load_yaml(p))
    if overrides:
        update_config(merged, copy.deepcopy(overrides))
    return merged


def test_with_the_files_the_overlay_semantics_hold(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump({"segmented": {"figures": {"only": load_yaml(DEFAULT)["segmented"]["figures"][
        next(iter(load_yaml(DEFAULT)["segmented"]["figures"]))]}}}))
    sm = _snakemake_merge(DEFAULT, mine)
    cfg, note = workflow_config(sm, [DEFAULT, mine], {})
    assert note is None
    assert cfg == load_configs([DEFAULT, mine])
    assert list(cfg["segmented"]["figures"]) == ["only"]          # replaced whole
    assert len(sm["segmented"]["figures"]) > 1                     # Snakemake's own merge keeps the default's


def test_without_the_files_the_documented_config_is_used_with_a_note():
    sm = _snakemake_merge(DEFAULT, PAPER, overrides={"seed": 7})
    cfg, note = workflow_config(sm)
    assert cfg == sm and cfg is not sm
    assert note and "\n" not in note and "merged key by key" in note


def test_for_the_shipped_configs_both_ways_agree():
    for files, overrides in (([DEFAULT], {}), ([DEFAULT, PAPER], {}), ([DEFAULT, PAPER], {"seed": 7})):
        documented, _ = workflow_config(_snakemake_merge(*files, overrides=overrides))
        exact, _ = workflow_config({}, files, overrides)
        assert documented == exact, files
