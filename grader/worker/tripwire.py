"""The worker's tripwire: an audit hook (PEP 578) that ends the worker the moment student code
does what only an attack on the grader needs.

``arm`` is called once, after the guard's snapshot (``grader.worker.guard``) and just before
the student's file is imported. An audit hook cannot be removed, and CPython calls it before
the audited action takes effect, so a change that would undo itself before the guard looks
(a swap of a probe's ``__code__`` that restores itself, re-armed later by a finalizer) is seen
all the same. The hook holds everything it uses in its own defaults: rewriting them, or its
code, is itself an audited act it sees first.

What ends the worker (with an exit status of ``grader.protocol.boot.TAMPERED``):

- setting ``__code__``, ``__defaults__`` or ``__kwdefaults__`` of a grader function (the probes,
  the dispatch, the guard's checks, this hook);
- ``gc.get_objects``, ``gc.get_referrers``, ``gc.get_referents``: how code finds the objects
  the grader keeps out of its reach;
- ``sys.settrace`` and ``sys.setprofile`` (``threading``'s versions call them too);
- ``ctypes`` reaching into memory or the C API (``from_address``, ``addressof``,
  ``string_at``, a function looked up in ``ctypes.pythonapi`` or a library); ``ctypes.cast``
  raises no audit event, so memory reached through it is not seen;
- opening ``/proc/.../mem`` (a process's memory as a file), or ``mem`` from a folder such as
  ``/proc/self`` (``/dev/mem`` is the sandbox's to refuse, not a change to the grader).

None of these has a use in an answer to an exercise. A correct answer is never flagged: the
corpus and the pack's solutions run under the hook in the tests.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterable

from grader.protocol.boot import TAMPERED

CODE, SEARCH, TRACE, CTYPES, MEMORY = 113, 114, 115, 116, 117
assert all(code in TAMPERED for code in (CODE, SEARCH, TRACE, CTYPES, MEMORY))

_SETATTR = frozenset({"object.__setattr__", "object.__delattr__"})
_SEARCHES = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
_TRACES = frozenset({"sys.settrace", "sys.setprofile"})
# ctypes reaching into memory or the interpreter's C API; loading a library (``ctypes.dlopen``)
# is left alone, as libraries do it when first used.
_CTYPES = frozenset(
    {"ctypes.cdata", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at", "ctypes.dlsym"}
)


def _hook(
    event, args, _ids=frozenset(), _exit=os._exit, _id=id, _type=type, _str=str, _bytes=bytes,
    _setattr=_SETATTR, _searches=_SEARCHES, _traces=_TRACES, _ctypes_acts=_CTYPES,
    _code=CODE, _search=SEARCH, _trace=TRACE, _ctypes=CTYPES, _memory=MEMORY,
) -> None:  # fmt: skip
    """The audit hook; it runs with no globals, so every name it uses is an argument."""
    if event in _setattr:
        if _id(args[0]) in _ids:
            _exit(_code)
    elif event in _searches:
        _exit(_search)
    elif event in _traces:
        _exit(_trace)
    elif event in _ctypes_acts:
        _exit(_ctypes)
    elif event == "open":
        path = args[0]
        if _type(path) is _str and (
            path == "mem" or (path[:6] == "/proc/" and path[-4:] == "/mem")
        ):
            _exit(_memory)
        if _type(path) is _bytes and (
            path == b"mem" or (path[:6] == b"/proc/" and path[-4:] == b"/mem")
        ):
            _exit(_memory)


def arm(watched: Iterable[object]) -> None:
    """Install the hook for the rest of this process, watching ``watched`` (the grader's
    functions) and the hook itself."""
    defaults = list(_hook.__defaults__)
    hook = types.FunctionType(_hook.__code__, {}, "tripwire", None, None)  # no globals at all
    defaults[0] = frozenset(id(fn) for fn in watched) | {id(hook)}
    hook.__defaults__ = tuple(defaults)  # before arming: not yet an audited act
    sys.addaudithook(hook)
