"""Helpers shared by the tests: building submissions from the solution and corpus files,
and grading them quickly (few examples per check)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.judge import grade
from grader.registry import BY_ID, EXERCISES
from grader.result import GradeResult
from grader.submission import load_submission

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "tests" / "submissions" / "solution"
CORPUS = ROOT / "tests" / "corpus"
STUBS = ROOT  # the repository itself holds the stubs in exercises/

# Few examples per check keep the suite fast; the grader's defaults are larger.
TEST_MAX_EXAMPLES = 8


@dataclass(frozen=True)
class CorpusCase:
    exercise_id: str
    path: Path
    correct: bool
    expect_failing: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.exercise_id}:{self.path.stem}"


def corpus_cases() -> list[CorpusCase]:
    cases = []
    for ex in EXERCISES:
        folder = CORPUS / ex.module
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
            text = path.read_text(encoding="utf-8")
            expect = tuple(m.strip() for m in re.findall(r"^# expect-failing:(.*)$", text, re.M))
            cases.append(CorpusCase(ex.id, path, path.stem.startswith("correct_"), expect))
    return cases


def make_submission(
    dest: Path, replacements: dict[str, Path] | None = None, base: Path = SOLUTION
) -> Path:
    """A submission folder: ``base``'s exercise files, with ``replacements`` (id -> file)."""
    target = dest / "exercises"
    target.mkdir(parents=True, exist_ok=True)
    for ex in EXERCISES:
        src = (replacements or {}).get(ex.id, base / "exercises" / ex.filename)
        if src is not None and Path(src).exists():
            shutil.copyfile(src, target / BY_ID[ex.id].filename)
    return dest


def grade_folder(
    path: Path,
    exercises: list[str] | None = None,
    max_examples: int | None = TEST_MAX_EXAMPLES,
    seed: int | None = None,
    **kwargs,
) -> GradeResult:
    submission = load_submission(path)
    extra = {} if seed is None else {"seed": seed}
    return grade(submission, exercises, max_examples=max_examples, **extra, **kwargs)


def clone_of(dest: Path, replacements: dict[str, Path] | None = None) -> Path:
    """A submission folder laid out like a student's clone (with exercises/__init__.py, so
    that ``import exercises`` in a snippet finds the clone's files, not the installed stubs)."""
    folder = make_submission(dest, replacements)
    (folder / "exercises" / "__init__.py").write_text("")
    return folder


def run_snippet(source: str, folder: Path) -> str:
    """Run a reproduce snippet as a student would: in their clone, reference importable."""
    proc = subprocess.run(
        [sys.executable, "-c", source],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout
