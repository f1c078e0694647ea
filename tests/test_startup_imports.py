"""What a workflow job pays before its work: the libraries it loads. Each job is a process of its own
(``shuffledp step ...``), so a heavy library imported at module level is paid by every job that
imports the module, whether it calls the library or not. These tests pin that the heavy ones
(scipy.stats about 0.9 s of CPU, sklearn 1.5 s, matplotlib 0.6 s, numba 0.3 s, scipy.signal 1 s)
load only where a job calls them: the accountants import them inside the functions that use them."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import shuffledp.accountants

HEAVY = ("scipy.stats", "scipy.special", "scipy.signal", "scipy.optimize", "sklearn", "matplotlib", "numba",
         "dp_accounting")


def _loaded_after(code: str, cwd) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run ``code`` in a fresh interpreter; the heavy modules it left in ``sys.modules``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc


def test_importing_every_accountant_loads_no_heavy_library(tmp_path):
    names = sorted(m.name for m in pkgutil.walk_packages(shuffledp.accountants.__path__, "shuffledp.accountants."))
    assert len(names) > 40
    loaded, _ = _loaded_after("\n".join(f"import {n}" for n in names), tmp_path)
    assert loaded == []


def _light_step_files(tmp_path) -> None:
    spec = {"bound": "bgn", "settings": ["uniform1"], "mechanism": "laplace", "n_grid": [1000], "seeds": [1],
            "delta_central": 1e-5, "delta_local": 0.0}
    (tmp_path / "s.json").write_text(json.dumps(spec))
    (tmp_path / "io.json").write_text(json.dumps({"input": {}, "output": {"table": "out.parquet"}}))


def test_a_step_imports_no_other_command_and_reads_no_stage_schema(tmp_path):
    """``shuffledp step`` (every workflow job) parses with the step command alone (the other
    command modules and what they import are not loaded) and reads no stage's config schema
    (``Stage.config_schema``, a schema.yaml per stage, is read only when the config is validated)."""
    _light_step_files(tmp_path)
    code = ("import json, sys\nfrom shuffledp.cli import main\nfrom shuffledp.stages import discover\n"
            "assert main(['step', 'personalized', 'points', '--spec', 's.json', '--io', 'io.json']) == 0\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.startswith('shuffledp.commands.')),\n"
            "                  sorted(n for n, s in discover().items() if 'config_schema' in vars(s))]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    commands, schemas_read = json.loads(proc.stdout.strip().splitlines()[-1])
    assert commands == ["shuffledp.commands._args", "shuffledp.commands.step"]
    assert schemas_read == []
    # the schemas are still there when asked (the config's validation asks for them)
    from shuffledp.stages import discover

    assert "segmented" in discover()["segmented"].config_schema


def test_a_light_step_loads_no_heavy_library(tmp_path):
    """A personalized points job of a bound that evaluates no binomial law (BGN), after discovering
    every stage: none of the heavy libraries is loaded."""
    _light_step_files(tmp_path)
    code = ("from shuffledp.cli import main\nfrom shuffledp.stages import discover\ndiscover()\n"
            "assert main(['step', 'personalized', 'points', '--spec', 's.json', '--io', 'io.json']) == 0")
    loaded, _ = _loaded_after(code, tmp_path)
    assert (tmp_path / "out.parquet").is_file()
    assert loaded == []


def test_writing_text_and_downloading_load_no_table_library(tmp_path):
    """``shuffledp.io`` loads pandas and pyarrow only where a table is written or read, and the Adult
    download (a job that fetches and checks files) loads neither them nor numpy: pandas alone is
    about 0.25 s of CPU per job."""
    code = ("import sys\nimport shuffledp.io as io\nimport shuffledp.datasets.adult\n"
            "io.write_text('a.txt', 'x')\nio.write_json('a.json', {'a': 1})\n"
            "import json\nprint(json.dumps([m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_a_report_pages_job_reads_its_tables_without_pandas(tmp_path):
    """The report's page job (one per stage, each a fraction of its process's start-up) reads a table
    of plain columns with pyarrow alone (html_table.read_rows) and writes its page without importing
    pandas; a table read_rows refuses is read with pandas (the same page either way: test_report)."""
    import pyarrow as pa

    from shuffledp.io import write_table

    write_table(pa.table({"held": ["held", "not held"], "x": [0.5, None], "n": [1, 2]}), tmp_path / "t.parquet")
    write_table(pa.table({"t": pa.array([0, 1], pa.timestamp("s"))}), tmp_path / "u.parquet")
    (tmp_path / "t.md").write_text("# T\n\n| held |\n|---|\n| held |\n", encoding="utf-8")
    page = {"stage": "s", "step": "claims", "output": "claims_md", "title": "t"}
    code = ("import json, sys\nfrom shuffledp.stages.report import _pages\n"
            "def run(parquet):\n"
            f"    _pages({{'pages': [{page!r}]}}, {{'md': ['t.md'], 'parquet': [parquet]}},\n"
            "           {'html': {'t': parquet + '.html'}})\n"
            "    return 'pandas' in sys.modules\n"
            "print(json.dumps([run('t.parquet'), run('u.parquet')]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [False, True]
    assert '<td style="background:#f8d7da">not held</td>' in (tmp_path / "t.parquet.html").read_text()
    assert "<td>1970-01-01 00:00:01</td>" in (tmp_path / "u.parquet.html").read_text()


def test_the_msnbc_figure_reads_its_tables_without_pandas(tmp_path):
    """The data stage's figure job reads its three tables with ``pq.ParquetFile`` (``pq.read_table``
    imports pyarrow.dataset, which imports pandas): matplotlib is its only heavy library."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"name": ["a", "b", "c"]}), tmp_path / "c.parquet")
    pq.write_table(pa.table({"seq": [[0, 1], [2, 2, 0]]}), tmp_path / "q.parquet")
    pq.write_table(pa.table({"items": [[0, 1], [0, 2]]}), tmp_path / "s.parquet")
    code = ("import json, sys\nfrom shuffledp.plotting.datasets import msnbc_category_shares\n"
            "msnbc_category_shares('q.parquet', 's.parquet', 'c.parquet', 'fig')\n"
            "print(json.dumps(['pandas' in sys.modules, 'matplotlib' in sys.modules]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [False, True]
    assert (tmp_path / "fig.png").is_file()


def test_integers_read_from_the_buffer_are_arrow_to_numpy():
    """plotting.datasets._integers (no pandas import) gives Array.to_numpy's values and dtype, for
    sliced arrays and flattened list slices (offsets) of every integer width."""
    import pyarrow as pa

    from shuffledp.plotting.datasets import _integers

    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint64()):
        a = pa.array([1, 2, 3, 4, 5, 6, 7], t)
        flat = pa.array([[1, 2], [3], [4, 5, 6]], pa.list_(t)).slice(1).flatten()
        for arr in (a, a.slice(2, 3), flat):
            got, want = _integers(arr), arr.to_numpy()
            assert got.dtype == want.dtype and got.tolist() == want.tolist()
