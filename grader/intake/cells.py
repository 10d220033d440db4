"""Reading a notebook's code cells, without running them: IPython's shell (``!``), magic
(``%``) and help (``?``) lines are left out, and a cell that does not parse says why.
``grader.intake.notebook`` then picks each exercise's statements from these cells.

A notebook is the student's JSON, whatever its shape: a cell that is not an object, a source
that is not text, tags or an execution count of another type are read as far as they make
sense, and a cell whose source no file can hold (a lone surrogate, JSON's ``"\\ud800"``, or a
NUL) is a cell that does not parse, never a crash. Lines are counted as Python counts them
(``source_lines``): a U+2028 or a form feed in a comment is not a line break.
"""

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

    def defines_textually(self, names: tuple[str, ...]) -> bool:
        """Whether a line of the cell looks like it defines one of ``names`` (for a cell that
        does not parse)."""
        return any(
            re.search(
                rf"^\s*(def|class)\s+{re.escape(n)}\b|^\s*{re.escape(n)}\s*(:[^=]*)?=",
                self.source,
                re.M,
            )
            for n in names
        )


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
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise SubmissionError(f"{shown}: not a readable notebook (cell {i} holds no text)")
        metadata = cell.get("metadata")
        tags = metadata.get("tags") if isinstance(metadata, dict) else None
        tags = [tags] if isinstance(tags, str) else tags if isinstance(tags, list) else []
        count = cell.get("execution_count")
        count = count if type(count) is int else None
        out.append(python_cell(i, count, tuple(map(str, tags)), source))
    return out


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NOT_TEXT = re.compile("[\x00\ud800-\udfff]")


def source_lines(source: str) -> list[str]:
    """The lines of ``source`` as Python numbers them (``str.splitlines`` also breaks at a form
    feed, U+2028 and other characters that Python reads inside a line)."""
    lines = _LINE_BREAK.split(source)
    return lines[:-1] if lines[-1] == "" else lines


def not_text(source: str) -> str | None:
    """Why no file can hold ``source`` (a NUL, or a lone surrogate: the JSON escape
    ``"\\ud800"`` read), in the student's words; None when it is text."""
    found = _NOT_TEXT.search(source)
    if found is None:
        return None
    line = len(_LINE_BREAK.findall(source, 0, found.start())) + 1
    if found[0] == "\x00":
        return f"line {line} holds a NUL character (\\x00), which is not text"
    return f"line {line} holds a lone surrogate (\\u{ord(found[0]):04x}), which is not text"


def strip_magics(source: str) -> tuple[str, int]:
    """``source`` with IPython's shell (``!``), magic (``%``) and help (``?``) lines replaced
    by ``pass``; the number of lines replaced. A cell magic other than timing ones makes the
    whole cell non-Python (returned empty)."""
    lines = source_lines(source)
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
    """The cell ``source`` as the grader reads it: parsed, without its magics if it does not
    parse with them, or with the ``error`` that says why it cannot be read."""
    if _NOT_TEXT.search(source):  # a surrogate pair split over two strings is one character
        source = source.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        problem = not_text(source)
        if problem:
            return Cell(index, count, tags, source, error=problem)
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
