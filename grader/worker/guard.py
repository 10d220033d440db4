"""The worker's guard: did student code rewrite the grader inside the worker?

Student code runs in the same process as the worker's dispatch (``grader.worker.serve``) and
its probes (``grader.worker.probes``), so it can reach them: walk ``sys.modules``, swap a probe
in a table, assign a function's ``__code__``, rebind a module global. The worker therefore
resolves its probes before the student's file is imported, holds them in a closure, and takes a
``Guard`` snapshot at that moment. Before every reply, the snapshot's check compares
the grader's objects with it, by identity:

- every ``grader`` module in ``sys.modules`` is still the same module object;
- every function, class and module a grader module's namespace binds (and every dict of
  functions there, such as the probe tables, key by key) is still bound to the same object;
- every grader function and method (and the dispatch closure and its probes) still has the
  same ``__code__``, defaults and closure cells;
- the library functions the reply channel goes through (``os.write``, ``json.dumps``, ...) and
  the tensor methods a reply's tensors go through are still the same;
- the worker's channel still refers to the judge's pipes (not one ``dup2``-ed in between).

Threads, trace and profile functions are not watched: a progress bar's monitor thread, a
thread pool, a debugger or ``cProfile`` are ordinary library use, not acts on the grader
(DESIGN §5.12). What such a thread or hook could change is what this snapshot and the tripwire
watch; the worker's reply clears a trace or profile function left set before it checks, so
none runs over the grader's own frames (``grader.worker.serve.reply``).

A changed object is reported as tampering; the worker then ends with a status the judge reads
as such (``grader.protocol.boot.TAMPERED``), and the exercise gets no points.

The check itself is out of reach of the easy ways round it: it is a function held by the
worker's loop before the student's file runs, with its snapshot and every function and builtin
it calls in its defaults, so neither a class attribute nor a module global nor a builtin that
student code replaces changes what it does; rewriting its code or defaults is seen by the
tripwire (``grader.worker.tripwire``) at the moment it happens. It remains a tripwire, not a
wall: code in the same process can always lie about its own behaviour; see docs/sandbox.md
for what holds and what does not.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Sequence
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
    ("os", "fstat"),
)
# What a reply's tensors go through on their way out (``plain`` and ``grader.protocol.wire``).
TENSOR_PATH = (
    "detach",
    "to",
    "clone",
    "contiguous",
    "resolve_conj",
    "resolve_neg",
    "reshape",
    "view",
    "numpy",
    "is_cpu",
    "device",
    "dtype",
    "shape",
    "__class__",
)
_BOUND = (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)


def within(name: Any, packages: Sequence[str]) -> bool:
    """Whether module ``name`` is one of ``packages`` or inside one."""
    return type(name) is str and any(name == p or name.startswith(p + ".") for p in packages)


def grader_modules(packages: tuple[str, ...] = ("grader",)) -> dict[str, types.ModuleType]:
    """The modules of ``packages`` (the grader's, and the pack whose probes serve) in this
    process, found from each package down (each submodule is an attribute of the module that
    imported it): cheaper than a scan of ``sys.modules``."""
    found: dict[str, types.ModuleType] = {}
    stack = [m for m in map(sys.modules.get, packages) if m is not None]
    while stack:
        module = stack.pop()
        found[module.__name__] = module
        for value in vars(module).values():
            if type(value) is types.ModuleType and value.__name__ not in found:
                if within(value.__name__, packages):
                    stack.append(value)
    return {name: m for name, m in found.items() if sys.modules.get(name) is m}


_EMPTY = object()


def _same(a: tuple, b: tuple, _len=len, _range=range) -> bool:
    """Element by element identity."""
    if _len(a) != _len(b):
        return False
    for i in _range(_len(a)):
        if a[i] is not b[i]:
            return False
    return True


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


def _same_table(d: Any, snapshot: tuple, again: Callable, _len=len, _empty=_EMPTY) -> bool:
    """Whether ``d`` still holds what ``snapshot`` saw (``again`` is this function: it calls
    itself through its argument, not through a module global that student code could rebind)."""
    kept, size, items = snapshot
    if d is not kept or _len(d) != size:
        return False
    for key, value, inner in items:
        now = d.get(key, _empty)
        if now is not value or (inner is not None and not again(now, inner, again)):
            return False
    return True


def _identity(fd: int) -> tuple[int, int]:
    """What a file descriptor refers to (device and inode): another pipe ``dup2``-ed in its
    place has another."""
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino)


def _tensor_methods() -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """``torch.Tensor`` and the methods a reply's tensors go through (``plain`` and the wire),
    as the class resolves them: a method patched on it could rewrite a reply on its way out."""
    torch = sys.modules.get("torch")
    if torch is None:
        return (None, ())
    return (torch.Tensor, tuple((n, getattr(torch.Tensor, n, _EMPTY)) for n in TENSOR_PATH))


class Guard:
    """A snapshot of the grader's objects in this process; ``problem()`` says what changed.

    Kept as flat tuples of identities, so that a check costs tens of microseconds; the check
    itself (``checker``) holds the snapshot and every function it calls in its defaults."""

    def __init__(
        self,
        *extra: Callable[..., Any],
        packages: tuple[str, ...] = ("grader",),
        hidden: tuple[str, ...] = (),
    ):
        self.modules = grader_modules(packages)
        self.hidden = hidden  # the pack's judge-only modules (grader.worker.judgeonly)
        self.bindings: list[tuple[Any, str, Any, str]] = []  # (namespace, key, object, label)
        self.tables: list[tuple[Any, str, tuple, str]] = []
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
                if isinstance(value, types.FunctionType | type) and within(
                    value.__module__, packages
                ):
                    if isinstance(value, type):
                        self._watch_class(value, label)
                    else:
                        self._watch_function(value, label)
        for fn in extra:
            if not isinstance(fn, types.FunctionType):
                raise TypeError(f"the guard watches Python functions, not {type(fn).__name__}")
            self._watch_function(fn, f"the worker's dispatch ({getattr(fn, '__name__', '?')})")
            for cell in fn.__closure__ or ():
                for item in _flatten(cell.cell_contents):
                    if isinstance(item, types.FunctionType):
                        self._watch_function(item, f"the probe {item.__qualname__}")
        for module_name, attr in CHANNEL:
            holder = sys.modules.get(module_name)
            if holder is not None and hasattr(holder, attr):
                value = getattr(holder, attr)
                self.bindings.append((vars(holder), attr, value, f"{module_name}.{attr}"))
        self.tensor = _tensor_methods()
        self._check = self.checker()

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

    def functions(self) -> list[Callable[..., Any]]:
        """Every function this snapshot watches, the checks' own included: the tripwire
        (``grader.worker.tripwire``) ends the worker the moment one of them is rewritten."""
        own = (self._check, _problem, _replaced, _rewritten, _around, _same_table)
        return [*(fn for fn, *_ in self.codes), *own]

    def checker(self, *fds: int, armed: bool = False) -> Callable[[], str | None]:
        """The check of this snapshot as a function that needs nothing student code can
        rebind unseen: the snapshot, and each function and builtin it calls, are held in its
        defaults (a change to those is the tripwire's to see); ``fds``, the worker's channel
        to the judge, must keep referring to the same pipes. ``armed``: the tripwire watches
        these functions (it sees every assignment of their code and defaults as it happens),
        so the check leaves those out (each read of them is an audit event: 100 µs a check)."""
        snapshot = (
            tuple(self.modules.items()),
            tuple(self.bindings),
            tuple(self.tables),
            () if armed else tuple(self.codes),
            tuple(self.cells),
            tuple(self.kwdefaults),
            self.tensor,
            self.hidden,
            tuple((fd, _identity(fd)) for fd in fds),
        )

        def check(_snapshot=snapshot, _run=_problem, _exception=Exception) -> str | None:
            try:
                return _run(*_snapshot)
            except _exception as exc:  # the snapshot itself was broken into
                return f"the grader's own checks could not run ({type(exc).__name__})"

        self._check = check
        return check

    def problem(self) -> str | None:
        """What student code changed in the grader, in a few words; None if nothing."""
        return self._check()


def _replaced(
    modules,
    bindings,
    tables,
    _sys_modules=sys.modules,
    _empty=_EMPTY,
    _same_table=_same_table,
) -> str | None:
    """A module, a binding or a dispatch table of the snapshot that student code replaced."""
    for name, module in modules:
        if _sys_modules.get(name) is not module:
            return f"the module {name} was replaced or removed"
    for namespace, key, value, label in bindings:
        if namespace.get(key, _empty) is not value:
            return f"{label} was replaced"
    for namespace, key, table, label in tables:
        if not _same_table(namespace.get(key, _empty), table, _same_table):
            return f"{label} was changed"
    return None


def _rewritten(
    codes,
    cells,
    kwdefaults,
    _empty=_EMPTY,
    _same=_same,
    _tuple=tuple,
    _value_error=ValueError,
) -> str | None:
    """A watched function whose code, defaults or closure student code rewrote."""
    for fn, code, defaults, label in codes:
        if fn.__code__ is not code or fn.__defaults__ is not defaults:
            return f"the code of {label} was changed"
    for cell, held, label in cells:
        try:
            now = cell.cell_contents
        except _value_error:
            now = _empty
        if now is not held:
            return f"the code of {label} was changed"
    for fn, kw, values, label in kwdefaults:  # the dict's identity: with ``codes`` only
        if (codes and fn.__kwdefaults__ is not kw) or not _same(_tuple(kw.values()), values):
            return f"the code of {label} was changed"
    return None


def _around(
    tensor,
    hidden,
    channel,
    _sys_modules=sys.modules,
    _empty=_EMPTY,
    _identity=_identity,
    _getattr=getattr,
) -> str | None:
    """What student code changed around the grader: a tensor method a reply goes through, a
    judge-only module imported, the worker's channel redirected."""
    tensor_class, methods = tensor
    for name, method in methods:
        if _getattr(tensor_class, name, _empty) is not method:
            return f"torch.Tensor.{name} was replaced"
    for name in hidden:
        if name in _sys_modules:
            return f"it imported {name}, the grader's own code, past the grader's refusal"
    for fd, identity in channel:
        if _identity(fd) != identity:
            return "the worker's channel to the grader was redirected"
    return None


def _problem(
    modules,
    bindings,
    tables,
    codes,
    cells,
    kwdefaults,
    tensor,
    hidden,
    channel,
    _replaced=_replaced,
    _rewritten=_rewritten,
    _around=_around,
) -> str | None:
    """The checks of ``Guard.checker``, in three parts; each name a part uses is one of its
    arguments."""
    return (
        _replaced(modules, bindings, tables)
        or _rewritten(codes, cells, kwdefaults)
        or _around(tensor, hidden, channel)
    )


def _flatten(value: Any) -> list:
    """The items of nested tuples, lists and dicts' values (what a closure holds)."""
    if isinstance(value, tuple | list):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flatten(v)]
    return [value]
