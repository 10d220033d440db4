"""The course: which packs are in use and their exercises, as one value.

A ``Course`` is resolved once, at an edge, from what chose it: ``--pack NAME|FOLDER``, or
nothing (every installed pack). The edges are the command line (``grade --pack``), a reproduce
snippet (``use_pack``), ``check-pack``, and every process a grade starts (a worker, the fork
server, a batch's judge, the notebook's judge), which reads ``GRADER_PACK`` from its
environment when it first asks for ``current()``: ``from_environment`` is the one place that
variable is read. ``use`` makes a course this process's from then on, ``using`` for a block (a
test, a grade for another course); a ``grader.pipeline.Request`` carries the course it grades
for. Everything else reads ``current()`` (or the course it was handed), never the environment,
and a child process is handed the course through the environment it is started with
(``Course.environment``, ``child_environment``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from grader.shared.packs import CHOSEN, Exercise, Pack, PackError, installed, read_pack

__all__ = [
    "CHOSEN",
    "Course",
    "child_environment",
    "choose",
    "chosen_in_environment",
    "current",
    "from_environment",
    "packs",
    "resolve",
    "use",
    "using",
]


@dataclass(frozen=True)
class Course:
    """The packs in use, resolved from ``choice`` (a pack's name or folder; empty: every
    installed pack), and their exercises in course order."""

    choice: str
    packs: tuple[Pack, ...]
    exercises: tuple[Exercise, ...] = field(init=False, repr=False, compare=False)
    by_id: Mapping[str, Exercise] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        exercises = tuple(ex for pack in self.packs for ex in pack.exercises)
        object.__setattr__(self, "exercises", exercises)
        object.__setattr__(self, "by_id", MappingProxyType({ex.id: ex for ex in exercises}))

    def pack_of(self, exercise: Exercise) -> Pack:
        """The pack that declares ``exercise``."""
        return next(p for p in self.packs if p.name == exercise.pack)

    def select(self, ids: list[str] | None) -> list[Exercise]:
        """The exercises named by ``ids`` (all when empty), in course order; ``KeyError``
        names the first unknown id."""
        if not ids:
            return list(self.exercises)
        for i in ids:
            if i not in self.by_id:
                raise KeyError(i)
        return [e for e in self.exercises if e.id in set(ids)]

    def environment(self) -> dict[str, str]:
        """What a child process's environment must hold for it to grade this course."""
        return {CHOSEN: self.choice} if self.choice else {}


def resolve(choice: str) -> Course:
    """The course ``choice`` names: an installed pack's name, a folder with a ``pack.toml``
    (its parent folder put on ``sys.path`` so that its modules import; workers inherit the
    judge's ``sys.path``), or, empty, every installed pack. ``PackError`` says what is wrong,
    in one line."""
    if choice and Path(choice).is_dir():
        pack = read_pack(Path(choice))
        choice = str(Path(choice).resolve())
        parent = str(pack.folder.parent)
        if parent not in sys.path:
            sys.path.append(parent)
        found = [pack]
    else:
        found = [read_pack(folder) for folder in installed(name_only=choice)]
        if choice:
            found = [p for p in found if p.name == choice]
            if not found:
                raise PackError(f"no exercise pack named {choice!r} is installed, nor a folder")
    if not found:
        raise PackError(
            "no exercise pack is installed: install one (pip install -e .) or name its folder "
            "with --pack"
        )
    seen: dict[str, str] = {}
    for pack in found:
        for ex in pack.exercises:
            if ex.id in seen:
                raise PackError(
                    f"exercise {ex.id} is declared by two packs ({seen[ex.id]}, {pack.name}): "
                    "choose one with --pack"
                )
            seen[ex.id] = pack.name
    return Course(choice, tuple(found))


def chosen_in_environment(environ: Mapping[str, str] | None = None) -> str:
    """What ``GRADER_PACK`` of ``environ`` (default: this process's environment) chooses, as
    written ("": every installed pack). The one read of that variable: at an edge."""
    return (os.environ if environ is None else environ).get(CHOSEN, "")


def from_environment(environ: Mapping[str, str] | None = None) -> Course:
    """The course a process was started for: the one ``GRADER_PACK`` of ``environ`` (default:
    this process's environment) chooses, or every installed pack."""
    return resolve(chosen_in_environment(environ))


_lock = threading.Lock()
_current: Course | None = None


def current() -> Course:
    """This process's course: the one last ``use``d, else the one its environment names,
    resolved on first use and kept (a later change of the environment changes nothing)."""
    global _current
    course = _current
    if course is None:
        with _lock:
            if _current is None:
                _current = from_environment()
            course = _current
    return course


def use(course: Course | None) -> None:
    """Make ``course`` this process's course from now on (None: resolve it again from the
    environment when next asked)."""
    global _current
    with _lock:
        _current = course


@contextmanager
def using(course: Course) -> Iterator[Course]:
    """``course`` as this process's course for the block, the one before it afterwards."""
    global _current
    with _lock:
        before, _current = _current, course
    try:
        yield course
    finally:
        with _lock:
            _current = before


def choose(choice: str) -> Course:
    """Resolve ``choice`` (``resolve``) and ``use`` it; a ``PackError`` leaves the course in
    use as it was."""
    course = resolve(choice)
    use(course)
    return course


def packs() -> tuple[Pack, ...]:
    """The packs of this process's course."""
    return current().packs


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's environment) for a child process that must grade
    this process's course: its own ``GRADER_PACK`` replaced by the course's."""
    source = os.environ if environ is None else environ
    return {**{k: v for k, v in source.items() if k != CHOSEN}, **current().environment()}
