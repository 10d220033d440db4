"""``grade notebook OUT.ipynb``: the six exercises as one student notebook.

The notebook opens with a cell that installs the exercise pack, then gives, for each exercise,
its statement (from the stub's docstring) and an answer cell tagged ``exercise-3.1`` ...
``exercise-4.3`` holding the stub, and ends with a cell that grades the saved notebook and
shows the HTML report inline.
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
- To grade: **save the notebook**, then run the last cell. It never runs your notebook; it
  reads the saved file.
"""

INSTALL = """\
# Install the exercise pack and its grader into this kernel (once). Run the notebook from the
# root of your copy of the course repository, or use the install line your course gives you.
%pip install {install}
"""

GRADE_INTRO = """\
## Grade your answers

Save the notebook first (Ctrl+S, or File > Save), then run the cell below. It grades the file
on disk, prints a summary and shows the full report, with a small input that breaks each
failing check and a snippet that reproduces it.
"""

GRADE_CELL = """\
# Grade this notebook as saved on disk and show the report here.
import html
import os
import subprocess
import sys
from pathlib import Path

from IPython.display import HTML, display

candidates = [os.environ.get("JPY_SESSION_NAME"), globals().get("__vsc_ipynb_file__"), {name!r}]
NOTEBOOK = next(p for p in candidates if p and Path(p).is_file() and p.endswith(".ipynb"))
REPORT = Path("grade-report.html")
proc = subprocess.run(
    [sys.executable, "-m", "grader.commands.cli", NOTEBOOK, "--html", str(REPORT)],
    capture_output=True, text=True,
)
print(proc.stdout)
if proc.returncode == 2:  # the grader could not read the notebook
    print(proc.stderr)
if REPORT.is_file():
    page = html.escape(REPORT.read_text(encoding="utf-8"))
    display(HTML(f'<iframe srcdoc="{{page}}" style="width:100%;height:720px;border:1px solid #ccc">'
                 "</iframe>"))
"""


def stubs_folder() -> Path:
    """The ``exercises/`` folder that ships with this grader (next to the ``grader`` package,
    in a clone and in site-packages alike), never one from the current directory."""
    beside = Path(__file__).resolve().parents[2] / "exercises"
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


def build(out: Path, install: str = DEFAULT_INSTALL, stubs: Path | None = None):
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
    nb.cells.append(v4.new_markdown_cell(GRADE_INTRO))
    nb.cells.append(v4.new_code_cell(GRADE_CELL.format(name=out.name).strip("\n")))
    return nb


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade notebook",
        description="Write the six exercises as one student notebook (statements, tagged "
        "answer cells holding the stubs, an install cell and a grading cell).",
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
    nb = build(out, args.install)
    nbformat.validate(nb)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(out))
    print(
        f"wrote {out}: {len(EXERCISES)} exercises, answer cells tagged "
        f"{TAG_PREFIX}{EXERCISES[0].id} ... {TAG_PREFIX}{EXERCISES[-1].id}"
    )
    return EXIT_PASSED
