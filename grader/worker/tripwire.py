"""The worker's tripwire: an audit hook (PEP 578) that ends the worker the moment student code
acts on the grader itself: on its code, or on the worker's memory.

``arm`` is called once, after the guard's snapshot (``grader.worker.guard``) and just before
the student's file is imported. An audit hook cannot be removed, and CPython calls it before
the audited action takes effect, so a change that would undo itself before the guard looks
(a swap of a probe's ``__code__`` that restores itself, re-armed later by a finalizer) is seen
all the same. The hook holds everything it uses in its own defaults: rewriting them, or its
code, is itself an audited act it sees first.

What ends the worker (with an exit status of ``grader.protocol.boot.TAMPERED``):

- setting ``__code__``, ``__defaults__`` or ``__kwdefaults__`` of a grader function (the probes,
  the dispatch, the guard's checks, this hook);
- ``ctypes`` reaching into memory or the C API (``from_address``, ``addressof``,
  ``string_at``, a function looked up in ``ctypes.pythonapi`` or a library); ``ctypes.cast``
  raises no audit event, so memory reached through it is not seen;
- opening ``/proc/.../mem`` (a process's memory as a file), or ``mem`` from a folder such as
  ``/proc/self`` (``/dev/mem`` is the sandbox's to refuse, not a change to the grader).

Before it ends the worker, the hook sends the judge what it saw and the line of the student's
file that did it (``tell``), so the verdict names the act and the line; the exit status alone
still carries the verdict if that message cannot get through.

What is *not* an act on the grader, and is left alone: threads (a progress bar's monitor, a
thread pool), trace and profile functions (a debugger, ``cProfile``), and searching the
interpreter's objects (``gc.get_objects``, the snippet that looks for leaked tensors). They
can reach the grader's objects, but changing one is what counts, and that is seen: a code or
default here, a binding, table or channel by the guard. A correct answer is never flagged: the
corpus and the pack's solutions run under the hook in the tests, and so does the solution with
each of those libraries in use (tests/test_fair_guard.py).
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Callable, Iterable

from grader.protocol.boot import TAMPERED

CODE, CTYPES, MEMORY = 113, 116, 117
assert all(code in TAMPERED for code in (CODE, CTYPES, MEMORY))

_SETATTR = frozenset({"object.__setattr__", "object.__delattr__"})
# ctypes reaching into memory or the interpreter's C API; loading a library (``ctypes.dlopen``)
# is left alone, as libraries do it when first used.
_CTYPES = frozenset(
    {"ctypes.cdata", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.dlsym"}
)


def _quiet(status: int) -> None:
    """What ``arm`` tells when no one is listening: nothing (the exit status says it)."""


def _hook(
    event, args, _ids=frozenset(), _exit=os._exit, _id=id, _type=type, _str=str, _bytes=bytes,
    _setattr=_SETATTR, _ctypes_acts=_CTYPES, _tell=_quiet,
    _code=CODE, _ctypes=CTYPES, _memory=MEMORY,
) -> None:  # fmt: skip
    """The audit hook; it runs with no globals, so every name it uses is an argument."""
    status = 0
    if event in _setattr:
        if _id(args[0]) in _ids:
            status = _code
    elif event in _ctypes_acts:
        status = _ctypes
    elif event == "open":
        path = args[0]
        if _type(path) is _str and (
            path == "mem" or (path[:6] == "/proc/" and path[-4:] == "/mem")
        ):
            status = _memory
        if _type(path) is _bytes and (
            path == b"mem" or (path[:6] == b"/proc/" and path[-4:] == b"/mem")
        ):
            status = _memory
    if status:
        try:
            _tell(status)
        finally:
            _exit(status)


def where(
    frame: types.FrameType | None, student_file: str, _getline: Callable | None = None
) -> str:
    """The innermost line of ``student_file`` among ``frame`` and its callers, in words."""
    import linecache

    getline = _getline or linecache.getline
    name = os.path.basename(student_file)
    while frame is not None:
        if frame.f_code.co_filename == student_file:
            code = getline(student_file, frame.f_lineno).strip()
            return f", at line {frame.f_lineno} of {name}: {code[:120]}"
        frame = frame.f_back
    return ""


def teller(student_file: str, send: Callable[[dict], None]) -> Callable[[int], None]:
    """What the hook calls before it ends the worker: ``send`` (the reply channel) gets the
    act in words and the line of ``student_file`` that did it. Everything it calls is held in
    its defaults, and ``arm`` watches it as it watches the hook. A process the student's code
    forked tells nothing: the channel is the worker's, not its children's."""
    import linecache

    pid = os.getpid()

    def tell(
        status: int, _file=student_file, _send=send, _getframe=sys._getframe, _acts=TAMPERED,
        _where=where, _getline=linecache.getline, _pid=pid, _getpid=os.getpid,
    ) -> None:  # fmt: skip
        if _getpid() == _pid:
            _send({"ok": False, "tampered": _acts[status] + _where(_getframe(2), _file, _getline)})

    return tell


def arm(watched: Iterable[object], tell: Callable[[int], None] | None = None) -> None:
    """Install the hook for the rest of this process, watching ``watched`` (the grader's
    functions), ``tell`` (called with the status before the worker ends) and the hook itself."""
    defaults = dict(zip(_hook.__code__.co_varnames[2:], _hook.__defaults__, strict=False))
    hook = types.FunctionType(_hook.__code__, {}, "tripwire", None, None)  # no globals at all
    extra = (tell,) if tell is not None else ()
    defaults["_ids"] = frozenset(id(fn) for fn in (*watched, *extra)) | {id(hook)}
    if tell is not None:
        defaults["_tell"] = tell
    hook.__defaults__ = tuple(defaults.values())  # before arming: not yet an audited act
    sys.addaudithook(hook)
