"""A small AST mutator for an exercise's solution: each mutant is one small change to the source.

``mutants(source)`` lists every mutant of a module, in source order, each a valid module that
differs from ``ast.unparse`` of the original (comments and layout are not kept: the diff of a
mutant is against the unparsed original). The operators, named by ``Mutant.kind``:

- ``operator``: ``+ - * / // % ** @`` replaced (``+``<->``-``, ``*``->``/``, ``/``->``*``/``//``,
  ...), in expressions and augmented assignments; ``and``<->``or``; unary ``-`` and ``not``
  dropped;
- ``compare``: ``==``<->``!=``, ``<``<->``<=``, ``>``<->``>=``, ``<``<->``>``, ``in``<->``not in``,
  ``is``<->``is not``; the condition of an ``if`` (statement, expression or comprehension)
  negated;
- ``constant``: numbers +1 and -1 (so 0<->1), floats also +0.1 (a rate), ``True``<->``False``,
  ``None`` -> ``0``;
- ``default``: the same changes to a default argument's value, and the first default removed;
- ``transpose``: ``.T``/``.mT`` dropped, ``.transpose(...)``/``.t()``/``.permute(...)`` dropped;
- ``swap``: two neighbouring positional arguments of a call swapped (not those of
  ``.transpose(a, b)``, which is ``.transpose(b, a)``), or the values of two neighbouring keyword
  arguments;
- ``keyword``: a keyword argument removed (its default is used), or a ``cfg["key"]``-style
  subscript reading another key the module reads from the same name (one sharing its first
  word, ``n_heads``/``n_layers``, and the next one in order of first use);
- ``return``: a returned value replaced by ``None``;
- ``statement``: a statement replaced by ``pass``, or a ``with`` block run without its context
  manager;
- ``alias``, ``attribute``, ``method``, ``config``, ``flag``, ``wrap``, ``order``, ``dict``,
  ``slice``: the student-minded operators of ``grader.authoring.mutops`` (a copy dropped or
  made in place, ``self.W_query`` -> ``self.W_key``, ``view`` -> ``reshape``, ``cfg["emb_dim"]``
  -> a literal the course's ``Vocabulary`` gives, ``bias=`` flipped, ``nn.Parameter(w)`` ->
  ``w``, two statements swapped, ...).

Docstrings and imports are never mutated, nor the functions a caller names in ``skip``. Only
the standard library is used.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import Any

from grader.authoring import mutops
from grader.authoring.mutops import NEW_KINDS, NO_VOCABULARY, Vocabulary

BINOPS: dict[type, tuple[type, ...]] = {
    ast.Add: (ast.Sub,),
    ast.Sub: (ast.Add,),
    ast.Mult: (ast.Div,),
    ast.Div: (ast.Mult, ast.FloorDiv),
    ast.FloorDiv: (ast.Div,),
    ast.Mod: (ast.FloorDiv,),
    ast.Pow: (ast.Mult,),
    ast.MatMult: (ast.Mult,),
}
COMPARES: dict[type, tuple[type, ...]] = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
KINDS = (
    *("operator", "compare", "constant", "default", "transpose", "swap", "keyword", "return"),
    *("statement", *NEW_KINDS),
)  # every operator's kind, the student-minded ones last
TRANSPOSE_ATTRIBUTES = ("T", "mT")
TRANSPOSE_METHODS = ("transpose", "t", "permute")
# Methods whose two arguments can be swapped without any effect: x.transpose(1, 2) is
# x.transpose(2, 1). Swapping them would only add mutants that are equivalent by definition.
SYMMETRIC_METHODS = ("transpose", "swapaxes", "swapdims")

# An edit changes the node it is given, in a copy of the tree; ``replace`` puts a list of
# statements or one node (``None``: removed) where the node was.
Replace = Callable[[ast.AST | list[ast.stmt] | None], None]
# An edit is made for one node and given that node back, of the kind it was made for: its
# parameter is ``Any`` (an ``ast.Compare`` edit reads ``.ops``, a call's ``.keywords``).
Edit = Callable[[Any, Replace], None]


@dataclass(frozen=True)
class Mutant:
    """One mutant of a module: what changed (``kind``, ``description``, ``line`` of the original)
    and the mutated source."""

    kind: str
    description: str
    line: int
    source: str
    original: str  # ast.unparse of the unmutated module

    def diff(self) -> str:
        """The unified diff from the unparsed original to the mutant."""
        lines = difflib.unified_diff(
            self.original.splitlines(),
            self.source.splitlines(),
            "original",
            "mutant",
            n=1,
            lineterm="",
        )
        return "\n".join(list(lines)[2:])


def nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, depth first, in source order (the same order in any copy)."""
    out: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _frozen(tree: ast.Module, skip: Collection[str] = ()) -> set[int]:
    """The positions (in ``nodes`` order) of the nodes never mutated: docstrings, imports, and
    the functions (and methods) named in ``skip``."""
    order = {id(n): i for i, n in enumerate(nodes(tree))}
    frozen: set[int] = set()
    for node in nodes(tree):
        if isinstance(node, ast.FunctionDef) and node.name in skip:
            frozen |= {order[id(n)] for n in nodes(node)}
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                frozen |= {order[id(n)] for n in nodes(first)}
        if isinstance(node, ast.Import | ast.ImportFrom):
            frozen |= {order[id(n)] for n in nodes(node)}
    return frozen


def _parents(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    """id(node) -> (parent, field, index in the field's list or None)."""
    out: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in nodes(tree):
        for name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        out[id(item)] = (parent, name, i)
            elif isinstance(value, ast.AST):
                out[id(value)] = (parent, name, None)
    return out


def _replacer(tree: ast.AST, node: ast.AST) -> Replace:
    parent, name, index = _parents(tree)[id(node)]

    def replace(new: ast.AST | list[ast.stmt] | None) -> None:
        if index is None:
            setattr(parent, name, new)
        else:
            items = getattr(parent, name)
            items[index : index + 1] = (
                new if isinstance(new, list) else [] if new is None else [new]
            )

    return replace


def _set(attr: str, value: object) -> Edit:
    return lambda node, _: setattr(node, attr, value)


def _constant_changes(value: object) -> list[object]:
    if value is None:
        return [0]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1]
    if isinstance(value, float):
        return [round(value + 1, 10), round(value - 1, 10), round(value + 0.1, 10)]
    return []  # strings and bytes: not mutated


def _swap(items: str, i: int) -> Edit:
    def edit(node: ast.AST, _: Replace) -> None:
        seq = getattr(node, items)
        if items == "keywords":
            seq[i].value, seq[i + 1].value = seq[i + 1].value, seq[i].value
        else:
            seq[i], seq[i + 1] = seq[i + 1], seq[i]

    return edit


def _remove_keyword(i: int) -> Edit:
    return lambda node, _: node.keywords.pop(i)


def _remove_first_default(node: Any, _: Replace) -> None:
    node.args.defaults.pop(0)


def _subscript_keys(tree: ast.AST) -> dict[str, list[str]]:
    """For each name read as ``name["key"]``, the string keys it is read with, in order."""
    keys: dict[str, list[str]] = {}
    for n in nodes(tree):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
        ):
            seen = keys.setdefault(n.value.id, [])
            if n.slice.value not in seen:
                seen.append(n.slice.value)
    return keys


def _confusable(key: str, known: list[str]) -> list[str]:
    """The keys ``key`` is replaced with: those that share its first word (``drop_rate_emb``,
    ``drop_rate_attn``; ``n_heads``, ``n_layers``), and the next key in order of first use."""
    following = known[(known.index(key) + 1) % len(known)] if key in known else None
    similar = [k for k in known if k != key and k.split("_")[0] == key.split("_")[0]]
    extra = [following] if following is not None and following not in (key, *similar) else []
    return similar + extra


def _in_default(tree: ast.AST) -> set[int]:
    """ids of the nodes that are (inside) a default argument value."""
    out: set[int] = set()
    for n in nodes(tree):
        if isinstance(n, ast.arguments):
            for d in [*n.defaults, *(k for k in n.kw_defaults if k is not None)]:
                out |= {id(m) for m in nodes(d)}
    return out


def _edits(node: ast.AST, keys: dict[str, list[str]], default: bool) -> Iterator[tuple]:
    """(kind, description, edit) for every mutation of ``node`` itself."""
    src = ast.unparse(node) if not isinstance(node, ast.operator | ast.cmpop) else ""
    short = src if len(src) <= 60 else src[:57] + "..."
    yield from _expression_edits(node, short, default)
    yield from _call_edits(node, short, keys)
    yield from _statement_edits(node, short)


def _expression_edits(node: ast.AST, short: str, default: bool) -> Iterator[tuple]:
    """Operators, comparisons, constants and transposing attributes changed."""
    if isinstance(node, ast.BinOp | ast.AugAssign):
        for new in BINOPS.get(type(node.op), ()):
            yield (
                "operator",
                f"{type(node.op).__name__} -> {new.__name__} in {short}",
                _set("op", new()),
            )
    elif isinstance(node, ast.BoolOp):
        swapped = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "operator", f"and/or swapped in {short}", _set("op", swapped)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Not):
        yield (
            "operator",
            f"unary {type(node.op).__name__} dropped in {short}",
            (lambda n, replace: replace(n.operand)),
        )
    elif isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in COMPARES.get(type(op), ()):

                def edit(n: Any, _: Replace, i: int = i, new: type = new) -> None:
                    n.ops[i] = new()

                yield "compare", f"{type(op).__name__} -> {new.__name__} in {short}", edit
    elif isinstance(node, ast.Constant):
        for changed in _constant_changes(node.value):
            yield (
                "default" if default else "constant",
                f"{node.value!r} -> {changed!r}",
                _set("value", changed),
            )
    elif isinstance(node, ast.Attribute) and node.attr in TRANSPOSE_ATTRIBUTES:
        yield "transpose", f".{node.attr} dropped in {short}", lambda n, r: r(n.value)


def _call_edits(node: ast.AST, short: str, keys: dict[str, list[str]]) -> Iterator[tuple]:
    """A call's arguments swapped or dropped, a confusable key, a default removed."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in TRANSPOSE_METHODS:
            yield "transpose", f".{func.attr}() dropped in {short}", lambda n, r: r(n.func.value)
        symmetric = isinstance(func, ast.Attribute) and func.attr in SYMMETRIC_METHODS
        for i in range(0 if symmetric else len(node.args) - 1):
            if ast.dump(node.args[i]) != ast.dump(node.args[i + 1]):
                yield "swap", f"arguments {i + 1} and {i + 2} swapped in {short}", _swap("args", i)
        for i in range(len(node.keywords) - 1):
            a, b = node.keywords[i], node.keywords[i + 1]
            if a.arg and b.arg and ast.dump(a.value) != ast.dump(b.value):
                yield "swap", f"values of {a.arg}= and {b.arg}= swapped", _swap("keywords", i)
        for i, kw in enumerate(node.keywords):
            if kw.arg:
                yield "keyword", f"keyword {kw.arg}= removed in {short}", _remove_keyword(i)
    elif (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        for other in _confusable(node.slice.value, keys.get(node.value.id, [])):
            yield (
                "keyword",
                f"{short} -> {node.value.id}[{other!r}]",
                _set("slice", ast.Constant(other)),
            )
    elif isinstance(node, ast.FunctionDef | ast.Lambda) and node.args.defaults:
        yield (
            "default",
            f"the default of {node.args.args[-len(node.args.defaults)].arg} removed",
            (_remove_first_default),
        )


def _statement_edits(node: ast.AST, short: str) -> Iterator[tuple]:
    """Conditions negated, a return emptied, a statement or ``with`` deleted."""
    if isinstance(node, ast.comprehension):
        for i, cond in enumerate(node.ifs):

            def negate(n: Any, _: Replace, i: int = i) -> None:
                n.ifs[i] = ast.UnaryOp(ast.Not(), n.ifs[i])

            yield "compare", f"condition negated: if {ast.unparse(cond)}", negate
    if isinstance(node, ast.If | ast.While | ast.IfExp):
        yield (
            "compare",
            f"condition negated: {ast.unparse(node.test)}",
            _set("test", ast.UnaryOp(ast.Not(), node.test)),
        )
    if isinstance(node, ast.Return) and node.value is not None:
        yield (
            "return",
            f"return None instead of {short.removeprefix('return ')}",
            _set("value", ast.Constant(None)),
        )
    if isinstance(node, ast.With):
        yield "statement", f"with {ast.unparse(node.items[0])} removed", lambda n, r: r(n.body)
    if isinstance(node, ast.stmt) and not isinstance(node, ast.Pass):
        first = short.splitlines()[0] if short else type(node).__name__
        yield "statement", f"deleted: {first}", lambda n, r: r(ast.Pass())


def _all_edits(node: ast.AST, keys: dict, default: bool, ctx: mutops.Context, frozen: set[int]):
    yield from _edits(node, keys, default)
    src = ast.unparse(node) if not isinstance(node, ast.operator | ast.cmpop) else ""
    short = src if len(src) <= 60 else src[:57] + "..."
    yield from mutops.edits(node, ctx, keys, frozen, short)


def mutants(
    source: str,
    kinds: Collection[str] | None = None,
    skip: Collection[str] = (),
    vocabulary: Vocabulary = NO_VOCABULARY,
) -> list[Mutant]:
    """Every mutant of ``source`` (a module), in source order, without duplicates; only those
    of ``kinds`` when given, and none in the functions named in ``skip``; ``vocabulary`` gives
    the ``config`` operator its literals and confusions."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    frozen = _frozen(tree, skip)
    every = nodes(tree)
    frozen_ids = {id(every[i]) for i in frozen}
    ctx = mutops.context(tree, vocabulary)
    keys = _subscript_keys(tree)
    defaults = _in_default(tree)
    seen = {original}
    out: list[Mutant] = []
    line = 0
    for position, node in enumerate(every):
        line = getattr(node, "lineno", line)  # a comprehension has none: its parent's
        if position in frozen:
            continue
        found = _all_edits(node, keys, id(node) in defaults, ctx, frozen_ids)
        for kind, description, edit in found:
            mutated = ast.parse(source)  # a copy, node for node (a fifth of a deepcopy's time)
            target = nodes(mutated)[position]
            edit(target, _replacer(mutated, target) if position else None)
            ast.fix_missing_locations(mutated)
            try:
                text = ast.unparse(mutated)
                compile(text, "<mutant>", "exec")
            except (SyntaxError, ValueError, TypeError, AttributeError):
                continue  # not a valid module (e.g. an empty body)
            if text in seen:
                continue
            seen.add(text)  # a mutant an older operator made too keeps that operator's kind
            if kinds is None or kind in kinds:
                out.append(Mutant(kind, description, line, text, original))
    return out
