"""Parsing student code in the grader's own processes, with the same outcome on every Python.

``ast.parse`` of code nested absurdly deep (``x = 1+1+...+1`` with 200,000 terms) crashes
Python 3.10 with a segmentation fault, and Python 3.11-3.13 refuse it at different depths
(about 3,000 in 3.11 and 3.12, about 10,000 in 3.13). A grade must not depend on that, so the
grader sets its own bound, far below every Python's and far above any real answer: a syntax
tree at most ``MAX_DEPTH`` nodes deep. Deeper code raises ``RecursionError`` (as Python's own
refusal does) on every Python. On 3.10 the source is first measured with ``tokenize`` (pure
Python, no recursion), and code that may be too deep to build is refused before it is parsed.

And one parse at a time in a process (``plain_parse``): CPython 3.11 and 3.12 keep the depth
count of the tree they build in one state per interpreter, so two threads parsing at once (a
program grading several submissions in threads, ``SandboxStarter`` allows it) may make one of
them fail with ``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905).
"""

from __future__ import annotations

import ast
import io
import os
import sys
import threading
import tokenize

MAX_DEPTH = 200  # nodes from a module to its deepest leaf; Python allows 200 nested brackets
_UNPARSED_BOUND = 20_000  # 3.10: a line whose bound is above this is never given to ast.parse
_DEEPENING_WORDS = {"lambda", "not", "if", "else", "await", "and", "or", "in", "is", "yield"}
# Reentrant: a finalizer the garbage collector runs during a parse may parse in the same thread.
_ONE_AT_A_TIME = threading.RLock()


def _new_lock_after_fork() -> None:
    """A forked child starts with the lock free: a thread of the parent that held it is not
    in the child to let it go."""
    global _ONE_AT_A_TIME
    _ONE_AT_A_TIME = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock_after_fork)


def plain_parse(source: str) -> ast.Module:
    """``ast.parse(source)``, one at a time in this process (module docstring); for source
    already refused or accepted by ``parse``, or the grader's own."""
    with _ONE_AT_A_TIME:
        return ast.parse(source)


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, or ``RecursionError`` for code nested deeper than MAX_DEPTH
    (with the same message on every Python: Python's own refusals, a ``RecursionError`` or a
    ``MemoryError`` when its parser's stack overflows, are said in the grader's words)."""
    too_deep = f"code nested deeper than {MAX_DEPTH} levels"
    if sys.version_info < (3, 11) and depth_bound(source) > _UNPARSED_BOUND:
        raise RecursionError(too_deep)
    try:
        tree = plain_parse(source)
    except (RecursionError, MemoryError):
        raise RecursionError(too_deep) from None
    if tree_depth(tree) > MAX_DEPTH:
        raise RecursionError(too_deep)
    return tree


def tree_depth(tree: ast.AST) -> int:
    """The depth of ``tree`` (a walk with a stack of its own: no recursion)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def depth_bound(source: str) -> int:
    """An upper bound, from the tokens alone, of how deep one logical line's syntax tree can
    be: per open bracket, the operators and deepening keywords since its last comma, summed
    over the brackets open, plus the indentation. Flat data (long lists of numbers) stays low;
    chains of operators, attributes or calls count one a link."""
    best = 0
    indent = 0
    levels = [0]
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            kind, text = tok.type, tok.string
            if kind == tokenize.OP:
                if text in "([{":
                    levels[-1] += 1
                    levels.append(0)
                elif text in ")]}":
                    if len(levels) > 1:
                        levels.pop()
                elif text == ",":
                    levels[-1] = 0
                else:
                    levels[-1] += 1
            elif kind == tokenize.NAME and text in _DEEPENING_WORDS:
                levels[-1] += 1
            elif kind == tokenize.INDENT:
                indent += 1
            elif kind == tokenize.DEDENT:
                indent -= 1
            elif kind == tokenize.NEWLINE:
                levels = [0]
            best = max(best, sum(levels) + len(levels) + 3 * indent)
    except (tokenize.TokenError, SyntaxError):
        pass  # ast.parse reports the error; what came before it is measured
    return best
