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
- the student's own code using ``ctypes`` to reach into memory (``from_address``,
  ``in_dll``, ``addressof``, ``string_at``) or into the interpreter's C API (a symbol named
  ``Py…``/``_Py…`` looked up, as through ``ctypes.pythonapi``); ``ctypes.cast`` raises no
  audit event, so memory reached through it is not seen;
- opening ``/proc/.../mem`` (a process's memory as a file), or ``mem`` from a folder such as
  ``/proc/self`` (``/dev/mem`` is the sandbox's to refuse, not a change to the grader).

Before it ends the worker, the hook sends the judge what it saw and the line of the student's
file that did it (``tell``), so the verdict names the act and the line; the exit status alone
still carries the verdict if that message cannot get through.

Whose act it is decides, not that ``ctypes`` was used: the innermost frame outside the
``ctypes`` package is the one that acted. An installed library (the standard library,
site-packages, the user's site, the import machinery) resolving and calling its own library's
symbols, or reading and writing memory it allocated (llvmlite at ``import numba``: hundreds of
``ctypes.dlsym``, a ``from_address`` on its JIT's globals, ``in_dll`` of the hash secret), is
that library's business; the same act in the submission's code (or code it runs with
``exec``) is the student's. A symbol of another library looked up by the student's code
(``ctypes.CDLL(None).prctl``, ``libc.malloc_trim``) reaches neither memory nor the C API and is
left alone. Memory reached through a library on the student's behalf (an address handed to
``numpy.ctypeslib``, numba's compiled code) is no more seen than through ``ctypes.cast``.

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
    {
        "ctypes.cdata",
        "ctypes.addressof",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
    }
)
_LOOKUPS = frozenset({"ctypes.dlsym", "ctypes.dlsym/handle"})
_C_API = ("Py", "_Py")  # the interpreter's symbols
_CTYPES_DIR = os.path.join(os.path.dirname(os.__file__), "ctypes", "")


def library_folders() -> tuple[str, ...]:
    """Where installed code lives (the standard library, every site-packages, the user's site,
    the import machinery's frozen modules): an act made from a file under one of these is a
    library's own, not the student's. Each folder ends with a separator."""
    import site

    folders = {os.path.dirname(os.__file__)}
    folders.update(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    if site.USER_SITE:
        folders.add(site.USER_SITE)
    folders.update(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))
    found = {os.path.join(f, "") for f in folders if f}
    found |= {os.path.join(os.path.realpath(f), "") for f in found}
    return (*sorted(found), "<frozen ")


def _quiet(status: int) -> None:
    """What ``arm`` tells when no one is listening: nothing (the exit status says it)."""


def _hook(
    event,
    args,
    _ids=frozenset(),
    _exit=os._exit,
    _id=id,
    _type=type,
    _str=str,
    _bytes=bytes,
    _setattr=_SETATTR,
    _ctypes_acts=_CTYPES,
    _tell=_quiet,
    _code=CODE,
    _ctypes=CTYPES,
    _memory=MEMORY,
    _getframe=sys._getframe,
    _ctypes_dir=_CTYPES_DIR,
    _library=(),
    _lookups=_LOOKUPS,
    _c_api=_C_API,
    _len=len,
) -> None:
    """The audit hook; it runs with no globals, so every name it uses is an argument."""
    status = 0
    if event in _setattr:
        if _id(args[0]) in _ids:
            status = _code
    elif event in _ctypes_acts:
        frame = _getframe(1)  # who acted: the innermost frame outside the ctypes package
        while frame is not None and frame.f_code.co_filename.startswith(_ctypes_dir):
            frame = frame.f_back
        if frame is None or not frame.f_code.co_filename.startswith(_library):
            if event not in _lookups:
                status = _ctypes
            elif _len(args) > 1 and _type(args[1]) is _str and args[1].startswith(_c_api):
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
        status: int,
        _file=student_file,
        _send=send,
        _getframe=sys._getframe,
        _acts=TAMPERED,
        _where=where,
        _getline=linecache.getline,
        _pid=pid,
        _getpid=os.getpid,
    ) -> None:
        if _getpid() == _pid:
            _send({"ok": False, "tampered": _acts[status] + _where(_getframe(2), _file, _getline)})

    return tell


def arm(
    watched: Iterable[object],
    tell: Callable[[int], None] | None = None,
    library: tuple[str, ...] = (),
) -> None:
    """Install the hook for the rest of this process, watching ``watched`` (the grader's
    functions), ``tell`` (called with the status before the worker ends) and the hook itself.
    ``library``: the folders of installed code (``library_folders``), whose own ``ctypes`` use
    is left alone; with none, every ``ctypes`` act counts as the student's."""
    defaults = dict(zip(_hook.__code__.co_varnames[2:], _hook.__defaults__ or (), strict=False))
    hook = types.FunctionType(_hook.__code__, {}, "tripwire", None, None)  # no globals at all
    extra = (tell,) if tell is not None else ()
    defaults["_ids"] = frozenset(id(fn) for fn in (*watched, *extra)) | {id(hook)}
    defaults["_library"] = tuple(library)
    if tell is not None:
        defaults["_tell"] = tell
    hook.__defaults__ = tuple(defaults.values())  # before arming: not yet an audited act
    sys.addaudithook(hook)
