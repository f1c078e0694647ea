import gzip
import hashlib
import zipfile
from pathlib import Path

import pytest

from shuffledp.datasets.download import (
    Candidate,
    Checksum,
    ChecksumError,
    DownloadError,
    fetch_verified,
    mirror_candidate,
    mirror_location,
)

QUIET = lambda m: None  # noqa: E731


def _files(tmp_path: Path):
    good = tmp_path / "src" / "good.gz"
    good.parent.mkdir()
    with gzip.open(good, "wb") as fh:
        fh.write(b"hello world\n")
    bad = tmp_path / "src" / "bad.gz"
    with gzip.open(bad, "wb") as fh:
        fh.write(b"tampered\n")
    return good, bad, Checksum("sha256", hashlib.sha256(b"hello world\n").hexdigest(), gunzip=True)


def test_mismatch_names_both_hashes_and_leaves_nothing(tmp_path):
    _, bad, ck = _files(tmp_path)
    dest = tmp_path / "raw" / "file.gz"
    with pytest.raises(DownloadError) as info:
        fetch_verified(dest, [Candidate(str(bad))], ck, log=QUIET)
    msg = str(info.value)
    assert ck.expected in msg and hashlib.sha256(b"tampered\n").hexdigest() in msg
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []  # no partial or temporary file left


def test_falls_through_to_the_next_candidate(tmp_path):
    good, bad, ck = _files(tmp_path)
    dest = tmp_path / "raw" / "file.gz"
    origin = fetch_verified(dest, [Candidate(str(tmp_path / "missing")), Candidate(str(bad)), Candidate(str(good))],
                            ck, log=QUIET)
    assert origin == str(good) and ck.verify(dest)
    assert sorted(p.name for p in dest.parent.iterdir()) == ["file.gz"]


def test_zip_member_and_file_url(tmp_path):
    good, _, ck = _files(tmp_path)
    archive = tmp_path / "src" / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(good, arcname="inner.gz")
    dest = tmp_path / "raw" / "file.gz"
    fetch_verified(dest, [Candidate(archive.as_uri(), member="inner.gz")], ck, log=QUIET)
    assert ck.verify(dest)


def test_existing_verified_file_is_kept_and_corrupt_one_replaced(tmp_path):
    good, _, ck = _files(tmp_path)
    dest = tmp_path / "raw" / "file.gz"
    dest.parent.mkdir()
    dest.write_bytes(b"not gzip")
    fetch_verified(dest, [Candidate(str(good))], ck, log=QUIET)
    assert ck.verify(dest)
    assert fetch_verified(dest, [], ck, log=QUIET) == str(dest)


def test_checksum_error_message(tmp_path):
    _, bad, ck = _files(tmp_path)
    with pytest.raises(ChecksumError, match="expected .* actual"):
        ck.verify(bad)


def test_mirror_env_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("SHUFFLEDP_DATA_MIRROR", str(tmp_path))
    assert mirror_location("/elsewhere") == str(tmp_path)
    monkeypatch.delenv("SHUFFLEDP_DATA_MIRROR")
    assert mirror_location("/elsewhere") == "/elsewhere"
    assert mirror_candidate("https://example.org/data/", "msnbc/x.gz")[0].location == "https://example.org/data/msnbc/x.gz"
    assert mirror_candidate(None, "x") == []
