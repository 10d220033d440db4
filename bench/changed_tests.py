"""The inner loop: run the tests that exercise what you changed, the corpus included.

    python bench/changed_tests.py              # what differs from HEAD (and new files)
    python bench/changed_tests.py --base main  # what differs from main
    python bench/changed_tests.py llm_pack/checks/ex4_3.py --dry-run   # only say what runs
    python bench/changed_tests.py -- -n 0      # after --: passed on to pytest

Each changed file is mapped to tests (README, Development; docs/testing.md):

- a check of the first pack (``llm_pack/checks/``), its corpus (``tests/corpus/exN_M/``) or
  its solution: the exercises whose checks module is it or imports it (within the pack);
  their whole corpus runs (``tests/test_corpus.py``, one case per corpus file);
- a module of the pack every exercise uses (its hints, probes, strategies), ``pack.toml``, or
  a module of the grader: every exercise is affected, so a sample of the corpus runs (each
  exercise's first wrong answer; ``--full-corpus``: all of it), plus, for the hints module,
  every case that expects or rules out a hint;
- and for any module: the test files that import it themselves, and ``test_<name>*.py`` /
  ``test_<folder>_<name>*.py`` (a grader module: ``test_<folder>_*.py``); a changed test file
  runs whole.

The test files run less their slow tests (``-k "not slow ..."``: the corpus cases are slow,
and chosen here instead); pass ``--slow`` to keep them.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PACK = ROOT / "llm_pack"
CORPUS = TESTS / "corpus"
SOLUTION = TESTS / "submissions" / "solution" / "exercises"
PACKAGES = ("grader", "llm_pack", "reference", "exercises")
CORPUS_TEST = "tests/test_corpus.py::test_corpus_case"


def changed_files(base: str) -> list[str]:
    """Files that differ from ``base`` (staged or not), and files git does not track yet."""

    def git(*args: str) -> list[str]:
        out = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, check=True)
        return [line for line in out.stdout.splitlines() if line]

    return sorted(
        set(git("diff", "--name-only", base)) | set(git("ls-files", "-o", "--exclude-standard"))
    )


def module_name(path: str) -> str | None:
    """``grader/intake/names.py`` -> ``grader.intake.names``; None outside the packages."""
    parts = Path(path).with_suffix("").parts
    if not path.endswith(".py") or not parts or parts[0] not in PACKAGES:
        return None
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports(path: Path) -> frozenset[str]:
    """The modules ``path`` imports (``from a.b import c``: both ``a.b`` and ``a.b.c``)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return frozenset()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(found)


@cache
def the_pack() -> tuple[dict[str, str], dict[str, str], set[str]]:
    """The first pack's exercises: id -> checks module, id -> file name; and the modules its
    pack.toml names for every exercise (hints, worker, judge)."""
    toml = tomllib.loads((PACK / "pack.toml").read_text(encoding="utf-8"))
    exercises = toml["exercise"]
    checks = {e["id"]: e["checks"].partition(":")[0] for e in exercises}
    files = {e["id"]: e["file"] for e in exercises}
    pack = toml["pack"]
    wide = {pack.get("hints", "").partition(":")[0], *pack.get("worker", [])}
    wide |= {e["probes"].partition(":")[0] for e in exercises if "probes" in e}
    return checks, files, {m for m in wide if m}


@cache
def pack_imports() -> dict[str, set[str]]:
    """Module -> the modules of the pack it imports (``llm_pack`` only)."""
    graph = {}
    for path in PACK.rglob("*.py"):
        name = module_name(str(path.relative_to(ROOT)))
        if name:
            graph[name] = {m for m in imports(path) if m.startswith("llm_pack.")}
    return graph


def reaches(graph: dict[str, set[str]], start: str, target: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == target:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def corpus_ids(exercises: set[str], full: set[str], hinted: bool) -> list[str]:
    """The corpus cases to run: every case of ``full``; of the other ``exercises``, the first
    wrong answer; with ``hinted``, every case that expects or rules out a hint."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from support import corpus_cases

    chosen, sampled = [], set()
    for case in corpus_cases():
        ex = case.exercise_id
        if ex in full or (hinted and (case.expect_hint or case.expect_no_hint)):
            chosen.append(case.id)
        elif ex in exercises and not case.correct and ex not in sampled:
            chosen.append(case.id)
            sampled.add(ex)
    return chosen


def test_files_for(module: str, path: str, importers: dict[str, frozenset[str]]) -> set[str]:
    """The test files that import ``module`` themselves, and those named after it (for a
    module of the grader, after its folder too: ``test_intake_*.py`` for ``grader/intake/``)."""
    found = {test for test, imported in importers.items() if module in imported}
    stem, parent = Path(path).stem, Path(path).parent.name
    names = [stem, f"{parent}_{stem}"]
    if module.startswith("grader.") and parent != "grader":
        names.append(f"{parent}_")
    for name in names:
        found |= {str(p.relative_to(ROOT)) for p in TESTS.glob(f"test_{name}*.py")}
    return found


def select(changed: list[str], full_corpus: bool) -> tuple[list[str], list[str]]:
    """(test files, corpus case ids) for the ``changed`` files."""
    checks, files, wide = the_pack()
    graph = pack_imports()
    every = set(checks)
    importers = {str(p.relative_to(ROOT)): imports(p) for p in TESTS.glob("test_*.py")}
    tests: set[str] = set()
    full: set[str] = set()
    sampled: set[str] = set()
    hinted = False
    for path in changed:
        p = Path(path)
        if p.parts[:1] == ("tests",) and p.name.startswith("test_") and p.suffix == ".py":
            tests.add(path)
        elif p.parts[:2] == ("tests", "corpus") and len(p.parts) > 2:
            full |= {ex for ex, mod in checks.items() if mod.endswith("." + p.parts[2])}
        elif (ROOT / path).parent == SOLUTION or p.parts[:1] == ("exercises",):
            full |= {ex for ex, name in files.items() if name == p.name}
        elif path == "llm_pack/pack.toml":
            sampled |= every
        module = module_name(path)
        if module is None:
            continue
        tests |= test_files_for(module, path, importers)
        if module.startswith("llm_pack."):
            users = {ex for ex, mod in checks.items() if reaches(graph, mod, module)}
            hinted |= module in wide and "hints" in module
            if users and module not in wide:
                full |= users
            else:
                sampled |= every
        elif module.startswith(("grader", "reference")):
            sampled |= every
    if full_corpus:
        full |= sampled
    return sorted(tests - {"tests/test_corpus.py"}), corpus_ids(sampled | full, full, hinted)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="the changed files (default: from git)")
    parser.add_argument("--base", default="HEAD", help="compare with this commit (HEAD)")
    parser.add_argument("--full-corpus", action="store_true", help="never a sample of it")
    parser.add_argument("--slow", action="store_true", help="keep the slow tests of the files")
    parser.add_argument("--dry-run", action="store_true", help="print the command only")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    changed = args.paths or changed_files(args.base)
    test_files, cases = select(changed, args.full_corpus)
    if not test_files and not cases:
        print("changed_tests: nothing to run for", ", ".join(changed) or "no change")
        return 0
    command = [sys.executable, "-m", "pytest", "-q", *test_files]
    command += [f"{CORPUS_TEST}[{case}]" for case in cases]
    if not args.slow:
        command += ["-k", "not slow or test_corpus_case"]
    command += extra
    print(f"changed_tests: {len(test_files)} test file(s), {len(cases)} corpus case(s)")
    print(" ".join(command[1:]), flush=True)
    if args.dry_run:
        return 0
    return subprocess.run(command, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
