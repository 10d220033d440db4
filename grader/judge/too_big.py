"""A module far too big to be the answer, told as a failing check, for any pack's module
exercise.

An honest wrong answer can be much bigger than any right one (a whole model in place of one of
its layers: hundreds of MB, more than a reply may carry). A pack's build probe answers with
``grader.pack.worker.kept_within`` and a bound: a module over it is not kept in the worker,
which sends its structure instead (class, parameter count, largest parameters, first parts).
``refusal`` turns that into the message of a failing check, and ``remember`` keeps it for the
worker, so that the module is built once, not once per check or example (``refused``).
"""

from __future__ import annotations

import threading
from typing import Any

from grader.protocol.described import ModuleDescription

# --- the message ------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _name(value: Any) -> str:
    text = value if isinstance(value, str) else "?"
    return text if len(text) <= 80 else text[:77] + "..."


def _shape_text(value: Any) -> str:
    if not isinstance(value, list) or not all(_int(n) is not None for n in value[:8]):
        return "?"
    return "(" + ", ".join(str(n) for n in value[:8]) + ("," if len(value) == 1 else "") + ")"


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size:,} bytes"


def refusal(call: str, description: ModuleDescription, asked: str, margin: int) -> str:
    """The message for a module the worker found too big to send (``description["too_big"]``,
    checked here as any frame from a worker is: every field may be missing or wrong): what
    ``call`` returned, then ``asked`` (what the exercise asks for, "" for nothing), the bound
    being ``margin`` times the state of the largest right answer."""
    found = description.get("too_big")
    found = found if isinstance(found, dict) else {}
    count = _int(found.get("parameters"))
    counted = f" with {count:,} parameters" if count is not None else ""
    message = f"your {call} returned a {_name(description.get('class'))}{counted}"
    message += f"; {asked}" if asked else ""
    largest = [e for e in found.get("largest") or [] if isinstance(e, list) and len(e) == 2]
    if largest:
        message += ". Its largest parameters: " + ", ".join(
            f"{_name(name)} {_shape_text(shape)}" for name, shape in largest[:3]
        )
    parts = [e for e in found.get("parts") or [] if isinstance(e, list) and len(e) == 2]
    if parts:
        message += "; its parts: " + ", ".join(
            f"{_name(name)} ({_name(kind)})" for name, kind in parts[:8]
        )
    size = _int(found.get("state_bytes"))
    held = f"{_mb(size)} of weights and buffers" if size is not None else "its state"
    return (
        f"{message}. A module this big ({held}, over {margin} times the largest right answer) "
        "is not the one the exercise asks for: the grader neither reads nor runs it"
    )


# --- one build per worker ---------------------------------------------------------------------

_refused: list[tuple[Any, str]] = []  # (worker, message), the latest few
_lock = threading.Lock()  # a judge's threads grade exercises side by side


def remember(worker: Any, message: str) -> None:
    """Keep ``message`` for ``worker``: its module is too big, whatever it is called with."""
    with _lock:
        _refused[:] = [e for e in _refused if e[0] is not worker][-3:] + [(worker, message)]


def refused(worker: Any) -> str | None:
    """The message kept for ``worker`` (``remember``), if any."""
    with _lock:
        return next((message for w, message in _refused if w is worker), None)
