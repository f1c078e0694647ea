"""The one contract between the workflow and a stage: a list of :class:`Job`.

Every stage (``shuffledp.stages.<stage>``) exposes ``jobs(config) -> list[Job]``: one ``Job`` per
workflow job, with its ``step`` (the rule it belongs to), its ``wildcards`` (the identity that
appears in its file names), its ``spec`` -- only the keys that job uses, every parameter derived
here in the library, once (``delta = delta_factor / n``, the ``m`` grid, the seeds) -- and its
``inputs``: for each input name, the outputs of other jobs it reads (:class:`Ref`) or fixed paths.
Which jobs exist and what each reads is therefore decided in the library only; the workflow turns
a job's identity into file names and nothing else.

This module imports nothing heavy: the workflow imports it while parsing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ref:
    """The output ``output`` of the job of ``step`` with ``wildcards`` (in ``stage``; ``None``: the
    referring job's own stage)."""

    step: str
    output: str
    wildcards: dict[str, str] = field(default_factory=dict)
    stage: str | None = None


@dataclass(frozen=True)
class Job:
    """One workflow job: ``step`` (rule), ``wildcards`` (str -> str), its ``spec`` and its ``inputs``
    (input name -> list of :class:`Ref` or of paths relative to the working folder)."""

    step: str
    wildcards: dict[str, str]
    spec: dict = field(default_factory=dict)
    inputs: dict[str, list] = field(default_factory=dict)


def canonical(spec: Mapping) -> str:
    """Canonical JSON of a spec (sorted keys, no spaces): what a job's spec file holds."""
    return json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _key(step: str, wildcards: Mapping) -> tuple:
    return (step, *sorted((str(k), str(v)) for k, v in wildcards.items()))


class JobTable:
    """Lookup from (step, wildcards) to a job, built from a stage's ``jobs(config)``."""

    def __init__(self, jobs: Iterable[Job]):
        self.jobs = list(jobs)
        self._by_key: dict[tuple, Job] = {}
        self._names: dict[str, set[str]] = {}  # step -> its wildcard names (built once: lookups run per job)
        for j in self.jobs:
            k = _key(j.step, j.wildcards)
            if k in self._by_key:
                raise ValueError(f"two jobs with the same identity: {k}")
            self._by_key[k] = j
            self._names.setdefault(j.step, set()).update(j.wildcards)

    def job(self, step: str, wildcards: Mapping) -> Job:
        """The job of ``step`` whose wildcards are ``wildcards`` (other names in it are ignored)."""
        names = self._names.get(step, set())
        wc = {k: v for k, v in dict(wildcards.items()).items() if k in names}
        try:
            return self._by_key[_key(step, wc)]
        except KeyError:
            raise KeyError(f"no {step} job for wildcards {wc}") from None

    def of_step(self, step: str) -> list[Job]:
        return [j for j in self.jobs if j.step == step]

    def refs(self, step: str, output: str) -> list[Ref]:
        """A :class:`Ref` to ``output`` of every job of ``step``, in job order."""
        return [Ref(step, output, dict(j.wildcards)) for j in self.of_step(step)]


def batch_ranges(repetitions: int, batch_size: int) -> list[list[int]]:
    """Repetition indices of each batch: ``[[0..bs-1], [bs..2bs-1], ...]`` (the last may be short).
    Seeds derive from the repetition index, never from the batch, so tables do not depend on it."""
    reps, bs = int(repetitions), max(1, int(batch_size))
    return [list(range(b, min(b + bs, reps))) for b in range(0, reps, bs)]


def num(x: float) -> str:
    """Wildcard spelling of a number (``1``, ``0.25``)."""
    return f"{float(x):g}"


def check_spellings(values, key: str) -> None:
    """Two values of ``key`` that :func:`num` writes alike (``1.0`` and ``1.0000001``: ``1``) would be
    one job, or one row twice: refused naming the key and both values."""
    from shuffledp.errors import ConfigError

    seen: dict[str, object] = {}
    for v in values:
        text = num(v)
        if text in seen:
            raise ConfigError(f"config key {key}: {seen[text]!r} and {v!r} are both written {text!r} in file names "
                              "and tables (6 significant digits); give values that differ there")
        seen[text] = v


def audits_input(config: Mapping) -> list[Ref]:
    """The audits table (stage ``audits``, step ``report``) as the ``audits`` input of a claims step:
    the claims of a protocol an audit caught are no evidence (:mod:`shuffledp.claims.audit_gate`).
    Empty when the config disables the audits stage (no ``audits`` section): the rows say ``not run``."""
    return [Ref("report", "table", stage="audits")] if config.get("audits") else []
