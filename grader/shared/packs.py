"""Exercise packs: where they are found and what their ``pack.toml`` declares.

A pack is a Python package whose folder holds a ``pack.toml``: the course's title, its
exercises (id, the student's file, the names it must define, points, the judge's checks and the
worker's probes as ``module:attribute`` references), the worker-side modules the fork server
imports before it forks, and the folders of its stubs, solution and corpus (relative to the
``pack.toml``). Packs are found through the ``grader.exercises`` entry points of what is
installed, or named by ``--pack`` (a name or a folder; ``GRADER_PACK`` in a child process's
environment): which are in use is the course's (``grader.shared.course``). Reading a pack
imports none of its code: a batch's main process lists exercises without torch.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from grader.shared.tomlread import TOMLDecodeError, loads

ENTRY_POINTS = "grader.exercises"
CHOSEN = "GRADER_PACK"  # a pack's name or the folder of a pack.toml; empty: every installed pack
FILE = "pack.toml"
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
FILENAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
REFERENCE = re.compile(r"^[A-Za-z_][\w.]*(:[A-Za-z_]\w*)?$")


class PackError(ValueError):
    """A pack cannot be used; the message says which and why, in one line."""


@dataclass(frozen=True)
class Exercise:
    id: str
    filename: str
    title: str
    names: tuple[str, ...]  # what the student's file must define
    max_score: float = 10.0
    # Seconds to grade the solution, the mean of a cold judge's time (``GRADER_TIMINGS``) and a
    # warm one's (examples replayed, as in a notebook's check_all()): balances exercises over
    # processes. Measured on the 2-core machine of bench/; only the ratios matter.
    cost: float = 1.0
    checks: str = ""  # "module:attribute" of the judge's list of checks
    # "module:attribute" of the worker's probes (name -> function); "": the declared checks'
    # table for its names (grader.worker.declared.declared_probes)
    probes: str = ""
    pack: str = ""  # the name of the pack that declares it

    @property
    def module(self) -> str:
        """A name made of the id (``"N.M"`` -> ``"exN_M"``): the student module's private
        name in the worker, the worker's folder, the corpus folder."""
        return "ex" + re.sub(r"\W", "_", self.id)


@dataclass(frozen=True)
class Pack:
    name: str
    title: str
    folder: Path  # the folder of its pack.toml (the package)
    exercises: tuple[Exercise, ...]
    worker: tuple[str, ...] = ()  # modules the fork server imports before it forks
    shared: tuple[str, ...] = ()  # packages whose code every answer may share (similarity)
    paths: dict[str, Path] = field(default_factory=dict)  # stubs, solution, corpus
    text: dict[str, str] = field(default_factory=dict)  # words for help, notebooks, editions
    hints: str = ""  # "module:attribute" of its hints for known kinds of failure (judge side)
    judge: tuple[str, ...] = ()  # modules (with their submodules) no answer may import

    @property
    def judge_only(self) -> tuple[str, ...]:
        """The modules that are the judge's alone, with their submodules: those ``judge``
        declares (oracles, strategies, the checks' package), every exercise's checks module
        and the hints module. Workers refuse an answer's import of any of them."""
        named = [*self.judge, *(e.checks.partition(":")[0] for e in self.exercises)]
        if self.hints:
            named.append(self.hints.partition(":")[0])
        return tuple(dict.fromkeys(n for n in named if n))

    @property
    def package(self) -> str:
        return self.folder.name

    def path(self, key: str) -> Path | None:
        """The pack's folder of ``key`` ("stubs", "solution", "corpus"), if it declares one."""
        return self.paths.get(key)


def _strings(table: dict, key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PackError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def _exercise(raw: object, pack: str, where: str) -> Exercise:
    if not isinstance(raw, dict):
        raise PackError(f"{where}: each [[exercise]] must be a table")
    missing = [k for k in ("id", "file", "title", "names", "checks") if k not in raw]
    if missing:
        raise PackError(f"{where}: an [[exercise]] lacks {', '.join(missing)}")
    ex_id, filename = str(raw["id"]), str(raw["file"])
    if not ID.match(ex_id):
        raise PackError(
            f"{where}: exercise id {ex_id!r} is not a short name (letters, digits, .-_)"
        )
    if not FILENAME.match(filename):
        raise PackError(f"{where}: exercise {ex_id}: {filename!r} is not a module's file name")
    for key in ("checks", "probes"):
        if key in raw and not REFERENCE.match(str(raw[key])):
            raise PackError(f"{where}: exercise {ex_id}: {key} must read module or module:name")
    try:
        points, cost = float(raw.get("points", 10.0)), float(raw.get("cost", 1.0))
    except (TypeError, ValueError):
        raise PackError(f"{where}: exercise {ex_id}: points and cost must be numbers") from None
    return Exercise(
        ex_id,
        filename,
        str(raw["title"]),
        _strings(raw, "names", f"{where}: exercise {ex_id}"),
        points,
        cost,
        str(raw["checks"]),
        str(raw.get("probes", "")),
        pack,
    )


def _within(path: Path, folder: Path) -> bool:
    return path == folder.resolve() or folder.resolve() in path.parents


def read_pack(folder: Path) -> Pack:
    """The pack whose ``pack.toml`` is in ``folder``; ``PackError`` says what is wrong."""
    where = str(folder / FILE)
    try:
        data = loads((folder / FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PackError(f"{folder}: not an exercise pack (no {FILE} in it)") from None
    except (OSError, UnicodeDecodeError, TOMLDecodeError) as exc:
        raise PackError(f"{where} cannot be read: {exc}") from None
    head = data.get("pack", {})
    if not isinstance(head, dict) or not head.get("name"):
        raise PackError(f"{where}: a [pack] table with a name is needed")
    name = str(head["name"])
    exercises = tuple(_exercise(raw, name, where) for raw in data.get("exercise", []))
    if not exercises:
        raise PackError(f"{where}: the pack declares no [[exercise]]")
    ids = [e.id for e in exercises]
    if len(set(ids)) != len(ids):
        raise PackError(f"{where}: an exercise id is declared twice")
    paths = {
        key: (folder / str(head[key])).resolve()
        for key in ("stubs", "solution", "corpus")
        if head.get(key)
    }
    inside = [k for k in ("solution", "corpus") if k in paths and _within(paths[k], folder)]
    if inside:
        raise PackError(
            f"{where}: the {' and '.join(inside)} must lie outside the package folder "
            f"{folder.name}/ (every worker may read the package): put it beside it"
        )
    text = data.get("text", {})
    known = str(head.get("hints", ""))
    if known and not REFERENCE.match(known):
        raise PackError(f"{where}: hints must read module or module:name")
    return Pack(
        name,
        str(head.get("title", name)),
        folder.resolve(),
        exercises,
        _strings(head, "worker", where),
        _strings(head, "shared", where),
        paths,
        {str(k): str(v) for k, v in text.items()} if isinstance(text, dict) else {},
        known,
        _strings(head, "judge", where),
    )


def entry_points(group: str = ENTRY_POINTS) -> list[tuple[str, str]]:
    """``(name, value)`` of the entry points in ``group`` of the distributions on ``sys.path``
    (the first of each distribution's name wins), sorted by name.

    What ``importlib.metadata.entry_points(group=...)`` finds, read straight from the
    ``entry_points.txt`` files: importing ``importlib.metadata`` (and the ``email`` package
    it parses metadata with) costs a tenth of a second, which every ``grade`` would pay before
    it can even say that a path does not exist."""
    from configparser import ConfigParser, Error

    seen: set[str] = set()
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or not dot:
                continue
            dist = re.sub(r"[-_.]+", "-", stem.split("-")[0]).lower()
            if dist in seen:
                continue
            seen.add(dist)
            parser = ConfigParser(delimiters=("=",), interpolation=None)
            parser.optionxform = str  # type: ignore[assignment, method-assign]
            try:
                parser.read(os.path.join(entry or ".", name, "entry_points.txt"), "utf-8")
            except (Error, OSError, UnicodeDecodeError):
                continue
            if parser.has_section(group):
                for key, value in parser.items(group):
                    found.setdefault(key.strip(), value.strip())
    return sorted(found.items())


def installed(name_only: str = "") -> list[Path]:
    """The folders of the packs that installed distributions declare (entry points); with
    ``name_only``, of the entry point of that name alone when there is one (another pack that
    is broken does not stop it)."""
    from importlib.util import find_spec

    declared = entry_points()
    if any(name == name_only for name, _ in declared):
        declared = [(name, value) for name, value in declared if name == name_only]
    folders = []
    for name, value in declared:
        try:
            spec = find_spec(value.split(":")[0])
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            raise PackError(f"the installed pack {name!r} names {value!r}, not found")
        folders.append(Path(list(spec.submodule_search_locations)[0]))
    return folders


def resolve(reference: str, default: str) -> object:
    """The object a ``module:attribute`` reference names (``default`` attribute if none)."""
    import importlib

    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute or default)
