"""Reading a notebook's code cells, without running them: IPython's shell (``!``), magic
(``%``) and help (``?``) lines are left out, and a cell that does not parse says why.
``grader.intake.notebook`` then picks each exercise's statements from these cells."""

from __future__ import annotations

import json
import logging
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from grader.intake.submission import SubmissionError
from grader.shared import safeparse
from grader.shared.registry import EXERCISES

TAG_PREFIX = "exercise-"

# The names each exercise's file must define (DESIGN §4).
CONTRACT: dict[str, tuple[str, ...]] = {e.id: e.names for e in EXERCISES}

# Cell magics whose body is still Python; any other ``%%`` cell is not Python at all.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}

_SHELL_ASSIGN = re.compile(r"^\s*[\w.,\s\[\]()*]+=\s*[!%]")


@dataclass
class Cell:
    index: int  # 1-based position among all cells of the notebook
    execution_count: int | None
    tags: tuple[str, ...]
    source: str  # the Python source after dropping shell and magic lines
    dropped_lines: int = 0
    error: str | None = None  # why the cell could not be parsed

    @property
    def label(self) -> str:
        run = f" (In [{self.execution_count}])" if self.execution_count else ""
        return f"cell {self.index}{run}"

    def place(self, ran: bool) -> str:
        """The cell as the student finds it: ``cell In [15]`` among a kernel's inputs (the number
        beside it in the notebook), ``cell 7`` in a notebook file (its position among all cells,
        markdown cells included, counting from 1)."""
        return f"cell In [{self.execution_count}]" if ran else f"cell {self.index}"

    def named(self, ran: bool) -> str:
        """How notes name the cell: ``cell 7 (In [15])`` in a notebook file (with the count it
        was saved with), ``cell In [15]`` among a kernel's inputs."""
        return self.place(ran) if ran else self.label

    def exercise_tag(self) -> str | None:
        for tag in self.tags:
            if tag.startswith(TAG_PREFIX) and tag[len(TAG_PREFIX) :] in CONTRACT:
                return tag[len(TAG_PREFIX) :]
        return None


def read_cells(path: Path, called: str | None = None) -> list[Cell]:
    """The code cells of the notebook at ``path``; ``SubmissionError`` when it is unreadable
    (its message names the notebook ``called``, by default its path)."""
    import nbformat

    shown = called or str(path)

    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
        json.loads(text)
    except UnicodeDecodeError:
        raise SubmissionError(f"{shown}: not a notebook (the file is not UTF-8 text)") from None
    except json.JSONDecodeError as exc:
        raise SubmissionError(
            f"{shown}: not a readable notebook (invalid JSON at line {exc.lineno}: {exc.msg})"
        ) from None
    except (RecursionError, MemoryError):  # JSON nested absurdly deep: no notebook is
        raise SubmissionError(
            f"{shown}: not a readable notebook (its JSON is nested too deeply to read)"
        ) from None
    except OSError as exc:
        raise SubmissionError(f"{shown}: cannot be read ({exc.strerror})") from None
    logger = logging.getLogger("traitlets")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # nbformat logs schema quibbles of Colab notebooks
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
        cells = list(nb.cells)
    except Exception as exc:
        raise SubmissionError(
            f"{shown}: not a readable notebook ({type(exc).__name__}: {str(exc)[:120]})"
        ) from None
    finally:
        logger.setLevel(level)
    out = []
    for i, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        tags = cell.get("metadata", {}).get("tags", []) or []
        out.append(python_cell(i, cell.get("execution_count"), tuple(map(str, tags)), source))
    return out


def strip_magics(source: str) -> tuple[str, int]:
    """``source`` with IPython's shell (``!``), magic (``%``) and help (``?``) lines replaced
    by ``pass``; the number of lines replaced. A cell magic other than timing ones makes the
    whole cell non-Python (returned empty)."""
    lines = source.splitlines()
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    dropped = 0
    if first.startswith("%%"):
        magic = first[2:].split(maxsplit=1)[0] if len(first) > 2 else ""
        if magic not in PYTHON_CELL_MAGICS:
            return "", len([ln for ln in lines if ln.strip()])
        lines[lines.index(next(ln for ln in lines if ln.strip()))] = ""
        dropped += 1
    out, continued = [], False
    for line in lines:
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if continued:  # the continuation of a magic line ending with a backslash
            out.append("")
            dropped += 1
        elif (
            stripped.startswith(("!", "%"))
            or _SHELL_ASSIGN.match(line)
            or (stripped.endswith("?") and not stripped.startswith("#"))
        ):
            out.append(indent + "pass")
            dropped += 1
        else:
            out.append(line)
            continue
        continued = stripped.endswith("\\")
    return "\n".join(out) + "\n", dropped


def python_cell(index: int, count, tags: tuple[str, ...], source: str) -> Cell:
    try:
        safeparse.parse(source)  # deep code: the same refusal on every Python
        return Cell(index, count, tags, source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    stripped, dropped = strip_magics(source)
    cell = Cell(index, count, tags, stripped, dropped)
    try:
        safeparse.parse(stripped)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" at line {line}" if line else ""
        cell.error = f"{type(exc).__name__}{where}: {getattr(exc, 'msg', exc)}"
    return cell
