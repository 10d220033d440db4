"""The worker: the only process that runs student code.

It imports one student file by path, then answers the judge's requests (``probes``) one at a
time over the channel in ``grader.wire``. What it sends back is plain data and tensors; the judge
never trusts it beyond that. Run as ``python -m grader.worker`` (spawn mode) or entered through
``serve`` in a child forked from the warm template (fork mode).
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from grader import wire

MAX_TEXT = 2000


def student_frames(exc: BaseException, student_dir: Path) -> list[dict]:
    """The traceback frames that lie in the student's own files, innermost last."""
    frames = []
    for fs in traceback.extract_tb(exc.__traceback__):
        try:
            inside = Path(fs.filename).resolve().is_relative_to(student_dir)
        except (OSError, ValueError):
            inside = False
        if inside:
            frames.append(
                {
                    "file": Path(fs.filename).name,
                    "line": fs.lineno or 0,
                    "function": fs.name,
                    "code": (fs.line or linecache.getline(fs.filename, fs.lineno or 0)).strip()[
                        :200
                    ],
                }
            )
    return frames[-5:]


def describe_exception(exc: BaseException, student_dir: Path) -> dict:
    try:
        message = str(exc)
    except Exception:  # a hostile __str__
        message = "<the exception's message could not be read>"
    info: dict[str, Any] = {
        "type": type(exc).__name__,
        "message": message[:MAX_TEXT],
        "frames": student_frames(exc, student_dir),
    }
    if isinstance(exc, SyntaxError):
        info["file"] = Path(exc.filename or "").name
        info["line"] = exc.lineno or 0
        info["code"] = (exc.text or "").strip()[:200]
    return info


def load_student_module(exercise_id: str, student_file: Path, submission_root: Path):
    """Import ``student_file`` under a private name; the submission's folder comes first on
    ``sys.path`` so that its own ``exercises`` package wins over the installed stubs."""
    for name in [m for m in sys.modules if m == "exercises" or m.startswith("exercises.")]:
        del sys.modules[name]
    sys.path.insert(0, str(submission_root))
    name = "student_ex" + exercise_id.replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, student_file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def serve(exercise_id: str, student_file: str, submission_root: str, req_fd: int, rep_fd: int):
    """Import the student's file, then answer requests until the judge closes the channel."""
    from grader import probes

    student_path = Path(student_file).resolve()
    student_dir = student_path.parent
    try:
        module = load_student_module(exercise_id, student_path, Path(submission_root).resolve())
    except BaseException as exc:  # SystemExit at import is the student's doing too
        wire.send(rep_fd, {"ok": False, "error": describe_exception(exc, student_dir)})
        return
    wire.send(rep_fd, {"ok": True, "value": "ready"})
    handlers = probes.for_exercise(exercise_id)
    state: dict[str, Any] = {}
    while True:
        try:
            request = wire.recv(req_fd)
        except wire.ChannelClosed:
            return
        began = time.perf_counter()
        try:
            handler = handlers[request["action"]]
            value = handler(module, state, **request.get("args", {}))
            reply = {"ok": True, "value": value, "t": time.perf_counter() - began}
        except BaseException as exc:
            reply = {"ok": False, "error": describe_exception(exc, student_dir)}
        try:
            wire.send(rep_fd, reply)
        except Exception as exc:  # a value the wire cannot carry
            wire.send(rep_fd, {"ok": False, "error": describe_exception(exc, student_dir)})


def main(argv: list[str] | None = None) -> None:
    exercise_id, student_file, submission_root, req_fd, rep_fd = (argv or sys.argv[1:])[:5]
    serve(exercise_id, student_file, submission_root, int(req_fd), int(rep_fd))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
