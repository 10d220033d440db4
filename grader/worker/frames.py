"""Where an exception in student code was raised, said in the student's terms: the frames of
the student's own files (``student_frames``), and, when the exception was raised in shared
code the student called (a class imported from a package every answer may use), that code's
innermost frame (``where_raised``). The same frames, names and lines on every Python (3.12's
inlined comprehensions, 3.10's missing ``co_qualname``). Used by ``grader.worker.serve``'s
``describe_exception``; the judge checks and cleans what comes back.
"""

from __future__ import annotations

import linecache
import re
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from grader.shared.safetext import SHORT_LIMIT


def _code_line(fs: traceback.FrameSummary) -> str:
    return (fs.line or linecache.getline(fs.filename, fs.lineno or 0)).strip()[:SHORT_LIMIT]


def _inside(filename: str, folder: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError, TypeError):
        return False


def student_frames(exc: BaseException, student_dir: Path) -> list[dict]:
    """The traceback frames that lie in the student's own files, innermost last. A list, dict
    or set comprehension is its enclosing function's frame, as Python 3.12 runs it (PEP 709):
    the same frames, names and lines on every Python."""
    frames: list[dict] = []
    for fs in traceback.extract_tb(exc.__traceback__):
        if _inside(fs.filename, student_dir):
            frame = {
                "file": Path(fs.filename).name,
                "line": fs.lineno or 0,
                "function": str(fs.name),
                "code": _code_line(fs),
            }
            if frame["function"] in _INLINED and frames and frames[-1]["file"] == frame["file"]:
                frame["function"] = frames.pop()["function"]
            frames.append(frame)
    return frames[-5:]


_INLINED = ("<listcomp>", "<dictcomp>", "<setcomp>")  # their own frames before Python 3.12


def _shared_packages() -> tuple[str, ...]:
    """The packages whose code every answer may share (each pack's ``shared``): the code an
    answer imports or copies, whose frame is worth naming when an exception is raised in it."""
    from grader.shared.course import packs

    return tuple(name.split(".")[0] for pack in packs() for name in pack.shared)


def _module_of(frame: types.FrameType) -> str:
    module = frame.f_globals
    name = dict.get(module, "__name__") if isinstance(module, dict) else None
    return name if isinstance(name, str) else ""


def _shown_as(filename: str, module: str) -> str:
    """A shared module's file as ``package/module.py`` (always with a ``/``: a frame of the
    student's files is named by its file alone, and the judge tells the two apart so)."""
    path = Path(filename)
    parts = module.split(".")[:-1] if path.stem != "__init__" else module.split(".")
    return "/".join([*(parts or [path.parent.name or "?"]), path.name])[:SHORT_LIMIT]


def shared_frames(exc: BaseException, student_dir: Path) -> tuple[Any, Any]:
    """``(entry, innermost)``: the traceback entries where the exception went into and was
    raised in shared code (``_shared_packages``) below the student's last frame, or None."""
    shared, entry, innermost, inside = _shared_packages(), None, None, {}
    tb, seen = exc.__traceback__, 0
    while tb is not None and seen < 10_000:
        frame, seen = tb.tb_frame, seen + 1
        filename = frame.f_code.co_filename
        if filename not in inside:
            inside[filename] = _inside(filename, student_dir)
        if inside[filename]:
            entry = innermost = None  # the student's code again: what raised is below it
        elif _module_of(frame).split(".")[0] in shared:
            entry, innermost = entry or tb, tb
        tb = tb.tb_next
    return entry, innermost


def _qualname(frame: types.FrameType) -> str:
    """The frame's function as ``Class.method`` on every Python: ``co_qualname`` from 3.11; on
    3.10, the class of its ``self`` (or ``cls``) whose attribute of that name has this code."""
    code = frame.f_code
    named = getattr(code, "co_qualname", None)
    if isinstance(named, str):
        return named
    try:
        owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
        for klass in (owner if isinstance(owner, type) else type(owner)).__mro__:
            found = klass.__dict__.get(code.co_name)
            if getattr(getattr(found, "__func__", found), "__code__", None) is code:
                return f"{klass.__qualname__}.{code.co_name}"
    except Exception:  # noqa: BLE001 - an object of the student's: the plain name will do
        pass
    return code.co_name


def _shared_frame(tb: types.TracebackType) -> dict:
    code = tb.tb_frame.f_code
    return {
        "file": _shown_as(code.co_filename, _module_of(tb.tb_frame)),
        "line": tb.tb_lineno or 0,
        "function": _qualname(tb.tb_frame)[:SHORT_LIMIT],
        "code": linecache.getline(code.co_filename, tb.tb_lineno or 0).strip()[:SHORT_LIMIT],
    }


def _naming_line(entry: types.TracebackType, student_dir: Path) -> dict | None:
    """Where the student's module names the shared class or function that was called into
    (``X = package.X``, ``from package import X``), for an exception raised with no frame in
    the student's files (a probe called that name of theirs)."""
    frame = entry.tb_frame
    head = _qualname(frame).split(".")[0]
    called = dict.get(frame.f_globals, head) if isinstance(frame.f_globals, dict) else None
    for module in list(sys.modules.values()) if called is not None else ():
        filename = dict.get(vars(module), "__file__") if type(module) is types.ModuleType else 0
        if not isinstance(filename, str) or not _inside(filename, student_dir):
            continue
        names = [k for k, v in list(vars(module).items()) if v is called and isinstance(k, str)]
        naming = "|".join(re.escape(n) for n in names[:20]) or "(?!)"
        said = re.compile(
            rf"^(?:(?:class|def)\s+(?:{naming})\b|(?:{naming})\s*(?::[^=]*)?=(?!=)"
            rf"|(?:from\s+\S+\s+)?import\s.*\b(?:{naming})\b)"
        )
        lines = linecache.getlines(filename)
        found = [n for n, text in enumerate(lines, start=1) if said.match(text)]
        if found:
            code = lines[found[-1] - 1].strip()[:SHORT_LIMIT]
            return {
                "file": Path(filename).name,
                "line": found[-1],
                "function": "<module>",
                "code": code,
            }
    return None


def where_raised(exc: BaseException, student_dir: Path) -> list[dict]:
    """The frames the judge names: the student's (``student_frames``) and, when the exception
    was raised in shared code they called (a class imported from a package every answer may
    use), that code's innermost frame last, its file said with a ``/``; with no frame of the
    student's at all (a probe called a shared class by the student's name for it), the line
    of the student's file that names it comes first."""
    frames = student_frames(exc, student_dir)
    try:
        entry, innermost = shared_frames(exc, student_dir)
        if innermost is None:
            return frames
        naming = None if frames else _naming_line(entry, student_dir)
        return [*frames, *([naming] if naming else []), _shared_frame(innermost)]
    except Exception:  # the shared code's frames are a bonus: the student's are what counts
        return frames
