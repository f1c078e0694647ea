"""Is the multidim stage's user-side time (Figure 4, claims ``fig4_user_time_*``) biased by a job's
position in a batch? Runs the ``multidim uniform`` jobs of one dataset as ONE batch (one process, the
workflow's batched path: ``run_step`` with a ``{"batch": [...]}`` spec), in every rotation of the
mechanisms, so each mechanism runs first (in a fresh process: its own first calls, after its untimed
warm-up) and last (after the others ran in the same process), ``--rounds`` times each:

    python benchmarks/multidim_user_time_order.py --configfile config/config.yaml \\
        --dataset br --rounds 3 --workdir /tmp/order_w [--clock thread]

Prints, per mechanism and position, the median of the measured ``user_seconds_per_user`` (every eps
and repetition of its rounds) and the ratio last/first; a ratio near 1 (within the machine's noise)
means the timing does not depend on the process layout. Inputs are built as ``profile_job.py`` does
(``--workdir`` reused); the batch's own outputs are written there, never in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from profile_job import Runner, load_config  # noqa: E402


def batch_files(runner: Runner, jobs: list, name: str) -> tuple[str, str, list[str]]:
    """Spec and io files of one batch of ``jobs`` (in this order) and each member's timings file."""
    specs, ios, timings = [], [], []
    for job in jobs:
        spec_path, io_path, io_obj = runner.files("multidim", job)
        specs.append(json.loads(Path(spec_path).read_text()))
        ios.append(json.loads(Path(io_path).read_text()))
        timings.append(io_obj["output"]["timings"])
    folder = Path("results") / ".jobs"
    (folder / f"order-spec-{name}.json").write_text(json.dumps({"batch": specs}))
    (folder / f"order-io-{name}.json").write_text(json.dumps({"batch": ios}))
    return str(folder / f"order-spec-{name}.json"), str(folder / f"order-io-{name}.json"), timings


# --clock thread: the protocols' ``time.perf_counter`` read as the thread's CPU time (``time.thread_time``),
# which the waits for a core on a shared machine do not inflate; what a cold process pays (page faults,
# first calls) is CPU time too, so a position bias shows in it as in the wall clock
PATCH = ("import time, types; from shuffledp.protocols import flame, mhm, tcm; "
         "clock = types.SimpleNamespace(perf_counter=time.thread_time); "
         "mhm.time = flame.time = tcm.time = clock; ")


def run_batch(spec_path: str, io_path: str, clock: str) -> None:
    code = ((PATCH if clock == "thread" else "") + "import sys; from shuffledp.stages import run_step; "
            "run_step('multidim', 'uniform', sys.argv[1], sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, spec_path, io_path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configfile", nargs="+", default=["config/config.yaml"])
    ap.add_argument("--dataset", default="br")
    ap.add_argument("--rounds", type=int, default=3, help="batches per rotation")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--clock", choices=("wall", "thread"), default="wall",
                    help="wall: the workflow's perf_counter; thread: the thread's CPU time (see PATCH)")
    args = ap.parse_args(argv)

    import pandas as pd

    config = load_config(args.configfile)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    os.chdir(workdir)
    from shuffledp.stages.data import refresh_sources

    refresh_sources(config)
    runner = Runner(config)
    table = runner.tables["multidim"]
    jobs = [j for j in table.jobs if j.step == "uniform" and j.wildcards["dataset"] == args.dataset
            and j.wildcards["batch"] == "0"]
    for j in jobs:
        runner.ensure_inputs("multidim", j)
    mechs = [j.wildcards["mechanism"] for j in jobs]
    times: dict[tuple[str, int], list[float]] = {}
    for r in range(args.rounds):
        for k in range(len(jobs)):
            order = jobs[k:] + jobs[:k]
            spec_path, io_path, timings = batch_files(runner, order, f"{r}-{k}")
            run_batch(spec_path, io_path, args.clock)
            for pos, (job, path) in enumerate(zip(order, timings, strict=True)):
                t = pd.read_parquet(path)["user_seconds_per_user"].tolist()
                times.setdefault((job.wildcards["mechanism"], pos), []).extend(t)
            print(f"round {r} batch {' '.join(j.wildcards['mechanism'] for j in order)}", file=sys.stderr, flush=True)
    raw = {f"{m} pos{p + 1}": v for (m, p), v in sorted(times.items())}
    Path(f"order-{args.dataset}-{args.clock}.json").write_text(json.dumps(raw))  # every timing, in run order
    last = len(jobs) - 1
    print(f"dataset {args.dataset}, {args.rounds} rounds, clock {args.clock}; user time per user (us) by position "
          "in the batch, median and mean (the claims compare means)")
    print("mechanism  " + "  ".join(f"pos{p + 1} median/mean " for p in range(len(jobs)))
          + "  last/first (median, mean)")
    for m in mechs:
        med = [statistics.median(times[(m, p)]) * 1e6 for p in range(len(jobs))]
        mean = [statistics.fmean(times[(m, p)]) * 1e6 for p in range(len(jobs))]
        print(f"{m:<10} " + "  ".join(f"{a:8.4f} {b:8.4f}" for a, b in zip(med, mean, strict=True))
              + f"  {med[last] / med[0]:.3f} {mean[last] / mean[0]:.3f}   (n={len(times[(m, 0)])} per position)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
