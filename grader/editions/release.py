"""The student edition (``grade release OUT``) of the packs in use, as a ready repository.

OUT gets the grader, the templates, ``constraints.txt`` and every pack in use without what is
the instructor's: its package (``pack.toml``, checks, probes) without its stubs, solution and
corpus folders, its ``pack.toml`` saying ``stubs = "../exercises"``; its stubs as the student's
``exercises/``; the code it and its stubs import that is found beside it (a course's models).
The ``pyproject.toml`` is the project's (a ``test`` extra for the developer's, ``grade_path``
set so that ``pytest`` grades) with a ``grader.exercises`` entry point per pack; the README,
the workflow that grades every push (with the ``GRADE_SEED`` secret as the course's seed) and
the ``.gitignore`` come from ``grader.editions.text``. Never copied: solutions, corpora,
tests, examples, benchmarks, any ``grading.toml`` (the course's seed). Before anything is
written, every exercise file must still be a stub, and no file may hold a distinctive line of
a pack's solution.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.editions import text as edition_text
from grader.editions.leaks import SolutionLeaked
from grader.editions.shipping import left_out
from grader.shared import tomlread
from grader.shared.course import packs as packs_in_use
from grader.shared.errors import UsageError
from grader.shared.packs import FILE, Pack, PackError, read_pack

PACKAGES = ("grader",)  # the grader's own packages, copied from the project
STUBS = "exercises"  # the student's folder: of a submission, and of the edition
TOP_LEVEL_FILES = ("constraints.txt",)
TOP_LEVEL_DIRS = ("templates",)
# grading.toml holds the course's grading seed: never handed out, wherever it was left.
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".hypothesis", "grading.toml")
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def project_root() -> Path:
    """The folder that holds this grader's package, its ``pyproject.toml`` and templates."""
    return Path(__file__).resolve().parents[2]


# --- what ships ----------------------------------------------------------------------------


@dataclass
class Shipment:
    packs: tuple[Pack, ...]
    packages: dict[str, Path]  # the code the packs need: top-level package -> its folder
    modules: dict[str, Path]  # ... and top-level modules of one file -> the file
    requires: list[str]  # distributions the packs import that the project does not depend on
    excluded: set[Path]  # the packs' stubs, solution and corpus folders: never copied as code


def _python_files(folder: Path, excluded: set[Path]) -> list[Path]:
    return [
        p
        for p in sorted(folder.rglob("*.py"))
        if "__pycache__" not in p.parts and not excluded & {p, *p.parents}
    ]


def imported(paths: list[Path]) -> set[str]:
    """The top-level modules the files import (absolute imports of the files that parse)."""
    names: set[str] = set()
    for path in paths:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def _key(name: str) -> str:
    """A distribution's or requirement's name, normalised (PEP 503)."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[(@]", name.strip(), maxsplit=1)[0]).lower()


def shipment(packs: tuple[Pack, ...], root: Path) -> Shipment:
    """What the edition of ``packs`` holds besides the grader: follows the imports of each
    pack's modules and stubs (and the modules its ``pack.toml`` names) to the code found
    beside it, and names the distributions it needs that the project does not depend on."""
    from importlib.metadata import packages_distributions
    from importlib.util import find_spec

    excluded = {p.resolve() for pack in packs for p in pack.paths.values()}
    doc = tomlread.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    depends = {_key(r) for r in doc.get("project", {}).get("dependencies", [])}
    distributions = packages_distributions()
    ours = set(distributions.get("grader", ()))  # the grader's distribution, if installed
    own = {*PACKAGES, STUBS, *(p.package for p in packs)}
    todo: set[str] = set()
    for pack in packs:
        todo |= {m.split(".")[0] for m in (*pack.worker, *pack.shared)}
        todo |= imported(_python_files(pack.folder, excluded))
        stubs = pack.path("stubs")
        todo |= imported(sorted(stubs.glob("*.py"))) if stubs and stubs.is_dir() else set()
    packages: dict[str, Path] = {}
    modules: dict[str, Path] = {}
    requires: set[str] = set()
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name in own or name in sys.stdlib_module_names:
            continue
        seen.add(name)
        found = set(distributions.get(name, ()))
        if found and not found & ours:  # installed by a distribution of its own
            if not {_key(d) for d in found} & depends:
                requires.add(min(found))
            continue
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:  # an optional import that is not here: nothing to ship
            continue
        if spec.submodule_search_locations:
            packages[name] = Path(list(spec.submodule_search_locations)[0]).resolve()
            todo |= imported(_python_files(packages[name], excluded))
        elif spec.origin and spec.origin.endswith(".py"):
            modules[name] = Path(spec.origin).resolve()
            todo |= imported([modules[name]])
    return Shipment(packs, packages, modules, sorted(requires), excluded)


# --- the solution scan ---------------------------------------------------------------------


def normalise(line: str) -> str:
    return re.sub(r"\s+", " ", line.split("#", 1)[0]).strip()


def _lines_of(paths) -> set[str]:
    return {normalise(ln) for p in paths for ln in p.read_text(encoding="utf-8").splitlines()}


def _data(line: str) -> bool:
    """Whether a line is a literal (or a dict's entry) of plain values, and nothing else."""
    text = line.rstrip(",").strip()
    for candidate in (text, "{" + text + "}"):
        try:
            ast.literal_eval(candidate)
            return True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
    return False


def distinctive_lines(
    packs: tuple[Pack, ...] | None = None, root: Path | None = None, min_length: int = 20
) -> dict[str, set[str]]:
    """For each solution file of the packs, its lines of code that appear nowhere in the
    stubs, the code the packs need or declare shared (``shared``: every answer may use it) or
    the grader (``with torch.no_grad():`` is not a
    solution; a pack's checks compute the answers, so a line of theirs may well be one). A line
    that is only data (``{"temperature": 0.0},``) is no key: a check's examples and a
    statement hold the answers' values too."""
    from grader.analysis.tokens import package_files

    packs = tuple(packs or packs_in_use())
    root = root or project_root()
    shipped = shipment(packs, root)
    stubs = [s for p in packs if (s := p.path("stubs"))]
    common = _lines_of(
        [
            *(f for folder in stubs for f in sorted(folder.glob("*.py"))),
            *(f for p in packs for name in p.shared for f in package_files(name, p.folder.parent)),
            *(f for folder in shipped.packages.values() for f in _python_files(folder, set())),
            *shipped.modules.values(),
            *(root / "grader").rglob("*.py"),
        ]
    )
    found: dict[str, set[str]] = {}
    for pack in packs:
        solution = pack.path("solution")
        if solution is None or not solution.is_dir():
            continue
        for path in sorted(solution.rglob("*.py")):
            keys = {
                k
                for k in _lines_of([path]) - common
                if len(k) >= min_length and not k.startswith(('"""', "'''")) and not _data(k)
            }
            if keys:
                found[f"{pack.name}'s solution {path.relative_to(solution).as_posix()}"] = keys
    return found


def solution_leaks(tree: Path, solutions: dict[str, set[str]]) -> list[str]:
    """The files under ``tree`` that hold a solution: at least two of a solution file's
    distinctive lines (all of them when it has only one)."""
    leaks = []
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or ".git" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        lines = {normalise(ln) for ln in text.splitlines()}
        for origin, keys in solutions.items():
            shared = keys & lines
            if len(shared) >= min(2, len(keys)):
                leaks.append(
                    f"{path.relative_to(tree)} holds {len(shared)} line(s) of {origin}, "
                    f"e.g. {sorted(shared)[0]!r}"
                )
    return leaks


def unsolved(packs: tuple[Pack, ...]) -> list[str]:
    """The packs' exercise files that are no stubs (no ``NotImplementedError``, or missing)."""
    bad = []
    for pack in packs:
        stubs = pack.path("stubs")
        if stubs is None or not stubs.is_dir():
            raise UsageError(f"the pack {pack.name} has no stubs folder to hand out ({FILE})")
        for ex in pack.exercises:
            path = stubs / ex.filename
            if not path.is_file():
                bad.append(f"{ex.filename} (missing)")
            elif "raise NotImplementedError" not in path.read_text(encoding="utf-8"):
                bad.append(ex.filename)
    return bad


# --- building ------------------------------------------------------------------------------


def _ignore(excluded: set[Path]):
    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set(IGNORE(folder, names))
        return skipped | {n for n in names if (Path(folder) / n).resolve() in excluded}

    return ignore


def _copy_stubs(packs: tuple[Pack, ...], target: Path) -> None:
    """Every pack's stubs into ``target`` (one folder: a submission keeps every answer in
    ``exercises/``); two packs may not hand out different files of one name."""
    target.mkdir()
    for stubs in (s for pack in packs if (s := pack.path("stubs")) is not None):
        for path in sorted(p for p in stubs.rglob("*") if p.is_file()):
            dest = target / path.relative_to(stubs)
            if IGNORE(str(stubs), list(path.relative_to(stubs).parts)):
                continue
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
            elif dest.read_bytes() != path.read_bytes() and path.name != "__init__.py":
                raise UsageError(f"two packs hand out {STUBS}/{dest.relative_to(target)}")


def _copy_pack(pack: Pack, staging: Path, excluded: set[Path]) -> None:
    dest = staging / pack.package
    shutil.copytree(pack.folder, dest, ignore=_ignore(excluded))
    for folder in sorted((p for p in dest.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):  # held only what stays behind (its stubs)
            folder.rmdir()
    source = (pack.folder / FILE).read_text(encoding="utf-8")
    (dest / FILE).write_text(edition_text.pack_toml(source, STUBS), encoding="utf-8")
    try:
        shipped = read_pack(dest)
    except PackError as exc:
        raise UsageError(f"the pack {pack.name} cannot be released: {exc}") from None
    if shipped.paths != {"stubs": (staging / STUBS).resolve()}:
        raise UsageError(f"the pack {pack.name} cannot be released: its {FILE} keeps a path")


def _data_files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc")
    )


def _refuse_places(out: Path, root: Path, shipped: Shipment) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not empty; choose a new folder")
    target = out.resolve()
    sources: list[Path | None] = [root / n for n in PACKAGES]
    sources += [p.folder for p in shipped.packs] + [p.path("stubs") for p in shipped.packs]
    sources += list(shipped.packages.values())
    if target == root or any(s in (target, *target.parents) for s in sources if s):
        raise UsageError(f"{out}: the release cannot be written there (it would copy itself)")
    names = [p.package for p in shipped.packs] + list(shipped.packages) + list(shipped.modules)
    clash = {*PACKAGES, STUBS, *TOP_LEVEL_DIRS} & set(names)
    if clash or len(set(names)) != len(names):
        raise UsageError(f"the packs' packages clash with the edition's own: {sorted(clash)}")


def build_release(
    out: Path,
    root: Path | None = None,
    packs: tuple[Pack, ...] | None = None,
    student: bool = True,
) -> list[Path]:
    """Write the student edition of ``packs`` (default: the packs in use) into ``out`` (which
    must not exist or be empty); return the files written. Raises ``UsageError`` when the
    release would be wrong. ``student``: judge-only modules that no shipped module needs and
    ``shared`` does not name are left out (``grader.editions.shipping``); the autograder's
    copy (``student=False``) keeps them."""
    root = (root or project_root()).resolve()
    packs = tuple(packs or packs_in_use())
    shipped = shipment(packs, root)
    if student:
        shipped.excluded |= left_out(packs, shipped.excluded)
    _refuse_places(out, root, shipped)
    not_stubs = unsolved(packs)
    if not_stubs:
        raise UsageError(
            "the packs' stubs are not all stubs (no NotImplementedError in "
            + ", ".join(not_stubs)
            + "); restore them before releasing"
        )
    exercises = [ex for pack in packs for ex in pack.exercises]
    staging = out.with_name(out.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name in PACKAGES:
            shutil.copytree(root / name, staging / name, ignore=_ignore(shipped.excluded))
        for name in TOP_LEVEL_DIRS:
            if (root / name).is_dir():
                shutil.copytree(root / name, staging / name, ignore=IGNORE)
        for name in TOP_LEVEL_FILES:
            shutil.copyfile(root / name, staging / name)
        _copy_stubs(packs, staging / STUBS)
        for pack in packs:
            _copy_pack(pack, staging, shipped.excluded)
        for name, folder in shipped.packages.items():
            shutil.copytree(folder, staging / name, ignore=_ignore(shipped.excluded))
        for name, file in shipped.modules.items():
            shutil.copyfile(file, staging / f"{name}.py")
        code = [*PACKAGES, STUBS, *(p.package for p in packs), *shipped.packages]
        data = {n: _data_files(staging / n) for n in code if n not in PACKAGES}
        doc = tomlread.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        pyproject = edition_text.pyproject(
            doc,
            packs,
            code,
            list(shipped.modules),
            {n: f for n, f in data.items() if f},
            shipped.requires,
        )
        (staging / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        readme = edition_text.readme(packs, exercises, TORCH_CPU_INDEX)
        (staging / "README.md").write_text(readme, encoding="utf-8")
        (staging / ".gitignore").write_text(edition_text.gitignore(), encoding="utf-8")
        workflow = staging / ".github" / "workflows" / "classroom.yml"
        workflow.parent.mkdir(parents=True)
        workflow.write_text(edition_text.workflow(TORCH_CPU_INDEX), encoding="utf-8")
        leaks = solution_leaks(staging, distinctive_lines(packs, root))
        if leaks:
            raise SolutionLeaked(leaks, packs)  # every file, and what to change
        if out.exists():
            out.rmdir()
        staging.rename(out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return sorted(p for p in out.rglob("*") if p.is_file())


def git_init(out: Path, title: str) -> None:
    run: dict[str, Any] = dict(cwd=out, check=True, capture_output=True)
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=grade release",
            "-c",
            "user.email=grade@localhost",
            "commit",
            "-q",
            "-m",
            f"{title} (student edition)",
        ],
        **run,
    )
