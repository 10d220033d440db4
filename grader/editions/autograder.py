"""What the Gradescope bundle runs for every submission (``run_autograder`` calls
``grade gradescope --run ROOT``): find what the student uploaded in ``ROOT/submission`` (the
exercise files, an ``exercises/`` folder, a whole repository or a notebook), grade it through
the pipeline with the settings the bundle was built with (``ROOT/source/bundle.json``: the
course's seed, exercises, points, limits) and write ``ROOT/results/results.json``, with what
students read in its ``output``; the full report goes to stdout, which only instructors see."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from grader.editions.gradescope import SETTINGS
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES

if TYPE_CHECKING:
    from grader.result.schema import GradeResult


def exercise_files() -> set[str]:
    """The names of the files an upload may hold: one per exercise in use."""
    return {e.filename for e in EXERCISES}


SKIP_DIRS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git", ".venv", "venv"}


def _walk(folder: Path, depth: int = 0, max_depth: int = 4) -> Iterator[tuple[Path, int]]:
    yield folder, depth
    if depth >= max_depth:
        return
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and child.name not in SKIP_DIRS:
            yield from _walk(child, depth + 1, max_depth)


def find_submission(folder: Path) -> Path:
    """What to grade in Gradescope's ``submission/`` folder: the shallowest folder holding
    ``exercises/`` or exercise files (Gradescope unzips uploads, and a zipped folder or a
    GitHub repository adds a level), else the one notebook. ``UsageError`` when there is none
    or there are several notebooks and no exercise files."""
    candidates = []
    notebooks = []
    files = exercise_files()
    for path, depth in _walk(folder):
        names = {p.name for p in path.iterdir() if p.is_file()}
        if (path / "exercises").is_dir() and any((path / "exercises" / f).is_file() for f in files):
            candidates.append((depth, 0, path))
        elif names & files:
            candidates.append((depth, 1, path))
        notebooks += [path / n for n in sorted(names) if n.endswith(".ipynb")]
    if candidates:
        return min(candidates, key=lambda c: (c[0], c[1]))[2]
    if len(notebooks) == 1:
        return notebooks[0]
    if notebooks:
        listed = ", ".join(str(n.relative_to(folder)) for n in notebooks[:5])
        raise UsageError(f"several notebooks were uploaded ({listed}); upload only one")
    expected = ", ".join(sorted(files))
    raise UsageError(f"no exercise files found in the upload: upload {expected} (or a notebook)")


def _results(result: GradeResult, notes: list[str]) -> dict:
    from grader.result import formats

    buffer = io.StringIO()
    formats.emit("gradescope", result, buffer)
    doc = json.loads(buffer.getvalue())
    if notes:
        extra = "How your upload was read:\n" + "\n".join(f"- {n}" for n in notes)
        doc["output"] = (doc.get("output", "") + "\n\n" + extra).strip()
    return doc


def _failure(message: str) -> dict:
    return {"score": 0.0, "output": message, "tests": []}


def run_autograder(root: Path) -> None:
    """Grade ``root/submission`` and write ``root/results/results.json``."""
    from grader import pipeline
    from grader.judge.seeds import PUBLIC_SEED, course_seed
    from grader.protocol.limits import Limits
    from grader.result import report_text

    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    settings_file = root / "source" / SETTINGS
    settings = json.loads(settings_file.read_text()) if settings_file.is_file() else {}
    try:
        path = find_submission(root / "submission")
        submission = pipeline.open_path(path, name=path.name, elsewhere=True)
    except (UsageError, pipeline.SubmissionError) as exc:
        results.write_text(json.dumps(_failure(f"Nothing was graded: {exc}"), indent=2) + "\n")
        print(f"grade gradescope: {exc}")
        return
    seed = settings.get("seed")  # the course's (None: a bundle built before there was one)
    request = pipeline.Request(
        seed=course_seed(PUBLIC_SEED if seed is None else seed, "bundle"),  # students see it
        exercises=settings.get("exercises"),
        max_examples=settings.get("max_examples"),
        limits=Limits(**settings["limits"]) if settings.get("limits") else None,
        max_scores=settings.get("max_scores"),
        check_points=settings.get("check_points"),
    )
    notes = list(submission.notes)
    result = pipeline.finish(submission, request)
    doc = _results(result, notes)
    results.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"graded {path.relative_to(root)}")
    report_text.write(result, sys.stdout, verbose=True)  # for the instructor's stdout view
