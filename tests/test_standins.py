"""Stand-ins never stick: a table built from a stand-in is rebuilt, with everything downstream, once
the real files are on the machine; a folder mirror without the files is an error; every run ends with
the list of its datasets, real or stand-in, and their checksums."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, run_snakemake

from shuffledp.datasets.availability import RealData, built_kind, local_source, refresh_marker, summary_text
from shuffledp.datasets.download import MirrorError
from shuffledp.io import write_table

DATA = RealData("toy", ("toy/a.txt", "toy/b.txt"), "processed/toy.parquet")


def _table(tmp_path: Path, standin: bool) -> None:
    write_table(pd.DataFrame({"x": [1, 2]}), tmp_path / DATA.processed,
                {"dataset": "toy", "source": "standin" if standin else "real", "standin": standin})


def _files(folder: Path) -> None:
    for rel in DATA.relpaths:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("real")


def test_local_source_raw_folder_then_folder_mirror_then_none(tmp_path):
    raw, mirror = tmp_path / "raw", tmp_path / "mirror"
    assert local_source(DATA, raw, None) is None
    assert local_source(DATA, raw, "https://example.org/m") is None  # a URL mirror is not local
    _files(mirror)
    assert local_source(DATA, raw, str(mirror)) == str(mirror)
    _files(raw)
    assert local_source(DATA, raw, str(mirror)) == str(raw)


def test_a_folder_mirror_without_a_file_names_the_setting_and_the_file(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "a.txt").write_text("real")
    with pytest.raises(MirrorError, match=r"config key data_mirror .*has no file toy/b\.txt"):
        local_source(DATA, tmp_path / "raw", str(mirror))
    monkeypatch.setenv("SHUFFLEDP_DATA_MIRROR", str(tmp_path / "nowhere"))
    with pytest.raises(MirrorError, match=r"SHUFFLEDP_DATA_MIRROR=.*nowhere: the offline mirror is not a folder"):
        local_source(DATA, tmp_path / "raw", str(tmp_path / "nowhere"))


def test_marker_is_renewed_only_while_a_standin_is_stale(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker, raw = tmp_path / "m" / "toy", tmp_path / "raw"
    # not built yet, nothing local: the marker appears, older than anything (it triggers nothing)
    assert refresh_marker(DATA, marker, str(raw), None) is False
    assert marker.stat().st_mtime == 0
    _table(tmp_path, standin=True)
    assert built_kind(DATA.processed) == "standin"
    assert refresh_marker(DATA, marker, str(raw), None) is False and marker.stat().st_mtime == 0
    # the real files arrive: the marker is newer than the stand-in table (Snakemake reruns it)
    _files(raw)
    time.sleep(0.01)
    assert refresh_marker(DATA, marker, str(raw), None) is True
    assert marker.stat().st_mtime > os.stat(DATA.processed).st_mtime - 1e-3
    # rebuilt from the real files: left alone from now on (no second rerun)
    before = marker.stat().st_mtime_ns
    _table(tmp_path, standin=False)
    assert refresh_marker(DATA, marker, str(raw), None) is False
    assert marker.stat().st_mtime_ns == before < os.stat(DATA.processed).st_mtime_ns


def test_summary_lists_every_table_real_or_standin(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _table(tmp_path, standin=True)
    text = summary_text({"toy": DATA.processed, "gone": "processed/none.parquet"}, ["toy"])
    assert "toy" in text and "STAND-IN" in text and "sha256 " in text and "gone" in text and "not built" in text
    assert "Real data found for toy" in text and "not evidence" in text


def _config(workdir: Path) -> Path:
    """The data stage alone (no paper section): MSNBC and Adult with source auto, small stand-ins."""
    tiny = yaml.safe_load((REPO / "tests" / "fixtures" / "config_tiny.yaml").read_text())
    cfg = {k: tiny[k] for k in ("name", "seed", "results_dir", "data_mirror", "datasets")}
    path = workdir / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _datasets(workdir: Path) -> dict[str, bool]:
    df = pd.read_parquet(workdir / "results" / "tables" / "datasets.parquet")
    return dict(zip(df["dataset"], df["standin"], strict=True))


@pytest.mark.slow
def test_offline_run_then_mirror_set_gives_the_real_tables(tmp_path, mirror, monkeypatch):
    """Offline (no mirror, every proxy refused): stand-ins. Then the mirror is set and snakemake run
    again, nothing deleted: the MSNBC and Adult tables and what was built from them are real."""
    cfg = _config(tmp_path)
    monkeypatch.delenv("SHUFFLEDP_DATA_MIRROR")
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # the publishers unreachable, as on an offline machine
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    first = run_snakemake("--configfile", str(cfg), "--cores", "2", cwd=tmp_path, timeout=600)
    assert _datasets(tmp_path)["msnbc"] and _datasets(tmp_path)["adult"]
    assert "STAND-IN" in first.stderr and "shuffledp datasets of this run" in first.stderr
    figure = (tmp_path / "results" / "figures" / "msnbc_category_shares.png").read_bytes()

    # a mirror folder without the files is an error naming the variable and the file
    monkeypatch.setenv("SHUFFLEDP_DATA_MIRROR", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    bad = run_snakemake("--configfile", str(cfg), "--cores", "2", cwd=tmp_path, check=False)
    assert bad.returncode != 0
    assert "SHUFFLEDP_DATA_MIRROR" in bad.stderr and "msnbc/msnbc990928.seq.gz" in bad.stderr, bad.stderr

    monkeypatch.setenv("SHUFFLEDP_DATA_MIRROR", str(mirror))
    second = run_snakemake("--configfile", str(cfg), "--cores", "2", cwd=tmp_path, timeout=600)
    kinds = _datasets(tmp_path)
    assert not kinds["msnbc"] and not kinds["adult"], kinds
    assert "Real data found for msnbc, adult" in second.stderr
    assert (tmp_path / "results" / "figures" / "msnbc_category_shares.png").read_bytes() != figure  # downstream
    # and it sticks: the next run has nothing to do, also without the mirror (the raw folder has the files)
    monkeypatch.delenv("SHUFFLEDP_DATA_MIRROR")
    dry = run_snakemake("--configfile", str(cfg), "--dry-run", cwd=tmp_path)
    assert "Nothing to be done" in dry.stdout + dry.stderr
