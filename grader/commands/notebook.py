"""``grade notebook OUT.ipynb``: the exercises of the packs in use as one student notebook.

The notebook opens with its introduction (the packs' ``heading``, ``about`` and ``imports``
words, ``grader.editions.text``) and a cell that installs the course, then gives, for
each exercise of the registry, its statement (headed by its id and title, the rest from its
stub's docstring), an answer cell tagged ``exercise-<id>`` holding the stub (from its pack's
stubs folder) and under it a one-line cell ``grader.check("<id>")`` that grades what the kernel
has run (``grader.commands.nbcheck``), and ends with ``grader.check_all()``.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Sequence
from pathlib import Path

from grader.commands.options import EXIT_PASSED
from grader.editions import text as edition_text
from grader.intake.cells import TAG_PREFIX
from grader.shared.errors import UsageError
from grader.shared.packs import Pack
from grader.shared.packs import packs as packs_in_use
from grader.shared.registry import EXERCISES, Exercise, pack_of

DEFAULT_INSTALL = "-q -c constraints.txt -e ."

INTRO = """\
# {heading}

{about}

Each one has a statement and an **answer cell** below it. Write your answer in the answer
cell, keeping the names it defines ({names}): the grader calls them.

- The answer cells carry the tags {tags} (JupyterLab shows them in the property
  inspector of the right sidebar). The grader reads those cells, and the definitions they
  need from the other cells (imports, your own classes); other code (tests, prints, `!` and
  `%` lines) is ignored. Cells that lost their tag are still found by the names they define.
{imports}- To grade an exercise, run the cell under its answer (`grader.check("{first}")`): it
  grades the cells you have run, as they ran (no need to save), in a separate process, and
  shows the result below, with a small input that breaks each failing check, a hint and a
  snippet that reproduces it. The first check in a kernel takes a few seconds more: it starts
  that process. The last cell grades {all}.
"""

INSTALL = """\
# Install the exercises and their grader into this kernel (once). Run the notebook from the
# root of your copy of the course repository, or use the install line your course gives you.
%pip install {install}
import grader  # grader.check("{first}") under each answer grades what this kernel has run
"""

CHECK_CELL = 'grader.check("{id}")'

ALL_INTRO = """\
## All exercises

The cell below grades {all} from the cells you have run, as the cell under each
answer does for one. Your course grades the notebook you hand in, so save it when you are done.
"""

ALL_CELL = "grader.check_all()"


def intro(packs: Sequence[Pack], exercises: Sequence[Exercise]) -> str:
    return INTRO.format(
        heading=edition_text.heading(packs),
        about=edition_text.about(packs),
        names=edition_text.some_names(exercises),
        tags=edition_text.tag_range(exercises),
        imports="".join(f"- {p}\n" for p in edition_text.imports(packs)),
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


def statement_markdown(exercise: Exercise, docstring: str) -> str:
    """The stub's docstring as markdown under a heading of the exercise's id and title (the
    docstring's first line follows it, unless it only says them again), rST literals as code."""
    first, _, rest = docstring.partition("\n")
    said = re.sub(rf"^\W*exercise\s+{re.escape(exercise.id)}\b\W*", "", first.strip(), flags=re.I)
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


def build(install: str = DEFAULT_INSTALL, stubs: Path | None = None):
    """The student notebook as an ``nbformat`` node (written by ``main``): the exercises of
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
    install_cell = INSTALL.format(install=install, first=exercises[0].id)
    nb.cells.append(v4.new_code_cell(install_cell.strip("\n")))
    for ex in exercises:
        stub = stubs / ex.filename if stubs else stub_of(ex)
        doc, code = split_stub(stub.read_text(encoding="utf-8"))
        nb.cells.append(v4.new_markdown_cell(statement_markdown(ex, doc)))
        cell = v4.new_code_cell(answer_cell(ex, code).strip("\n"))
        cell.metadata["tags"] = [f"{TAG_PREFIX}{ex.id}"]
        nb.cells.append(cell)
        nb.cells.append(v4.new_code_cell(CHECK_CELL.format(id=ex.id)))
    nb.cells.append(
        v4.new_markdown_cell(ALL_INTRO.format(all=edition_text.everything(len(exercises))))
    )
    nb.cells.append(v4.new_code_cell(ALL_CELL))
    return nb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade notebook",
        description="Write the exercises of the packs in use as one student notebook "
        "(statements, tagged answer cells holding the stubs, each followed by a cell that checks "
        "it, an install cell and a cell that checks them all). --pack chooses the pack.",
    )
    p.add_argument("out", type=Path, help="the notebook to write (.ipynb)")
    p.add_argument(
        "--install",
        default=DEFAULT_INSTALL,
        metavar="PIP_ARGS",
        help=f"what the first cell passes to %%pip install (default: {DEFAULT_INSTALL!r})",
    )
    p.add_argument("--force", action="store_true", help="overwrite OUT if it exists")
    return p


def main(argv: list[str]) -> int:
    import nbformat

    args = parser().parse_args(argv)
    out: Path = args.out
    if out.suffix != ".ipynb":
        raise UsageError(f"{out}: the notebook's name must end in .ipynb")
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists (it may hold someone's answers); add --force to replace it")
    nb = build(args.install)
    nbformat.validate(nb)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    tags = edition_text.tag_range(EXERCISES).replace("`", "")
    print(f"wrote {out}: {edition_text.counted(len(EXERCISES))}, answer cells tagged {tags}")
    return EXIT_PASSED
