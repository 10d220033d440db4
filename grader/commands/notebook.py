"""``grade notebook OUT.ipynb``: the six exercises as one student notebook.

The notebook opens with a cell that installs the exercise pack, then gives, for each exercise,
its statement (from the stub's docstring), an answer cell tagged ``exercise-3.1`` ...
``exercise-4.3`` holding the stub and under it a one-line cell ``grader.check("3.1")`` that
grades what the kernel has run (``grader.commands.nbcheck``), and ends with ``grader.check_all()``.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from grader.commands.options import EXIT_PASSED
from grader.intake.cells import TAG_PREFIX
from grader.shared.errors import UsageError
from grader.shared.registry import EXERCISES, Exercise

DEFAULT_INSTALL = "-q -c constraints.txt -e ."

INTRO = """\
# Chapters 3 and 4: attention and the GPT model

Six exercises from *Build a Large Language Model (From Scratch)*. Each one has a statement
and an **answer cell** below it. Write your answer in the answer cell, keeping the names it
defines (`transfer_weights`, `make_2d_wrapper`, ...): the grader calls them.

- The answer cells carry the tags `exercise-3.1` ... `exercise-4.3` (JupyterLab shows them
  in the property inspector of the right sidebar). The grader reads those cells, and
  the definitions they need from the other cells (imports, your own classes); other code
  (tests, prints, `!` and `%` lines) is ignored. Cells that lost their tag are still found by
  the names they define.
- `reference` holds the book's classes (`from reference import MultiHeadAttention`, ...).
- To grade an exercise, run the cell under its answer (`grader.check("3.1")`): it grades
  the cells you have run, as they ran (no need to save), in a separate process, and shows
  the result below, with a small input that breaks each failing check, a hint and a snippet
  that reproduces it. The first check in a kernel takes a few seconds more: it starts that
  process. The last cell grades all six.
"""

INSTALL = """\
# Install the exercise pack and its grader into this kernel (once). Run the notebook from the
# root of your copy of the course repository, or use the install line your course gives you.
%pip install {install}
import grader  # grader.check("3.1") under each answer grades what this kernel has run
"""

CHECK_CELL = 'grader.check("{id}")'

ALL_INTRO = """\
## All exercises

The cell below grades all six exercises from the cells you have run, as the cell under each
answer does for one. Your course grades the notebook you hand in, so save it when you are done.
"""

ALL_CELL = "grader.check_all()"


def stubs_folder() -> Path:
    """The ``exercises/`` folder that ships with this grader (next to the ``grader`` package,
    in a clone and in site-packages alike), never one from the current directory."""
    from grader.commands.release import project_root

    beside = project_root() / "exercises"
    if beside.is_dir():
        return beside
    import importlib.util

    spec = importlib.util.find_spec("exercises")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("cannot find the exercise stubs (the exercises package)")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


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
    """The stub's docstring as markdown: its first line a heading, rST literals as code."""
    first, _, rest = docstring.partition("\n")
    text = re.sub(r"``(.+?)``", r"`\1`", rest.strip("\n"))
    heading = re.sub(r"``(.+?)``", r"`\1`", first.strip())
    return f"## {heading}\n\n{text}\n"


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
    """The student notebook as an ``nbformat`` node (written by ``main``)."""
    from nbformat import v4

    stubs = stubs or stubs_folder()
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells.append(v4.new_markdown_cell(INTRO))
    nb.cells.append(v4.new_code_cell(INSTALL.format(install=install).strip("\n")))
    for ex in EXERCISES:
        doc, code = split_stub((stubs / ex.filename).read_text(encoding="utf-8"))
        nb.cells.append(v4.new_markdown_cell(statement_markdown(ex, doc)))
        cell = v4.new_code_cell(answer_cell(ex, code).strip("\n"))
        cell.metadata["tags"] = [f"{TAG_PREFIX}{ex.id}"]
        nb.cells.append(cell)
        nb.cells.append(v4.new_code_cell(CHECK_CELL.format(id=ex.id)))
    nb.cells.append(v4.new_markdown_cell(ALL_INTRO))
    nb.cells.append(v4.new_code_cell(ALL_CELL))
    return nb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade notebook",
        description="Write the six exercises as one student notebook (statements, tagged "
        "answer cells holding the stubs, each followed by a cell that checks it, an install "
        "cell and a cell that checks all six).",
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
    print(
        f"wrote {out}: {len(EXERCISES)} exercises, answer cells tagged "
        f"{TAG_PREFIX}{EXERCISES[0].id} ... {TAG_PREFIX}{EXERCISES[-1].id}"
    )
    return EXIT_PASSED
