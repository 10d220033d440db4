"""The names one top-level statement binds and reads, from its ``ast`` alone (no ``symtable``).

Notebook intake (``grader.intake.notebook``) picks an exercise's statements by following names.
For one statement (or the small module its text parses to), ``statement_names`` says:

- ``binds``: the module-level names it binds when it runs: targets of assignments (plain,
  augmented, annotated), imports (``import *`` binds nothing known), ``def``/``class`` names,
  ``for``/``with``/``except``/``del`` targets, ``match`` captures, and walrus targets at module
  level and inside module-level comprehensions (a walrus binds in the enclosing scope);
- ``reads_now``: the global names it reads when it runs: module-level code, decorators,
  default values, annotations (evaluated, as without ``from __future__ import annotations``),
  base classes, class bodies, and comprehensions and generator expressions at module level;
- ``reads_later``: the global names its functions, lambdas and methods read when called: free
  names that resolve to the module, with parameters and locals, ``global``/``nonlocal``,
  class bodies (whose names their methods do not see) and comprehension scopes (whose loop
  variables are theirs) respected;
- ``binds_global``: the module names its functions (when called) or class bodies assign
  through a ``global`` declaration. As for the compiler's symbol table, they are not ``binds``.

It is the scope analysis of CPython's symbol table (``Python/symtable.c`` of 3.11), written out
so that every Python gives the same answer: since 3.12 (PEP 709) the ``symtable`` module takes a
module-level comprehension's loop variable for a read of a global. As the symbol table does, it
raises ``SyntaxError`` for what the compiler rejects there (a ``global`` after a use, a
``nonlocal`` without a binding, a duplicate parameter, a walrus in a comprehension's iterable or
rebinding its loop variable, ``yield`` in a comprehension, ``import *`` in a function, an
unknown ``__future__`` feature), and ``RecursionError`` for code nested deeper than
``MAX_DEPTH``. Like the symbol table, ``x += 1`` binds ``x`` without reading it, ``del x`` binds
``x``, a bare annotation ``x: int`` binds ``x``, and a class body's ``y = x`` does not read a
global ``x`` that the class body also binds.

Three answers differ from what intake took from 3.11's ``symtable``, where 3.11 is the odd one
out: the reads of a module-level comprehension or class body (they run now) are ``reads_now``
(3.11's child scopes put them with the reads of functions: no matter for a class, but
``x = [x for _ in r]`` lost its read of the earlier ``x``); a walrus in a module-level
comprehension binds its target (3.11 marks it declared global, not assigned); and the names
``listcomp``, ``setcomp``, ``dictcomp`` and ``genexpr`` are not bound by a statement that merely
reads them beside a comprehension (3.11 took the comprehension for their namespace).
"""

from __future__ import annotations
import __future__

import ast
from dataclasses import dataclass

# Nesting of statements and expressions analysed. Notebook cells come through
# ``grader.shared.safeparse``, which refuses trees deeper than this from the module down.
MAX_DEPTH = 200

USE, DEF_LOCAL, DEF_PARAM, DEF_GLOBAL, DEF_NONLOCAL, DEF_IMPORT, DEF_ANNOT, DEF_COMP_ITER = (
    1 << i for i in range(8)
)
DEF_BOUND = DEF_LOCAL | DEF_PARAM | DEF_IMPORT
_DECLARED = DEF_PARAM | DEF_LOCAL | USE | DEF_ANNOT  # what may not come before global/nonlocal
_TRY = tuple(getattr(ast, n) for n in ("Try", "TryStar") if hasattr(ast, n))
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_INERT = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


@dataclass(frozen=True)
class Names:
    """What ``statement_names`` finds (see the module's docstring)."""

    binds: frozenset[str]
    reads_now: frozenset[str]
    reads_later: frozenset[str]
    binds_global: frozenset[str]


def statement_names(code: ast.Module | ast.stmt) -> Names:
    """The names a statement (or each statement of a parsed module, together) binds and reads;
    ``SyntaxError`` or ``RecursionError`` where the statement is no usable code (see above)."""
    body = code.body if isinstance(code, ast.Module) else [code]
    _check_future(body)
    builder = _Builder()
    for node in body:
        builder.stmt(node)
    now: set[str] = set()
    later: set[str] = set()
    globals_bound: set[str] = set()
    _analyse(builder.module, None, now, later, globals_bound)
    module = builder.module.names
    binds = {n for n, f in module.items() if f & (DEF_LOCAL | DEF_IMPORT)} | builder.walrus
    now |= {n for n, f in module.items() if f & USE}
    return Names(frozenset(binds), frozenset(now), frozenset(later), frozenset(globals_bound))


def _check_future(body: list[ast.stmt]) -> None:
    """The compiler's checks of ``from __future__ import ...`` at the start of a module."""
    first = body[0].value if body and isinstance(body[0], ast.Expr) else None
    docstring = isinstance(first, ast.Constant) and isinstance(first.value, str)
    done, previous_line = False, 0
    for node in body[int(docstring) :]:
        if done and node.lineno > previous_line:
            return
        previous_line = node.lineno
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            if done:
                raise SyntaxError("from __future__ imports must occur at the beginning of the file")
            for alias in node.names:
                if alias.name == "braces":
                    raise SyntaxError("not a chance")
                if alias.name not in __future__.all_feature_names:
                    raise SyntaxError(f"future feature {alias.name} is not defined")
        else:
            done = True


def _mangle(private: str | None, name: str) -> str:
    """``__x`` inside ``class A`` is ``_A__x``, as the compiler has it."""
    if private is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = private.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


class _Scope:
    """A block of the symbol table: the module, a function (lambda, comprehension) or a class."""

    def __init__(self, kind: str, parent: _Scope | None, now: bool, comprehension: bool = False):
        self.kind = kind  # "module", "function" or "class"
        self.parent = parent
        self.now = now  # runs when the statement runs (module level, class body, comprehension)
        self.comprehension = comprehension
        self.names: dict[str, int] = {}
        self.children: list[_Scope] = []
        self.iter_target = False  # visiting a comprehension's loop target
        if parent is not None:
            parent.children.append(self)


class _Builder:
    """Collects each scope's names and flags, visiting the tree in the symbol table's order."""

    def __init__(self) -> None:
        self.module = self.scope = _Scope("module", None, True)
        self.private: str | None = None  # the class whose private names are mangled
        self.in_iter = 0  # inside a comprehension's iterable (no walrus allowed there)
        self.depth = 0
        self.walrus: set[str] = set()  # bound at module level by a walrus in a comprehension

    def add(self, name: str, flag: int, scope: _Scope | None = None) -> None:
        scope = scope or self.scope
        name = _mangle(self.private, name)
        old = scope.names.get(name, 0)
        if flag & DEF_PARAM and old & DEF_PARAM:
            raise SyntaxError(f"duplicate argument {name!r} in function definition")
        value = old | flag
        if scope.iter_target:
            if value & (DEF_GLOBAL | DEF_NONLOCAL):
                raise SyntaxError(f"comprehension inner loop cannot rebind walrus target {name!r}")
            value |= DEF_COMP_ITER
        scope.names[name] = value

    def flags(self, name: str) -> int:
        return self.scope.names.get(_mangle(self.private, name), 0)

    def enter(self, kind: str, now: bool, comprehension: bool = False) -> None:
        self.scope = _Scope(kind, self.scope, now, comprehension)

    def leave(self, scopes: int = 1) -> None:
        for _ in range(scopes):
            self.scope = self.scope.parent or self.module

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise RecursionError(f"code nested more than {MAX_DEPTH} levels deep")

    # --- statements ---------------------------------------------------------------------------

    def stmts(self, body: list[ast.stmt]) -> None:
        for node in body:
            self.stmt(node)

    def stmt(self, node: ast.stmt) -> None:
        self.deeper()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.function_def(node)
        elif isinstance(node, ast.ClassDef):
            self.class_def(node)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    self.add((alias.asname or alias.name).split(".")[0], DEF_IMPORT)
                elif self.scope.kind != "module":
                    raise SyntaxError("import * only allowed at module level")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            self.declaration(node)
        elif isinstance(node, ast.AnnAssign):
            self.ann_assign(node)
        elif isinstance(node, _TRY):  # the symbol table's order: body, else, handlers, finally
            self.stmts(node.body)
            self.stmts(node.orelse)
            for handler in node.handlers:
                self.expr(handler.type)
                if handler.name:
                    self.add(handler.name, DEF_LOCAL)
                self.stmts(handler.body)
            self.stmts(node.finalbody)
        elif type(node).__name__ == "TypeAlias":  # ``type X[T] = ...`` (3.12): value is lazy
            self.expr(node.name)  # type: ignore[attr-defined]  # ast.TypeAlias is 3.12+
            generic = self.type_params(node)
            self.enter("function", now=False)
            self.expr(node.value)  # type: ignore[attr-defined]  # ast.TypeAlias is 3.12+
            self.leave(1 + generic)
        else:
            self.children(node)
        self.depth -= 1

    def function_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.add(node.name, DEF_LOCAL)
        args = node.args
        self.exprs(args.defaults + args.kw_defaults + node.decorator_list)
        generic = self.type_params(node)
        every = args.posonlyargs + args.args + [args.vararg] + args.kwonlyargs + [args.kwarg]
        self.exprs([a.annotation for a in every if a is not None] + [node.returns])
        self.enter("function", now=False)
        self.params(args)
        self.stmts(node.body)
        self.leave(1 + generic)

    def class_def(self, node: ast.ClassDef) -> None:
        self.add(node.name, DEF_LOCAL)
        self.exprs(node.decorator_list)
        generic = self.type_params(node)
        self.exprs(node.bases + [k.value for k in node.keywords])
        self.enter("class", now=self.scope.now)
        private, self.private = self.private, node.name
        self.stmts(node.body)
        self.private = private
        self.leave(1 + generic)

    def declaration(self, node: ast.Global | ast.Nonlocal) -> None:
        kind = "global" if isinstance(node, ast.Global) else "nonlocal"
        for name in node.names:
            if self.flags(name) & _DECLARED:
                raise SyntaxError(f"name {name!r} is used or bound before {kind} declaration")
            self.add(name, DEF_GLOBAL if kind == "global" else DEF_NONLOCAL)

    def ann_assign(self, node: ast.AnnAssign) -> None:
        target = node.target
        if isinstance(target, ast.Name):
            declared = self.flags(target.id) & (DEF_GLOBAL | DEF_NONLOCAL)
            if declared and node.simple and self.scope is not self.module:
                raise SyntaxError(f"annotated name {target.id!r} can't be global or nonlocal")
            if node.simple:
                self.add(target.id, DEF_ANNOT | DEF_LOCAL)
            if node.value is not None:
                self.add(target.id, DEF_LOCAL)
        else:
            self.expr(target)
        self.exprs([node.annotation, node.value])

    def params(self, args: ast.arguments) -> None:
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None:
                self.add(arg.arg, DEF_PARAM)

    def type_params(self, node: ast.AST) -> bool:
        """Python 3.12's ``def f[T]``/``class C[T]``/``type X[T]``: a scope of their own, in
        which the parameters are local; bounds and defaults are evaluated lazily."""
        params = getattr(node, "type_params", None)
        if not params:
            return False
        self.enter("function", now=self.scope.now)
        for param in params:
            self.add(param.name, DEF_LOCAL)
            for lazy in (getattr(param, "bound", None), getattr(param, "default_value", None)):
                if lazy is not None:
                    self.enter("function", now=False)
                    self.expr(lazy)
                    self.leave()
        return True

    # --- expressions --------------------------------------------------------------------------

    def exprs(self, nodes: list) -> None:
        for node in nodes:
            self.expr(node)

    def expr(self, node: ast.expr | None) -> None:
        if node is None:
            return
        self.deeper()
        if isinstance(node, ast.Name):
            load = isinstance(node.ctx, ast.Load)
            self.add(node.id, USE if load else DEF_LOCAL)
            if load and node.id == "super" and self.scope.kind == "function":
                self.add("__class__", USE)
        elif isinstance(node, ast.NamedExpr):
            if self.in_iter:
                raise SyntaxError("assignment expression in a comprehension's iterable")
            if self.scope.comprehension:
                self.walrus_scope(node.target.id)  # type: ignore[attr-defined]
            self.expr(node.value)
            self.expr(node.target)
        elif isinstance(node, ast.Lambda):
            self.exprs(node.args.defaults + node.args.kw_defaults)
            self.enter("function", now=False)
            self.params(node.args)
            self.expr(node.body)
            self.leave()
        elif isinstance(node, _COMPREHENSIONS):
            self.comprehension(node)
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            self.expr(node.value)
            if self.scope.comprehension:
                raise SyntaxError("'yield' inside a comprehension")
        else:
            self.children(node)
        self.depth -= 1

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
        first, *rest = node.generators
        self.in_iter += 1
        self.expr(first.iter)  # evaluated in the enclosing scope
        self.in_iter -= 1
        self.enter("function", now=self.scope.now, comprehension=True)
        self.loop_target(first.target)
        self.exprs(first.ifs)
        for gen in rest:
            self.loop_target(gen.target)
            self.in_iter += 1
            self.expr(gen.iter)
            self.in_iter -= 1
            self.exprs(gen.ifs)
        if isinstance(node, ast.DictComp):
            self.exprs([node.value, node.key])
        else:
            self.expr(node.elt)
        self.leave()

    def loop_target(self, target: ast.expr) -> None:
        self.scope.iter_target = True
        self.expr(target)
        self.scope.iter_target = False

    def walrus_scope(self, name: str) -> None:
        """A walrus in a comprehension binds in the nearest enclosing function or module."""
        scope = self.scope
        while scope.comprehension:
            if scope.names.get(name, 0) & DEF_COMP_ITER:
                raise SyntaxError(f"walrus cannot rebind comprehension variable {name!r}")
            scope = scope.parent or self.module
        if scope.kind == "class":
            raise SyntaxError("walrus in a comprehension in a class body")
        if scope.kind == "module":
            self.add(name, DEF_GLOBAL)
            self.add(name, DEF_GLOBAL, scope)
            self.walrus.add(name)
        else:
            self.add(name, DEF_GLOBAL if scope.names.get(name, 0) & DEF_GLOBAL else DEF_NONLOCAL)
            self.add(name, DEF_LOCAL, scope)

    # --- everything else: children in the order of their fields -------------------------------

    def children(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, ast.stmt):
                self.stmt(child)
            elif not isinstance(child, _INERT):  # keyword, withitem, match_case, a pattern
                self.deeper()
                self.children(child)
                self.depth -= 1
        if isinstance(node, ast.pattern):  # the names it captures, after its sub-patterns
            for captured in (getattr(node, "name", None), getattr(node, "rest", None)):
                if captured is not None:
                    self.add(captured, DEF_LOCAL)


def _analyse(
    scope: _Scope, bound: set[str] | None, now: set[str], later: set[str], assigned: set[str]
) -> None:
    """Resolve each name of ``scope`` (``bound``: the names of enclosing functions that it can
    see) and collect the reads of globals; then the same for the scopes inside it."""
    inner = set(bound or ()) | {"__class__"} if scope.kind == "class" else set()
    bound = set(bound) if bound is not None else None
    local = set()
    for name, flags in scope.names.items():
        if flags & DEF_GLOBAL:
            if flags & DEF_NONLOCAL:
                raise SyntaxError(f"name {name!r} is nonlocal and global")
            if bound is not None:
                bound.discard(name)
            is_global = True
            if scope.kind != "module" and not scope.comprehension and flags & DEF_BOUND:
                assigned.add(name)
        elif flags & DEF_NONLOCAL:
            if bound is None:
                raise SyntaxError("nonlocal declaration not allowed at module level")
            if name not in bound:
                raise SyntaxError(f"no binding for nonlocal {name!r} found")
            is_global = False
        elif flags & DEF_BOUND:
            local.add(name)
            is_global = False
        else:
            is_global = bound is None or name not in bound
        if is_global and flags & USE and scope.kind != "module":
            (now if scope.now else later).add(name)
    if scope.kind == "function":
        inner = local | (bound or set())
    for child in scope.children:
        _analyse(child, inner, now, later, assigned)
