"""ARTIFACT-APPENDIX.md: the PETS 2026 appendix's sections, and its generated experiments table
(benchmarks/artifact_appendix.py) computed from a results folder, not typed."""

import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

from shuffledp.claims import Claim, decide, frame
from shuffledp.claims import engine as E
from shuffledp.claims.artifact import ArtifactError

REPO = Path(__file__).resolve().parents[1]
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
SECTIONS = ["## Description", "### Security/Privacy Issues and Ethical Concerns", "## Basic Requirements",
            "### Hardware Requirements", "### Software Requirements", "### Estimated Time and Storage Consumption",
            "## Environment", "### Accessibility", "### Set up the environment", "### Testing the Environment",
            "## Artifact Evaluation", "### Main Results and Claims", "### Experiments", "## Limitations",
            "## Notes on Reusability"]


def _script():
    spec = importlib.util.spec_from_file_location("artifact_appendix", REPO / "benchmarks" / "artifact_appendix.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_appendix_has_the_pets_sections_in_order_and_the_readme_setup():
    text = (REPO / "ARTIFACT-APPENDIX.md").read_text()
    found = [text.find(f"\n{s}\n") for s in SECTIONS]
    assert all(i >= 0 for i in found), [s for s, i in zip(SECTIONS, found, strict=True) if i < 0]
    assert found == sorted(found)
    readme = (REPO / "README.md").read_text()
    setup = re.search(r"```bash\n(pip install -e \. .*?)```", readme, flags=re.S).group(1)
    assert setup in text  # the README's two commands, verbatim
    mod = _script()
    assert text.count(mod.BEGIN) == 1 and text.count(mod.END) == 1


def _bench(path: Path, s: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{s}\t0:00:00\t100\t1\t1\t1\t0\t0\t50\t{s}\n")


def test_experiments_table_from_a_results_folder(tmp_path):
    r = tmp_path / "results"
    for i, s in enumerate((100.0, 200.0, 30.0)):
        _bench(r / f"benchmarks/segmented/run_{i}.tsv", s)
    _bench(r / "benchmarks/data/preprocess.tsv", 400.0)
    held = E.one(E.judge(E.exact(1.0), E.above(0.5)))
    rows = [decide(Claim(f"c{i}", "s", "Sec. 1", "t"), verdict=held, measured="x", data="real",
                   scale="paper", reason="") for i in range(3)]
    (r / "tables").mkdir(parents=True)
    frame(rows).to_parquet(r / "tables/segmented_claims.parquet", index=False)
    (r / "segmented").mkdir()
    (r / "segmented/x.parquet").write_bytes(b"0" * 3 * 2**20)
    mod = _script()
    md = mod.experiments(r, "config/paper.yaml")
    seg = next(line for line in md.splitlines() if "Segmented" in line)
    # 330 s of jobs on 2 cores: 165 s, but the longest job alone takes 200 s -> about 4 min
    assert "results/tables/segmented_claims.md" in seg and "3 claims" in seg and "about 4 min (3 jobs)" in seg
    assert "3.0 MB" in seg, seg
    every = next(line for line in md.splitlines() if line.startswith("| all"))
    assert "about 7 min (4 jobs)" in every  # 730 s / 2 = 365 s, the data job (400 s) longer: 400 s
    assert "Personalized" not in md  # no claims table, no row
    guide = tmp_path / "A.md"
    guide.write_text(f"head\n{mod.BEGIN}\nold\n{mod.END}\ntail\n")
    assert mod.main(["--results", str(r), "--appendix", str(guide)]) == 0
    text = guide.read_text()
    assert text.startswith("head\n") and text.endswith(f"{mod.END}\ntail\n") and "old" not in text and seg in text
    with pytest.raises(ArtifactError, match="--results"):
        mod.experiments(tmp_path / "none", "config/paper.yaml")
    assert pd.read_parquet(r / "tables/segmented_claims.parquet").shape[0] == 3
