"""The worker: the only process that runs student code.

It imports one student file by path, then answers the judge's requests (``probes``) one at a
time over the channel in ``grader.protocol.wire``. What it sends back is plain data and
tensors; the judge never trusts it beyond that. ``serve`` is entered from
``grader.worker.entry``, in a child forked from the warm template or in a spawned interpreter.

The probes are resolved before the student's file is imported and held in a closure
(``dispatcher``), out of reach of code that rewrites module globals; after the import and after
every call a ``grader.worker.guard.Guard`` checks that the grader's own objects are still the
ones the worker started with, and the reply says ``tampered`` if not. Text the worker sends is
made safe (``grader.shared.safetext``) and capped; the judge checks and cleans it again, since a
worker can lie.
"""

from __future__ import annotations

import functools
import gc
import importlib.util
import os
import sys
import time
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from grader.protocol import wire
from grader.protocol.boot import END, TAMPERED
from grader.shared.safetext import SHORT_LIMIT, TEXT_LIMIT, safe_text
from grader.worker import judgeonly, lacks, missing, tripwire
from grader.worker.frames import where_raised
from grader.worker.guard import Guard

GUARD_SAW = 118  # the guard's check found a change (the tripwire's own statuses: tripwire)
assert GUARD_SAW in TAMPERED

MAX_TEXT = TEXT_LIMIT


def _message(exc: BaseException) -> str:
    try:
        return safe_text(str(exc), MAX_TEXT)
    except BaseException:  # a hostile __str__ (one that raises, even SystemExit)
        return "<the exception's message could not be read>"


def describe_exception(
    exc: BaseException, student_dir: Path, unknown: tuple[str, ...] = ()
) -> dict:
    """The exception as plain data for the judge (which checks and cleans it again).
    ``unknown``: folders the student never had (the sandbox's copy of the submission, the
    scratch), each ending with a separator; a path in the message is said relative to them."""
    info: dict[str, Any] = {"type": safe_text(type(exc).__name__, SHORT_LIMIT)}
    info["message"] = _message(exc)
    for folder in unknown:
        info["message"] = info["message"].replace(folder, "")
    try:
        info["frames"] = where_raised(exc, student_dir)
    except Exception:  # a traceback the student's code tampered with
        info["frames"] = []
    try:
        lacking = lacks.explain(exc, info["frames"])
    except Exception:  # an exception chain the student's code tampered with
        lacking = None
    if lacking is not None:
        info["message"] = safe_text(lacking, MAX_TEXT)
    try:
        absent = missing.explain(exc, info["frames"], unknown)
    except Exception:  # an exception the student's code tampered with
        absent = None
    if absent is not None:
        info["message"], info["refused"] = safe_text(absent, MAX_TEXT), True
    if isinstance(exc, SyntaxError):
        try:
            info["file"] = Path(str(exc.filename or "")).name
            info["line"] = exc.lineno if type(exc.lineno) is int else 0
            info["code"] = str(exc.text or "").strip()[:SHORT_LIMIT]
        except Exception:
            pass
    from grader.worker.probes import NotPlainData

    if type(exc).__name__ == "BdbQuit":  # pdb.set_trace() read the end of an empty input
        info["message"] = (
            "your code stopped at a debugger (pdb.set_trace() or similar): the grader runs it "
            "with no terminal to debug in, so the debugger quit. Remove the call and grade again"
        )
    if isinstance(exc, judgeonly.JudgeOnly):  # said as it is, with the line that did it
        frames = [f for f in info.get("frames") or [] if "/" not in f["file"]]  # the student's
        where = f" (line {frames[-1]['line']} of {frames[-1]['file']})" if frames else ""
        info["message"] = safe_text(_message(exc) + where, MAX_TEXT)
        info["refused"] = True
    if isinstance(exc, NotPlainData | wire.NotEncodable):
        info["refused"] = True  # the grader refused a value: no "your code raised"
    return info


def load_student_module(
    exercise_id: str, student_file: Path, submission_root: Path
) -> types.ModuleType:
    """Import ``student_file`` under a private name. As with ``python exercises/exN.py``, the
    exercise's own folder comes first on ``sys.path`` (a helper module beside it, such as
    ``previous_chapters.py``, imports), then the submission's folder, so that its own
    ``exercises`` package wins over the installed stubs. What the worker itself needs is
    imported before (``serve``): a helper named like one of those modules shadows nothing."""
    for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
        del sys.modules[name]
    for folder in dict.fromkeys((str(submission_root), str(student_file.parent))):
        sys.path.insert(0, folder)
    name = "student_ex" + exercise_id.replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, student_file)
    assert spec is not None and spec.loader is not None  # a ``.py`` file's: intake names them
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def dispatcher(probes: Mapping[str, Callable[..., Any]]) -> Callable[..., Any]:
    """The worker's dispatch over ``probes``, held in a closure (an immutable tuple), not in a
    table that student code could find among module globals and rewrite."""
    table = tuple(probes.items())

    def dispatch(module: Any, state: dict, action: str, args: dict) -> Any:
        for name, probe in table:
            if name == action:
                return probe(module, state, **args)
        raise LookupError(f"the grader asked for a probe this exercise does not have: {action}")

    return dispatch


def _pack_of(exercise_id: str) -> Any:
    """The pack that declares ``exercise_id``, or None."""
    from grader.shared.course import packs
    from grader.shared.registry import BY_ID

    name = BY_ID[exercise_id].pack
    return next((p for p in packs() if p.name == name), None)


def _judge_only(exercise_id: str) -> tuple[str, ...]:
    """The judge-only modules of the pack that declares ``exercise_id``."""
    pack = _pack_of(exercise_id)
    return pack.judge_only if pack is not None else ()


def _load_worker_side(exercise_id: str) -> None:
    """Import the worker side of the exercise's pack (the modules its ``worker`` key names)
    before the student's folder is on ``sys.path``: a helper of theirs named like one of them
    is then never what the probes use (a worker forked from the fork server has them all)."""
    import importlib

    pack = _pack_of(exercise_id)
    for module in pack.worker if pack is not None else ():
        if module not in sys.modules:
            importlib.import_module(module)


def _refusal(exc: Exception) -> dict:
    """A reply the wire refused, said in the student's words."""
    return {
        "type": "NotPlainData",
        "message": safe_text(f"what your code returned cannot be sent to the grader: {exc}"),
        "frames": [],
        "refused": True,
    }


def reply(
    fd: int,
    message: dict,
    check: Callable[[], str | None],
    _send=wire.send,
    _exit=os._exit,
    _disable=gc.disable,
    _enable=gc.enable,
    _isenabled=gc.isenabled,
    _settrace=sys.settrace,
    _setprofile=sys.setprofile,
) -> None:
    """Send ``message`` once the grader is checked unchanged (``grader.worker.guard``). If
    student code tampered with it, say so instead and end the worker with the tampered status:
    the judge reads that from the kernel even if the channel was rerouted.

    A trace or profile function the student's code left set (a debugger, a profiler never
    stopped) is cleared first: it is no tampering, but it would run over the grader's frames.
    The collector is off from the check to the send, so that no finalizer of the student's can
    put a change back in between (a change to the grader's code, at any moment, is the
    tripwire's); what this calls is held in its defaults."""
    _settrace(None)
    _setprofile(None)
    collecting = _isenabled()
    _disable()
    try:
        problem = check()
        if problem is None:
            try:
                _send(fd, message)
            except Exception as exc:  # a value the wire cannot carry
                _send(fd, {"ok": False, "error": _refusal(exc)})
    finally:
        if collecting:
            _enable()
    if problem is not None:
        try:
            _send(fd, {"ok": False, "tampered": safe_text(problem, SHORT_LIMIT)})
        finally:
            _exit(GUARD_SAW)


def _sender(fd: int, _send=wire.send) -> Callable[[dict], None]:
    """``message -> None`` on the reply channel ``fd``, held in defaults (for the tripwire)."""

    def send(message: dict, _fd=fd, _send=_send) -> None:
        _send(_fd, message)

    return send


def _no_debugger(*args: Any, **kwargs: Any) -> None:
    """``breakpoint()`` in a worker: nothing (it has no terminal to debug in). ``-I`` makes
    Python ignore ``PYTHONBREAKPOINT``, so the hook itself is replaced."""


def _leaver(*streams: Any, _exit=os._exit) -> Callable[[], None]:
    """How the loop ends the worker when the judge asks: the grader's own output streams are
    flushed and the process exits at once, before any finalizer of the student's can run."""

    def leave() -> None:
        for stream in streams:
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - nothing to report: the grading is over
                pass
        _exit(0)

    return leave


def serve(
    exercise_id: str,
    student_file: str,
    submission_root: str,
    req_fd: int,
    rep_fd: int,
    started: Callable[[], None] | None = None,
) -> None:
    """Import the student's file, then answer requests until the judge closes the channel.

    The probes are resolved, the guard's snapshot taken and the tripwire armed before the
    student's file runs; then the judge is told "started" (what fails before it is the
    grader's own failure) and ``started()`` is called. What the loop calls is bound to its
    locals first, so that rebinding a module global of the grader changes nothing here."""
    from grader.worker import tables

    dispatch = dispatcher(tables.for_exercise(exercise_id))
    _load_worker_side(exercise_id)
    pack = _pack_of(exercise_id)
    hidden, file_hook = judgeonly.hide(_judge_only(exercise_id))
    watched = (dispatch,) if file_hook is None else (dispatch, file_hook)
    packages = ("grader",) if pack is None else ("grader", pack.package)
    guard = Guard(*watched, packages=packages, hidden=hidden)
    check = guard.checker(req_fd, rep_fd, armed=True)  # armed below, before the student's file
    answer, receive, clock = reply, wire.recv, time.perf_counter
    folders = (submission_root, str(Path(submission_root).resolve()), os.getcwd())
    unknown = tuple(sorted({os.path.join(p, "") for p in folders}, key=len, reverse=True))
    describe = functools.partial(describe_exception, unknown=unknown)
    closed = wire.ChannelClosed
    leave = _leaver(sys.stdout, sys.stderr)
    student_path = Path(student_file).resolve()
    student_dir = student_path.parent
    sys.breakpointhook = _no_debugger
    wire.send(rep_fd, {"ok": True, "value": "started"})
    if started is not None:
        started()
    library = tripwire.library_folders()
    tripwire.arm(guard.functions(), tripwire.teller(str(student_path), _sender(rep_fd)), library)
    try:
        module = load_student_module(exercise_id, student_path, Path(submission_root).resolve())
    except BaseException as exc:  # SystemExit at import is the student's doing too
        answer(rep_fd, {"ok": False, "error": describe(exc, student_dir)}, check)
        return
    answer(rep_fd, {"ok": True, "value": "ready"}, check)
    state: dict[str, Any] = {}
    while True:
        try:
            request = receive(req_fd)
        except closed:
            return
        if request.get("action") == END:
            leave()
        began = clock()
        try:
            message = {
                "ok": True,
                "value": dispatch(module, state, request["action"], request.get("args", {})),
                "t": clock() - began,
            }
        except BaseException as exc:
            message = {"ok": False, "error": describe(exc, student_dir)}
        answer(rep_fd, message, check)


def main(argv: list[str] | None = None) -> None:
    exercise_id, student_file, submission_root, req_fd, rep_fd = (argv or sys.argv[1:])[:5]
    serve(exercise_id, student_file, submission_root, int(req_fd), int(rep_fd))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
