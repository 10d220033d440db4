"""The grader keeps its shape (docs/architecture.md):

- the import contracts of ``pyproject.toml`` hold (``lint-imports``): the folders in layers,
  the judge side and the worker side apart but for the protocol, renderers that read only
  the result, the reference models free of the grader, no two siblings importing each other;
- no import cycle among the modules of ``grader/`` and ``reference/``, a package's
  ``__init__`` counting as a module (the layers contract does not see every cycle), and no
  module of ``grader`` or ``reference`` importing its own package's face;
- no function over the limits of ``[tool.ruff.lint]`` (cyclomatic complexity, branches,
  statements: ruff's C901, PLR0912, PLR0915), and every module says what it is for in a
  docstring.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

# import-linter (and grimp with it) has releases for Python 3.11 and later only.
grimp = pytest.importorskip("grimp", reason="import-linter is installed on Python 3.11+ only")
from importlinter.cli import lint_imports  # noqa: E402

PACKAGES = ("grader", "reference")
FUNCTION_RULES = "C901,PLR0912,PLR0915"


def modules() -> list[Path]:
    return sorted(p for name in PACKAGES for p in (ROOT / name).rglob("*.py"))


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of the graph ``edges`` (node -> successors)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(edges[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_import_contracts_hold(capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert code == 0, capsys.readouterr().out


@pytest.fixture(scope="module")
def graph():
    """The import graph of ``grader`` and ``reference``, built once for the tests below."""
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_no_import_cycle_among_the_modules(graph):
    edges = {m: graph.find_modules_directly_imported_by(m) - {m} for m in graph.modules}
    cycles = [c for c in strongly_connected(edges) if len(c) > 1]
    assert cycles == []


def test_no_module_imports_its_own_package_face(graph):
    """``grader`` and ``reference`` are what users import; a module of theirs that imported
    its own package back would close a cycle as soon as the face imports one of its modules."""
    inside = {
        face: {m for m in graph.find_modules_that_directly_import(face) if m.startswith(face + ".")}
        for face in PACKAGES
    }
    assert inside == {"grader": set(), "reference": set()}


def test_the_cycle_finder_sees_a_package_importing_its_own_module():
    edges = {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p"}, "q": {"p"}}
    assert [c for c in strongly_connected(edges) if len(c) > 1] == [["p", "p.a", "p.b"]]


def over_the_limits(*paths: str | Path) -> list[str]:
    """Ruff's findings of the function rules (thresholds and per-file ignores from
    ``pyproject.toml``) on ``paths``."""
    out = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", FUNCTION_RULES, "--no-cache"]
        + ["--output-format", "concise", "--config", str(ROOT / "pyproject.toml")]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode in (0, 1), out.stderr
    return [line for line in out.stdout.splitlines() if ": C901 " in line or ": PLR09" in line]


def test_no_function_over_the_limits():
    assert over_the_limits(*PACKAGES, "llm_pack") == []


def test_the_limits_find_a_long_branchy_function(tmp_path):
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(20))
    statements = "".join(f"    y{i} = x + {i}\n" for i in range(70))
    (tmp_path / "long.py").write_text(
        f"def branchy(x):\n{branches}    return -1\n\n\ndef long(x):\n{statements}"
    )
    found = " ".join(over_the_limits(tmp_path / "long.py"))
    assert "C901" in found and "PLR0912" in found and "PLR0915" in found


def test_every_module_says_what_it_is_for():
    silent = [
        str(p.relative_to(ROOT))
        for p in modules()
        if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert silent == []
