"""Python source as a sequence of normalized tokens, for finding copied answers.

What a student can change without changing what the code does is normalized away, so that a
copy stays a copy after it:

- comments, blank lines, line breaks inside brackets, indentation width, docstrings and other
  bare string statements, type annotations and a trailing comma before a closing bracket are
  dropped; ``;`` between statements is a line break;
- every name the file binds itself (variables, parameters, loop and comprehension variables,
  its own functions and classes) becomes ``V``, so renaming them changes nothing; the names the
  exercise's contract fixes (its ``names`` in the pack) and those the pack's shared code
  defines (the packages of its ``shared`` list: the course's reference classes and configs)
  are kept, so that pasting the shared classes in instead of importing them changes nothing
  either;
- numbers and strings are written by value (``0x10`` is ``16``, ``'a'`` is ``"a"``); a string
  that is not a short identifier-like key (``"emb_dim"``) becomes ``S``.

What the student cannot rename stays as written: attribute names (``W_query``, ``weight``),
keyword argument names, imported and built-in names, keywords and operators. Each token keeps
its character span in the source, to highlight matches.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import io
import keyword
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from grader.shared import safeparse
from grader.shared.course import packs
from grader.shared.registry import EXERCISES

VARIABLE = "V"
STRING = "S"
CONTRACT_NAMES = frozenset(n for e in EXERCISES for n in e.names)
SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
CLOSERS = {")", "]", "}"}
BUILTINS = frozenset(dir(builtins))
NEWLINE, INDENT, DEDENT = "<newline>", "<indent>", "<dedent>"  # cannot be Python tokens


@dataclass(frozen=True)
class Token:
    text: str  # the normalized token
    start: int  # character offsets of the original token in the source
    end: int
    segment: int = 0  # which top-level statement (definition) of the source it belongs to


def package_files(package: str, beside: Path | None = None) -> list[Path]:
    """The ``.py`` files of a package (or the file of a module), found without importing it (a
    pack's shared code may import torch, which a batch's main process never needs): in the
    folder ``beside`` (a pack's parent folder) if it is there, else where it is installed."""
    if beside is not None:
        here = beside.joinpath(*package.split("."))
        if here.is_dir():
            return sorted(here.glob("*.py"))
        if here.with_suffix(".py").is_file():
            return [here.with_suffix(".py")]
    if "." in package:
        return []  # finding a submodule's spec would import its parent
    spec = importlib.util.find_spec(package)
    if spec is not None and not spec.submodule_search_locations and spec.origin:
        return [Path(spec.origin)] if spec.origin.endswith(".py") else []
    folders = (spec.submodule_search_locations or []) if spec else []
    return [path for folder in folders for path in sorted(Path(folder).glob("*.py"))]


def shared_packages() -> list[tuple[str, list[Path]]]:
    """Each package that the packs in use share (their ``shared`` lists, in order: the code
    every answer may use or copy, such as a course's reference and its handed-out stubs) with
    its ``.py`` files."""
    seen: dict[str, list[Path]] = {}
    for pack in packs():
        for package in pack.shared:
            if package not in seen:
                seen[package] = package_files(package, pack.folder.parent)
    return list(seen.items())


@cache
def kept_names() -> frozenset[str]:
    """The names nobody renames: the contract's, and those the packs' shared code defines at
    the top of its files (read from them, never imported; ``_private`` names left out)."""
    names = set(CONTRACT_NAMES)
    for _, files in shared_packages():
        for path in files:
            for node in safeparse.plain_parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef | ast.FunctionDef):
                    found = {node.name}
                elif isinstance(node, ast.Assign):
                    found = {t.id for t in node.targets if isinstance(t, ast.Name)}
                else:
                    continue
                names.update(n for n in found if not n.startswith("_") or n.startswith("__"))
    return frozenset(names)


class _Roles(ast.NodeVisitor):
    """Where the source's own names, docstrings and annotations are (character positions)."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.bound: set[str] = set()
        self.names: list[tuple[str, int, int]] = []  # (name, line, col) of each ast.Name/arg
        self.dropped: list[tuple[int, int, int, int, bool]] = []  # docstrings, annotations

    def _col(self, line: int, byte_col: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def _span(self, node: ast.expr | ast.stmt, annotation: bool = True) -> None:
        end_line = getattr(node, "end_lineno", None) or node.lineno
        end_col = getattr(node, "end_col_offset", None) or node.col_offset
        self.dropped.append(
            (
                node.lineno,
                self._col(node.lineno, node.col_offset),
                end_line,
                self._col(end_line, end_col),
                annotation,
            )
        )

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store | ast.Del):
            self.bound.add(node.id)
        self.names.append((node.id, node.lineno, self._col(node.lineno, node.col_offset)))

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)
        self.names.append((node.arg, node.lineno, self._col(node.lineno, node.col_offset)))
        if node.annotation is not None:
            self._span(node.annotation)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.bound.add(node.name)
        if node.returns is not None:
            self._span(node.returns)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._span(node.annotation)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            self._span(node.value, annotation=False)  # a docstring, or a string as a comment
        else:
            self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)


def _offsets(source: str) -> list[int]:
    """Where each line starts (lines as ``tokenize`` reads them: ending in ``\\n``)."""
    starts, total = [0], 0
    for line in source.split("\n"):
        total += len(line) + 1
        starts.append(total)
    return starts


def _literal(text: str, kind: int) -> str:
    if kind == tokenize.NUMBER:
        for convert in (lambda t: int(t, 0), float):
            try:
                return repr(convert(text))
            except ValueError:
                pass
    elif text[0] in "'\"" and "\\" not in text:  # a plain string: no prefix, no escapes
        quote = 3 if text[:3] in ('"""', "'''") and len(text) >= 6 else 1
        value = text[quote:-quote]
        return repr(value) if value.isidentifier() and len(value) <= 32 else STRING
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return STRING if kind == tokenize.STRING else text
    if isinstance(value, str):
        return repr(value) if value.isidentifier() and len(value) <= 32 else STRING
    if isinstance(value, bytes):
        return STRING
    return repr(value)


def _raw_tokens(source: str) -> list[tokenize.TokenInfo]:
    out: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            out.append(tok)
    except (tokenize.TokenError, SyntaxError):
        pass  # what was read before the error still counts
    return out


def normalize(source: str) -> list[Token]:
    """The normalized tokens of ``source`` (any text: what does not parse is tokenized as far
    as it goes, with every name that is not a keyword or an attribute taken as a variable)."""
    lines = source.split("\n")
    roles = _Roles(lines)
    try:
        roles.visit(safeparse.parse(source))
        parsed = True
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        parsed = False
    kept = kept_names()
    variables = {
        (line, col) for name, line, col in roles.names if name in roles.bound and name not in kept
    }
    starts = _offsets(source)

    def offset(row: int, col: int) -> int:
        return starts[min(row - 1, len(starts) - 1)] + col

    dropped = sorted((offset(a, b), offset(c, d), ann) for a, b, c, d, ann in roles.dropped)
    dropped.append((1 << 62, 1 << 62, False))
    at = 0  # the first span that does not end before the current token
    out: list[Token] = []
    depth = segment = 0
    for tok in _raw_tokens(source):
        if tok.type in SKIPPED:
            continue
        start, end = offset(*tok.start), offset(*tok.end)
        while dropped[at][1] <= start:
            at += 1
        first, last, annotation = dropped[at]
        structure = tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
        if first <= start and end <= last and not structure:
            if annotation and start == first and out and out[-1].text in (":", "->"):
                out.pop()  # the ``:`` or ``->`` that introduced an annotation
            continue
        text = _text(tok, out, variables, parsed, kept)
        if text is None:
            continue
        depth += (tok.type == tokenize.INDENT) - (tok.type == tokenize.DEDENT)
        if text in CLOSERS and out and out[-1].text == ",":
            out.pop()  # a trailing comma: black adds them, nothing changes
        out.append(Token(text, start, end, segment))
        if depth == 0 and text in (NEWLINE, DEDENT):
            segment += 1  # the next top-level statement: definitions can be reordered
    return _without_double_parentheses(out)


def _text(
    tok: tokenize.TokenInfo, out: list[Token], variables: set, parsed: bool, kept: frozenset[str]
) -> str | None:
    """The normalized text of ``tok`` after the tokens ``out``; None to leave it out."""
    if tok.type == tokenize.NEWLINE or tok.string == ";":
        if not out or out[-1].text in (NEWLINE, INDENT, DEDENT):
            return None  # nothing left of that statement (a docstring, say)
        return NEWLINE
    if tok.type == tokenize.INDENT:
        return INDENT
    if tok.type == tokenize.DEDENT:
        return DEDENT
    if tok.type == tokenize.NAME:
        return _name(tok, out[-1].text if out else "", variables, parsed, kept)
    if tok.type in (tokenize.NUMBER, tokenize.STRING):
        return _literal(tok.string, tok.type)
    return tok.string


def _without_double_parentheses(tokens: list[Token]) -> list[Token]:
    """``f((x for x in y))`` as ``f(x for x in y)``: a pair of parentheses directly inside
    another pair says nothing."""
    match: dict[int, int] = {}
    stack: list[int] = []
    for i, t in enumerate(tokens):
        if t.text == "(":
            stack.append(i)
        elif t.text == ")" and stack:
            match[stack.pop()] = i
    drop = {
        j
        for i, close in match.items()
        if i > 0 and match.get(i - 1) == close + 1
        for j in (i, close)
    }
    return [t for i, t in enumerate(tokens) if i not in drop] if drop else tokens


def _name(
    tok: tokenize.TokenInfo, previous: str, variables: set, parsed: bool, kept: frozenset[str]
) -> str:
    word = tok.string
    if keyword.iskeyword(word):
        return word
    if previous in ("def", "class"):
        return word if word in kept else VARIABLE
    if word in kept:
        return word
    if parsed:
        return VARIABLE if tok.start in variables else word
    return word if previous == "." or word in BUILTINS else VARIABLE
