"""Issue 23, bounded work: a download has a total deadline. A mirror that answers one byte at a time
(each read well inside the per-read timeout) still ends in bounded time, with one line naming the
source and the deadline, and leaves no partial file."""

from __future__ import annotations

import http.server
import json
import threading
import time

import pytest

from shuffledp.cli import main
from shuffledp.datasets.download import DEADLINE_ENV, download_deadline
from shuffledp.errors import DataError


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Headers for a 1 MB file, then one byte every 50 ms (until the client goes away)."""

    def do_GET(self):  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Length", str(1 << 20))
        self.end_headers()
        try:
            for _ in range(1 << 20):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def trickle_mirror():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_a_trickling_mirror_ends_at_the_total_deadline(tmp_path, capsys, monkeypatch, trickle_mirror):
    from shuffledp.datasets import download, msnbc

    monkeypatch.setenv(DEADLINE_ENV, "1.5")
    monkeypatch.delenv("SHUFFLEDP_DATA_MIRROR", raising=False)  # CI sets one: the trickling mirror is the spec's
    # only the mirror (no network in tests): as the step builds its candidates from the spec's mirror
    monkeypatch.setattr(msnbc, "candidates", lambda mirror: download.mirror_candidate(mirror, msnbc.RAW_RELPATH))
    (tmp_path / "spec.json").write_text(json.dumps({"mirror": trickle_mirror}))
    dest = tmp_path / "raw" / "msnbc990928.seq.gz"
    (tmp_path / "io.json").write_text(json.dumps({"input": {}, "output": {"raw": str(dest)}}))
    monkeypatch.chdir(tmp_path)  # a job's files lie inside its working folder
    start = time.monotonic()
    code = main(["step", "data", "download_msnbc", "--spec", str(tmp_path / "spec.json"),
                 "--io", str(tmp_path / "io.json")])
    took = time.monotonic() - start
    err = capsys.readouterr().err.strip()
    assert code == 2 and took < 15, (code, took, err)
    last = err.splitlines()[-1]
    assert last.startswith("shuffledp: error: ") and "total deadline of 1.5 s" in err and trickle_mirror in err, err
    assert not dest.exists() and not [p for p in dest.parent.glob("*") if p.name.endswith(".part")]


def test_deadline_setting_is_checked():
    import os

    old = os.environ.pop(DEADLINE_ENV, None)
    try:
        assert download_deadline() > 0
        for bad in ("nan", "-1", "0", "inf", "soon"):
            os.environ[DEADLINE_ENV] = bad
            with pytest.raises(DataError, match=DEADLINE_ENV):
                download_deadline()
    finally:
        os.environ.pop(DEADLINE_ENV, None)
        if old is not None:
            os.environ[DEADLINE_ENV] = old
