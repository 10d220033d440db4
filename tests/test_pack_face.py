"""The grader's public face for pack authors (issue 42): ``grader.pack.judge`` and
``grader.pack.worker``.

- the worker side of the face brings no judge code and no hypothesis into a worker;
- every name the face exports exists, and ``Worker`` is the protocol the judge's handle keeps;
- the chapter-5 example imports nothing of the grader but the face (its import contract);
- what ``grade new-exercise`` writes, plain or ``--simple``, imports nothing of the grader but
  the face; the ``--simple`` scaffold is a declarative check of at most 40 lines with its
  probe, and ``grade check-pack`` accepts it once its marked places are kept as they are.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT
from test_pack_authoring import TODO, grade, running_sum

import grader.pack.judge as judge_face
import grader.pack.worker as worker_face
from grader.judge.launch.handle import WorkerHandle

EXAMPLE = ROOT / "examples" / "ch5-pack"


def grader_imports(path: Path) -> set[str]:
    """The modules of the grader that the Python file ``path`` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found |= {n for n in names if n == "grader" or n.startswith("grader.")}
    return found


def test_the_worker_face_brings_no_judge_code():
    code = (
        "import sys, json, grader.pack.worker; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('grader.judge', "
        "'grader.pack.judge', 'hypothesis')))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_every_exported_name_exists_and_the_worker_protocol_is_the_handles():
    for face in (judge_face, worker_face):
        assert face.__all__ and all(hasattr(face, name) for name in face.__all__), face
    for method in ("call", "call_while"):
        ours = inspect.signature(getattr(judge_face.Worker, method))
        theirs = inspect.signature(getattr(WorkerHandle, method))
        assert list(ours.parameters) == list(theirs.parameters), method


def test_the_example_pack_imports_only_the_public_face():
    grimp = pytest.importorskip("grimp", reason="import-linter is installed on Python 3.11+")
    del grimp
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=EXAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout
    pack_files = sorted((EXAMPLE / "llm_ch5_pack").rglob("*.py"))
    used = set().union(*(grader_imports(p) for p in pack_files))
    assert used == {"grader.pack.judge", "grader.pack.worker"}


def test_the_examples_declared_exercise_is_short():
    """5.2 of the chapter-5 example: its checks and its probe in at most 40 lines."""
    checks = (EXAMPLE / "llm_ch5_pack" / "checks" / "ex5_2.py").read_text()
    probes = (EXAMPLE / "llm_ch5_pack" / "probes.py").read_text().splitlines()
    probe = [line for line in probes if line.startswith("EX5_2 =")]
    assert probe == ['EX5_2 = answer_probes("calc_loss_batch", build={"model": build_model})']
    assert len([line for line in checks.splitlines() if line.strip()]) + len(probe) <= 40


@pytest.fixture(scope="module")
def scaffolds(tmp_path_factory) -> Path:
    """A new pack with a plain exercise and a ``--simple`` one, as new-exercise writes them."""
    root = tmp_path_factory.mktemp("course")
    for args in (("5.1", "--title", "Running sum"), ("5.2", "--title", "Cumsum", "--simple")):
        made = grade("new-exercise", *args, cwd=root)
        assert made.returncode == 0, made.stderr
    return root


def test_the_scaffold_imports_only_the_public_face(scaffolds):
    files = [p for p in scaffolds.rglob("*.py") if not p.name.startswith("test_")]
    used = {p.name: grader_imports(p) for p in files}
    assert set().union(*used.values()) == {"grader.pack.judge", "grader.pack.worker"}, used


def test_the_simple_scaffold_is_short_and_passes_check_pack(scaffolds, tmp_path):
    pack = scaffolds / "course_pack"
    checks = (pack / "checks" / "ex5_2.py").read_text()
    assert "same_as_reference(" in checks and "answer=" not in checks.split("CHECKS = ")[1]
    probes = (pack / "probes.py").read_text()
    probe = probes[probes.index("# --- exercise 5.2") :]
    assert 'EX5_2 = answer_probes("cumsum")' in probe
    lines = [line for text in (checks, probe) for line in text.splitlines() if line.strip()]
    assert len(lines) <= 40, len(lines)
    for path in sorted(scaffolds.rglob("*.py")):  # keep the worked example, drop the marks
        if TODO in path.read_text():
            running_sum(path)
    left = [str(p) for p in scaffolds.rglob("*") if p.is_file() and TODO in p.read_text()]
    assert not left, left
    proc = grade("check-pack", "course_pack", "-e", "5.2", "--mutants", "2", cwd=scaffolds)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 of 1 exercise(s) get full marks" in proc.stdout
    assert "2 case(s), 1 wrong and 1 correct" in proc.stdout
