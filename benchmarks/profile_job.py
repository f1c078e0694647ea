"""Profile one workflow job: ``shuffledp step <stage> <step>`` under cProfile, at any config.

    python benchmarks/profile_job.py --configfile config/config.yaml config/paper.yaml \\
        multidim_frameworks run framework=hdg dataset=loan component=mhm [--workdir DIR] [--top 25]
    python benchmarks/profile_job.py --configfile config/config.yaml config/paper.yaml segmented --list

The job's spec comes from its stage's ``jobs(config)`` (the config files merged and validated as the
workflow does), its spec and io files are written under ``<workdir>/results/.jobs`` and the job runs
in-process in ``<workdir>`` (``results/`` and ``data/`` there), so nothing in the repository changes
and the whole paper-scale workflow never runs. The inputs it reads are built first, by running
their producers (recursively, not profiled) unless ``<workdir>`` already holds them: give the same
``--workdir`` again to profile several jobs of one scale. Real data comes from the folder that
``SHUFFLEDP_DATA_MIRROR`` names (else a labelled stand-in, as in the workflow).

Prints the job's CPU seconds (``time.process_time``), wall seconds and the top entries of the
profile by cumulative and by own (self) time; ``--pstats FILE`` keeps the raw profile. ``--list``
prints the stage's jobs (step and wildcards) instead. A job's CPU time is what to compare before and
after a change: the machine is shared and its wall time is noisy.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_config(files: list[str]) -> dict:
    from shuffledp.config import load_configs, validate_config

    config = load_configs([str(Path(f).resolve()) for f in files])
    validate_config(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    return config


class Runner:
    """Builds a job's spec and io files in the current folder (the work folder) and runs it."""

    ROOTS = {"results": "results", "data": "data"}

    def __init__(self, config: dict):
        from shuffledp.stages import discover
        from shuffledp.stages.jobs import JobTable

        self.config = config
        self.stages = {k: s for k, s in discover().items() if s.enabled(config)}
        self.tables = {k: JobTable(s.jobs(config)) for k, s in self.stages.items()}

    def files(self, stage_name: str, job) -> tuple[str, str, dict]:
        from shuffledp.stages import content_file, job_io

        stage = self.stages[stage_name]
        step = stage.step(job.step)
        io_obj = job_io(stage, step, job, self.ROOTS, self.stages, self.tables)
        jobs_dir = Path(self.ROOTS["results"]) / ".jobs"
        return content_file(jobs_dir, "spec", job.spec), content_file(jobs_dir, "io", io_obj), io_obj

    def producers(self) -> dict:
        """Output path -> (stage, job) of every job (built once)."""
        if not hasattr(self, "_producers"):
            from shuffledp.stages import job_io

            self._producers = {}
            for name, table in self.tables.items():
                stage = self.stages[name]
                for j in table.jobs:
                    for v in job_io(stage, stage.step(j.step), j, self.ROOTS, self.stages)["output"].values():
                        for p in v.values() if isinstance(v, dict) else [v]:
                            self._producers[p] = (name, j)
        return self._producers

    def ensure_inputs(self, stage_name: str, job, depth: int = 0) -> None:
        """Run the producers of the job's missing inputs (recursively)."""
        from shuffledp.stages import run_step

        for refs in job.inputs.values():
            for ref in refs:
                if isinstance(ref, str):  # a fixed path: built by the job that names it as an output
                    if os.path.exists(ref) or ref not in self.producers():
                        continue
                    owner, producer = self.producers()[ref]
                else:
                    owner = ref.stage or stage_name
                    producer = self.tables[owner].job(ref.step, ref.wildcards)
                _, _, io_obj = self.files(owner, producer)
                outs = [p for v in io_obj["output"].values() for p in (v.values() if isinstance(v, dict) else [v])]
                if all(os.path.exists(p) for p in outs):
                    continue
                self.ensure_inputs(owner, producer, depth + 1)
                spec_path, io_path, _ = self.files(owner, producer)
                t0 = time.process_time()
                print(f"{'  ' * depth}building input: {owner} {producer.step} {producer.wildcards}", file=sys.stderr,
                      flush=True)
                saved, sys.stdout = sys.stdout, sys.stderr  # its printed table: not the profile's output
                try:
                    run_step(owner, producer.step, spec_path, io_path)
                finally:
                    sys.stdout = saved
                print(f"{'  ' * depth}  ({time.process_time() - t0:.1f} CPU s)", file=sys.stderr, flush=True)


def parse_wildcards(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items:
        if "=" not in it:
            raise SystemExit(f"profile_job: wildcard {it!r} must be NAME=VALUE")
        k, v = it.split("=", 1)
        out[k] = v
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage")
    ap.add_argument("step", nargs="?")
    ap.add_argument("wildcards", nargs="*", help="NAME=VALUE: the job's identity (its file names' wildcards)")
    ap.add_argument("--configfile", nargs="+", default=["config/config.yaml"],
                    help="config files merged in order (the paper scale: config/config.yaml config/paper.yaml)")
    ap.add_argument("--workdir", default=None, help="work folder (default: a new temporary one)")
    ap.add_argument("--top", type=int, default=25, help="entries printed per ordering")
    ap.add_argument("--pstats", default=None, help="also write the raw profile to this file")
    ap.add_argument("--no-profile", action="store_true", help="only time the job (no profiler overhead)")
    ap.add_argument("--list", action="store_true", help="list the stage's jobs and exit")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="replace a key of the job's spec (e.g. reps=1, eps=[0.1]): a smaller job of the same "
                         "shape; its inputs are built from the unchanged config")
    args = ap.parse_args(argv)

    config = load_config(args.configfile)
    workdir = Path(args.workdir) if args.workdir else Path(__import__("tempfile").mkdtemp(prefix="profile_job_"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    from shuffledp.stages.data import refresh_sources

    refresh_sources(config)
    runner = Runner(config)
    if args.stage not in runner.tables:
        raise SystemExit(f"profile_job: no enabled stage {args.stage!r} (one of {', '.join(runner.tables)})")
    table = runner.tables[args.stage]
    if args.list or not args.step:
        for j in table.jobs:
            if args.step in (None, j.step):
                print(j.step, " ".join(f"{k}={v}" for k, v in j.wildcards.items()))
        return 0
    job = table.job(args.step, parse_wildcards(args.wildcards))
    if args.set:
        import dataclasses
        import json

        changes = {k: json.loads(v) for k, v in (it.split("=", 1) for it in args.set)}
        unknown = sorted(set(changes) - set(job.spec))
        if unknown:
            raise SystemExit(f"profile_job: --set: the spec has no key(s) {', '.join(unknown)}")
        job = dataclasses.replace(job, spec={**job.spec, **changes})
        print(f"spec changed: {changes}", file=sys.stderr)
    runner.ensure_inputs(args.stage, job)
    spec_path, io_path, _ = runner.files(args.stage, job)
    print(f"work folder: {workdir}\nspec: {spec_path}\nio: {io_path}", file=sys.stderr, flush=True)

    from shuffledp.stages import run_step

    # CPU time of this process (the machine is shared: wall time counts the waits for a core)
    prof = None if args.no_profile else cProfile.Profile(time.process_time)
    c0, w0 = time.process_time(), time.perf_counter()
    if prof is not None:
        prof.enable()
    # the job's own output (its printed table) goes to stderr, the profile to stdout
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        run_step(args.stage, args.step, spec_path, io_path)
    finally:
        sys.stdout = saved
        if prof is not None:
            prof.disable()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    ident = " ".join(f"{k}={v}" for k, v in job.wildcards.items())
    changed = " " + " ".join(args.set) if args.set else ""
    print(f"job {args.stage} {args.step} {ident}{changed}: {cpu:.2f} CPU s, {wall:.2f} wall s"
          + ("" if prof is None else " (under cProfile)"))
    if prof is not None:
        if args.pstats:
            prof.dump_stats(args.pstats)
        for key in ("cumulative", "tottime"):
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(args.top)
            text = buf.getvalue()
            start = text.find("   ncalls")
            print(f"\n--- top {args.top} by {key} ---\n" + (text[start:] if start >= 0 else text).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
