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
    MirrorError,
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


# ---- corruption of any kind: an error naming the file, nothing partial, never a stand-in ----------

import random  # noqa: E402
import stat  # noqa: E402

import pandas as pd  # noqa: E402

from shuffledp.datasets import msnbc as msnbc_mod  # noqa: E402
from shuffledp.datasets import prepare  # noqa: E402


def _payload() -> bytes:
    rng = random.Random(5)  # incompressible enough that a flipped byte lands in deflate data
    return "".join(f"{rng.randrange(10**9)} " for _ in range(20000)).encode()


def _good_gz(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = gzip.compress(_payload(), mtime=0)
    path.write_bytes(data)
    return data


def _flip(data: bytes, at: int) -> bytes:
    b = bytearray(data)
    b[at] ^= 0xFF
    return bytes(b)


CORRUPTIONS = {
    "flipped-mid-file": lambda d: _flip(d, len(d) // 2),
    "flipped-near-header": lambda d: _flip(d, 12),
    "broken-crc-trailer": lambda d: _flip(d, len(d) - 6),
    "truncated-gzip": lambda d: d[: len(d) * 2 // 3],
    "not-gzip-at-all": lambda d: b"<html>mirror error page</html>",
    "empty-file": lambda d: b"",
}


def _corrupt(path: Path, kind: str, good: bytes) -> None:
    if kind == "unreadable-directory":
        path.mkdir(parents=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(CORRUPTIONS[kind](good))


KINDS = [*CORRUPTIONS, "unreadable-directory"]


def _ck() -> Checksum:
    return Checksum("sha256", hashlib.sha256(_payload()).hexdigest(), gunzip=True)


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_mirror_is_an_error_naming_it_and_the_next_source_is_tried(tmp_path, kind):
    good = tmp_path / "good" / "x.gz"
    data = _good_gz(good)
    bad = tmp_path / "mirror" / "x.gz"
    _corrupt(bad, kind, data)
    dest = tmp_path / "raw" / "x.gz"
    lines = []
    with pytest.raises(DownloadError) as info:
        fetch_verified(dest, [Candidate(str(bad)), Candidate(str(tmp_path / "absent.gz"))], _ck(), log=lines.append)
    msg = str(info.value)
    assert info.value.corrupt, msg
    assert str(bad) in msg and _ck().expected in msg
    if kind != "unreadable-directory":  # both hashes: the expected one and the file's own
        assert hashlib.sha256(bad.read_bytes()).hexdigest() in msg
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # nothing partial
    # a good source after the damaged one is used, and the damage is still reported in the log
    origin = fetch_verified(dest, [Candidate(str(bad)), Candidate(str(good))], _ck(), log=lines.append)
    assert origin == str(good) and dest.read_bytes() == data
    assert any(line.startswith("ERROR:") and str(bad) in line for line in lines)
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_local_copy_is_moved_aside(tmp_path, kind):
    good = tmp_path / "good" / "x.gz"
    data = _good_gz(good)
    dest = tmp_path / "raw" / "x.gz"
    _corrupt(dest, kind, data)
    tag = hashlib.sha256(dest.read_bytes()).hexdigest()[:8] if dest.is_file() else "unreadable"
    with pytest.raises(DownloadError) as info:
        fetch_verified(dest, [Candidate(str(tmp_path / "absent.gz"))], _ck(), log=QUIET)
    assert info.value.corrupt and str(dest) in str(info.value)
    assert sorted(p.name for p in dest.parent.iterdir()) == [f"x.gz.corrupt-{tag}"]
    with pytest.raises(DownloadError) as again:  # a second run still knows the data is damaged
        fetch_verified(dest, [Candidate(str(tmp_path / "absent.gz"))], _ck(), log=QUIET)
    assert again.value.corrupt and f"x.gz.corrupt-{tag}" in str(again.value)
    fetch_verified(dest, [Candidate(str(good))], _ck(), log=QUIET)
    assert dest.read_bytes() == data


def test_unreachable_sources_only_are_not_corrupt(tmp_path):
    with pytest.raises(DownloadError) as info:
        fetch_verified(tmp_path / "raw" / "x.gz", [Candidate(str(tmp_path / "no.gz")),
                                                   Candidate((tmp_path / "no2.gz").as_uri())], _ck(), log=QUIET)
    assert not info.value.corrupt


@pytest.fixture
def fake_msnbc(monkeypatch, tmp_path):
    """MSNBC's download with a tiny fixture file and this test's checksum (no network)."""
    seqs = msnbc_mod.standin(50, __import__("numpy").random.default_rng(1))
    content = msnbc_mod.sample_text(seqs)
    good = tmp_path / "good" / msnbc_mod.RAW_RELPATH
    good.parent.mkdir(parents=True)
    good.write_bytes(gzip.compress(content, mtime=0))
    monkeypatch.setattr(msnbc_mod, "CHECKSUM", Checksum("sha256", hashlib.sha256(content).hexdigest(), gunzip=True))
    publisher = tmp_path / "publisher.gz"  # stands for the URLs: absent = unreachable
    monkeypatch.setattr(msnbc_mod, "candidates",
                        lambda mirror: [*mirror_candidate(mirror, msnbc_mod.RAW_RELPATH), Candidate(str(publisher))])
    return good, publisher


@pytest.mark.parametrize("where", ["mirror", "raw"])
@pytest.mark.parametrize("kind", ["flipped-near-header", "broken-crc-trailer", "truncated-gzip"])
def test_prepare_auto_never_turns_a_damaged_file_into_the_standin(tmp_path, fake_msnbc, where, kind):
    good, _ = fake_msnbc
    mirror = tmp_path / "mirror"
    raw = tmp_path / "data" / "raw" / "msnbc" / "msnbc990928.seq.gz"
    _corrupt(mirror / msnbc_mod.RAW_RELPATH if where == "mirror" else raw, kind, good.read_bytes())
    out = tmp_path / "processed"
    with pytest.raises(DownloadError) as info:  # (no mirror when the raw copy is the damaged one)
        prepare.prepare_msnbc("auto", str(raw), str(out), str(mirror) if where == "mirror" else None, 1, 200,
                              log=QUIET)
    assert info.value.corrupt
    assert not out.exists() or list(out.iterdir()) == []


def test_prepare_auto_uses_the_next_good_source_after_a_damaged_one(tmp_path, fake_msnbc):
    good, publisher = fake_msnbc
    _corrupt(tmp_path / "mirror" / msnbc_mod.RAW_RELPATH, "flipped-mid-file", good.read_bytes())
    publisher.write_bytes(good.read_bytes())
    out = tmp_path / "processed"
    prov = prepare.prepare_msnbc("auto", str(tmp_path / "raw" / "m.gz"), str(out), str(tmp_path / "mirror"), 1,
                                 200, log=QUIET)
    assert prov["source"] == "real" and not prov["standin"]
    assert len(pd.read_parquet(out / "msnbc_sets.parquet")) == 50


def test_prepare_auto_standin_only_when_nothing_reachable(tmp_path, fake_msnbc, monkeypatch):
    out = tmp_path / "processed"
    prov = prepare.prepare_msnbc("auto", str(tmp_path / "raw" / "m.gz"), str(out), None, 1, 200, log=QUIET)
    assert prov["standin"] and prov["source"] == "standin"
    # a mirror folder without the file is an error naming the setting and the file, never a stand-in
    monkeypatch.setenv("SHUFFLEDP_DATA_MIRROR", str(tmp_path / "nomirror"))
    for mirror in (tmp_path / "nomirror", tmp_path / "empty"):
        mirror.mkdir(exist_ok=True) if mirror.name == "empty" else None
        with pytest.raises(MirrorError) as err:
            prepare.prepare_msnbc("auto", str(tmp_path / "raw" / "m.gz"), str(out), str(mirror), 1, 200, log=QUIET)
        setting = "SHUFFLEDP_DATA_MIRROR" if mirror.name == "nomirror" else "config key data_mirror"
        assert setting in str(err.value) and msnbc_mod.RAW_RELPATH in str(err.value), err.value
    with pytest.raises(DownloadError):
        prepare.prepare_msnbc("real", str(tmp_path / "raw" / "m.gz"), str(out), None, 1, 200, log=QUIET)


REAL_MIRROR = __import__("os").environ.get("SHUFFLEDP_DATA_MIRROR")


@pytest.mark.skipif(not REAL_MIRROR or not (Path(REAL_MIRROR or ".") / msnbc_mod.RAW_RELPATH).is_file(),
                    reason="SHUFFLEDP_DATA_MIRROR is not set: no offline copy of the real raw files")
@pytest.mark.parametrize("kind", ["flipped-near-header", "truncated-gzip"])
def test_real_msnbc_damaged_mirror_then_damaged_raw(tmp_path, monkeypatch, kind):
    """The real file with its real checksum: a damaged mirror copy is an error (no stand-in); a damaged
    raw copy is moved aside and replaced from a good mirror."""
    real = (Path(REAL_MIRROR) / msnbc_mod.RAW_RELPATH).read_bytes()
    monkeypatch.delenv("SHUFFLEDP_DATA_MIRROR")
    monkeypatch.setattr(msnbc_mod, "candidates", lambda mirror: mirror_candidate(mirror, msnbc_mod.RAW_RELPATH))
    bad_mirror = tmp_path / "bad_mirror"
    _corrupt(bad_mirror / msnbc_mod.RAW_RELPATH, kind, real)
    raw = tmp_path / "raw" / "msnbc990928.seq.gz"
    with pytest.raises(DownloadError) as info:
        prepare.prepare_msnbc("auto", str(raw), str(tmp_path / "p1"), str(bad_mirror), 1, 200, log=QUIET)
    assert info.value.corrupt and msnbc_mod.SHA256_UNCOMPRESSED in str(info.value)
    assert not (tmp_path / "p1").exists() and not raw.exists()
    _corrupt(raw, kind, real)
    prov = prepare.prepare_msnbc("auto", str(raw), str(tmp_path / "p2"), REAL_MIRROR, 1, 200, log=QUIET)
    assert prov["source"] == "real" and raw.read_bytes() == real
    assert len(list(raw.parent.glob("msnbc990928.seq.gz.corrupt-*"))) == 1


@pytest.fixture
def http_mirror(tmp_path):
    """A local HTTP server over tmp_path/www (stands for a URL mirror)."""
    import functools
    import http.server
    import threading

    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_url_mirror_damaged_is_corrupt_missing_is_unreachable(tmp_path, http_mirror):
    root, url = http_mirror
    data = gzip.compress(_payload(), mtime=0)
    dest = tmp_path / "raw" / "x.gz"
    with pytest.raises(DownloadError) as info:  # 404: not reachable (a stand-in would be allowed)
        fetch_verified(dest, mirror_candidate(url, "m/x.gz"), _ck(), log=QUIET)
    assert not info.value.corrupt
    (root / "m").mkdir()
    (root / "m" / "x.gz").write_bytes(CORRUPTIONS["flipped-near-header"](data))
    with pytest.raises(DownloadError) as info:  # served but damaged: corrupt, no stand-in
        fetch_verified(dest, mirror_candidate(url, "m/x.gz"), _ck(), log=QUIET)
    assert info.value.corrupt and url + "m/x.gz" in str(info.value)
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    (root / "m" / "x.gz").write_bytes(data)
    assert fetch_verified(dest, mirror_candidate(url, "m/x.gz"), _ck(), log=QUIET) == url + "m/x.gz"
    assert dest.read_bytes() == data
