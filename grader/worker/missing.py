"""A name the exercise asks for that the student's file does not define, said as that.

A probe looks up the names an exercise asks for in the student's module (a function, a
class); when one is missing, Python says ``AttributeError: module 'student_ex9_1' has no
attribute 'build_layer'``: a module name the student never wrote, and "your code raised" for
code the student did not write either. ``explain`` turns it into one sentence: the
student's file defines no such name, and the names it does define that are spelt nearly the
same. It is called by ``grader.worker.serve.describe_exception`` after a probe failed, so it
imports nothing then.
"""

from __future__ import annotations

import difflib
import types

STUDENT_MODULE_PREFIX = "student_ex"  # grader.worker.serve.load_student_module's names


def explain(exc: BaseException, frames: list[dict], unknown: tuple[str, ...] = ()) -> str | None:
    """The sentence for ``exc`` when it is a probe's lookup of a name the student's module
    lacks (raised outside the student's own lines: ``frames`` is empty); None otherwise.
    ``unknown``: folders to leave out of the file's path (the sandbox's copy)."""
    if type(exc) is not AttributeError or frames:
        return None
    module, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    if type(module) is not types.ModuleType or not isinstance(name, str):
        return None
    if not str(module.__dict__.get("__name__", "")).startswith(STUDENT_MODULE_PREFIX):
        return None
    where = str(module.__dict__.get("__file__", "") or "your file")
    for folder in unknown:
        where = where.replace(folder, "")
    defined = [n for n in module.__dict__ if isinstance(n, str) and not n.startswith("_")]
    near = difflib.get_close_matches(name, defined, n=2, cutoff=0.6)
    also = f" (it defines {' and '.join(near)}: is that one meant?)" if near else ""
    return f"{where.replace(chr(92), '/')} defines no {name}, which the exercise asks for{also}"
