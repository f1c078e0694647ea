"""`snakemake --report`: every figure and claims table of the stage rules is flagged with a caption and
a category, and the report archive of the shared tiny run holds the flagged files."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from conftest import run_snakemake

from shuffledp.experiments.multidim import dataset_label
from shuffledp.io import read_provenance
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]
RULES = sorted((REPO / "workflow" / "rules").glob("*.smk"))
CAPTIONS = REPO / "workflow" / "report"


def _stage_captions() -> list[Path]:
    """The caption files of the discovered stages (each in its package's ``captions/`` folder)."""
    return sorted(p for s in discover().values() if s.folder for p in (s.folder / "captions").glob("*.rst"))


def test_every_stage_figure_and_claims_table_has_a_caption():
    """Every PNG figure and every claims table a discovered stage declares is flagged for the
    report with a caption file that exists; every caption file of a stage is used."""
    used, unflagged = set(), []
    for stage in discover().values():
        for step in stage.steps:
            for out in step.outputs:
                must = re.fullmatch(r"figures/.+\.png|tables/.*claims\.md", out.path)
                if out.report is None:
                    if must:
                        unflagged.append(f"{stage.name}.{step.name}.{out.name}")
                    continue
                caption = Path(stage.caption(out.report))
                assert caption.is_file(), caption
                used.add(caption)
    assert not unflagged, f"outputs without a report caption: {unflagged}"
    assert set(_stage_captions()) == used

# the outputs a reader must find in the report: every figure (PNG) and every claims table
MUST_FLAG = re.compile(r'f"\{RESULTS\}/(?:figures/[^"]+\.png|tables/[^"]*claims\.md)"')
CAPTION = re.compile(r'caption="\.\./report/([^"{]+)"')

# what the tiny run (tests/conftest.py: data, peruser, multidim with Adult, multidim_frameworks) flags for the report
TINY_FLAGGED = {
    "datasets.md": "results/tables/datasets.md",
    "msnbc_category_shares.png": "results/figures/msnbc_category_shares.png",
    **{f"peruser_fig{k}.png": f"results/figures/peruser_fig{k}.png" for k in (1, 2, 3, 4)},
    "peruser_claims.md": "results/tables/peruser_claims.md",
    **{f"multidim_fig{k}.png": f"results/figures/multidim_fig{k}.png" for k in (3, 4, 5, 10)},
    "multidim_table3.md": "results/tables/multidim_table3.md",
    "multidim_claims.md": "results/tables/multidim_claims.md",
    **{f"multidim_fig{k}.png": f"results/figures/multidim_fig{k}.png" for k in (6, 7, 8, 9)},
    "multidim_frameworks_claims.md": "results/tables/multidim_frameworks_claims.md",
}


def test_every_figure_and_claims_table_is_flagged_for_the_report():
    unflagged = []
    for smk in RULES:
        text = smk.read_text()
        for m in MUST_FLAG.finditer(text):
            before = text[: m.start()].rstrip()
            line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
            if ".targets(" in line:
                continue  # a final-target list (the same path as the rule's output), not an output
            if not before.endswith("report("):
                unflagged.append(f"{smk.name}: {m.group(0)}")
    assert not unflagged, f"outputs without report(): {unflagged}"


def test_every_caption_exists_and_is_used():
    used = set()
    for smk in RULES:
        text = smk.read_text()
        used |= set(CAPTION.findall(text))
    used.add("workflow.rst")  # the Snakefile's global `report:` description
    assert 'report: "workflow/report/workflow.rst"' in (REPO / "Snakefile").read_text()
    present = {p.name for p in CAPTIONS.glob("*.rst")}
    assert used - present == set(), f"captions referenced but missing: {used - present}"
    assert present - used == set(), f"caption files no rule uses: {present - used}"
    for path in [CAPTIONS / name for name in present] + _stage_captions():
        name, text = path.name, path.read_text()
        if name not in ("workflow.rst", "datasets_table.rst"):
            # the stand-in label is decided at run time: the caption sends the reader to the title
            assert "stand-in" in text or "synthetic" in text, name
        assert 'snakemake.config["name"]' in text, f"{name}: the caption must state the scale (config name)"


@pytest.mark.slow
def test_report_archive_holds_the_flagged_files(tiny_workflow):
    workdir = tiny_workflow
    archive = workdir / "report.zip"
    run_snakemake("--configfile", str(workdir / "config.yaml"), "--report", str(archive), cwd=workdir)
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
        by_base = {}
        for n in names:
            by_base.setdefault(Path(n).name, []).append(n)
        missing = [b for b in TINY_FLAGGED if b not in by_base]
        assert not missing, f"report archive lacks {missing}; it holds {sorted(by_base)}"
        for base, result in TINY_FLAGGED.items():
            assert len(by_base[base]) == 1, by_base[base]
            assert zf.read(by_base[base][0]) == (workdir / result).read_bytes(), base
        html = zf.read(next(n for n in names if n.endswith("report.html"))).decode()
    for category in ("Datasets", "Per-user histograms", "Multidimensional categorical data",
                     "Multidimensional frameworks"):
        assert category in html, category
    # captions are rendered with the run's configuration (its name is the scale)
    assert re.search(r"configuration <tt class=[^>]*>tiny<", html)
    # the Adult label of the tables follows the prepared table's provenance (real, or stand-in offline)
    label = dataset_label("adult", read_provenance(workdir / "results/multidim/data/adult.parquet"))
    for table in ("multidim_table3.md", "multidim_claims.md"):
        assert label in (workdir / "results/tables" / table).read_text(), table


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # docutils' writer_name, as Snakemake calls it
@pytest.mark.parametrize("configfile", ["config.yaml", "paper.yaml"])
def test_every_caption_renders_with_the_shipped_configs(configfile):
    """Snakemake renders captions with Jinja2 and the run's config: a wrong key would break
    `snakemake --report` only after a full run, so every caption is rendered here for both configs."""
    import types

    import jinja2
    import yaml
    from docutils.core import publish_parts

    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg.update(yaml.safe_load((REPO / "config" / configfile).read_text()))
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for caption in sorted(CAPTIONS.glob("*.rst")) + _stage_captions():
        # the segmented figure caption is rendered once per figure (its only wildcard)
        for segfig in cfg["segmented"]["figures"]:
            sm = types.SimpleNamespace(config=cfg, wildcards=types.SimpleNamespace(segfig=segfig), params={})
            text = env.from_string(caption.read_text()).render(snakemake=sm, categories=[], files=[])
            assert cfg["name"] in text, caption.name
            html = publish_parts(text, writer_name="html", settings_overrides={"report_level": 2,
                                                                                  "halt_level": 2})["body"]
            assert "System Message" not in html, caption.name
