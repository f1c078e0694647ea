"""Every `shuffledp ...`, `snakemake ...` and `python benchmarks/...` command shown in README.md,
ARTIFACT-*.md, config/README.md, data/README.md and docs/*.md runs, so that a renamed flag or command
breaks this test instead of the reader:

- ``shuffledp`` commands run as shown (in a scratch folder, after the docs' own ``printf ... > file``
  lines); ``shuffledp step`` commands, whose spec and io files are placeholders, must get past the
  argument parser (their files do not exist: the error must be about a file, not a flag);
- ``snakemake`` commands run as a dry run (``-n``) in a scratch folder with the repository's
  ``config/``; ``--report`` runs against the shared tiny run; ``--unlock`` and ``--lint`` run as shown;
- ``python benchmarks/X.py`` commands: ``--help`` runs and lists every flag the docs show.

Placeholders are few and explicit (:data:`PLACEHOLDERS`); lines that only show a syntax (``...``,
``<name>``) are listed in :data:`SYNTAX`, and what cannot run here in :data:`CANNOT_RUN`, with why.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, copy_of_tiny_workflow, run_snakemake

DOCS = ["README.md", "ARTIFACT-EVALUATION.md", "ARTIFACT-APPENDIX.md", "config/README.md", "data/README.md",
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
PREFIX = re.compile(r"^(shuffledp|snakemake)( |$)|^python benchmarks/")
# shown to explain a syntax, not to be run: "..." or "<...>" stand for any command or value
SYNTAX = {"shuffledp account ...", "shuffledp --traceback ...",
          "shuffledp step accountants_compare run|report|gain", "python benchmarks/..."}
# what cannot run on a machine of this project, and why
CANNOT_RUN = {"snakemake --sdm conda": "no conda channel is reachable here (README, Reproducible environment)"}
# placeholder -> the value the test uses
PLACEHOLDERS = {"FILE...": "config/config.yaml config/paper.yaml", "<step>": "report", "SPEC.json": "spec.json",
                "IO.json": "io.json", "FILE": "job.json", "<real msnbc_sequences.parquet>": "msnbc_sequences.parquet",
                "<checkout of apple/ml-shuffling-amplification>": "apple-checkout"}
ARGPARSE_ERRORS = ("unrecognized arguments", "invalid choice", "the following arguments are required",
                   "expected one argument")


def _commands() -> tuple[list[str], list[tuple[str, str]]]:
    """(the docs' ``printf`` set-up lines, [(doc, command)]) with continuation lines joined."""
    setup, found = [], []
    for doc in DOCS:
        text = (REPO / doc).read_text()
        fenced = re.findall(r"```(?:bash|sh)?\n(.*?)```", text, flags=re.S)
        lines = [ln.strip() for block in fenced for ln in block.replace("\\\n", " ").splitlines()]
        inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
        setup += [ln for ln in lines if ln.startswith("printf ")]
        found += [(doc, c) for c in (*lines, *inline) if PREFIX.match(c)]
    return setup, found


def _normalise(cmd: str) -> str:
    """Comments, optional ``[...]`` parts and ``a|b`` alternatives (the first) out; placeholders in."""
    cmd = re.sub(r"\s+#.*$", "", cmd)
    while re.search(r"\[[^\[\]]*\]", cmd):
        cmd = re.sub(r"\s*\[[^\[\]]*\]", "", cmd)
    for key, value in PLACEHOLDERS.items():
        cmd = cmd.replace(key, value)
    cmd = cmd.replace('"$PWD', f'"{REPO}')
    return " ".join(tok.split("|")[0] if "|" in tok and " " not in tok else tok for tok in cmd.split())


SETUP, FOUND = _commands()
UNIQUE = {}
for _doc, _cmd in FOUND:
    if _cmd in SYNTAX or any(_cmd.startswith(k) for k in CANNOT_RUN):
        continue
    UNIQUE.setdefault(_normalise(_cmd), _doc)
SHUFFLEDP = sorted(c for c in UNIQUE if c.startswith("shuffledp "))
BENCHMARKS = sorted(c for c in UNIQUE if c.startswith("python benchmarks/"))


def _snakemake_groups() -> dict[tuple[str, ...], list[str]]:
    """The snakemake commands by their flags (targets merged: one dry run per set of flags, which keeps
    this test to a few minutes; every target and every flag shown is still in one of them)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for cmd in (c for c in UNIQUE if c.startswith("snakemake")):
        args, flags, targets = shlex.split(cmd)[1:], [], []
        for i, a in enumerate(args):
            prev = args[i - 1] if i else ""
            value_of = prev.startswith("--") and prev not in ("--lint", "--unlock", "--rerun-incomplete")
            (targets if not a.startswith("-") and not value_of else flags).append(a)
        pairs = []  # keep each flag with its value, order-free
        for a in flags:
            if pairs and not a.startswith("-"):
                pairs[-1] += " " + a
            else:
                pairs.append(a)
        key = tuple(sorted(p for p in pairs if p not in ("--cores 2", "-n")))  # every dry run has these
        groups.setdefault(key, []).extend(targets)
    return groups


SNAKEMAKE = _snakemake_groups()


def test_the_docs_show_commands_of_every_kind():
    assert len(SHUFFLEDP) >= 15 and len(SNAKEMAKE) >= 5 and len(BENCHMARKS) >= 5, UNIQUE
    assert "results/tables/segmented_claims.md" in SNAKEMAKE[("--configfile config/paper.yaml",)]
    for cmd in SYNTAX | set(CANNOT_RUN):
        assert any(c == cmd or c.startswith(cmd) for _, c in FOUND), f"{cmd!r} is no longer in the docs: drop it"


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    """A scratch folder with the repository's config/ and the files the docs' printf lines write."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(REPO / "config", work / "config")
    for line in SETUP:
        subprocess.run(["bash", "-c", line], cwd=work, check=True)
    return work


@pytest.mark.parametrize("cmd", SHUFFLEDP)
def test_shuffledp_command_runs(cmd, scratch):
    args = shlex.split(cmd)
    if all(re.fullmatch(r"[a-z_]+", a) for a in args[1:]):  # a command named in the text: it exists
        args.append("--help")
    proc = subprocess.run(args, cwd=scratch, env=_env(), capture_output=True, text=True, timeout=300)
    if cmd.startswith("shuffledp step "):  # placeholder spec/io files: past the parser, then a file error
        assert not any(e in proc.stderr for e in ARGPARSE_ERRORS), f"{UNIQUE[cmd]}: {cmd}\n{proc.stderr}"
        assert proc.returncode == 2 and ("spec.json" in proc.stderr or "job.json" in proc.stderr), proc.stderr
        return
    assert proc.returncode == 0, f"{UNIQUE[cmd]}: {cmd}\nexit {proc.returncode}\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("cmd", BENCHMARKS)
def test_benchmark_script_takes_the_flags_shown(cmd):
    args = shlex.split(cmd)
    proc = subprocess.run([sys.executable, args[1], "--help"], cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"{UNIQUE[cmd]}: {args[1]} --help\n{proc.stderr[-2000:]}"
    for flag in (a.split("=")[0] for a in args[2:] if a.startswith("--")):
        assert flag in proc.stdout, f"{UNIQUE[cmd]}: {cmd}: {args[1]} has no flag {flag}"


@pytest.mark.slow
# the --report command reads the shared tiny run: on that run's worker under pytest-xdist (tests/conftest.py)
@pytest.mark.parametrize("flags", [pytest.param(f, marks=pytest.mark.xdist_group("tiny_workflow"))
                                   if any(p.startswith("--report") for p in f) else f for f in sorted(SNAKEMAKE)],
                         ids=lambda f: " ".join(f) or "(none)")
def test_snakemake_command_runs(flags, scratch, request):
    # targets first: --configfile takes every file name that follows it
    args = ["--cores", "2", *SNAKEMAKE[flags], *(t for f in flags for t in f.split())]
    cwd = scratch
    if "--directory" in args:  # the docs' own empty folder: a fresh one (no config/ of the repository)
        cwd = scratch.parent / f"{scratch.name}-directory"
        cwd.mkdir(exist_ok=True)
    for flag in ("--directory", "--snakefile"):  # the test's own (run_snakemake)
        while flag in args:
            i = args.index(flag)
            del args[i:i + 2]
    if "--report" in args:  # needs a finished run: a copy of the shared tiny run, into a scratch file
        tiny_workflow = copy_of_tiny_workflow(request.getfixturevalue("tiny_workflow"), scratch.parent / "tiny-run")
        i = args.index("--report")
        args[i + 1] = str(scratch / Path(args[i + 1]).name)
        run_snakemake("--configfile", str(tiny_workflow / "config.yaml"), *args, cwd=tiny_workflow)
        assert Path(args[i + 1]).stat().st_size > 0
        return
    if not {"--unlock", "--lint", "-n", "--dry-run"} & set(args):
        args.append("-n")
    proc = run_snakemake(*args, cwd=cwd, check=False, timeout=600)
    assert proc.returncode == 0, f"snakemake {' '.join(args)}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
