"""Which of a pack's own files the student edition ships, and why each.

A student's ``grade`` runs the pack's checks on the student's machine, so the edition ships
every module of the pack that grading needs: the exercises' checks and hints modules, the worker
side (probes, the reference students build on), and every module they import, judge-only or
not. A judge-only module (``judge`` in ``pack.toml``: an oracle, strategies) that nothing
shipped imports stays out, unless the author lists it in ``shared``. A judge-only module that
ships because a check imports it is named with the check that needs it: students can read it
(an oracle that is a whole answer is readable in the edition).

``pack_files`` classifies a pack's Python files (stubs, solution and corpus aside) with their
reasons; ``grade release`` prints them (``notes``) and leaves out what ``left_out`` says.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.shared.packs import Pack


@dataclass(frozen=True)
class Shipped:
    path: Path  # the file, in the pack's folder
    module: str  # its dotted name
    ships: bool
    why: str


def within(name: str, prefixes: Iterable[str]) -> bool:
    """Whether module ``name`` is one of ``prefixes`` or inside one of them."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _module_of(pack: Pack, path: Path) -> str:
    parts = [pack.package, *path.relative_to(pack.folder).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, module: str) -> set[str]:
    """The dotted names ``path`` (the module ``module``) imports, relative imports resolved;
    ``from a import b`` gives ``a`` and ``a.b`` (``b`` may be a module)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
        return set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def pack_files(pack: Pack, excluded: set[Path]) -> list[Shipped]:
    """Every Python file of ``pack`` outside ``excluded`` (its stubs, solution and corpus):
    whether the student edition ships it, and why."""
    files = {
        _module_of(pack, p): p
        for p in sorted(pack.folder.rglob("*.py"))
        if "__pycache__" not in p.parts and not excluded & {p.resolve(), *p.resolve().parents}
    }
    judge_only = pack.judge_only
    runs = {e.checks.partition(":")[0] for e in pack.exercises}
    runs |= {pack.hints.partition(":")[0]} if pack.hints else set()
    why: dict[str, str] = {}
    for name in files:
        if name in runs:
            why[name] = "judge side: the checks a student's grade runs"
        elif not within(name, judge_only):
            why[name] = "worker side or shared: probes, the reference, what answers may use"
        elif within(name, pack.shared):
            why[name] = "judge-only, listed in shared"
    todo = list(why)
    while todo:  # what the shipped modules import ships too: the grade needs it
        name = todo.pop()
        for used in sorted(imports_of(files[name], name)):
            if used in files and used not in why:
                why[used] = f"judge-only, imported by {name} (the grade needs it)"
                todo.append(used)
    for name in files:  # a package's __init__ ships with any module inside it
        if name not in why and any(m.startswith(name + ".") for m in why):
            why[name] = "the package of modules that ship"
    return [
        Shipped(path, name, name in why, why.get(name, "judge-only, not needed by the checks"))
        for name, path in files.items()
    ]


def left_out(packs: Iterable[Pack], excluded: set[Path]) -> set[Path]:
    """The packs' files the student edition leaves out (judge-only, needed by nothing shipped,
    not in ``shared``)."""
    return {f.path.resolve() for pack in packs for f in pack_files(pack, excluded) if not f.ships}


def notes(packs: Iterable[Pack]) -> list[str]:
    """What ``grade release`` says of each pack's own files: shipped or left out, and why."""
    lines = []
    for pack in packs:
        lines.append(f"{pack.name}: {pack.package}/, without its stubs, solution and corpus")
        for f in pack_files(pack, {p.resolve() for p in pack.paths.values()}):
            rel = f.path.relative_to(pack.folder.parent).as_posix()
            lines.append(f"  {'ships' if f.ships else 'left out'}  {rel}: {f.why}")
    return lines
