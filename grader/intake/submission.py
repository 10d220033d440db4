"""A submission as the judge receives it: its name, the folder put first on the worker's
``sys.path`` and its exercise files (``grader.intake.load`` finds them), and the error that says
why a submission cannot be read at all."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.shared.safetext import safe_name, safe_text


class SubmissionError(Exception):
    """The submission cannot be read at all; the message is one line for the user."""


@dataclass
class Submission:
    name: str
    root: Path  # the folder that holds ``exercises/`` (put first on the worker's sys.path)
    files: dict[str, Path]  # exercise id -> file, for the files that exist
    notes: list[str] = field(default_factory=list)  # e.g. which notebook cells were used
    # exercise id -> why its file is not run (one line, in the student's terms): the exercise
    # is an ``error`` whose checks say "not graded: <reason>"
    problems: dict[str, str] = field(default_factory=dict)
    _tmp: tempfile.TemporaryDirectory | None = None
    # How a reproduce snippet names the submission for ``load_exercise``: its path from where
    # the student runs Python. None: snippets keep ``from exercises.<module> import ...``.
    shown_as: str | None = None

    def __post_init__(self) -> None:
        # A folder's or notebook's name and cell labels are the student's text: made safe once.
        self.name = safe_name(self.name)
        self.notes = [safe_text(note) for note in self.notes]
        self.problems = {k: safe_text(v) for k, v in self.problems.items()}

    def refuse(self, problems: dict[str, str]) -> None:
        """Set these exercises' files aside, each with the reason it is not run."""
        self.problems.update((k, safe_text(v)) for k, v in problems.items())
        self.files = {k: v for k, v in self.files.items() if k not in self.problems}

    def cleanup(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
