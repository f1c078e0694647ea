"""`shuffledp config validate` refuses exactly what the workflow refuses: one config per stage that
breaks a rule only the stage's own check knows (the schema lets it through), and one that puts an
unknown key in the stage's section. Both paths must stop, each naming the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]

_SYNTH = {"name": "dup", "domain": 8, "set_size": 2, "users": 100, "distribution": "uniform"}
# stage -> (its config section, values overlaid on config/config.yaml's that break the stage's check,
# the key named in the error)
BAD = {
    "data": ("datasets", {"synthetic": [_SYNTH, _SYNTH]}, "datasets.synthetic"),
    "segmented": ("segmented", {"levels": [2.0, 1.0, 0.5]}, "segmented.levels"),
    # (n_grid and eps lists written out of order are the same config now: x-order canonical)
    "personalized": ("personalized", {"table2": {"rows": [{"name": "a", "bound": "fv"}, {"name": "a", "bound": "fv"}]}},
                     "personalized.table2.rows"),
    "peruser": ("peruser", {"eps1_fractions": [1.5]}, "peruser.eps1_fractions"),
    "multidim": ("multidim", {"eps": [4.0, 1.0]}, "multidim.eps"),
    "multidim_frameworks": ("multidim_frameworks", {"hdg": {"domain": 12}}, "multidim_frameworks.hdg.domain"),
    "accountants_compare": ("accountants_compare", {"n_grid": [1]}, "accountants_compare.n_grid"),
    "audits": ("audits", {"include": ["krr_shuffle", "no_such_audit"]}, "audits.include"),
}


def _overlay(tmp_path: Path, section: str, values: dict, name: str) -> Path:
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({section: {**default[section], **values}}))
    return path


def _both(tmp_path: Path, overlay: Path) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    default = str(REPO / "config" / "config.yaml")
    cli = subprocess.run([sys.executable, "-m", "shuffledp", "config", "validate", default, str(overlay)],
                         capture_output=True, text=True, env=env)
    smk = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory",
                          str(tmp_path), "--cores", "1", "--dry-run", "--configfile", default, str(overlay)],
                         capture_output=True, text=True, env=env, timeout=300)
    return cli, smk


def test_every_stage_with_a_check_has_a_bad_config_here():
    stages = {s.name for s in discover().values() if s.check is not None}
    assert stages <= set(BAD), f"add a bad config for {sorted(stages - set(BAD))}"


@pytest.mark.parametrize("stage", sorted(BAD))
def test_validate_and_workflow_refuse_the_same_config(tmp_path, stage):
    section, values, key = BAD[stage]
    for overlay, needle in ((_overlay(tmp_path, section, values, "check"), key),
                            (_overlay(tmp_path, section, {"no_such_key": 1}, "schema"), "no_such_key")):
        cli, smk = _both(tmp_path, overlay)
        assert cli.returncode == 2 and needle in cli.stderr, (stage, cli.stderr)
        assert cli.stderr.count("\n") <= 3, cli.stderr
        assert smk.returncode != 0 and needle in smk.stderr, (stage, smk.stderr[-2000:])
        assert "Traceback" not in smk.stderr and not (tmp_path / "results").exists()
