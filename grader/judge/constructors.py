"""Why building one of the student's classes raised ``TypeError``: its constructor, as the
worker's ``constructor`` probe finds it.

Python says ``X.__init__() takes 1 positional argument but 2 were given`` (or ``missing ...
required positional arguments``, ``got an unexpected keyword argument``) when the arguments a
check passes do not fit ``X``'s constructor. Two causes are told apart by the class's own dict:

- ``X`` defines no ``__init__`` but a name spelled like it (``__int__``, ``_init_``): Python
  never calls that method, and ``nn.Module``'s own ``__init__``, which takes no arguments, ran;
- ``X`` defines ``__init__`` with other parameters than the call the exercise makes
  (``Block(cfg, rate)`` where the exercise builds ``Block(cfg)``).

A class built without error can still take more than the exercise's call passes: parameters with
defaults (``Block(cfg, rate=0.1)``), which the exercise's call leaves at their
defaults, or ``*args``/``**kwargs``, which it leaves empty. When a check that builds ``X``
exactly as the exercise does fails (its output differs, or ``X`` raises built that way), those
parameters are named as the cause (``extra_parameters``).

An ``AttributeError`` (``'X' object has no attribute 'att'``) on an object of a class with such a
misspelled ``__init__`` has the first cause: the attributes were never set. Anything else (a
``TypeError`` raised elsewhere, a class the probe does not find) is left to the exception's own
message: no cause is named without that evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from grader.judge.causes import ROOT, STATEMENT, Cause
from grader.judge.hints import raised
from grader.judge.launch.handle import StudentError, WorkerHandle
from grader.judge.properties import CheckFailed, explain_student_error

# Python's and nn.Module's words for arguments that do not fit a class's constructor.
_INIT_CALL = re.compile(
    r"\b([A-Za-z_]\w*)\.__init__\(\) (takes \d+ positional|missing \d+ required|"
    r"got an unexpected keyword)"
)
# Python's words for an attribute an object of class X lacks.
_NO_ATTRIBUTE = re.compile(r"^'([A-Za-z_]\w*)' object has no attribute")


def constructor_cause(worker: WorkerHandle, info: dict, calls: dict[str, str]) -> Cause | None:
    """The cause of a ``TypeError`` (the worker's ``info``) raised when a class of the
    student's was built with arguments that do not fit it, from the class's own constructor;
    ``calls`` says what the exercise builds its classes with (``{"Block": "cfg"}``:
    ``Block(cfg)``). None without that evidence."""
    message = str(info.get("message", ""))
    said = _INIT_CALL.search(message) if info.get("type") == "TypeError" else None
    lacks = _NO_ATTRIBUTE.match(message) if info.get("type") == "AttributeError" else None
    named = said or lacks
    if named is None:
        return None
    name = named.group(1)
    found = worker.call("constructor", name=name)
    if not found.get("found"):
        return None
    near, params = found.get("near_init") or [], found.get("parameters") or []
    if not found.get("defines_init") and near:
        text = (
            f"your class {name} has no __init__ of its own: its constructor is spelled "
            f"{near[0]} (misspelled), a method Python never calls, so building {name} ran "
            "nn.Module's own __init__, which takes no arguments and sets none of your "
            f"attributes ({message[:80]})"
        )
        hint = f"rename {near[0]} to __init__ (two underscores on each side of init)."
        return Cause(f"constructor:misspelled:{name}", text, hint, rank=ROOT)
    if said is not None and found.get("defines_init") and name in calls:
        takes, args = ", ".join(params) or "no argument", calls[name]
        text = (
            f"your {name}.__init__ takes ({takes}), but the exercise builds {name}({args}) "
            f"and nothing else: {name} must need nothing but {args}"
        )
        return Cause(
            f"constructor:signature:{name}", text, _signature_hint(name, args), rank=STATEMENT
        )
    return None


@contextmanager
def constructors_explained(worker: WorkerHandle, calls: dict[str, str]) -> Iterator[None]:
    """Turn a ``StudentError`` raised while building the student's classes into a failure
    whose cause is their constructor, when ``constructor_cause`` finds one; any other error
    goes on as it was."""
    try:
        yield
    except StudentError as exc:
        try:
            cause = constructor_cause(worker, exc.info, calls)
        except StudentError:  # a probe table without "constructor": the error as it came
            cause = None
        if cause is None:
            raise exc from None
        message = explain_student_error(exc.info)
        raise CheckFailed(message, raised(exc.info), cause=cause) from None


def extra_parameters(worker: WorkerHandle, name: str, args: str, seen: str = "") -> Cause | None:
    """The cause of a failure of ``name({args})`` built as the exercise builds it, when the
    student's class ``name`` takes parameters besides ``args``: ones with defaults (built from
    ``args`` alone, it uses the defaults) or ``*args``/``**kwargs`` (it gets nothing in them).
    ``seen``: what the check found that follows from it (a difference, or what the class raised
    built that way), kept as the evidence. None when it takes no more."""
    found = worker.call("constructor", name=name)
    params = found.get("parameters") or []
    wanted = {a.strip() for a in args.split(",")}

    def own(p: str) -> str:
        return p.split("=")[0].split(":")[0].strip().lstrip("*")

    defaults = [p for p in params if "=" in p and own(p) not in wanted]
    starred = [p for p in params if p.startswith("*") and own(p) not in wanted]
    if not found.get("defines_init") or not (defaults or starred):
        return None
    uses = [f"it uses the default {' and '.join(defaults)}"] if defaults else []
    uses += [f"it gets nothing in {' and '.join(starred)}"] if starred else []
    text = (
        f"your {name}.__init__ takes ({', '.join(params)}), but the exercise builds "
        f"{name}({args}) and nothing else: built that way {', and '.join(uses)}. "
        f"{name} must need nothing but {args}"
    ) + (f" (what it changes here: {seen})" if seen else "")
    return Cause(f"constructor:signature:{name}", text, _signature_hint(name, args), rank=STATEMENT)


def _signature_hint(name: str, args: str) -> str:
    """What to give ``name``'s constructor when the exercise builds ``name(args)``."""
    if "," in args:
        return f"give {name}.__init__ the parameters ({args}), in that order, and no others."
    return (
        f"give {name}.__init__ the parameters ({args}) only, and read anything else it needs "
        f"(a rate, a size) from {args} itself."
    )
