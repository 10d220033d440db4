"""The student notebook (``grade notebook OUT.ipynb``): the exercises of the packs in use as
one notebook.

The notebook opens with its introduction (the packs' ``heading``, ``about`` and ``imports``
words, ``grader.editions.text``; the cells' words are ``templates/edition/notebook_*.j2``) and
a cell that installs the course, then gives, for each exercise of the registry, its statement
(headed by its id and title, the rest from its stub's docstring), an answer cell tagged
``exercise-<id>`` holding the stub (from its pack's stubs folder) and under it a one-line cell
``grader.check("<id>")`` that grades what the kernel has run (``grader.live.nbcheck``), and
ends with ``grader.check_all()``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from grader.editions import text as edition_text
from grader.intake.cells import TAG_PREFIX
from grader.shared.course import packs as packs_in_use
from grader.shared.errors import UsageError
from grader.shared.packs import Pack
from grader.shared.registry import EXERCISES, Exercise, pack_of

if TYPE_CHECKING:
    from nbformat import NotebookNode

DEFAULT_INSTALL = "-q -c constraints.txt -e ."
CHECK_CELL = 'grader.check("{id}")'
ALL_CELL = "grader.check_all()"


def intro(packs: Sequence[Pack], exercises: Sequence[Exercise]) -> str:
    return edition_text.render(
        "notebook_intro.md.j2",
        heading=edition_text.heading(packs),
        about=edition_text.about(packs),
        names=edition_text.some_names(exercises),
        tags=edition_text.tag_range(exercises),
        imports=edition_text.imports(packs),
        first=exercises[0].id,
        all=edition_text.everything(len(exercises)),
    )


def stub_of(exercise: Exercise) -> Path:
    """The stub of ``exercise``, from the stubs folder its pack declares."""
    pack = pack_of(exercise)
    stubs = pack.path("stubs")
    if stubs is None or not (stubs / exercise.filename).is_file():
        raise UsageError(f"the pack {pack.name} hands out no stub {exercise.filename}")
    return stubs / exercise.filename


def split_stub(source: str) -> tuple[str, str]:
    """A stub's module docstring and the code after it."""
    tree = ast.parse(source)
    doc = ast.get_docstring(tree, clean=True) or ""
    body = tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        code = "\n".join(source.splitlines()[body[0].end_lineno :])
    else:
        code = source
    return doc, code.strip("\n") + "\n"


# A word a sentence may start with in capitals: letters and hyphens only (not a name of code,
# ``generate_text`` or ``x``, whose case is its own).
_PLAIN_WORD = re.compile(r"^[a-z][a-z-]+\b(?![_(.\w])")


def _sentence(text: str) -> str:
    """``text`` as a sentence of its own: a plain first word capitalized ("low-rank adaptation"
    after "Exercise E.1: " in the stub becomes "Low-rank adaptation"), the rest as it was."""
    return text[:1].upper() + text[1:] if _PLAIN_WORD.match(text) else text


def statement_markdown(exercise: Exercise, docstring: str) -> str:
    """The stub's docstring as markdown under a heading of the exercise's id and title (the
    docstring's first line follows it, unless it only says them again; a sentence of its own
    once "Exercise ID:" is taken off it), rST literals as code."""
    first, _, rest = docstring.partition("\n")
    said = re.sub(rf"^\W*exercise\s+{re.escape(exercise.id)}\b\W*", "", first.strip(), flags=re.I)
    said = _sentence(said) if said != first.strip() else said
    lead = said if said.rstrip(".").strip().lower() != exercise.title.lower() else ""
    text = "\n\n".join(part for part in (lead, rest.strip("\n")) if part)
    return f"## Exercise {exercise.id}: {exercise.title}\n\n{_code(text)}\n"


def _code(text: str) -> str:
    return re.sub(r"``(.+?)``", r"`\1`", text)


def answer_cell(exercise: Exercise, code: str) -> str:
    code = code.replace(
        f"exercises/{exercise.filename}", f"the cell tagged {TAG_PREFIX}{exercise.id}"
    )
    header = (
        f"# Exercise {exercise.id}: your answer. This cell is graded (tag {TAG_PREFIX}"
        f"{exercise.id}): keep the names it defines.\n"
    )
    return header + code


def build(install: str = DEFAULT_INSTALL, stubs: Path | None = None) -> NotebookNode:
    """The student notebook as an ``nbformat`` node (``grade notebook`` writes it): the exercises of
    the packs in use, each stub from ``stubs`` when given, else from its pack's stubs."""
    from nbformat import v4

    exercises, packs = list(EXERCISES), packs_in_use()
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells.append(v4.new_markdown_cell(intro(packs, exercises)))
    install_cell = edition_text.render(
        "notebook_install.py.j2", install=install, first=exercises[0].id
    )
    nb.cells.append(v4.new_code_cell(install_cell.strip("\n")))
    for ex in exercises:
        stub = stubs / ex.filename if stubs else stub_of(ex)
        doc, code = split_stub(stub.read_text(encoding="utf-8"))
        nb.cells.append(v4.new_markdown_cell(statement_markdown(ex, doc)))
        cell = v4.new_code_cell(answer_cell(ex, code).strip("\n"))
        cell.metadata["tags"] = [f"{TAG_PREFIX}{ex.id}"]
        nb.cells.append(cell)
        nb.cells.append(v4.new_code_cell(CHECK_CELL.format(id=ex.id)))
    every = edition_text.everything(len(exercises))
    nb.cells.append(v4.new_markdown_cell(edition_text.render("notebook_all.md.j2", all=every)))
    nb.cells.append(v4.new_code_cell(ALL_CELL))
    return nb
