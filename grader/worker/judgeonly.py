"""The pack's judge-only modules, out of an answer's reach in every worker.

A pack's checks, oracles and strategies compute what is expected: an answer that imports them
(its checks' helpers, say) hands the judge its own answer back. The
judge's process needs them and a student's machine has them installed (``grade`` runs there),
but no worker lets an answer import them, wherever it is graded, so an answer gets the same
verdict on the student's machine as where the grade counts. ``hide`` takes them out of
``sys.modules`` (probes already hold what they use), puts a finder first on
``sys.meta_path`` that refuses them with ``JudgeOnly``, and adds an audit hook that refuses to
open their files (loading one by its path); the guard (``grader.worker.guard``) sees one
imported past the finder, and watches the hook's code and defaults.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec

from grader.worker.guard import within


class JudgeOnly(ImportError):
    """An answer imported one of the pack's judge-only modules; the message says it in the
    student's terms (``grader.worker.serve.describe_exception`` sends it as it is)."""


class RefuseJudgeOnly:
    """A meta path finder that refuses the judge-only modules and finds nothing else."""

    def __init__(self, prefixes: Sequence[str]):
        self.prefixes = tuple(prefixes)

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if within(name, self.prefixes):
            raise _refusal(name)
        return None  # not ours: the next finder looks

    def invalidate_caches(self) -> None:
        pass


def _refusal(name: str) -> JudgeOnly:
    return JudgeOnly(
        f"imports the grader's checks: {name} is the grader's own code (what the judge "
        "computes the expected answers with), which no answer may import; write this "
        "part yourself",
        name=name,
    )


def files_of(prefixes: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``(path, module)`` of each judge-only module's file or package folder, found without
    importing them (their parents are imported)."""
    from importlib.util import find_spec

    found = []
    for name in prefixes:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            found += [(os.path.realpath(p) + os.sep, name) for p in spec.submodule_search_locations]
        elif spec.origin:
            found.append((os.path.realpath(spec.origin), name))
    return tuple(found)


def file_guard(files: tuple[tuple[str, str], ...]) -> Callable[[str, tuple], None]:
    """An audit hook that refuses to open a judge-only module's file (``exec(open(...))``,
    ``spec_from_file_location``: loading it by its path rather than its name). Everything it
    uses is in its defaults; the guard watches its code and defaults."""

    def refuse_open(
        event,
        args,
        _files=files,
        _realpath=os.path.realpath,
        _type=type,
        _str=str,
        _fspath=os.fspath,
        _refusal=_refusal,
    ) -> None:
        if event != "open" or not _files:
            return
        path = args[0]
        if _type(path) is not _str:
            try:
                path = _fspath(path)
            except TypeError:  # a file descriptor
                return
            if _type(path) is not _str:
                return
        real = _realpath(path)
        for where, name in _files:
            if real == where or (where[-1:] in ("/", "\\") and real.startswith(where)):
                raise _refusal(name)

    return refuse_open


def hide(prefixes: Sequence[str]) -> tuple[tuple[str, ...], Callable[..., None] | None]:
    """Make ``prefixes`` (and their submodules) unimportable for the rest of this process,
    by name or by path; return the names the guard watches for in ``sys.modules`` and the
    audit hook it watches (None when there is nothing to hide)."""
    prefixes = tuple(prefixes)
    if not prefixes:
        return (), None
    files = files_of(prefixes)
    for name in [n for n in list(sys.modules) if within(n, prefixes)]:
        parent, _, leaf = name.rpartition(".")
        del sys.modules[name]
        holder = sys.modules.get(parent)
        if holder is not None and getattr(holder, leaf, None) is not None:
            try:
                delattr(holder, leaf)
            except AttributeError:
                pass
    sys.meta_path.insert(0, RefuseJudgeOnly(prefixes))
    hook = file_guard(files)
    sys.addaudithook(hook)
    return prefixes, hook
