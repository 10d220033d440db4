"""Whose words a hint is: ``grade check-pack`` refuses a hint shown to a pack's corpus that the
pack did not write and that is not one of the grader's generic ones.

A hint reaches a student from a check's own ``hint``, a ``Known`` (the pack's ``hints`` or the
grader's ``grader.judge.hints.KNOWN``), or a ``Cause`` (the pack's checks' or the grader's
generic diagnosis: ``grader.judge``); the result keeps its text only. So the text is traced to
the source that wrote it: every string literal of a module, and the literal parts of its
f-strings (``f"rename {old} to __init__ ..."``), are that module's fragments, and a hint is
written by the source whose fragments cover most of its characters (the rest are values: a
key, a file, a count). The sources are the pack's
own modules, the grader's judge (whose hints name no pack's classes, configs or code:
``grader.judge.hints``), and every other pack installed (to say whose words they are). A hint
written by another pack, or by no source the check knows, is a problem of the corpus step.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import grader.judge
from grader.result.common import hint_of
from grader.result.schema import ExerciseResult

MIN_FRAGMENT = 12  # characters: shorter literals ("the ", ", ") say nothing of who wrote them
GRADER = "the grader"


@cache
def _file_fragments(path: Path) -> tuple[str, ...]:
    """The string literals of one Python file, and the literal parts of its f-strings."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return ()
    found = {
        node.value.strip()
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return tuple(sorted(f for f in found if len(f) >= MIN_FRAGMENT))


def fragments(folder: Path) -> tuple[str, ...]:
    """The fragments of every Python file under ``folder`` (caches and hidden folders aside)."""
    files = sorted(
        p
        for p in folder.rglob("*.py")
        if not any(part == "__pycache__" or part.startswith(".") for part in p.parts)
    )
    return tuple(dict.fromkeys(f for p in files for f in _file_fragments(p)))


@dataclass(frozen=True)
class Sources:
    """Who may have written a hint: the pack (``own``), the grader, and other packs by name."""

    own: str
    by_name: dict[str, tuple[str, ...]]

    def writer(self, hint: str) -> str | None:
        """The source whose fragments cover most of ``hint`` (the pack first, then the grader,
        on a tie), or None when no fragment of any is in it. Most, not all: a hint built by
        code holds values too (a key, a file, a count), which no source wrote."""
        best, covered = None, 0
        for name, found in self.by_name.items():
            n = _covered(hint, found)
            if n > covered:
                best, covered = name, n
        return best

    def problem(self, hint: str) -> str | None:
        """What is wrong with showing ``hint`` to this pack's students (None: its own words or
        the grader's generic ones)."""
        if not hint.strip():
            return None
        writer = self.writer(hint)
        if writer in (self.own, GRADER):
            return None
        said = hint if len(hint) <= 90 else hint[:87] + "..."
        whose = f"{writer}'s words" if writer else "words no module of this pack wrote"
        return f"a hint shown is {whose}, not this pack's: {said!r}"


def _covered(hint: str, found: Iterable[str]) -> int:
    """How many characters of ``hint`` the occurrences of ``found`` cover."""
    marked = bytearray(len(hint))
    for fragment in found:
        start = hint.find(fragment)
        while start >= 0:
            marked[start : start + len(fragment)] = b"\x01" * len(fragment)
            start = hint.find(fragment, start + 1)
    return sum(marked)


def shown(exercise: ExerciseResult) -> list[str]:
    """The hints an exercise's result shows: its failing checks' and its causes', each once."""
    said = [hint_of(c) for c in exercise.checks if not c.passed]
    said += [str(d.get("hint") or "") for d in exercise.diagnosis]
    return [h for h in dict.fromkeys(said) if h.strip()]


def problems(exercise: ExerciseResult, found: Sources) -> list[str]:
    """What is wrong with the hints an exercise's result shows (``Sources.problem``)."""
    return [p for p in (found.problem(h) for h in shown(exercise)) if p is not None]


def sources(own: str, folder: Path, others: dict[str, Path]) -> Sources:
    """The sources for the pack ``own`` in ``folder``, with the other packs ``others`` (name ->
    folder): the pack first, then the grader's judge, then the others."""
    grader_judge = Path(next(iter(grader.judge.__path__)))
    by_name = {own: fragments(folder), GRADER: fragments(grader_judge)}
    for name, path in others.items():
        if name not in by_name and path.resolve() != folder.resolve():
            by_name[name] = fragments(path)
    return Sources(own, by_name)


def installed_others(own: Path) -> dict[str, Path]:
    """The packs installed besides the one in ``own`` (name -> folder); none when the
    installed packs cannot be read (the check then knows fewer writers, never more)."""
    from grader.shared.packs import PackError, installed, read_pack

    try:
        folders = installed()
    except PackError:
        return {}
    others = {}
    for folder in folders:
        try:
            pack = read_pack(folder)
        except (PackError, OSError):
            continue
        if folder.resolve() != own.resolve():
            others[pack.name] = folder
    return others
