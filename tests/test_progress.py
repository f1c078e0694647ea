"""Progress on stderr (tqdm) for long CLI grids and the accountant table: shown on a terminal,
nothing when stderr is a file or a pipe; stdout stays the same pure JSON either way."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from shuffledp.commands import _grid


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _grid_run(monkeypatch, capsys, stderr) -> tuple[str, str]:
    monkeypatch.setattr(_grid, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.setattr(sys, "stderr", stderr)
    _grid.run_grid({"a": [1, 2, 3], "b": [10, 20]}, lambda a, b: {"sum": a + b})
    return capsys.readouterr().out, stderr.getvalue()


def test_grid_progress_only_on_a_terminal(monkeypatch, capsys):
    out_tty, err_tty = _grid_run(monkeypatch, capsys, _Terminal())
    out_file, err_file = _grid_run(monkeypatch, capsys, io.StringIO())
    assert out_tty == out_file and [r["sum"] for r in json.loads(out_file)] == [11, 21, 12, 22, 13, 23]
    assert "/6 " in err_tty and "combinations" in err_tty  # the bar with its total (cleared when done)
    assert err_file == ""


def test_single_combination_has_no_bar(monkeypatch, capsys):
    monkeypatch.setattr(_grid, "PROGRESS_DELAY_S", 0.0)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    _grid.run_grid({"a": [1]}, lambda a: {"x": a})
    assert json.loads(capsys.readouterr().out) == {"a": 1, "x": 1} and term.getvalue() == ""


def test_accountant_table_reports_progress_through_its_hook():
    from shuffledp.accountants.special.segmented_optimizer import segmented_table

    seen = []

    def hook(items):
        seen.append(len(items))
        return items

    a = segmented_table(2000, 17, 2, [0.5, 1.0], [0.5, 0.5], 1e-5, [1.0, 2.0], accountants=("paper",), progress=hook)
    b = segmented_table(2000, 17, 2, [0.5, 1.0], [0.5, 0.5], 1e-5, [1.0, 2.0], accountants=("paper",))
    assert seen == [3] and a.equals(b)  # 2 grid points and the optimum; the same table with or without


def test_cli_grid_piped_stderr_is_quiet():
    proc = subprocess.run([sys.executable, "-m", "shuffledp", "account", "vr", "--mechanism", "general", "--eps0",
                           "1,2", "--n", "1000,2000", "--delta", "1e-6"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "" and len(json.loads(proc.stdout)) == 4
