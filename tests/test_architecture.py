"""The package's shape: imports flow one way (science <- stages <- CLI), no import cycles (every
import counts, also those inside functions), and docs/architecture.md names modules that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
SCIENCE = ("accountants", "mechanisms", "protocols", "tasks", "datasets", "claims", "plotting", "experiments",
           "io", "seeding", "errors", "tables")


def _modules() -> dict[str, Path]:
    mods = {}
    for p in (SRC / "shuffledp").rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports (``from a import b`` counts a and, if a module, a.b)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    head = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(head + ([node.module] if node.module else []))
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            graph[m] |= {n for n in names if n in mods and n != m}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_imports_flow_one_way():
    """Science imports neither stages, commands nor the CLI; stages import neither commands nor the
    CLI; commands do not import the CLI (it imports them)."""
    forbidden = {layer: {"stages", "commands", "cli", "config"} for layer in SCIENCE}
    forbidden["stages"] = {"commands", "cli"}
    forbidden["commands"] = {"cli"}
    bad = [f"{m} -> {n}" for m, targets in import_graph().items() for n in targets
           if _layer(n) in forbidden.get(_layer(m), set())]
    # transitional: experiment modules of stages not yet moved register their checks with config
    bad = [b for b in bad if not re.fullmatch(r"shuffledp\.experiments\.\w+ -> shuffledp\.config", b)
           and b != "shuffledp.experiments.jobs -> shuffledp.stages.jobs"]
    assert bad == []


def test_architecture_doc_names_existing_modules():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    mods = _modules()
    named = set(re.findall(r"`(shuffledp(?:\.\w+)+)`", text))
    paths = set(re.findall(r"`((?:src|workflow|tests|config)/[\w/.*-]+)`", text))
    assert named, "docs/architecture.md names no module"
    missing = [n for n in named if n not in mods and n.rsplit(".", 1)[0] not in mods]
    missing += [p for p in paths if "*" not in p and "<" not in p and not (REPO / p).exists()]
    assert missing == [], f"docs/architecture.md names what does not exist: {missing}"


def test_no_issue_numbers_in_code_captions_schema_configs_or_help():
    """Issue numbers mean nothing to a user: not in the package, its captions, the workflow, the
    schema, the configs, nor any `--help` of the CLI."""
    import subprocess
    import sys

    pattern = re.compile(r"\bissues? \d+|\(issue\b", re.I)
    hits = []
    for root in ("src/shuffledp", "workflow", "config"):
        for path in sorted((REPO / root).rglob("*")):
            if path.is_file() and path.suffix in (".py", ".rst", ".yaml", ".smk", ".md") or path.name == "Snakefile":
                hits += [f"{path.relative_to(REPO)}:{i}" for i, line in enumerate(path.read_text().splitlines(), 1)
                         if pattern.search(line)]
    assert hits == []
    from shuffledp.cli import build_parser

    parser = build_parser()
    texts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # every command, and every account subcommand
        for sub in action.choices.values():
            texts.append(sub.format_help())
            for inner in getattr(sub, "_subparsers", None) and sub._subparsers._group_actions or []:
                texts += [s.format_help() for s in inner.choices.values()]
    assert len(texts) > 10 and not [t for t in texts if pattern.search(t)]
    assert subprocess.run([sys.executable, "-m", "shuffledp", "--help"], capture_output=True).returncode == 0


def test_functions_stay_short():
    """Fewer than 10 functions of the package are longer than 50 lines (none, when this was written)."""
    long = [f"{p.relative_to(SRC)}:{n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for p in sorted((SRC / "shuffledp").rglob("*.py"))
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.end_lineno - n.lineno + 1 > 50]
    assert len(long) < 10, long


ACCOUNTANTS = "shuffledp.accountants"
MAX_LINES = 600


def _subpackage(module: str) -> str:
    """``shuffledp.accountants.<sub>.<module>`` -> ``<sub>``; the front modules (``best``,
    ``registry``, ...) directly in the package -> ``""``."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 else ""


def private_crossings(mods: dict[str, Path]) -> list[str]:
    """Every private name (one leading underscore) one accountants module takes from a module of
    another subpackage: ``from a.b import _x``, or ``m._x`` on a module ``m`` it imported."""
    bad = []
    for m, p in sorted(mods.items()):
        if not m.startswith(ACCOUNTANTS + ".") or p.name == "__init__.py":
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(ACCOUNTANTS):
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    if full in mods:
                        aliases[a.asname or a.name] = full
                    elif a.name.startswith("_") and not a.name.startswith("__") \
                            and _subpackage(node.module + ".x") != _subpackage(m):
                        bad.append(f"{m} imports {node.module}.{a.name}")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith(ACCOUNTANTS) and a.asname:
                        aliases[a.asname] = a.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in aliases and node.attr.startswith("_") and not node.attr.startswith("__"):
                target = aliases[node.value.id]
                if _subpackage(target) != _subpackage(m):
                    bad.append(f"{m} uses {target}.{node.attr}")
    return bad


def test_accountants_modules_fit_in_600_lines():
    """A reader can hold any accountants module: none is longer than 600 lines."""
    long = {m: n for m, p in _modules().items() if m.startswith(ACCOUNTANTS)
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_private_name_crosses_accountants_subpackages():
    """What one subpackage of the accountants shares with another is public (documented in the
    numerics interface or the module that owns it), never a name with a leading underscore."""
    assert private_crossings(_modules()) == []


def test_private_crossing_finder_finds_one(tmp_path):
    root = tmp_path / "shuffledp" / "accountants"
    (root / "upper").mkdir(parents=True)
    (root / "lower").mkdir()
    (root / "upper" / "a.py").write_text("def _f():\n    return 1\n")
    (root / "lower" / "b.py").write_text("from shuffledp.accountants.upper.a import _f\n")
    (root / "lower" / "c.py").write_text("from shuffledp.accountants.upper import a as m\nm._f()\n")
    (root / "upper" / "d.py").write_text("from shuffledp.accountants.upper.a import _f\n")
    mods = {"shuffledp.accountants.upper.a": root / "upper" / "a.py",
            "shuffledp.accountants.lower.b": root / "lower" / "b.py",
            "shuffledp.accountants.lower.c": root / "lower" / "c.py",
            "shuffledp.accountants.upper.d": root / "upper" / "d.py"}
    assert private_crossings(mods) == ["shuffledp.accountants.lower.b imports shuffledp.accountants.upper.a._f",
                                       "shuffledp.accountants.lower.c uses shuffledp.accountants.upper.a._f"]
