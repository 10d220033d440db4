"""The student-minded operators of the mutator (``grader.authoring.mutants`` applies them).

Each yields ``(kind, description, edit)`` for one node of the original tree, as ``_edits`` in
``mutants.py`` does; ``Context`` holds what an operator needs to know about the whole module
(which attributes each object is read with, which config keys each name is read with) and the
course's ``Vocabulary``. Kinds:

- ``alias``: a copy dropped, so that the value is shared (``x.clone()``, ``x.copy()``,
  ``copy.deepcopy(x)``, ``dict(x)``, ``list(x)`` -> ``x``; ``{**x, k: v}`` and ``dict(x, k=v)``
  -> ``x`` updated in place; ``[M() for _ in range(n)]`` -> ``[M()] * n``, one object n
  times); and the reverse, an in-place method made a copy or a copy made in place
  (``masked_fill_`` <-> ``masked_fill``, ``detach()`` -> ``detach_()``, ``t()`` -> ``t_()``);
- ``attribute``: ``obj.a`` read as ``obj.b``, another attribute the same class (or function)
  reads from ``obj`` with the same stem (``self.W_query`` -> ``self.W_key``, ``self.norm1`` ->
  ``self.norm2``);
- ``method``: a method replaced by a sibling (``view``<->``reshape``, ``triu``<->``tril``,
  ``cat``<->``stack``, ``no_grad``->``enable_grad``), ``.contiguous()`` dropped;
- ``config``: ``cfg["key"]`` replaced by the literal the vocabulary gives for that key (a
  course's best-known config: ``cfg["emb_dim"]`` -> ``768``), or cross-wired with another key
  the vocabulary says is confused with it and that is read from ``cfg`` too, at one read of
  each key per function, the least nested (``ast.walk``'s first): a key read again in the same
  function is the same mistake again. Without a vocabulary, no ``config`` mutant;
- ``flag``: a flag flipped (``bias=qkv_bias`` -> ``bias=not qkv_bias``) or added
  (``nn.Linear(a, b)`` -> ``bias=False``, ``nn.Dropout(p)`` -> ``inplace=True``,
  ``load_state_dict(d)`` -> ``strict=False``);
- ``wrap``: a wrapping call dropped (``nn.Parameter(w)``, ``nn.ModuleList(xs)``, ``float(x)``,
  ``int(x)``, ``round(x)`` -> the argument);
- ``order``: two neighbouring statements swapped, when one writes what the other reads or
  writes;
- ``dict``: the values of two neighbouring entries of a dict display swapped;
- ``slice``: a slice bound dropped (``[:n]`` -> ``[:]``), or the upper bound one further.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

NEW_KINDS = ("alias", "attribute", "method", "config", "flag", "wrap", "order", "dict", "slice")

COPY_METHODS = ("clone", "copy")
COPY_FUNCTIONS = ("deepcopy", "copy", "dict", "list")  # f(x) -> x
INPLACE = ("masked_fill", "t", "transpose", "detach", "add", "sub", "mul", "div", "clamp")
SIBLINGS = {
    "view": "reshape",
    "reshape": "view",
    "triu": "tril",
    "tril": "triu",
    "cat": "stack",
    "stack": "cat",
    "no_grad": "enable_grad",
}
WRAPPERS = ("Parameter", "ModuleList", "float", "int", "round")
FLAGS = ("bias", "qkv_bias", "inplace", "keepdim", "unbiased", "training", "requires_grad")
ADDED_FLAGS = {"Linear": ("bias", False), "Dropout": ("inplace", True)}


@dataclass(frozen=True)
class Vocabulary:
    """What the ``config`` operator knows of a course's configs (a pack's ``[mutation]``
    table): ``literals``, for a config key, the value a student writes instead of reading it
    (the best-known config's); ``crossed``, for a key, the keys a student confuses it with;
    ``source`` names where the literals come from, in the mutants' descriptions."""

    literals: Mapping[str, Any] = field(default_factory=dict)  # key -> a constant
    crossed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    source: str = ""


NO_VOCABULARY = Vocabulary()


def _stem(name: str) -> str:
    return name.split("_")[0].rstrip("0123456789")


@dataclass
class Context:
    """What the operators know of the module: for each attribute read (by id), the other
    attributes its scope reads from the same object; each statement body's neighbours."""

    attributes: dict[int, list[str]] = field(default_factory=dict)
    first_reads: set[int] = field(default_factory=set)  # the cfg["key"] mutated in its function
    vocabulary: Vocabulary = NO_VOCABULARY


def context(tree: ast.Module, vocabulary: Vocabulary = NO_VOCABULARY) -> Context:
    ctx = Context(vocabulary=vocabulary)
    scopes = [n for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)]
    for scope in [tree, *scopes]:
        reads: dict[str, list[ast.Attribute]] = {}
        inner = {id(n) for s in scopes if s is not scope for n in ast.walk(s)}
        for n in ast.walk(scope):
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and id(n) not in inner:
                reads.setdefault(ast.unparse(n.value), []).append(n)
        if scope is not tree:
            for function in [n for n in ast.walk(scope) if isinstance(n, ast.FunctionDef)]:
                seen: set[tuple[str, object]] = set()
                for n in ast.walk(function):
                    if (
                        isinstance(n, ast.Subscript)
                        and isinstance(n.value, ast.Name)
                        and isinstance(n.slice, ast.Constant)
                        and (n.value.id, n.slice.value) not in seen
                    ):
                        seen.add((n.value.id, n.slice.value))
                        ctx.first_reads.add(id(n))
        for read in reads.values():
            names = list(dict.fromkeys(a.attr for a in read))
            for a in read:
                ctx.attributes[id(a)] = [
                    b for b in names if b != a.attr and _stem(b) == _stem(a.attr)
                ]
    return ctx


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _root(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _uses(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _update_in_place(base: ast.expr, update: ast.expr) -> ast.expr:
    """``(base.update(update) or base)``: ``base`` changed in place, and returned."""
    call = ast.Call(ast.Attribute(copy.deepcopy(base), "update", ast.Load()), [update], [])
    return ast.BoolOp(ast.Or(), [call, copy.deepcopy(base)])


def _alias(node: ast.AST, short: str) -> Iterator[tuple]:
    if isinstance(node, ast.Call):
        name = _call_name(node)
        func = node.func
        if isinstance(func, ast.Attribute) and name in COPY_METHODS and not node.args:
            yield "alias", f".{name}() dropped in {short}", lambda n, r: r(n.func.value)
        module_function = isinstance(func, ast.Name) or _root(func) == "copy"  # not a method
        if name in COPY_FUNCTIONS and len(node.args) == 1 and module_function:
            if not node.keywords and not isinstance(node.args[0], ast.Starred):
                yield "alias", f"{name}() dropped: {short}", lambda n, r: r(n.args[0])
        if isinstance(func, ast.Name) and name == "dict" and len(node.args) == 1 and node.keywords:
            yield (
                "alias",
                f"{ast.unparse(node.args[0])} updated in place: {short}",
                lambda n, r: r(
                    _update_in_place(
                        n.args[0], ast.Call(ast.Name("dict", ast.Load()), [], n.keywords)
                    )
                ),
            )
        if isinstance(func, ast.Attribute) and name is not None:
            base = name.removesuffix("_")
            if base in INPLACE and name != base:  # in place -> a copy (the result is lost)
                yield "alias", f".{name}() made .{base}() in {short}", _rename_method(base)
            elif name in INPLACE and name != "transpose":  # a copy -> in place
                yield "alias", f".{name}() made .{name}_() in {short}", _rename_method(name + "_")
    elif (
        isinstance(node, ast.Dict)
        and len(node.keys) > 1
        and node.keys[0] is None
        and all(k is not None for k in node.keys[1:])
    ):
        yield (
            "alias",
            f"{ast.unparse(node.values[0])} updated in place: {short}",
            lambda n, r: r(_update_in_place(n.values[0], ast.Dict(n.keys[1:], n.values[1:]))),
        )
    elif isinstance(node, ast.ListComp) and len(node.generators) == 1:
        gen = node.generators[0]
        loop = gen.iter
        if (
            isinstance(gen.target, ast.Name)
            and not gen.ifs
            and not _uses(node.elt, gen.target.id)
            and isinstance(loop, ast.Call)
            and _call_name(loop) == "range"
            and len(loop.args) == 1
        ):
            yield (
                "alias",
                f"one object repeated: {short}",
                lambda n, r: r(
                    ast.BinOp(
                        ast.List([n.elt], ast.Load()), ast.Mult(), n.generators[0].iter.args[0]
                    )
                ),
            )


def _rename_method(name: str):
    def edit(n: Any, _) -> None:
        n.func.attr = name

    return edit


def _keyword(arg: str, value: Any):
    def edit(n: Any, _) -> None:
        n.keywords.append(ast.keyword(arg, ast.Constant(value)))

    return edit


def _flip(i: int):
    def edit(n: Any, _) -> None:
        n.keywords[i].value = ast.UnaryOp(ast.Not(), n.keywords[i].value)

    return edit


def _calls(node: ast.Call, short: str) -> Iterator[tuple]:
    name = _call_name(node)
    if name in SIBLINGS and isinstance(node.func, ast.Attribute):
        new = SIBLINGS[name]
        yield "method", f"{name} -> {new} in {short}", _rename_method(new)
    if name == "contiguous" and isinstance(node.func, ast.Attribute) and not node.args:
        yield "method", f".contiguous() dropped in {short}", lambda n, r: r(n.func.value)
    for i, kw in enumerate(node.keywords):
        if kw.arg in FLAGS and not isinstance(kw.value, ast.Constant):
            yield "flag", f"{kw.arg}= negated in {short}", _flip(i)
    given = {kw.arg for kw in node.keywords}
    if name in ADDED_FLAGS and ADDED_FLAGS[name][0] not in given:
        arg, value = ADDED_FLAGS[name]
        extra = 3 if name == "Linear" else 2  # a positional flag is given already
        if len(node.args) < extra:
            yield "flag", f"{arg}={value} added to {short}", _keyword(arg, value)
    if name == "load_state_dict" and "strict" not in given and len(node.args) == 1:
        yield "flag", f"strict=False added to {short}", _keyword("strict", False)
    if name in WRAPPERS and len(node.args) == 1 and not node.keywords:
        if not isinstance(node.args[0], ast.Starred):
            yield "wrap", f"{name}() dropped: {short}", lambda n, r: r(n.args[0])


def _config(
    node: ast.Subscript, keys: dict[str, list[str]], short: str, vocabulary: Vocabulary
) -> Iterator[tuple]:
    key = node.slice.value  # type: ignore[attr-defined]  # a str constant (``edits`` checks)
    name = node.value.id  # type: ignore[attr-defined]  # a Name (``edits`` checks)
    if key in vocabulary.literals:
        literal = vocabulary.literals[key]
        said = f"{vocabulary.source}'s {literal!r}" if vocabulary.source else f"{literal!r}"
        yield "config", f"{short} -> {said}", lambda n, r: r(ast.Constant(literal))
    for other in vocabulary.crossed.get(key, ()):
        if other in keys.get(name, []):

            def edit(n: Any, _, other: str = other) -> None:
                n.slice = ast.Constant(other)

            yield "config", f"{short} -> {name}[{other!r}]", edit


def _swap_statements(i: int, name: str):
    def edit(n: Any, _) -> None:
        body = getattr(n, name)
        body[i], body[i + 1] = body[i + 1], body[i]

    return edit


SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _path(node: ast.AST) -> tuple[str, ...] | None:
    """``a.b["k"]`` as ``("a", "b", "['k']")`` (other subscripts end the path); None for
    anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif isinstance(node.slice, ast.Constant):
            parts.append(f"[{node.slice.value!r}]")
        else:
            parts.clear()
        node = node.value
    return (node.id, *reversed(parts)) if isinstance(node, ast.Name) else None


def _written(stmt: ast.stmt) -> set[tuple[str, ...]]:
    """What a simple statement assigns or changes (a method call changes its receiver)."""
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            return _paths([call.func.value])
        return set()
    # past an Expr and an Assign, one of the other SIMPLE statements: one target
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]  # type: ignore[attr-defined]
    flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    return _paths(flat)


def _read(stmt: ast.stmt) -> set[tuple[str, ...]]:
    """The longest names and attribute chains a statement loads (a method: its receiver)."""
    inner = {id(n.value) for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
    loaded = [
        n for n in ast.walk(stmt) if isinstance(n, ast.Name | ast.Attribute) and id(n) not in inner
    ]
    calls = [n.func for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    return _paths(loaded + [f.value for f in calls if isinstance(f, ast.Attribute)])


def _paths(nodes: list[ast.expr]) -> set[tuple[str, ...]]:
    """The paths (``_path``) of those of ``nodes`` that have one."""
    return {p for n in nodes if (p := _path(n)) is not None}


def _overlap(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> bool:
    return any(x[: len(y)] == y or y[: len(x)] == x for x in a for y in b)


def _dependent(a: ast.stmt, b: ast.stmt) -> bool:
    """Whether swapping ``a`` and ``b`` can change anything: one writes what the other reads
    or writes (swapping independent statements is equivalent by construction)."""
    wa, wb = _written(a), _written(b)
    return _overlap(wa, _read(b) | wb) or _overlap(wb, _read(a))


def _order(node: ast.AST, frozen_ids: set[int]) -> Iterator[tuple]:
    if not isinstance(node, ast.FunctionDef | ast.For | ast.With | ast.If | ast.Module):
        return
    for name in ("body", "orelse"):
        body = getattr(node, name, None)
        if not isinstance(body, list):
            continue
        for i in range(len(body) - 1):
            a, b = body[i], body[i + 1]
            if id(a) in frozen_ids or id(b) in frozen_ids:
                continue
            if isinstance(a, SIMPLE) and isinstance(b, SIMPLE) and _dependent(a, b):
                first = ast.unparse(a).splitlines()[0][:40]
                second = ast.unparse(b).splitlines()[0][:40]
                yield "order", f"swapped: {first} / {second}", _swap_statements(i, name)


def _swap_dict(i: int):
    def edit(n: Any, _) -> None:
        n.values[i], n.values[i + 1] = n.values[i + 1], n.values[i]

    return edit


def _slice(node: ast.Slice, short: str) -> Iterator[tuple]:
    if node.upper is not None:
        yield "slice", f"upper bound dropped in {short}", lambda n, r: setattr(n, "upper", None)
        yield (
            "slice",
            f"upper bound + 1 in {short}",
            lambda n, r: setattr(n, "upper", ast.BinOp(n.upper, ast.Add(), ast.Constant(1))),
        )
    if node.lower is not None:
        yield "slice", f"lower bound dropped in {short}", lambda n, r: setattr(n, "lower", None)


def edits(
    node: ast.AST, ctx: Context, keys: dict[str, list[str]], frozen_ids: set[int], short: str
) -> Iterator[tuple]:
    """(kind, description, edit) for every new-operator mutation of ``node`` itself."""
    yield from _alias(node, short)
    if isinstance(node, ast.Call):
        yield from _calls(node, short)
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        for other in ctx.attributes.get(id(node), []):
            yield (
                "attribute",
                f"{short} -> {ast.unparse(node.value)}.{other}",
                (lambda n, r, other=other: setattr(n, "attr", other)),
            )
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        if id(node) in ctx.first_reads:
            yield from _config(node, keys, short, ctx.vocabulary)
    yield from _order(node, frozen_ids)
    if isinstance(node, ast.Dict):
        for i in range(len(node.values) - 1):
            a, b = node.keys[i], node.keys[i + 1]
            if a is not None and b is not None:
                if ast.dump(node.values[i]) != ast.dump(node.values[i + 1]):
                    pair = f"{ast.unparse(a)}/{ast.unparse(b)}"
                    yield "dict", f"values of {pair} swapped", _swap_dict(i)
    if isinstance(node, ast.Slice):
        yield from _slice(node, short)
