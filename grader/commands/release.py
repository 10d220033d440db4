"""``grade release OUT``: the student edition as a ready repository.

OUT gets the exercise stubs, the reference models, the grader, the templates, a student
``pyproject.toml`` (the project's own, without the developer extras, with ``grade_path`` set so
that ``pytest`` grades too), ``constraints.txt``, a student README and a GitHub Actions
workflow that grades every push (with the course's grading seed when the repository or
organization has a ``GRADE_SEED`` secret). Never copied: the instructor solution, the project's
tests, examples and benchmarks, any ``grading.toml`` (it holds the course's seed). Before
anything is written the release is checked: every exercise file must still be a stub, and no
file may hold a distinctive line of the instructor solution.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

from grader.commands.edition_text import GITIGNORE, README, WORKFLOW
from grader.commands.options import EXIT_PASSED
from grader.shared import tomlread
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES

PACKAGES = ("grader", "reference", "exercises")
TOP_LEVEL_FILES = ("constraints.txt",)
TOP_LEVEL_DIRS = ("templates",)
# grading.toml holds the course's grading seed: never handed out, wherever it was left.
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".hypothesis", "grading.toml")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
SOLUTION_DIR = "tests/submissions/solution/exercises"


def project_root() -> Path:
    """The folder that holds this grader's ``grader/``, ``reference/`` and ``exercises/``."""
    return Path(__file__).resolve().parents[2]


# --- the solution scan ---------------------------------------------------------------------


def normalise(line: str) -> str:
    return re.sub(r"\s+", " ", line.split("#", 1)[0]).strip()


def _lines_of(paths) -> set[str]:
    return {normalise(ln) for p in paths for ln in p.read_text(encoding="utf-8").splitlines()}


def distinctive_lines(root: Path, min_length: int = 20) -> dict[str, set[str]]:
    """For each instructor solution file, its lines that appear nowhere in the stubs, the
    reference or the grader outside its checks (``with torch.no_grad():`` is not a solution;
    the checks compute the answers, so a line of theirs may well be one)."""
    checks = root / "grader" / "judge" / "checks"
    common = _lines_of(
        [
            *(root / "exercises").glob("*.py"),
            *(root / "reference").glob("*.py"),
            *(p for p in (root / "grader").rglob("*.py") if checks not in p.parents),
        ]
    )
    found: dict[str, set[str]] = {}
    for path in sorted((root / SOLUTION_DIR).glob("*.py")):
        keys = {
            k
            for k in _lines_of([path]) - common
            if len(k) >= min_length and not k.startswith(('"""', "'''"))
        }
        if keys:
            found[str(path.relative_to(root))] = keys
    return found


def solution_leaks(tree: Path, solutions: dict[str, set[str]]) -> list[str]:
    """The files under ``tree`` that hold a solution: at least two of a solution file's
    distinctive lines (all of them when it has only one)."""
    leaks = []
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or ".git" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = {normalise(ln) for ln in text.splitlines()}
        for origin, keys in solutions.items():
            shared = keys & lines
            if len(shared) >= min(2, len(keys)):
                leaks.append(
                    f"{path.relative_to(tree)} holds {len(shared)} line(s) of {origin}, "
                    f"e.g. {sorted(shared)[0]!r}"
                )
    return leaks


def unsolved(stubs: Path) -> list[str]:
    """Exercise files under ``stubs`` that no longer raise ``NotImplementedError``."""
    return [
        e.filename
        for e in EXERCISES
        if "raise NotImplementedError" not in (stubs / e.filename).read_text(encoding="utf-8")
    ]


# --- the student pyproject ------------------------------------------------------------------


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def dump_toml(doc: dict, prefix: str = "") -> str:
    """A small TOML writer for pyproject data: tables of strings, numbers, lists and tables."""
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    lines = [f"[{prefix}]"] if prefix and (scalars or not tables) else []
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items()]
    if lines:
        lines.append("")
    for k, v in tables.items():
        lines.append(dump_toml(v, f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)))
    return "\n".join(lines)


def student_pyproject(root: Path) -> str:
    """The project's ``pyproject.toml`` for students: same package and dependencies, a small
    ``test`` extra instead of the developer tools, ``pytest`` set to grade the clone."""
    doc = tomlread.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    project = dict(doc["project"])
    project["description"] = (
        "Chapters 3-4 exercises of Build a Large Language Model (From Scratch), "
        "with their grader (student edition)."
    )
    project["readme"] = "README.md"
    project["optional-dependencies"] = {"test": ["pytest>=8"]}
    entry_points = dict(project.get("entry-points", {}))
    entry_points.setdefault("pytest11", {"grade": "grader.commands.pytest_plugin"})
    project["entry-points"] = entry_points
    tool = {"setuptools": doc.get("tool", {}).get("setuptools", {})}
    tool["pytest"] = {
        "ini_options": {
            "grade_path": ".",
            "addopts": "-p no:cacheprovider",
        }
    }
    out = {"build-system": doc["build-system"], "project": project, "tool": tool}
    header = (
        "# The student edition of the chapter 3-4 exercise pack.\n"
        "# Install: pip install -c constraints.txt -e .   (see README.md)\n\n"
    )
    return header + dump_toml(out).rstrip("\n") + "\n"


# --- the files written for students (their text: grader.commands.edition_text) -------------


def readme(root: Path) -> str:
    rows = []
    for ex in EXERCISES:
        names = _contract_names(ex.id)
        rows.append(f"| {ex.id} {ex.title} | `exercises/{ex.filename}` | {names} |")
    return README.format(table="\n".join(rows), cpu_index=TORCH_CPU_INDEX)


def _contract_names(exercise_id: str) -> str:
    from grader.intake.cells import CONTRACT

    return ", ".join(f"`{n}`" for n in CONTRACT[exercise_id])


# --- building ------------------------------------------------------------------------------


def build_release(out: Path, root: Path | None = None) -> list[Path]:
    """Write the student edition into ``out`` (which must not exist or be empty); return the
    files written. Raises ``UsageError`` when the release would be wrong."""
    root = root or project_root()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not empty; choose a new folder")
    target = out.resolve()
    if target == root or any(root / n in (target, *target.parents) for n in PACKAGES):
        raise UsageError(f"{out}: the release cannot be written there (it would copy itself)")
    not_stubs = unsolved(root / "exercises")
    if not_stubs:
        raise UsageError(
            "exercises/ does not hold the stubs (no NotImplementedError in "
            + ", ".join(not_stubs)
            + "); restore them before releasing"
        )
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name in PACKAGES:
            shutil.copytree(root / name, staging / name, ignore=IGNORE)
        for name in TOP_LEVEL_DIRS:
            if (root / name).is_dir():
                shutil.copytree(root / name, staging / name, ignore=IGNORE)
        for name in TOP_LEVEL_FILES:
            shutil.copyfile(root / name, staging / name)
        (staging / "pyproject.toml").write_text(student_pyproject(root), encoding="utf-8")
        (staging / "README.md").write_text(readme(root), encoding="utf-8")
        (staging / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
        workflow = staging / ".github" / "workflows" / "classroom.yml"
        workflow.parent.mkdir(parents=True)
        workflow.write_text(WORKFLOW.format(cpu_index=TORCH_CPU_INDEX), encoding="utf-8")
        leaks = solution_leaks(staging, distinctive_lines(root))
        if leaks:
            raise UsageError(f"refusing to release a solution: {leaks[0]}")
        if out.exists():
            out.rmdir()
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sorted(p for p in out.rglob("*") if p.is_file())


def git_init(out: Path) -> None:
    run = dict(cwd=out, check=True, capture_output=True)
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=grade release",
            "-c",
            "user.email=grade@localhost",
            "commit",
            "-q",
            "-m",
            "Chapter 3-4 exercises (student edition)",
        ],
        **run,
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade release",
        description="Write the student edition (stubs, reference, grader, README, CI workflow; "
        "no solutions, no instructor tests) into a new folder.",
    )
    p.add_argument("out", type=Path, help="a new (or empty) folder")
    p.add_argument("--git", action="store_true", help="make it a git repository with one commit")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    files = build_release(args.out)
    size = sum(p.stat().st_size for p in files)
    if args.git:
        try:
            git_init(args.out)
        except (OSError, subprocess.CalledProcessError) as exc:
            raise UsageError(f"wrote {args.out}, but git init failed: {exc}") from None
    print(f"wrote {args.out}: {len(files)} files, {size / 1024:.0f} KiB")
    return EXIT_PASSED
