"""The segmented part of the workflow end to end on a tiny configuration, twice: every table is
byte-identical across the two runs, the figures and the claims table exist, and every lambda a job
used is the accountant table's value for its (m, level) and meets the constraint."""

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from shuffledp.accountants.special.poisson import poisson_delta

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "fixtures" / "config_tiny.yaml"

SEGMENTED = {
    "levels": [0.5, 1.0, 2.0],
    "accountant": "sound",
    "compare_paper_accountant": False,
    "settings": {"S1": [0.25, 0.5, 0.25]},
    "delta_factor": 0.01,
    "m_grid": {"min": 0.5, "max": 2.0, "num": 2},
    "n": [400],
    "datasets": {"msnbc": {"table": "msnbc_sets", "d": 17, "s": 4},
                 "synth_T128_s4": {"table": "synthetic_synth_tiny", "d": 16, "s": 2}},
    "repetitions": 4,
    "batch_size": 4,
    "figures": {"fig2": {"datasets": ["msnbc", "synth_T128_s4"], "settings": ["S1"], "title": "tiny"}},
}
TARGETS = ["results/tables/segmented_claims.parquet", "results/tables/segmented_claims.md",
           "results/figures/segmented_fig2.png", "results/figures/segmented_fig2.pdf"]


def _run(cfg: Path, cwd: Path):
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"), "--directory", str(cwd),
           "--configfile", str(cfg), "--cores", "2", *TARGETS]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]


def _tables(root: Path) -> dict:
    return {p.relative_to(root): p.read_bytes() for p in sorted((root / "results").rglob("*.parquet"))}


@pytest.mark.slow
def test_segmented_workflow_tiny_twice(tmp_path):
    cfg = yaml.safe_load(TINY.read_text())
    cfg["segmented"] = SEGMENTED
    cfg["datasets"]["msnbc"]["source"] = "standin"  # so the stand-in labelling is checked, mirror or not
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    _run(path, tmp_path)
    first = _tables(tmp_path)
    for t in TARGETS:
        assert (tmp_path / t).stat().st_size > 500
    claims = pd.read_parquet(tmp_path / "results/tables/segmented_claims.parquet")
    from shuffledp.claims.core import COLUMNS

    assert list(claims.columns) == [*COLUMNS, "audit"]   # segmented claims rest on audited protocols
    by_id = claims.set_index("id")
    assert by_id.loc["optimal_m_msnbc_5k", "data"] == "stand-in"          # the provenance reaches the claims
    assert by_id.loc["optimal_m_msnbc_5k", "held"] == "not testable at this scale"   # no run at n = 5,000
    assert set(claims["scale"]) == {"tiny"}
    assert "stand-in" in (tmp_path / "results/tables/segmented_claims.md").read_text()
    # every lambda a job used: the table's value for its m and level, and it meets constraint (7)
    runs = pd.concat(pd.read_parquet(p) for p in (tmp_path / "results/segmented/runs").glob("segmented*/*.parquet"))
    checked = 0
    for row in runs.drop_duplicates(["protocol", "dataset", "n", "m"]).itertuples():
        acct = pd.read_parquet(tmp_path / f"results/accountant/segmented/{row.dataset}_n{row.n}_S1.parquet")
        acct = acct[(acct["source"] == "grid") & (acct["accountant"] == row.accountant) & (acct["m"] == row.m)]
        for k, e in enumerate(SEGMENTED["levels"]):
            lam = getattr(row, f"lambda_{k + 1}")
            assert lam == float(acct[acct["eps"] == e]["lambda"].iloc[0])
            if row.accountant == "sound":  # over d + s items where the dataset pads (MSNBC), d otherwise
                pad = int(acct["padding"].iloc[0])
                assert pad == (row.s if row.dataset == "msnbc" else 0)
                assert poisson_delta(lam, row.n, row.m, row.d + pad, e / row.s) <= \
                    0.01 / row.n / (row.s * math.exp(e))
            checked += 1
    assert checked == 2 * 2 * 3  # datasets x m x levels
    shutil.rmtree(tmp_path / "results")
    shutil.rmtree(tmp_path / "data" / "processed")
    _run(path, tmp_path)
    second = _tables(tmp_path)
    assert first.keys() == second.keys()
    assert not [str(k) for k in first if first[k] != second[k]]


def test_dry_run_shows_the_paper_calibrated_baseline_jobs(tmp_path):
    """``snakemake -n`` on the tiny segmented configuration with ``baseline_accounting: [ours, paper]``
    lists a ``params_paper`` job per (dataset, n) and a run job per paper-calibrated baseline; with
    the default ``[ours]`` none of them."""
    from conftest import run_snakemake

    cfg = yaml.safe_load(TINY.read_text())
    outs = {}
    for name, acct in (("ours", ["ours"]), ("both", ["ours", "paper"])):
        cfg["segmented"] = dict(SEGMENTED, baseline_accounting=acct)
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump(cfg))
        work = tmp_path / name
        work.mkdir()
        outs[name] = run_snakemake("--configfile", str(path), "--cores", "1", "-n", *TARGETS[:1], cwd=work).stdout
    new = [f"results/segmented/runs/{p}/b0.parquet"
           for p in ("subexp_shuffle_paper", "mm_shuffle_paper", "sepmm_paper", "wsepmm_paper")]
    new += [f"results/segmented/params_paper/{ds}_n400.parquet" for ds in SEGMENTED["datasets"]]
    for out in new:
        assert out in outs["both"] and out not in outs["ours"], out
    assert "results/segmented/runs/mm_shuffle/b0.parquet" in outs["ours"]


def _figures_job(root: Path) -> tuple[dict, dict]:
    """The spec and io of the run's ``figures`` job, from its job files (results/.jobs)."""
    import json

    for io_path in sorted((root / "results" / ".jobs").glob("io-*.json")):
        io = json.loads(io_path.read_text())
        if io["job"]["stage"] == "segmented" and io["job"]["step"] == "figures":
            spec = json.loads((root / "results" / ".jobs" / f"spec-{io['job']['spec']}.json").read_text())
            return spec, io
    raise AssertionError("no figures job in results/.jobs")


@pytest.mark.slow
def test_figures_draw_the_paper_calibrated_baselines_and_refuse_a_summary_without_them(tmp_path, monkeypatch,
                                                                                     capsys):
    """``baseline_accounting: [ours, paper]`` on the tiny configuration: the figure job's spec asks
    for the variants; run again in process on the workflow's summary, it draws the four of them in
    every panel, labelled, each at the summary's error; given a summary without one of them it
    exits 2 with one line naming the variant and the panel, and writes no figure."""
    import json

    from shuffledp.cli import main
    from shuffledp.experiments import segmented as ex
    from shuffledp.plotting import segmented as pl

    monkeypatch.chdir(tmp_path)  # a job reads and writes only inside the working folder
    cfg = yaml.safe_load(TINY.read_text())
    cfg["segmented"] = dict(SEGMENTED, baseline_accounting=["ours", "paper"])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    from conftest import run_snakemake

    run_snakemake("--configfile", str(path), "--cores", "2", *TARGETS[2:], cwd=tmp_path)
    spec, io = _figures_job(tmp_path)
    assert spec["paper_baselines"] is True
    summary = tmp_path / io["input"]["summary"][0]
    summ = pd.read_parquet(summary)
    drawn = []
    original = pl.draw
    monkeypatch.setattr(pl, "draw", lambda *a, **k: drawn.append(original(*a, **k)) or drawn[-1])
    io = {"input": {k: [str(tmp_path / p) for p in v] for k, v in io["input"].items()},
          "output": {k: {f: str(tmp_path / "out" / f"{k}.{k}") for f in v} for k, v in io["output"].items()}}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    (tmp_path / "io.json").write_text(json.dumps(io))
    argv = ["step", "segmented", "figures", "--spec", str(tmp_path / "spec.json"), "--io", str(tmp_path / "io.json")]
    assert main(argv) == 0
    (fig,) = drawn
    panels = [(ds, st, n) for ds in spec["figures"]["fig2"]["datasets"] for st in ["S1"] for n in spec["n"]]
    for ax, (ds, st, n) in zip(fig.axes, panels, strict=False):
        lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
        frame = ex.panel_frame(summ, ds, n, st)
        for proto in ex.PAPER_BASELINES:
            want = float(frame.loc[frame["protocol"] == proto, "error_mean"].iloc[0])
            assert np.allclose(lines[pl.series_label(proto)].get_ydata(), want), (ds, proto)
        assert sum("(paper's calibration)" in k for k in lines) == 4
    # a summary without one variant: refused, naming it and the panel
    shutil.rmtree(tmp_path / "out")
    summ[summ["protocol"] != "mm_shuffle_paper"].to_parquet(tmp_path / "partial.parquet")
    io["input"]["summary"] = [str(tmp_path / "partial.parquet")]
    (tmp_path / "io.json").write_text(json.dumps(io))
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "mm_shuffle_paper" in err[0] and "msnbc, n = 400, S1" in err[0], err
    assert not (tmp_path / "out").exists()
