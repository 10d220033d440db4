"""Disguised copies of an answer, as a student who copies tries to hide it: every variable,
parameter and helper renamed, comments added, the code reformatted (``ast.unparse``: other
quotes, line breaks and spacing) and the top-level functions put in another order. The copy
still runs the same. Used by the similarity tests and ``bench/bench_similarity.py``."""

from __future__ import annotations

import ast
import io
import random
import tokenize

from grader.analysis.tokens import CONTRACT_NAMES, _Roles

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "omega",
    "kappa",
    "sigma",
    "theta",
    "zeta",
    "rho",
    "tmp",
    "val",
    "thing",
    "item",
    "obj",
    "res",
    "data",
    "foo",
    "bar",
    "baz",
]
REMARKS = [
    "# my own solution",
    "# TODO: clean up",
    "# this took a while",
    "# see lecture 4",
    "# works now",
    "# careful with shapes here",
    "# NOTE: checked by hand",
]


def reorder_functions(source: str) -> str:
    """The module with its top-level functions in reverse order (each in another's slot)."""
    tree = ast.parse(source)
    slots = [i for i, node in enumerate(tree.body) if isinstance(node, ast.FunctionDef)]
    functions = [tree.body[i] for i in slots]
    for i, node in zip(slots, reversed(functions), strict=True):
        tree.body[i] = node
    return ast.unparse(tree) + "\n"


def rename_variables(source: str, rng: random.Random) -> str:
    """Every name the source binds (not the contract's names) replaced by another."""
    roles = _Roles(source.splitlines())
    roles.visit(ast.parse(source))
    names = sorted(n for n in roles.bound if n not in CONTRACT_NAMES and not n.startswith("__"))
    new = {n: f"{rng.choice(WORDS)}_{i}" for i, n in enumerate(names)}
    at = {(line, col) for name, line, col in roles.names if name in new}
    lines = source.splitlines(keepends=True)
    edits = []
    previous = ""
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in new:
            if tok.start in at or previous in ("def", "class"):
                edits.append((tok.start, tok.end, new[tok.string]))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.string
    for (row, col), (_, end), text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end:]
    return "".join(lines)


def add_comments(source: str, rng: random.Random) -> str:
    """A comment line above about half of the statements."""
    starts = {node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.stmt)}
    out = []
    for number, line in enumerate(source.splitlines(keepends=True), start=1):
        if number in starts and rng.random() < 0.5:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{rng.choice(REMARKS)}\n")
        out.append(line)
    return "".join(out)


def disguise(source: str, seed: int = 0) -> str:
    """A disguised copy of ``source`` (which must parse)."""
    rng = random.Random(seed)
    text = reorder_functions(source)
    text = rename_variables(text, rng)
    return add_comments(text, rng)
