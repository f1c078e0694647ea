"""The audits stage: its jobs on the default config, its config check, the names it lists without
importing numpy against the science module's, and the claims gate."""

from __future__ import annotations

import pandas as pd
import pytest

from shuffledp.claims import audit_gate as G
from shuffledp.config import load_validated
from shuffledp.errors import ConfigError
from shuffledp.stages import discover
from shuffledp.stages.audits import AUDIT_NAMES, check_config


def test_names_agree_with_the_science():
    from shuffledp.experiments import audits as A

    assert tuple(A.names()) == AUDIT_NAMES
    assert set(A.DEFAULT_SETTINGS) == set(A.AUDITS)
    assert set(A.LOOP_AUDITS) == {a.name for a in A.AUDITS.values() if a.loop == "loop"}


def test_jobs_default_config():
    cfg = load_validated(["config/config.yaml"])
    stage = discover()["audits"]
    js = stage.jobs(cfg)
    runs = [j for j in js if j.step == "run"]
    assert [j.wildcards["audit"] for j in runs] == list(cfg["audits"]["include"])
    assert set(cfg["audits"]["include"]) <= set(AUDIT_NAMES)
    loop = {j.wildcards["audit"]: j.spec["trials"] for j in runs}
    assert loop["segmented_item"] == cfg["audits"]["loop_trials"]
    assert loop["krr_shuffle"] == cfg["audits"]["trials"]
    assert all(j.spec["seed"] == cfg["seed"] for j in runs)
    (rep,) = [j for j in js if j.step == "report"]
    assert len(rep.inputs["rows"]) == len(runs)


def test_check_refuses_unknown_names():
    cfg = load_validated(["config/config.yaml"])
    cfg["audits"]["include"] = ["krr_shuffle", "nope"]
    with pytest.raises(ConfigError, match="audits.include: unknown audit"):
        check_config(cfg)
    cfg["audits"]["include"] = ["krr_shuffle"]
    cfg["audits"]["settings"] = {"nope": {"n": 3}}
    with pytest.raises(ConfigError, match="audits.settings"):
        check_config(cfg)
    cfg["audits"]["settings"] = {"krr_shuffle": {"nn": 3}}
    with pytest.raises(ConfigError, match="audits.settings.krr_shuffle"):
        check_config(cfg)


def test_spec_holds_the_whole_setting():
    from shuffledp.experiments.audit_names import DEFAULT_SETTINGS

    cfg = load_validated(["config/config.yaml"])
    cfg["audits"]["settings"] = {"krr_shuffle": {"n": 30}}
    runs = {j.wildcards["audit"]: j.spec for j in discover()["audits"].jobs(cfg) if j.step == "run"}
    assert runs["krr_shuffle"]["settings"] == {**DEFAULT_SETTINGS["krr_shuffle"], "n": 30}
    assert runs["mhm_local"]["settings"] == DEFAULT_SETTINGS["mhm_local"]


def test_settings_override_reaches_the_audit():
    from shuffledp.experiments import audits as A

    row, _ = A.run_audit("flame_local", 2_000, 1e-3, 1, {"domains": [6, 6]})
    assert '"k": 6' in row["setting"]


def test_gate_marks_a_violating_protocol():
    audits = pd.DataFrame({"audit": ["segmented_count", "mm_item", "mhm_local"],
                           "protocols": ["segmented", "mm_shuffle,sepmm", "mhm"],
                           "verdict": ["violation", "consistent", "consistent"]})
    claims = pd.DataFrame({"claim": ["a", "b", "c"], "protocol": ["segmented", "sepmm", "flame"],
                           "verdict": ["held", "held", "not held"]})
    out = G.gate(claims, audits, "protocol")
    assert out["evidence"].tolist() == [False, True, True]
    assert out["verdict"].tolist()[0].startswith("not evidence (audit violation: segmented_count")
    assert out["verdict"].tolist()[1:] == ["held", "not held"]
    assert out["audit"].tolist()[2] == "not audited (flame)"
    assert G.violations(audits) == {"segmented": ["segmented_count"]}
    # a row resting on several protocols: any violation among them
    out2 = G.gate(claims.assign(protocol=["mhm,segmented", "mhm", "mhm"]), audits, "protocol")
    assert out2["evidence"].tolist() == [False, True, True]


def test_framework_audit_takes_a_record_table():
    """CALM / HDG audits from a coded record table (where a raw-record coder plugs in): the victim
    pair comes from its rows, n is its size, and the collision mutant is still caught."""
    import numpy as np

    from shuffledp.experiments import audits as A

    rec = np.random.default_rng(5).integers(0, 3, size=(400, 4))
    row, _ = A.run_audit("calm_mhm", 100_000, 1e-3, 7, records=rec)
    assert '"records": "plugged"' in row["setting"] and '"n": 400' in row["setting"]
    assert row["verdict"] == "consistent"
    bad, _ = A.run_audit("calm_mhm", 100_000, 1e-3, 7, records=rec, mutant=True)
    assert bad["verdict"] == "violation"


def test_schema_refuses_a_repeated_audit():
    """audits.include names each audit once (the schema's uniqueItems; no hand check)."""
    from shuffledp.config import load_configs, validate_config

    cfg = load_configs(["config/config.yaml"])
    cfg["audits"]["include"] = ["krr_shuffle", "krr_shuffle"]
    with pytest.raises(ConfigError, match="audits.include"):
        validate_config(cfg)


def test_raw_audit_jobs_read_the_raw_files_and_code_as_the_experiments():
    from shuffledp.experiments import audit_names as A

    cfg = load_validated(["config/config.yaml", "config/paper.yaml"])
    # every raw audit, including the CALM pairs the shipped configs leave out for their cost
    inc = cfg["audits"]["include"]
    cfg["audits"]["include"] = [*inc, *(a for a in A.RAW_AUDITS if a not in inc)]
    runs = {j.wildcards["audit"]: j for j in discover()["audits"].jobs(cfg) if j.step == "run"}
    assert set(A.RAW_AUDITS) <= set(runs)
    for name in A.RAW_AUDITS:
        j = runs[name]
        assert j.spec["trials"] == cfg["audits"]["raw_trials"]
        assert j.spec["settings"]["domain"] == cfg["multidim_frameworks"]["hdg"]["domain"]
        if "_adult_" in name:  # the data stage's checksum-verified raw Adult files
            assert [(r.step, r.output, r.stage) for r in j.inputs["raw"]] == [
                ("download_adult", "data", "data"), ("download_adult", "test", "data")]
            assert j.spec["coding"] == dict(cfg["datasets"]["adult"].get("coding") or {})
        else:
            assert j.spec["raw_dir"] == "data/raw" and "mirror" in j.spec
    assert cfg["audits"]["raw_trials"] > load_validated(["config/config.yaml"])["audits"]["raw_trials"]


def test_raw_audit_jobs_carry_the_delta_mode_and_specs_check_it():
    """audits.raw_delta reaches every raw-record job (default on) and only those; the typed spec refuses
    the flag on another audit and a coding that names an attribute the dataset lacks."""
    from shuffledp.errors import UsageError
    from shuffledp.stages.audits.specs import Run
    from shuffledp.stages.specs import validate_spec

    cfg = load_validated(["config/config.yaml", "config/paper.yaml"])  # the paper scale runs the Loan pair
    assert cfg["audits"]["raw_delta"] is True and "raw_hdg_loan_split" in cfg["audits"]["include"]
    runs = {j.wildcards["audit"]: j for j in discover()["audits"].jobs(cfg) if j.step == "run"}
    assert runs["raw_hdg_loan_split"].spec["delta_test"] is True
    assert runs["raw_hdg_loan_split"].spec["settings"]["n"] == 9000
    assert all("delta_test" not in j.spec for name, j in runs.items() if not name.startswith("raw_"))
    cfg["audits"]["raw_delta"] = False
    runs = {j.wildcards["audit"]: j for j in discover()["audits"].jobs(cfg) if j.step == "run"}
    assert runs["raw_hdg_loan_split"].spec["delta_test"] is False
    spec = dict(runs["raw_hdg_loan_split"].spec)
    validate_spec(Run, spec)
    with pytest.raises(UsageError, match="no ordinal attribute 'int_rat'"):
        validate_spec(Run, {**spec, "coding": {"int_rat": {"scale": "linear", "lo": 0, "hi": 30}}})
    other = dict(runs["krr_shuffle"].spec)
    with pytest.raises(UsageError, match="delta_test: only a raw-record audit"):
        validate_spec(Run, {**other, "delta_test": True})
