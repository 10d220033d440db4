"""The pack's judge-only modules, out of an answer's reach in every worker.

A pack's checks, oracles and strategies compute what is expected: an answer that imports them
(its checks' helpers, say) hands the judge its own answer back. The
judge's process needs them and a student's machine has them installed (``grade`` runs there),
but no worker lets an answer import them, wherever it is graded, so an answer gets the same
verdict on the student's machine as where the grade counts. ``hide`` takes them out of
``sys.modules`` (probes already hold what they use) and puts a finder first on
``sys.meta_path`` that refuses them with ``JudgeOnly``; the guard (``grader.worker.guard``)
sees one imported past the finder.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec


class JudgeOnly(ImportError):
    """An answer imported one of the pack's judge-only modules; the message says it in the
    student's terms (``grader.worker.serve.describe_exception`` sends it as it is)."""


def _within(name: str, prefixes: Sequence[str]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class RefuseJudgeOnly:
    """A meta path finder that refuses the judge-only modules and finds nothing else."""

    def __init__(self, prefixes: Sequence[str]):
        self.prefixes = tuple(prefixes)

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if _within(name, self.prefixes):
            raise JudgeOnly(
                f"imports the grader's checks: {name} is the grader's own code (what the judge "
                "computes the expected answers with), which no answer may import; write this "
                "part yourself",
                name=name,
            )
        return None  # not ours: the next finder looks

    def invalidate_caches(self) -> None:
        pass


def hide(prefixes: Sequence[str]) -> tuple[str, ...]:
    """Make ``prefixes`` (and their submodules) unimportable for the rest of this process;
    return the names the guard watches for in ``sys.modules``."""
    prefixes = tuple(prefixes)
    if not prefixes:
        return ()
    for name in [n for n in list(sys.modules) if _within(n, prefixes)]:
        parent, _, leaf = name.rpartition(".")
        del sys.modules[name]
        holder = sys.modules.get(parent)
        if holder is not None and getattr(holder, leaf, None) is not None:
            try:
                delattr(holder, leaf)
            except AttributeError:
                pass
    sys.meta_path.insert(0, RefuseJudgeOnly(prefixes))
    return prefixes
