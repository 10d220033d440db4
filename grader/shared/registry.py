"""The exercises being graded: those of the course in use (``grader.shared.course``), in the
order their packs declare them, with their ids, files, titles and points.

``EXERCISES`` and ``BY_ID`` are views of ``course.current()``, read when they are read, so a
course chosen at an edge (``grade --pack``, a test's ``course.using``) holds for modules that
imported them before it was chosen. Code handed a ``Course`` reads that course instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from grader.shared.course import current
from grader.shared.packs import Exercise, Pack, PackError

__all__ = ["BY_ID", "EXERCISES", "Exercise", "PackError", "pack_of", "select"]


def _all() -> tuple[Exercise, ...]:
    return current().exercises


class _Exercises(Sequence):
    """Every exercise of the packs in use, in course order."""

    def __getitem__(self, index):  # type: ignore[override]
        return _all()[index]

    def __len__(self) -> int:
        return len(_all())

    def __iter__(self) -> Iterator[Exercise]:
        return iter(_all())

    def __repr__(self) -> str:
        return f"EXERCISES{list(_all())!r}"


class _ById(Mapping):
    """Exercise id -> exercise, over the packs in use."""

    def __getitem__(self, key: str) -> Exercise:
        return current().by_id[key]

    def __iter__(self) -> Iterator[str]:
        return iter(current().by_id)

    def __len__(self) -> int:
        return len(current().by_id)


EXERCISES: Sequence[Exercise] = _Exercises()
BY_ID: Mapping[str, Exercise] = _ById()


def pack_of(exercise: Exercise) -> Pack:
    """The pack that declares ``exercise``."""
    return current().pack_of(exercise)


def select(ids: list[str] | None) -> list[Exercise]:
    """The exercises named by ``ids`` (all when empty), in course order.

    Raises ``KeyError`` naming the first unknown id.
    """
    return current().select(ids)
