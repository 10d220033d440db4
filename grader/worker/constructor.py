"""How a class of the student's is built: the ``constructor`` probe any pack may declare, for
the judge's ``grader.pack.judge.constructor_cause`` (a misspelled ``__init__``, a constructor
taking other parameters than the exercise's call)."""

from __future__ import annotations

import difflib
import inspect
from typing import Any


def constructor(module: Any, state: dict, name: str) -> dict:
    """How the student's class ``name`` (in their module) is built: whether it defines
    ``__init__`` itself, the names in its own dict spelled like ``__init__`` (``__int__``: a
    method Python never calls), and the parameters its constructor takes."""
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        return {"found": False}
    mangled = f"_{cls.__name__.lstrip('_')}__"  # ``def __init(...)`` is stored mangled
    own = {
        (n[len(mangled) - 2 :] if n.startswith(mangled) else n): n
        for n in vars(cls)
        if isinstance(n, str) and n != "__init__"
    }
    near = difflib.get_close_matches("__init__", list(own), n=3, cutoff=0.75)
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        params = []
    return {
        "found": True,
        "defines_init": "__init__" in vars(cls),
        "near_init": [n for n in near if n != "__init_subclass__"][:3],
        "parameters": [str(p)[:60] for p in params][:8],
    }
