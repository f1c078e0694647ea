"""Recompute every claims table from an existing results folder, without rerunning any experiment.

    python benchmarks/recompute_claims.py --results bench_runs/paper/results --out /tmp/claims_after \
        [--data data] [--config config/config.yaml config/paper.yaml] [--stages segmented personalized]

For each stage with a claims table, the job that writes it (the stage's own ``jobs(config)`` at the
given config) is run with its inputs read from ``--results`` (and ``--data``) and its outputs
written under ``--out`` (``--results`` is never written). The claims tables before (``--results``)
and after (``--out``) are then compared (an input the earlier run lacks, e.g. the points of a
variant added since, is computed by its own job into ``--out``): verdict counts per paper (the
paper's statements and our own checks apart) and every row whose verdict changed, written to
``--out/claims_diff.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from shuffledp.config import load_validated
from shuffledp.stages import discover, job_io

ROOT = Path(__file__).resolve().parents[1]


def _claims_job(stage, config):
    """(step, job) of the job writing the stage's claims table."""
    step, _out = stage.claims_outputs()[0]
    jobs = [j for j in stage.jobs(config) if j.step == step.name]
    if len(jobs) != 1:
        raise SystemExit(f"{stage.name}: {len(jobs)} jobs of step {step.name}; expected one")
    return step, jobs[0]


def _run_missing(stage, stages, config, src: dict, results: Path, data: Path, out: Path) -> dict:
    """The claims job's inputs, with every input missing from ``--results`` (e.g. the points of a
    variant the earlier run did not have) computed by its own job into ``--out`` and read from there."""
    producers = {}
    for job in stage.jobs(config):
        step = next(s for s in stage.steps if s.name == job.step)
        io = job_io(stage, step, job, {"results": str(results), "data": str(data)}, stages)
        for p in io["output"].values():
            for q in (p.values() if isinstance(p, dict) else [p]):
                producers[q] = (step, job)
    inputs = {}
    for name, paths in src["input"].items():
        inputs[name] = []
        for p in paths:
            if Path(p).exists() or p not in producers:
                inputs[name].append(p)
                continue
            step, job = producers[p]
            dst = job_io(stage, step, job, {"results": str(out), "data": str(out / "data")}, stages)
            outs = dst["output"]
            for q in outs.values():
                Path(q).parent.mkdir(parents=True, exist_ok=True)
            print(f"   missing in --results, computed: {step.name} {job.wildcards}", flush=True)
            step.run(job.spec, io_inputs(stage, step, job, results, data, stages), outs)
            rel = Path(p).relative_to(results)
            inputs[name].append(str(out / rel))
    return inputs


def io_inputs(stage, step, job, results: Path, data: Path, stages) -> dict:
    return job_io(stage, step, job, {"results": str(results), "data": str(data)}, stages)["input"]


def recompute(results: Path, data: Path, out: Path, config: dict, names) -> dict[str, tuple[Path, Path]]:
    """Stage name -> (claims table before, after)."""
    stages = discover()
    done = {}
    for name in names or sorted(stages):
        stage = stages[name]
        if not stage.claims_outputs() or not config.get(stage.section, {}).get("enabled", True):
            continue
        step, job = _claims_job(stage, config)
        src = job_io(stage, step, job, {"results": str(results), "data": str(data)}, stages)
        dst = job_io(stage, step, job, {"results": str(out), "data": str(out / "data")}, stages)
        for p in dst["output"].values():
            for q in (p.values() if isinstance(p, dict) else [p]):
                Path(q).parent.mkdir(parents=True, exist_ok=True)
        print(f"== {name}: {step.name}", flush=True)
        step.run(job.spec, _run_missing(stage, stages, config, src, results, data, out), dst["output"])
        tab = stage.claims_outputs()[0][1]
        rel = Path(tab.path)
        done[name] = (results / rel, out / rel)
    return done


def _counts(df: pd.DataFrame, by: str | None) -> str:
    if by is not None and "by" in df:
        df = df[df["by"] == by]
    elif by == "ours":
        df = df.iloc[0:0]
    k = df["held"].value_counts()
    return f"{k.get('held', 0)}/{k.get('not held', 0)}/{k.get('not testable at this scale', 0)}"


def diff(done: dict[str, tuple[Path, Path]]) -> str:
    lines = ["# Claims before and after (held / not held / not testable)", "",
             "| paper | before (all rows) | after: the paper's statements | after: our checks |", "|---|---|---|---|"]
    changed = []
    for name, (a, b) in done.items():
        before = pd.read_parquet(a) if a.exists() else pd.DataFrame(columns=["id", "held"])
        after = pd.read_parquet(b)
        lines.append(f"| {name} | {_counts(before, None)} | {_counts(after, 'paper')} | {_counts(after, 'ours')} |")
        old = dict(zip(before["id"], before["held"], strict=True))
        for r in after.itertuples(index=False):
            if old.get(r.id) != r.held:
                changed.append(f"| {name} | {r.id} | {r.by} | {old.get(r.id, '(new row)')} | {r.held} | "
                               f"{str(r.explanation or r.target).replace('|', '/')} |")
        for cid in sorted(set(old) - set(after["id"])):
            changed.append(f"| {name} | {cid} | | {old[cid]} | (row dropped) | |")
    lines += ["", "## Rows whose verdict changed", "", "| paper | id | by | before | after | explanation (or rule) |",
              "|---|---|---|---|---|---|", *changed]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("--config", nargs="+", default=[ROOT / "config" / "config.yaml", ROOT / "config" / "paper.yaml"])
    ap.add_argument("--stages", nargs="*", default=None)
    a = ap.parse_args(argv)
    if a.out.resolve() == a.results.resolve():
        raise SystemExit("--out: must differ from --results (the measured run is never overwritten)")
    done = recompute(a.results, a.data, a.out, load_validated(a.config), a.stages)
    text = diff(done)
    (a.out / "claims_diff.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
