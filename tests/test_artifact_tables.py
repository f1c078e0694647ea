"""benchmarks/artifact_tables.py on a fabricated results folder: costs summed from Snakemake
benchmark files, verdict counts, scale flag, rewriting only between the guide's markers, bad input."""

import importlib.util
import shutil
from pathlib import Path

import pandas as pd
import pytest

from shuffledp.claims import Claim, decide, frame
from shuffledp.claims import engine as E
from shuffledp.claims.artifact import BEGIN, END, ArtifactError, cost, read_benchmarks, rewrite, tables
from shuffledp.stages import artifact_papers

REPO = Path(__file__).resolve().parents[1]
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(path: Path, s: float, rss) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:{int(s):02d}\t{rss}\t1\t1\t1\t0\t0\t50\t{s}\n")


def _claims(path: Path, verdicts, scale="paper", data="real"):
    rows = []
    for i, (ok, testable) in enumerate(verdicts):
        c = Claim(f"c{i}", f"statement {i}", "Sec. 1", f"target {i}", explain=f"why {i}")
        v = E.one(E.judge(E.exact(1.0 if ok else 0.0), E.above(0.5), "x")) if testable else None
        rows.append(decide(c, verdict=v, measured="x", data=data, scale=scale, reason="needs 2 repetitions"))
    path.parent.mkdir(parents=True, exist_ok=True)
    frame(rows).to_parquet(path, index=False)


@pytest.fixture
def results(tmp_path):
    r = tmp_path / "results"
    _bench(r / "benchmarks/segmented/run_a.tsv", 10.0, 100.0)
    _bench(r / "benchmarks/segmented/run_b.tsv", 20.0, 300.5)
    _bench(r / "benchmarks/segmented/accountant_msnbc_5000.tsv", 30.0, "-")   # no memory measured
    _bench(r / "benchmarks/multidim/report.tsv", 7200.0, 2048.0)
    _bench(r / "benchmarks/data/preprocess_msnbc.tsv", 5.0, 50.0)
    _claims(r / "tables/segmented_claims.parquet", [(True, True), (False, True), (True, False)])
    _claims(r / "tables/multidim_claims.parquet", [(True, True)], scale="default", data="stand-in")
    t = Claim("t0", "timing statement", "Fig. 4", "target")
    frame([decide(t, verdict=E.one(E.judge(E.Interval(1.5, 1.0, 2.0, "t", 5), E.above(0.5))), data="real",
                  scale="default")]).to_parquet(r / "tables/multidim_claims_timings.parquet", index=False)
    o = Claim("o0", "our statement", "Sec. 1", "target", by="ours")
    rows = pd.read_parquet(r / "tables/segmented_claims.parquet").to_dict("records")
    rows.append(decide(o, verdict=E.one(E.judge(E.exact(1.0), E.above(0.5))), measured="m", data="real",
                       scale="paper"))
    frame(rows).to_parquet(r / "tables/segmented_claims.parquet", index=False)
    return r


def test_costs(results):
    c = cost(read_benchmarks(results, ("segmented",)))
    assert c == {"jobs": 3, "sum_s": 60.0, "max_s": 30.0, "peak_mb": 300.5}
    assert cost(read_benchmarks(results, ("peruser",)))["jobs"] == 0


def test_tables(results):
    md = tables(results, artifact_papers())
    seg = next(line for line in md.splitlines() if line.startswith("| Segmented"))
    cells = [c.strip() for c in seg.strip("|").split("|")]
    assert cells[1:] == ["paper", "3", "1 min 00 s", "0 min 30 s", "300 MB", "1", "1", "1", "2", "1 / 0 / 0"]
    mdim = next(line for line in md.splitlines() if line.startswith("| Multidimensional"))
    assert "default (**not paper**)" in mdim and "2 h 00 min" in mdim and "2.0 GB" in mdim
    assert "| Per-user histograms (our experiments; the paper has none) | no claims table | 0 |" in md
    row = next(line for line in md.splitlines() if line.startswith("| c2 |"))
    assert "not testable at this scale" in row and "results/tables/segmented_claims.md" in row
    mrow = next(line for line in md.splitlines() if line.startswith("| c0 |") and "multidim_claims.md" in line)
    assert "held (scale default)" in mrow and mrow.rstrip(" |").endswith("no")   # stand-in: not evidence
    # every claims table of a paper (the Fig. 4 timing rows), measured shown, ours in their own section
    trow = next(line for line in md.splitlines() if line.startswith("| t0 |"))
    assert "multidim_claims_timings.md" in trow and "1.5 [1, 2]" in trow
    orow = next(line for line in md.splitlines() if line.startswith("| o0 |"))
    assert md.index("### Our checks") < md.index(orow) and md.index(trow) < md.index("### Our checks")


def test_rewrite_only_between_markers(results, tmp_path):
    guide = tmp_path / "GUIDE.md"
    guide.write_text(f"head\n{BEGIN}\nold\n{END}\ntail\n")
    text = rewrite(guide, tables(results, artifact_papers()))
    assert text.startswith(f"head\n{BEGIN}\n") and text.endswith(f"{END}\ntail\n") and "old" not in text
    guide.write_text("no markers\n")
    with pytest.raises(ArtifactError, match="--guide"):
        rewrite(guide, "x")


def test_script_on_the_real_guide(results, tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("artifact_tables", REPO / "benchmarks" / "artifact_tables.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    guide = tmp_path / "ARTIFACT-EVALUATION.md"
    shutil.copy(REPO / "ARTIFACT-EVALUATION.md", guide)
    before = guide.read_text()
    assert mod.main(["--results", str(results), "--guide", str(guide)]) == 0
    after = guide.read_text()
    assert after.split(BEGIN)[0] == before.split(BEGIN)[0] and after.split(END)[1] == before.split(END)[1]
    assert "| c1 |" in after
    assert mod.main(["--results", str(results), "--guide", str(guide)]) == 0
    assert guide.read_text() == after                       # idempotent
    capsys.readouterr()
    assert mod.main(["--results", str(tmp_path / "nowhere"), "--guide", str(guide)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("artifact_tables: error: --results:") and err.count("\n") == 1
    (results / "tables" / "segmented_claims.parquet").unlink()
    (results / "tables" / "multidim_claims.parquet").unlink()
    (results / "tables" / "multidim_claims_timings.parquet").unlink()
    assert mod.main(["--results", str(results), "--stdout"]) == 2
    pd.DataFrame({"id": ["x"]}).to_parquet(results / "tables" / "peruser_claims.parquet")
    assert mod.main(["--results", str(results), "--stdout"]) == 2
    assert "lacks columns" in capsys.readouterr().err
