"""Reproduce snippets that run the code that was graded, and locations in the student's terms.

A check writes its snippet with the import a student's clone would use,
``from exercises.<module> import <names>``. ``point_at`` turns that line into a call of
``grader.commands.reproduce.load_exercise`` with the submission's own path
(``Submission.shown_as``), so that the snippet, pasted where the student ran ``grade``, runs
the graded file: a folder elsewhere, a notebook's cells, the files of a batch, and never the
stubs an installation provides. For a pack graded from its folder, the snippet first makes
that folder's pack the one in use (``grader.commands.reproduce.use_pack``): pasted without
``GRADER_PACK``, it still finds the exercise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from grader.intake.submission import Places
from grader.result.schema import NOT_DONE, ExerciseResult
from grader.shared.packs import FILE
from grader.shared.registry import BY_ID

IMPORT = re.compile(r"^from exercises\.\w+ import (.+)$", re.M)
LOADER = (
    "from grader.commands.reproduce import load_exercise  # the graded file, not an installed copy"
)
USE_PACK = "from grader.commands.reproduce import use_pack"


def load_source(snippet: str, exercise_id: str, shown_as: str, pack: str | None = None) -> str:
    """``snippet`` with its ``from exercises.<module> import ...`` line replaced by lines that
    load the names from the submission at ``shown_as``; with ``pack`` (the folder of a pack
    graded from it, ``pack_folder``), first lines that use that pack."""

    def replace(match: re.Match) -> str:
        pairs = []  # (the name the snippet uses, the name in the student's module)
        for item in match.group(1).split(","):
            name, _, alias = item.strip().partition(" as ")
            pairs.append((alias.strip() or name.strip(), name.strip()))
        load = f"load_exercise({shown_as!r}, {exercise_id!r})"
        if len(pairs) == 1:
            ((target, name),) = pairs
            return f"{LOADER}\n{target} = {load}.{name}"
        targets = ", ".join(target for target, _ in pairs)
        values = ", ".join(f"graded.{name}" for _, name in pairs)
        return f"{LOADER}\ngraded = {load}\n{targets} = {values}"

    loaded = IMPORT.sub(replace, snippet)
    if pack is None or loaded == snippet:
        return loaded
    return f"{USE_PACK}\nuse_pack({pack!r})  # the pack graded from its folder\n{loaded}"


def pack_folder(chosen: str) -> str | None:
    """The folder of the pack graded when the course ``chosen`` it by its folder (``--pack
    FOLDER``, ``Course.choice``), as the snippets name it: from the working directory when it
    lies below it, else in full; None for installed packs, which a snippet finds by itself."""
    if not chosen or not Path(chosen, FILE).is_file():
        return None
    folder = Path(chosen).resolve()
    try:
        return folder.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return folder.as_posix()


def point_at(results: list[ExerciseResult], shown_as: str | None, chosen: str = "") -> None:
    """Make every snippet of ``results`` load the submission named ``shown_as`` (in place),
    after using the pack's folder if the course ``chosen`` it by its folder; None leaves them
    importing ``exercises``."""
    if shown_as is None:
        return
    pack = pack_folder(chosen)
    for exercise in results:
        for check in exercise.checks:
            if check.reproduce:
                check.reproduce = load_source(check.reproduce, exercise.id, shown_as, pack)


# A place in a student's file as the judge writes it (a traceback's frame, a syntax error:
# "(in F.py, line N, ..." ) and as Python's SyntaxError says it ("expected ':' (F.py, line N)").
LOCATION = re.compile(r"\((?P<in>in )?(?P<file>[\w.-]+\.py), line (?P<line>\d+)(?=[,:)])")


# What the judge says of a file, said of a notebook's code.
NOTEBOOK_WORDS = (
    ("your file does not parse", "your cell does not parse"),
    ("importing your file failed", "running your cells failed"),
)


TEXTS = ("text", "hint")  # the words of a cause: where it says a place


def in_cells(results: list[ExerciseResult], places: Mapping[str, Places]) -> None:
    """Say every place in a file taken from a notebook as its cell and line (in place);
    nothing changes for a folder's files (no ``places``)."""
    if not places:
        return
    for exercise in results:
        for check in exercise.checks:
            check.message = cell_message(check.message, exercise.id, check.name, places)
            if check.cause:  # the cause and its hint say places too (an exception's line)
                check.cause = {
                    k: cell_message(v, exercise.id, check.name, places) if k in TEXTS else v
                    for k, v in check.cause.items()
                }
        for entry in exercise.diagnosis:
            for k in ("cause", "hint"):
                entry[k] = cell_message(entry[k], exercise.id, entry["checks"][0], places)


def cell_message(
    message: str, exercise_id: str, check_name: str, places: Mapping[str, Places]
) -> str:
    """``message`` with its places said as cells (see ``in_cells``)."""

    def replace(match: re.Match) -> str:
        found = places.get(match.group("file"))
        where = found.place(int(match.group("line"))) if found else None
        return f"({match.group('in') or ''}{where[0]}, line {where[1]}" if where else match.group(0)

    message = LOCATION.sub(replace, message)
    for said, meant in NOTEBOOK_WORDS:
        if message.startswith(said):
            message = meant + message[len(said) :]
    own = places.get(BY_ID[exercise_id].filename) if exercise_id in BY_ID else None
    if message.startswith(NOT_DONE) and own is not None and own.names:
        message = _not_done_in_cells(message, exercise_id, check_name, own)
    return message


def _not_done_in_cells(message: str, exercise_id: str, check_name: str, own: Places) -> str:
    """A "not done yet" message with the cell and line of the name it is about (the first of
    the exercise's names that its first line, else the check's name, mentions): the stub's
    ``exercises/<file>`` becomes ``cell 7, line 3``; a message that names no file gets
    `` (in cell 7, line 3)`` at the end of its first line."""
    first, newline, rest = message.partition("\n")
    names = list(own.names)
    name = next(
        (
            n
            for text in (first, check_name)
            for n in names
            if re.search(rf"\b{re.escape(n)}\b", text)
        ),
        names[0],
    )
    cell, line = own.names[name]
    path = f"exercises/{BY_ID[exercise_id].filename}"
    if path in first:
        first = first.replace(path, f"{cell}, line {line}")
    else:
        first += f" (in {cell}, line {line})"
    return first + newline + rest


def _either(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def not_found(absent: Mapping[str, str]) -> dict[str, str]:
    """Exercise id -> how a missing exercise is said when the submission is a notebook or a
    kernel's cells (``Submission.absent``: where its names were looked for), in the student's
    terms: "not found in the notebook: no cell defines <a name>" (the names are the
    exercise's own, from the registry). A folder has none: its missing exercises keep naming
    the file ``exercises/<file>``."""
    return {
        ex_id: f"not found in {where}: no cell defines {_either(BY_ID[ex_id].names)}"
        for ex_id, where in absent.items()
        if ex_id in BY_ID
    }
