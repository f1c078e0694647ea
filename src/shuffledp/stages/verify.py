"""What a reader can trust after the fact: every job's outputs with the content hash they had when the
job wrote them (its *output record*), and ``shuffledp verify``, which checks every file under
``results/`` against those records and the current configuration.

Output records (:func:`shuffledp.io.write_output_record`): when a workflow job (``shuffledp step``
with an io file under ``<results>/.jobs/``) ends, it writes
``<results>/.outputs/<stage>/<step>[_<wildcard value>...].json``: its job record (stage, step,
wildcards, spec fingerprint) and the SHA-256 of each of its output files. A job run by hand (its
io file elsewhere) writes none.

:func:`verify` sorts every file under ``results/`` (the bookkeeping folders ``.jobs``, ``.outputs``,
``logs`` and ``benchmarks`` aside) and every output the configuration's jobs produce into:

- ``ok``: produced by a job of this configuration, with the content its job recorded;
- ``changed``: its content differs from what its job recorded (edited by hand, damaged, copied over);
- ``unrecorded``: no job recorded it (written by hand, or by a version before output records);
- ``stale``: no job of this configuration produces it (a stage or value removed from the config);
- ``missing``: a job of this configuration produces it, and it is not there (not built yet).

An output the configuration's jobs wrote under ``data/`` (a processed table) is checked against its
record too (raw files there, put by the user or a mirror, have none and are not listed);
``results/README.md`` (the folder's description in the repository) is not an output.

Imports nothing heavy.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from shuffledp.io import OUTPUT_RECORDS as OUTPUTS
from shuffledp.io import sha256_file

BOOKKEEPING = (".jobs", OUTPUTS, "logs", "benchmarks")


def read_output_records(results: str | os.PathLike) -> dict[str, tuple[str, str]]:
    """Every recorded output under ``results``: path -> (sha256, the job's record file)."""
    found: dict[str, tuple[str, str]] = {}
    root = Path(results) / OUTPUTS
    for path in sorted(root.rglob("*.json")) if root.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            outputs = data["outputs"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged record records nothing: its outputs show as unrecorded
        if isinstance(outputs, Mapping):
            for p, digest in outputs.items():
                found[os.path.normpath(str(p))] = (str(digest), str(path))
    return found


def _files(outputs: Mapping) -> list[str]:
    out = []
    for paths in outputs.values():
        out += list(paths.values()) if isinstance(paths, Mapping) else [paths]
    return out


def expected_outputs(config: Mapping) -> dict[str, str]:
    """Every output file the jobs of ``config`` produce: path -> ``<stage>/<step>`` of its job."""
    from shuffledp.stages import discover, job_io

    roots = {"results": config["results_dir"], "data": "data"}
    stages = discover()
    out: dict[str, str] = {}
    for stage in stages.values():
        if not stage.enabled(config):
            continue
        for job in stage.jobs(config):
            step = stage.step(job.step)
            for path in _files(job_io(stage, step, job, roots, stages)["output"]):
                out[os.path.normpath(path)] = f"{stage.name}/{step.name}"
    return out


def verify(config: Mapping) -> dict[str, list[str]]:
    """The files of ``results/`` and the config's outputs, by verdict (see the module's docstring)."""
    results = Path(config["results_dir"])
    expected = expected_outputs(config)
    recorded = read_output_records(results)
    verdicts: dict[str, list[str]] = {k: [] for k in ("ok", "changed", "unrecorded", "stale", "missing")}
    present = set()
    for folder, dirs, files in os.walk(results) if results.is_dir() else ():
        rel = Path(folder).relative_to(results)
        if rel.parts and rel.parts[0] in BOOKKEEPING:
            dirs[:] = []
            continue
        if not rel.parts:
            dirs[:] = [d for d in dirs if d not in BOOKKEEPING]
        for name in files:
            if not rel.parts and name == "README.md":  # the folder's description (part of the repository)
                continue
            path = os.path.normpath(str(Path(folder) / name))
            present.add(path)
            if path not in expected:
                verdicts["stale"].append(path)
            elif path not in recorded:
                verdicts["unrecorded"].append(path)
            elif sha256_file(path) != recorded[path][0]:
                verdicts["changed"].append(path)
            else:
                verdicts["ok"].append(path)
    inside = os.path.normpath(str(results)) + os.sep
    for path in expected:
        if path.startswith(inside):
            if path not in present and not os.path.isdir(path):
                verdicts["missing"].append(path)
        elif os.path.isfile(path) and path in recorded:  # an output under data/ a job wrote: checked too
            verdicts["changed" if sha256_file(path) != recorded[path][0] else "ok"].append(path)
    return {k: sorted(v) for k, v in verdicts.items()}
