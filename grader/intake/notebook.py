"""Turning a student notebook (``.ipynb``) into exercise files, without running it.

Two kinds of notebooks are graded:

- *tagged*: cells tagged ``exercise-`` and an exercise's id hold that exercise's answer
  (``grade notebook`` hands out such a notebook);
- *untagged*, as students really write them: the reference's classes copied in, demo code,
  prints, ``!pip`` and ``%magic`` lines, the same class defined twice.

Either way the notebook is parsed, never executed. Every top-level statement of every code
cell is analysed with ``ast`` (``grader.intake.names``: the names it binds and reads, the same
on every Python); for each exercise the names the contract asks for (its ``names`` in the
pack) are looked up, and the statements they need (imports, the student's own copies of the
reference's classes, the config dicts and the module-level assignments and mutations they
depend on) are gathered by following names.
Everything else (demo code, prints, shell and magic lines) is left out. A name used by a
statement is resolved to its last definition *before* that statement (as it was when the
student ran the notebook top to bottom), so the class that one exercise's helper was written
against is not replaced by another exercise's class of the same name further down; the
contract's own names resolve to their last definition (a tagged cell's first). The selected
statements are written verbatim, in notebook order, to one exercise file per exercise, and
``Submission.notes`` says which cells were used. ``Submission.places`` keeps, for each file, where
its lines were in the cells (``cell 7``, by position in a notebook file; ``cell In [15]``, by
execution count, among a kernel's inputs), so that the judge names the cell and line of a
traceback, a syntax error or an unwritten answer (``grader.judge.snippets.in_cells``).
"""

from __future__ import annotations

import ast
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from grader.intake.beside import copy_beside
from grader.intake.cells import (
    CONTRACT,
    TAG_PREFIX,
    Cell,
    not_text,
    python_cell,
    read_cells,
    source_lines,
)
from grader.intake.names import statement_names
from grader.intake.submission import Places, Span, Submission
from grader.shared import safeparse
from grader.shared.registry import EXERCISES

# Method calls that change the object they are called on (``cfg.update(...)``).
MUTATING_METHODS = frozenset(
    "update pop popitem setdefault clear append extend insert remove add discard "
    "__setitem__ __delitem__".split()
)


# --- statements and the names they define and use ------------------------------------------


@dataclass
class Statement:
    order: int  # position in the notebook, over all code cells
    cell: Cell
    node: ast.stmt
    text: str
    lines: tuple[int, int] = (0, 0)  # first and last line in the cell
    defines: set[str] = field(default_factory=set)
    data: set[str] = field(default_factory=set)  # names bound by plain assignment
    uses_now: set[str] = field(default_factory=set)  # read when the statement runs
    uses_later: set[str] = field(default_factory=set)  # read by its functions when called
    mutates: set[str] = field(default_factory=set)
    is_import: bool = False
    is_future: bool = False


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _outer_nodes(node: ast.AST):
    """``node`` and its descendants, without entering function, class or lambda bodies."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(
            child
            for child in ast.iter_child_nodes(current)
            if not isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            )
        )


def _mutated(node: ast.stmt) -> set[str]:
    names: set[str] = set()
    for sub in _outer_nodes(node):
        targets: list[ast.expr] = []
        if isinstance(sub, ast.Assign):
            targets = list(sub.targets)
        elif isinstance(sub, ast.AugAssign | ast.AnnAssign):
            targets = [sub.target]
        elif isinstance(sub, ast.Delete):
            targets = list(sub.targets)
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and sub.func.attr in MUTATING_METHODS
        ):
            targets = [sub.func]
        for target in targets:
            for t in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
                if isinstance(t, ast.Attribute | ast.Subscript):
                    root = _root_name(t)
                    if root:
                        names.add(root)
    return names


def _method_receiver(node: ast.stmt) -> str | None:
    """``X`` for a statement ``X.method(...)`` or ``X.a.method(...)`` (e.g. ``mha.eval()``)."""
    if (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
    ):
        return _root_name(node.value.func.value)
    return None


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _statement(
    order: int, cell: Cell, node: ast.stmt, lines: list[str], shares_a_line: bool
) -> Statement:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    # Verbatim (comments kept) unless another statement sits on the same line (``a; b``).
    text = ast.unparse(node) if shares_a_line else "\n".join(lines[start - 1 : node.end_lineno])
    st = Statement(order, cell, node, text, (start, node.end_lineno or start))
    st.is_import = isinstance(node, ast.Import | ast.ImportFrom)
    st.is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
    try:
        names = statement_names(safeparse.plain_parse(text + "\n"))  # the text written to the file
        st.mutates = _mutated(node)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return st  # ``global`` after a use, absurdly deep code: not a usable statement
    st.defines = set(names.binds)
    st.uses_now = set(names.reads_now)
    if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        # A loop variable is not a use of an earlier value; ``x = f(x)`` is.
        st.uses_now -= st.defines
    st.uses_later = set(names.reads_later) - st.defines
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        st.data = set(st.defines)
    return st


def statements(cells: list[Cell]) -> list[Statement]:
    out: list[Statement] = []
    for cell in cells:
        if cell.error or not cell.source.strip():
            continue
        tree = safeparse.plain_parse(cell.source)
        lines = source_lines(cell.source)
        for k, node in enumerate(tree.body):
            if _is_main_guard(node):
                continue
            shares = (k > 0 and tree.body[k - 1].end_lineno == node.lineno) or (
                k + 1 < len(tree.body) and tree.body[k + 1].lineno == node.end_lineno
            )
            try:
                out.append(_statement(len(out), cell, node, lines, shares))
            except (RecursionError, MemoryError):
                continue  # code too deep to analyse is code no exercise can use
    return out


# --- choosing the statements of one exercise -----------------------------------------------


class _Index:
    def __init__(self, stmts: list[Statement]):
        self.stmts = stmts
        self.defs: dict[str, list[int]] = {}
        for st in stmts:
            for name in st.defines:
                self.defs.setdefault(name, []).append(st.order)

    def last_def(self, name: str, where: set[int] | None = None) -> int | None:
        found = [i for i in self.defs.get(name, []) if where is None or i in where]
        return found[-1] if found else None

    def resolve(self, name: str, at: int) -> int | None:
        """The definition of ``name`` that statement ``at`` saw: the last one before it, else
        (a helper written further down) the first one after it."""
        found = [i for i in self.defs.get(name, []) if i != at]
        before = [i for i in found if i < at]
        if before:
            return before[-1]
        return found[0] if found else None

    def next_def(self, name: str, after: int) -> int:
        later = [i for i in self.defs.get(name, []) if i > after]
        return later[0] if later else len(self.stmts)


def contract_definitions(
    stmts: list[Statement], exercise_id: str, index: _Index | None = None
) -> dict[str, int]:
    """The statement that is the answer for each name exercise ``exercise_id`` asks for (its
    last definition in a cell tagged for the exercise, else its last definition), for the names
    that are defined at all, in the contract's order."""
    index = index or _Index(stmts)
    tagged = {st.order for st in stmts if st.cell.exercise_tag() == exercise_id}
    answers = {}
    for name in CONTRACT[exercise_id]:
        i = index.last_def(name, tagged) if tagged else None
        if i is None:
            i = index.last_def(name)
        if i is not None:
            answers[name] = i
    return answers


def select(stmts: list[Statement], exercise_id: str) -> tuple[list[Statement], list[str]]:
    """The statements exercise ``exercise_id`` needs, in notebook order, and the contract
    names that were found."""
    index = _Index(stmts)
    chosen: set[int] = set()
    queue: list[int] = []

    def add(i: int) -> None:
        if i in chosen:
            return
        chosen.add(i)
        queue.append(i)
        st = stmts[i]
        # Later statements that change a value this one assigned, up to its next definition:
        # ``cfg = dict(base); cfg["drop_rate_emb"] = 0.1; cfg.pop("drop_rate")``.
        for name in st.data:
            end = index.next_def(name, i)
            for later in stmts[i + 1 : end]:
                if name in later.mutates or (
                    _method_receiver(later.node) == name and not later.defines
                ):
                    add(later.order)

    answers = contract_definitions(stmts, exercise_id, index)
    found = list(answers)
    for i in answers.values():
        add(i)
    while queue:
        i = queue.pop()
        st = stmts[i]
        for name in sorted(st.uses_now | st.uses_later):
            j = index.resolve(name, i)
            if j is not None:
                add(j)
    picked = sorted(chosen)
    futures = [stmts[i] for i in picked if stmts[i].is_future]
    return futures + [stmts[i] for i in picked if not stmts[i].is_future], found


# --- writing the exercise files ------------------------------------------------------------


def _render(
    notebook: str, exercise_id: str, chosen: list[Statement], ran: bool = False
) -> tuple[str, Places]:
    """The exercise file of the statements ``chosen``, and where its lines were in the cells."""
    # The notebook's name as a docstring holds it (a name may hold quotes, backslashes, bytes).
    name = json.dumps(notebook, ensure_ascii=False)[1:-1].encode("utf-8", "backslashreplace")
    lines = [f'"""Exercise {exercise_id}, taken from the notebook {name.decode()}."""', ""]
    places = Places()
    previous: Statement | None = None
    for st in chosen:
        if previous is None or st.cell is not previous.cell:
            lines += ["", f"# --- {st.cell.named(ran)} ---"]
        elif st.lines[0] > previous.lines[1] + 1:
            lines.append("")  # the blank line the notebook had between them
        text = st.text.split("\n")
        exact = text == source_lines(st.cell.source)[st.lines[0] - 1 : st.lines[1]]
        first = len(lines) + 1
        places.spans.append(
            Span(first, first + len(text) - 1, st.cell.place(ran), st.lines[0], exact)
        )
        lines += text
        previous = st
    return "\n".join(lines) + "\n", places


def _cells_text(cells: list[Cell], ran: bool) -> str:
    if ran:  # a kernel's inputs: what the notebook shows beside them
        return ", ".join(f"In [{c.execution_count}]" for c in cells)
    numbers = ", ".join(str(c.index) for c in cells)
    return f"cell {numbers}" if len(cells) == 1 else f"cells {numbers}"


def history_cells(inputs: list[str]) -> list[Cell]:
    """The inputs a kernel ran (IPython's raw input history, ``inputs[n]`` run as ``In [n]``;
    ``inputs[0]`` is IPython's empty placeholder) as untagged cells, in the order run."""
    return [python_cell(n, n, (), src) for n, src in enumerate(inputs) if n and src.strip()]


def notebook_submission(
    path: Path, name: str | None = None, scratch_in: Path | None = None, called: str | None = None
) -> Submission:
    """The exercises found in the notebook at ``path``, one file each in ``exercises/`` of a
    folder made in ``scratch_in``; ``SubmissionError`` for a corrupt or non-notebook file."""
    p = Path(path)
    submission = cells_submission(read_cells(p, called), name or p.name, p.name, False, scratch_in)
    if scratch_in is None or p.resolve().is_relative_to(Path(scratch_in).resolve()):
        # the student's own folder (not a batch folder of classmates' notebooks)
        copy_beside(p.parent, submission.root / "exercises", p.name)
    return submission


def cells_submission(
    cells: list[Cell], name: str, notebook: str, ran: bool = False, scratch_in: Path | None = None
) -> Submission:
    """The submission taken from ``cells`` of ``notebook`` (a notebook's cells, or with ``ran``
    the inputs a kernel ran, from ``history_cells``: then the notes name them ``In [n]``)."""
    stmts = statements(cells)
    tmp = tempfile.TemporaryDirectory(prefix="notebook-", dir=scratch_in)
    folder = Path(tmp.name).resolve() / "exercises"  # absolute: workers run elsewhere
    folder.mkdir()
    (folder / "__init__.py").write_text('"""Exercises taken from a notebook."""\n')
    files: dict[str, Path] = {}
    places: dict[str, Places] = {}
    absent: dict[str, str] = {}  # exercise id -> where its names were looked for
    problems: dict[str, str] = {}  # exercise id -> why its cell cannot be a file
    notes: list[str] = []
    broken = [c for c in cells if c.error]
    any_tags = any(c.exercise_tag() for c in cells)
    for ex in EXERCISES:
        target = folder / ex.filename
        chosen, found = select(stmts, ex.id)
        tagged_broken = [c for c in broken if c.exercise_tag() == ex.id]
        unparsed = tagged_broken or [c for c in broken if c.defines_textually(CONTRACT[ex.id])]
        if unparsed and (tagged_broken or not found):
            # The answer is in a cell that does not parse: grade that cell as is, so that the
            # student sees the syntax error and its line; one that is not text is refused.
            if not_text(unparsed[-1].source):
                why = f"{unparsed[-1].named(ran)}: {unparsed[-1].error}; retype that line"
                problems[ex.id] = why
                continue
            target.write_text(unparsed[-1].source, encoding="utf-8")
            files[ex.id] = target
            places[ex.filename] = Places([Span(1, None, unparsed[-1].place(ran), 1)])
            notes.append(
                f"{ex.id}: {unparsed[-1].named(ran)} is not valid Python "
                f"({unparsed[-1].error}); it was graded as written"
            )
            continue
        if not found:
            wanted = ", ".join(CONTRACT[ex.id])
            absent[ex.id] = "the cells run so far" if ran else "the notebook"
            notes.append(f"{ex.id}: no definition of {wanted} found in {absent[ex.id]}")
            continue
        text, places[ex.filename] = _render(notebook, ex.id, chosen, ran)
        for wanted, i in contract_definitions(stmts, ex.id).items():  # not ``name``: ours
            places[ex.filename].names[wanted] = (stmts[i].cell.place(ran), stmts[i].node.lineno)
        target.write_text(text, encoding="utf-8")
        files[ex.id] = target
        used = sorted({st.cell.index: st.cell for st in chosen}.values(), key=lambda c: c.index)
        how = (
            f"tagged {TAG_PREFIX}{ex.id}"
            if any(c.exercise_tag() == ex.id for c in used)
            else ("untagged" if not any_tags else "no cell tagged for it")
        )
        missing = [n for n in CONTRACT[ex.id] if n not in found]
        extra = f"; {', '.join(missing)} not found" if missing else ""
        how = "" if ran else f" ({how})"
        notes.append(f"{ex.id}: graded from {_cells_text(used, ran)}{how}{extra}")
    for cell in broken:
        if not any(cell.named(ran) in n for n in [*notes, *problems.values()]):
            notes.append(f"{cell.named(ran)} is not valid Python ({cell.error}) and was skipped")
    dropped = sum(c.dropped_lines for c in cells)
    if dropped:
        notes.append(f"{dropped} shell (!), magic (%) or help (?) line(s) were left out")
    return Submission(
        name=name,
        root=folder.parent,
        files=files,
        notes=notes,
        _tmp=tmp,
        places=places,
        absent=absent,
        problems=problems,
    )
