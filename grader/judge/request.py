"""What to grade and how (``Request``), the same fields for every front end.

The pipeline (``grader.pipeline``, which front ends import it from) builds one per grade and
the judge (``grader.judge.engine``) takes it whole: the seed, the exercises, the examples per
check, the limits, the points, the course whose exercises these are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.judge.seeds import Seed
from grader.protocol.limits import Limits
from grader.shared.course import Course, current

if TYPE_CHECKING:
    from grader.judge.launch.handle import Starter


@dataclass(frozen=True)
class Request:
    """What to grade and how: the same fields mean the same thing for every front end."""

    seed: Seed
    exercises: Sequence[str] | None = None  # None: every exercise
    max_examples: int | None = None
    limits: Limits | None = None
    max_scores: Mapping[str, float] | None = None
    check_points: Mapping[str, Mapping[str, float]] | None = None
    processes: int | None = None  # judge processes for the exercises (a batch's judge: 1)
    start: Starter | None = None  # how workers start (grader.judge.launch); None: the default
    scratch_in: Path | None = None  # where the workers' folders go (default: the temp folder)
    overlap: bool = False  # start the workers while torch is imported (``grade``'s cold start)
    # told each step of the judging, ``progress(kind, **record)`` (``grader.judge.engine``):
    # a batch notes them, to say where a judge past its deadline stopped
    progress: Callable[..., None] | None = None
    # the packs whose exercises are graded (``grader.shared.course``); None: this process's
    course: Course | None = None

    def the_course(self) -> Course:
        """The course graded: the one asked for, else this process's."""
        return self.course if self.course is not None else current()
