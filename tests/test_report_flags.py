"""The report flags as Snakemake itself parses them (its rule objects, not the .smk text), for the
default configuration: every figure file is flagged with a caption; the files of an output list
(the segmented figures, drawn by one job) each get their own caption, rendered for their value; the
report pages, one job per stage, each carry their table's caption and stage category."""

from __future__ import annotations

import types
from pathlib import Path

import jinja2
import pytest
import yaml

from shuffledp.config import load_validated
from shuffledp.stages import discover

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    """Snakemake's parse of the workflow at config/config.yaml: (rules by name, the config)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    workdir = tmp_path_factory.mktemp("parse")
    with SnakemakeApi(OutputSettings()) as api:
        wapi = api.workflow(resource_settings=ResourceSettings(cores=1),
                            config_settings=ConfigSettings(configfiles=[REPO / "config" / "config.yaml"]),
                            snakefile=REPO / "Snakefile", workdir=workdir)
        wf = wapi._workflow
        rules = {r.name: r for r in wf.rules}
        yield rules, load_validated([REPO / "config" / "config.yaml"])


def _flag(f):
    return f.flags.get("report")


def test_every_figure_file_is_flagged(parsed):
    rules, _ = parsed
    figures = [(name, str(f)) for name, r in rules.items() for f in r.output
               if "/figures/" in f"/{f}" and str(f).endswith((".png", ".pdf"))]
    assert len(figures) >= 20
    unflagged = [x for x in figures if _flag(next(f for f in rules[x[0]].output if str(f) == x[1])) is None]
    assert not unflagged, unflagged


def test_each_file_of_an_output_list_has_its_own_caption(parsed):
    rules, cfg = parsed
    rule = rules["segmented_figures"]
    pngs = [f for f in rule.output if str(f).endswith(".png")]
    assert [Path(str(f)).stem for f in pngs] == [f"segmented_{k}" for k in cfg["segmented"]["figures"]]
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    captions = set()
    for f in pngs:
        fig = Path(str(f)).stem.removeprefix("segmented_")
        flag = _flag(f)
        assert flag.subcategory == fig and flag.category == discover()["segmented"].title
        source = Path(flag.caption.get_path_or_uri(secret_free=True)).read_text()
        sm = types.SimpleNamespace(config=cfg, wildcards=types.SimpleNamespace(),
                                   params=types.SimpleNamespace(data="real: msnbc"))
        text = env.from_string(source).render(snakemake=sm)
        assert text.startswith(cfg["segmented"]["figures"][fig]["title"]), text[:120]
        captions.add(source)
    assert len(captions) == len(pngs)  # one caption per figure, not one shared


def test_report_pages_carry_their_tables_caption_and_category(parsed):
    """Whatever the layout (one rule per stage's pages, report_pages_<stage>, or batches of them,
    workflow.batches), each page is flagged with the caption and category of the table it renders."""
    rules, _ = parsed
    stages = discover()
    pages = {name: r for name, r in rules.items() if name.startswith("report_pages_")}
    seen = set()
    for name, rule in pages.items():
        for f in rule.output:
            flag = _flag(f)
            # the page's caption is the caption of the Markdown table it renders, in its stage's category
            stem = Path(str(f)).stem
            owners = [(st, o) for st in stages.values() for s in st.steps for o in s.outputs
                      if o.path.endswith(".md") and Path(o.path).stem == stem and o.report]
            assert len(owners) == 1, (name, stem)
            stage, owner = owners[0]
            assert flag is not None and flag.category == stage.title, (name, str(f))
            caption = Path(flag.caption.get_path_or_uri(secret_free=True))
            assert caption == Path(stage.caption(owner.report)), (name, stem)
            seen.add(stage.name)
    assert seen >= {"segmented", "personalized", "multidim"}


def test_segmented_figure_caption_names_its_variable():
    """The caption of an output list uses the list's variable (set per file), never a wildcard."""
    text = (discover()["segmented"].folder / "captions" / "figure.rst").read_text()
    assert "[segfig]" in text and "snakemake.wildcards" not in text
    assert yaml.safe_load((REPO / "config" / "config.yaml").read_text())["segmented"]["figures"]


def test_no_output_is_temp_so_the_greedy_scheduler_loses_nothing(parsed):
    """profiles/default selects Snakemake's greedy scheduler: the ILP's only extra objective is
    removing temp() files early, so with none (checked on the parsed rules) it has nothing to gain."""
    rules, _ = parsed
    assert yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())["scheduler"] == "greedy"
    temp = [(name, str(f)) for name, r in rules.items() for f in r.output if f.flags.get("temp")]
    assert not temp, temp
    assert len(rules) > 20
