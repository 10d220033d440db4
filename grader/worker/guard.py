"""The worker's tripwire: did student code rewrite the grader inside the worker?

Student code runs in the same process as the worker's dispatch (``grader.worker.serve``) and
its probes (``grader.worker.probes``), so it can reach them: walk ``sys.modules``, swap a probe
in a table, assign a function's ``__code__``. The worker therefore resolves its probes before
the student's file is imported, holds them in a closure, and takes a ``Guard`` snapshot at that
moment. After the import and after every call, ``Guard.problem()`` compares the grader's
objects with the snapshot, by identity:

- every ``grader`` module in ``sys.modules`` is still the same module object;
- every function, class and module a grader module's namespace binds (and every dict of
  functions there, such as the probe tables, key by key) is still bound to the same object;
- every grader function and method (and the dispatch closure and its probes) still has the
  same ``__code__``, defaults and closure cells;
- the few library functions the reply channel goes through (``os.write``, ``json.dumps``, ...)
  are still the same, and no trace or profile hook has been set.

A changed object is reported as tampering; the judge then gives the exercise no points.

This is a tripwire, not a wall: code in the same process can always lie about its own
behaviour, and a determined attacker can defeat any check made in its own process (by patching
this module's snapshot through ``gc``, say). What the judge recomputes itself from the weights
and configurations a worker returns cannot be faked this way; see docs/sandbox.md.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any

# Library functions the worker's reply path calls, by module and name.
CHANNEL = (
    ("os", "write"),
    ("os", "read"),
    ("os", "readv"),
    ("os", "_exit"),
    ("select", "select"),
    ("json", "dumps"),
    ("json", "loads"),
    ("struct", "Struct"),
)
_BOUND = (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)


def _is_grader(name: Any) -> bool:
    return type(name) is str and (name == "grader" or name.startswith("grader."))


def grader_modules() -> dict[str, types.ModuleType]:
    """The grader's modules in this process, found from the package down (each submodule is
    an attribute of the module that imported it): cheaper than a scan of ``sys.modules``."""
    found: dict[str, types.ModuleType] = {}
    stack = [m for m in (sys.modules.get("grader"),) if m is not None]
    while stack:
        module = stack.pop()
        found[module.__name__] = module
        for value in vars(module).values():
            if type(value) is types.ModuleType and value.__name__ not in found:
                if _is_grader(value.__name__):
                    stack.append(value)
    return {name: m for name, m in found.items() if sys.modules.get(name) is m}


_EMPTY = object()


def _same(a: tuple, b: tuple) -> bool:
    """Element by element identity."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _table(d: dict, depth: int = 0) -> tuple:
    """A dict's contents by identity, dicts within it (the probe tables) included."""
    return (
        d,
        len(d),
        [
            (k, v, _table(v, depth + 1) if type(v) is dict and depth < 3 else None)
            for k, v in d.items()
        ],
    )


def _holds_functions(d: dict, depth: int = 0) -> bool:
    """Whether ``d`` (or a dict in it) maps to functions: a table of probes. Other dicts (data,
    caches a module may fill as it runs) are not watched."""
    return any(
        isinstance(v, types.FunctionType)
        or (type(v) is dict and depth < 3 and _holds_functions(v, depth + 1))
        for v in d.values()
    )


def _same_table(d: Any, snapshot: tuple) -> bool:
    kept, size, items = snapshot
    if d is not kept or len(d) != size:
        return False
    for key, value, inner in items:
        now = d.get(key, _EMPTY)
        if now is not value or (inner is not None and not _same_table(now, inner)):
            return False
    return True


class Guard:
    """A snapshot of the grader's objects in this process; ``problem()`` says what changed.

    Kept as flat lists of identities, so that a check costs tens of microseconds."""

    def __init__(self, *extra: Callable[..., Any]):
        self.modules = grader_modules()
        self.bindings: list[tuple[Any, str, Any, str]] = []  # (namespace, key, object, label)
        self.tables: list[tuple[dict, str, tuple, str]] = []
        self.codes: list[tuple[types.FunctionType, Any, Any, str]] = []  # code, defaults
        self.cells: list[tuple[Any, Any, str]] = []  # closure cells and what they held
        self.kwdefaults: list[tuple[types.FunctionType, dict, tuple, str]] = []
        for name, module in self.modules.items():
            for key, value in list(vars(module).items()):
                if key.startswith("__"):
                    continue
                label = f"{name}.{key}"
                if type(value) is dict and _holds_functions(value):  # a dispatch table
                    self.tables.append((vars(module), key, _table(value), label))
                elif isinstance(value, _BOUND):
                    self.bindings.append((vars(module), key, value, label))
                if isinstance(value, types.FunctionType | type) and _is_grader(value.__module__):
                    if isinstance(value, type):
                        self._watch_class(value, label)
                    else:
                        self._watch_function(value, label)
        for fn in extra:
            self._watch_function(fn, f"the worker's dispatch ({getattr(fn, '__name__', '?')})")
            for cell in fn.__closure__ or ():
                for item in _flatten(cell.cell_contents):
                    if isinstance(item, types.FunctionType):
                        self._watch_function(item, f"the probe {item.__qualname__}")
        for module_name, attr in CHANNEL:
            module = sys.modules.get(module_name)
            if module is not None and hasattr(module, attr):
                value = getattr(module, attr)
                self.bindings.append((vars(module), attr, value, f"{module_name}.{attr}"))
        self.hooks = (sys.gettrace(), sys.getprofile())

    def _watch_function(self, fn: types.FunctionType, label: str) -> None:
        self.codes.append((fn, fn.__code__, fn.__defaults__, label))
        for cell in fn.__closure__ or ():  # the tuple is fixed; what each cell holds is not
            try:
                self.cells.append((cell, cell.cell_contents, label))
            except ValueError:  # an empty cell
                self.cells.append((cell, _EMPTY, label))
        if fn.__kwdefaults__:
            kw = fn.__kwdefaults__
            self.kwdefaults.append((fn, kw, tuple(kw.values()), label))

    def _watch_class(self, cls: type, label: str) -> None:
        for key, value in list(vars(cls).items()):
            if isinstance(value, staticmethod | classmethod):
                value = value.__func__
            if isinstance(value, types.FunctionType):
                self.bindings.append((vars(cls), key, vars(cls)[key], f"{label}.{key}"))
                self._watch_function(value, f"{label}.{key}")

    def problem(self) -> str | None:
        """What student code changed in the grader, in a few words; None if nothing."""
        try:
            return self._problem()
        except Exception as exc:  # the snapshot itself was broken into
            return f"the grader's own checks could not run ({type(exc).__name__})"

    def _problem(self) -> str | None:
        modules = sys.modules
        for name, module in self.modules.items():
            if modules.get(name) is not module:
                return f"the module {name} was replaced or removed"
        for namespace, key, value, label in self.bindings:
            if namespace.get(key, _EMPTY) is not value:
                return f"{label} was replaced"
        for namespace, key, table, label in self.tables:
            if not _same_table(namespace.get(key, _EMPTY), table):
                return f"{label} was changed"
        for fn, code, defaults, label in self.codes:
            if fn.__code__ is not code or fn.__defaults__ is not defaults:
                return f"the code of {label} was changed"
        for cell, held, label in self.cells:
            try:
                now = cell.cell_contents
            except ValueError:
                now = _EMPTY
            if now is not held:
                return f"the code of {label} was changed"
        for fn, kw, values, label in self.kwdefaults:
            if fn.__kwdefaults__ is not kw or not _same(tuple(kw.values()), values):
                return f"the code of {label} was changed"
        if sys.gettrace() is not self.hooks[0] or sys.getprofile() is not self.hooks[1]:
            return "a trace or profile hook was set on the grader"
        return None


def _flatten(value: Any) -> list:
    """The items of nested tuples, lists and dicts' values (what a closure holds)."""
    if isinstance(value, tuple | list):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    return [value]
