"""A submission as the judge receives it: its name, the folder put first on the worker's
``sys.path`` and its exercise files (``grader.intake.load`` finds them), where the lines of an
exercise file taken from a notebook were in its cells (``Places``), and the error that says why
a submission cannot be read at all."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.shared.safetext import safe_name, safe_text


class SubmissionError(Exception):
    """The submission cannot be read at all; the message is one line for the user."""


@dataclass(frozen=True)
class Span:
    """Lines ``first`` to ``last`` of an exercise file (``last`` None: to the end of the file)
    were lines ``line``, ``line + 1``, ... of the cell the student knows as ``cell`` ("cell 7" in
    a notebook file, "cell In [15]" in a kernel). A statement written out anew rather than copied
    (``a; b`` on one line) is not ``exact``: each of its lines is the cell's line ``line``."""

    first: int
    last: int | None
    cell: str
    line: int
    exact: bool = True


@dataclass
class Places:
    """Where the lines of one exercise file taken from a notebook were in its cells, and where
    each name the exercise asks for is defined (name -> (cell, line))."""

    spans: list[Span] = field(default_factory=list)
    names: dict[str, tuple[str, int]] = field(default_factory=dict)

    def place(self, line: int) -> tuple[str, int] | None:
        """The cell and the line in it of the file's line ``line``; a line the notebook did
        not have (the file's heading, a blank line between cells) is the nearest line of code
        before it; None before the first."""
        before: tuple[str, int] | None = None
        for span in self.spans:
            if span.first <= line and (span.last is None or line <= span.last):
                return span.cell, span.line + (line - span.first if span.exact else 0)
            if span.last is not None and span.last < line:
                end = span.line + (span.last - span.first if span.exact else 0)
                before = span.cell, end
        return before


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
    # A notebook's exercise files: file name -> where its lines were in the notebook's cells
    # (``grader.judge.snippets.in_cells`` says tracebacks' lines in the student's terms).
    places: dict[str, Places] = field(default_factory=dict)
    # A notebook's exercises that none of its cells define: exercise id -> where the grader
    # looked ("the notebook", "the cells run so far"); a folder has none.
    absent: dict[str, str] = field(default_factory=dict)

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
