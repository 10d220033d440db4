"""The files beside a notebook (a helper module such as ``previous_chapters.py``, a data file
such as ``the-verdict.txt``), taken in with the exercises found in it, so that its
code finds them as it did in Jupyter (docs/sandbox.md, "What a submission's code may rely
on")."""

from __future__ import annotations

import os
from pathlib import Path

from grader.protocol.limits import MAX_SUBMISSION_BYTES
from grader.shared.registry import EXERCISES
from grader.shared.regular import read_regular

MAX_BESIDE_FILES = 64  # as many as a worker's sandbox copies of a folder
COURSE_FILE = "grading.toml"  # the course's settings and grading seed (docs/deploy.md)
_EXERCISE_FILES = frozenset(ex.filename for ex in EXERCISES)


def copy_beside(source: Path, folder: Path, notebook: str) -> None:
    """Copy the files beside a notebook (a helper module such as ``previous_chapters.py``, a
    data file such as ``the-verdict.txt``) next to the exercise files taken from it, so that
    its code finds them as it did in Jupyter: regular files only, never through a link, never
    over an exercise file, other notebooks left out, within the size a worker takes in; none
    from a course's own folder (one that holds ``grading.toml``: an instructor's notebook or
    kernel there must not hand the course's seed and gradebooks to student code)."""
    total = 0
    names = sorted(os.listdir(source)) if source.is_dir() else []
    if COURSE_FILE in names:  # a course's own folder (its seed, gradebooks): none of it goes
        return
    for name in [n for n in names if not n.endswith(".ipynb") and n != notebook][:MAX_BESIDE_FILES]:
        target = folder / name
        if target.exists() or name.startswith(".") or name in _EXERCISE_FILES:
            continue
        data = read_regular(source / name, MAX_SUBMISSION_BYTES - total)
        if data is None:
            continue
        total += len(data)
        target.write_bytes(data)
