"""The exercises being graded: those of the packs in use (``grader.shared.packs``), in the
order their packs declare them, with their ids, files, titles and points.

``EXERCISES`` and ``BY_ID`` are views: they read the packs in use when they are read, so
``grade --pack`` takes effect for modules that imported them before the option was parsed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from grader.shared.packs import Exercise, Pack, PackError, packs

__all__ = ["BY_ID", "EXERCISES", "Exercise", "PackError", "pack_of", "select"]


def _all() -> tuple[Exercise, ...]:
    return tuple(ex for pack in packs() for ex in pack.exercises)


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
        for ex in _all():
            if ex.id == key:
                return ex
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (ex.id for ex in _all())

    def __len__(self) -> int:
        return len(_all())


EXERCISES: Sequence[Exercise] = _Exercises()
BY_ID: Mapping[str, Exercise] = _ById()


def pack_of(exercise: Exercise) -> Pack:
    """The pack that declares ``exercise``."""
    return next(p for p in packs() if p.name == exercise.pack)


def select(ids: list[str] | None) -> list[Exercise]:
    """The exercises named by ``ids`` (all when empty), in course order.

    Raises ``KeyError`` naming the first unknown id.
    """
    if not ids:
        return list(EXERCISES)
    for i in ids:
        if i not in BY_ID:
            raise KeyError(i)
    return [e for e in EXERCISES if e.id in set(ids)]
