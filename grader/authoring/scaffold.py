"""The files ``grade new-exercise`` writes: one exercise, complete, as a worked example.

Every file holds a small working exercise (a running sum of a 1-D tensor) so that the pieces
can be read together: the stub and its statement, the solution, a check module (one hypothesis
property against a reference computed in the judge, a hint, a reproduce snippet), a probe (what
the worker does with the student's module), a corpus folder with one wrong answer and one
unusual right one, a test, and the ``[[exercise]]`` table of ``pack.toml``.

The places an author writes their own exercise carry a ``TODO(pack):`` comment: the comment
block and the statement right below it (a function, an assignment), or the docstring that
holds it. ``grade check-pack`` refuses a pack while one is left.
"""

from __future__ import annotations

import json
import keyword
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from grader.authoring.templates import (
    CHECK_NAME,
    CHECKS,
    CORRECT,
    EXERCISE,
    PACK_HEAD,
    PROBE,
    PROBES_HEAD,
    SIMPLE_CHECKS,
    SIMPLE_PROBE,
    SOLUTION,
    STUB,
    TEST,
    WRONG,
    fill,
)
from grader.shared.packs import FILE, FILENAME, ID, Pack, PackError, read_pack

TODO = "TODO(pack)"
DEFAULT_PACK = "course_pack"  # the package of a new pack, made in the current folder
# A new pack's folders, relative to its pack.toml: the solution and the corpus lie outside the
# package (every worker may read the package), beside it.
NEW_PACK_PATHS = {
    "stubs": "../exercises",
    "solution": "../solution/exercises",
    "corpus": "../tests/corpus",
}


class ScaffoldError(ValueError):
    """The exercise cannot be written; the message says why, in one line."""


@dataclass(frozen=True)
class Names:
    """What an exercise's files are called."""

    id: str
    title: str
    module: str  # the exercise's module name (corpus folder, check module)
    filename: str  # the student's file
    function: str  # what the student writes
    package: str  # the pack's package
    points: float = 10.0

    @property
    def table(self) -> str:
        """The name of the exercise's table of probes."""
        return self.module.upper()

    @property
    def stem(self) -> str:
        return self.filename.removesuffix(".py")


@dataclass
class Written:
    """What ``write`` did: the files it wrote (in order) and what to say about them."""

    pack_folder: Path
    new_pack: bool
    files: list[tuple[Path, str]] = field(default_factory=list)  # (path, what it is)
    notes: list[str] = field(default_factory=list)


# Words a short name never ends on ("sliding_window_input_and" reads cut off).
_DANGLING = frozenset("a an and as at by for from in into of on or the to with without".split())


def slug(title: str, words: int = 4) -> str:
    """``title`` as a short snake_case name: its first ``words`` words, less the small words
    (``and``, ``of``, ``the``...) a cut would leave at its end."""
    parts = re.findall(r"[a-z0-9]+", title.lower())[:words]
    while len(parts) > 1 and parts[-1] in _DANGLING:
        parts.pop()
    return "_".join(parts)


def module_of(exercise_id: str) -> str:
    """The module name of an exercise id (as ``grader.shared.packs.Exercise.module``)."""
    return "ex" + re.sub(r"\W", "_", exercise_id)


def function_name(title: str) -> str:
    name = slug(title) or "answer"
    if name[0].isdigit():
        name = "f_" + name
    return name + "_" if keyword.iskeyword(name) else name


def names_for(
    exercise_id: str,
    title: str,
    package: str,
    filename: str | None = None,
    function: str | None = None,
    points: float = 10.0,
) -> Names:
    if not ID.match(exercise_id):
        raise ScaffoldError(
            f"exercise id {exercise_id!r} is not a short name (letters, digits, .-_)"
        )
    if not title.strip():
        raise ScaffoldError("--title must say what the exercise is")
    module = module_of(exercise_id)
    filename = filename or (f"{module}_{slug(title)}.py" if slug(title) else f"{module}.py")
    if not filename.endswith(".py"):
        filename += ".py"
    if not FILENAME.match(filename):
        raise ScaffoldError(f"{filename!r} is not a module's file name (letters, digits, _)")
    function = function or function_name(title)
    if not function.isidentifier() or keyword.iskeyword(function):
        raise ScaffoldError(f"{function!r} is not a Python function name")
    return Names(exercise_id, title.strip(), module, filename, function, package, points)


def _literal_halves(message: str) -> tuple[str, str]:
    """``message`` in two halves (before " in exercises/" and from it), each escaped for a
    double-quoted Python string: the stub's lines stay short."""
    head, sep, tail = message.partition(" in exercises/")
    escape = lambda t: t.replace("\\", "\\\\").replace('"', '\\"')  # noqa: E731
    return escape(head), escape(sep + tail)


def not_done_message(n: Names) -> str:
    """The stub's message: the grader shows what follows "not done yet"."""
    where = f"write {n.function}() in exercises/{n.filename}."
    if re.fullmatch(r"[\d.]+", n.id):
        return f"Exercise {n.id} is not done yet: {where}"
    return f"Not done yet: {where}"


# --- where things go ---------------------------------------------------------------------------


def _module_file(pack_folder: Path, module: str) -> Path | None:
    """The file of ``module`` if it lies in the pack's package (``package.a.b`` ->
    ``folder/a/b.py``)."""
    package, _, rest = module.partition(".")
    if package != pack_folder.name or not rest:
        return None
    path = pack_folder.joinpath(*rest.split(".")).with_suffix(".py")
    return path if path.is_file() else None


def _probes_module(pack: Pack | None, package: str, folder: Path) -> tuple[str, Path]:
    """The probes module a new exercise's probe goes in: the one the pack's last exercise
    uses, when it is a file of the package; else ``package.probes``."""
    if pack is not None:
        for ex in reversed(pack.exercises):
            module = ex.probes.partition(":")[0]
            path = _module_file(folder, module)
            if path is not None:
                return module, path
    return f"{package}.probes", folder / "probes.py"


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def _existing_pack(folder: Path, exercise_id: str) -> Pack | None:
    """The pack at ``folder`` (None for a new one), refused if it has the exercise already."""
    package = folder.name
    if not package.isidentifier() or keyword.iskeyword(package):
        raise ScaffoldError(
            f"{folder}: a pack's folder is a Python package: its name must be one "
            f"(letters, digits, _), e.g. {DEFAULT_PACK}"
        )
    if not (folder / FILE).is_file():
        return None
    try:
        pack = read_pack(folder)
    except PackError as exc:
        raise ScaffoldError(str(exc)) from None
    if any(e.id == exercise_id for e in pack.exercises):
        raise ScaffoldError(f"the pack {pack.name} already has an exercise {exercise_id!r}")
    return pack


def _pack_paths(folder: Path, pack: Pack | None) -> dict[str, Path]:
    """The pack's folders (those of a new pack for None); a ScaffoldError if one is missing."""
    paths = (
        {k: (folder / v).resolve() for k, v in NEW_PACK_PATHS.items()}
        if pack is None
        else dict(pack.paths)
    )
    missing = [k for k in ("stubs", "solution", "corpus") if k not in paths]
    if missing:
        raise ScaffoldError(
            f"{folder / FILE} declares no {', '.join(missing)} folder: add "
            + ", ".join(f'{k} = "..."' for k in missing)
            + " to its [pack] table"
        )
    return paths


def _values(
    n: Names, folder: Path, pack: Pack | None, probes_module: str, test_file: Path, simple: bool
) -> dict[str, str]:
    """What the templates are filled with."""
    pack_name = folder.name.replace("_", "-") if pack is None else pack.name
    values = {
        "id": n.id,
        "id_literal": json.dumps(n.id),
        "title": n.title,
        "title_literal": json.dumps(n.title),
        "module": n.module,
        "filename": n.filename,
        "stem": n.stem,
        "function": n.function,
        "table": n.table,
        "points": f"{n.points:g}",
        **dict(
            zip(("not_done", "not_done_where"), _literal_halves(not_done_message(n)), strict=True)
        ),
        "pack_name": pack_name,
        "pack_name_literal": json.dumps(pack_name),
        "pack_title_literal": json.dumps(f"The exercises of {pack_name}"),
        "probes_module": probes_module,
        "probes_literal": json.dumps(probes_module),
        "checks_module": f"{folder.name}.checks.{n.module}",
        "pack_from_test": json.dumps(_relative(folder, test_file.parent)),
        **{key: value for key, value in NEW_PACK_PATHS.items()},
    }
    values["check_name"] = fill(CHECK_NAME, values)
    values["probe_helper"] = "answer_probes" if simple else "plain"
    return values


def write(
    folder: Path,
    exercise_id: str,
    title: str,
    filename: str | None = None,
    function: str | None = None,
    points: float = 10.0,
    simple: bool = False,
) -> Written:
    """Write the scaffold of an exercise in the pack at ``folder`` (created when it holds no
    pack.toml: a new pack whose folders lie beside it); with ``simple``, its check in the
    declarative form (``same_as_reference``) and its probe table ``answer_probes``. Nothing is
    overwritten: a file that exists already is a ``ScaffoldError`` before anything is
    written."""
    folder = folder.resolve()
    pack = _existing_pack(folder, exercise_id)
    n = names_for(exercise_id, title, folder.name, filename, function, points)
    if pack is not None and any(e.filename == n.filename for e in pack.exercises):
        raise ScaffoldError(f"the pack {pack.name} already has an exercise in {n.filename}")
    paths = _pack_paths(folder, pack)
    probes_module, probes_file = _probes_module(pack, folder.name, folder)
    corpus = paths["corpus"] / n.module
    test_file = paths["corpus"].parent / f"test_{n.module}.py"
    values = _values(n, folder, pack, probes_module, test_file, simple)
    checks_text = SIMPLE_CHECKS if simple else CHECKS

    files: list[tuple[Path, str, str]] = [  # (path, text, what it is)
        (paths["stubs"] / n.filename, fill(STUB, values), "the stub students get"),
        (paths["solution"] / n.filename, fill(SOLUTION, values), "the solution"),
        (folder / "checks" / f"{n.module}.py", fill(checks_text, values), "the checks (judge)"),
        (corpus / "wrong_answer_1.py", fill(WRONG, values), "a wrong answer"),
        (corpus / "correct_unusual_1.py", fill(CORRECT, values), "an unusual right answer"),
        (test_file, fill(TEST, values), "a test"),
    ]
    taken = [p for p, _, _ in files if p.exists()]
    if taken:
        raise ScaffoldError(f"{taken[0]} exists already: nothing was written")

    done = Written(folder, pack is None)
    folder.mkdir(parents=True, exist_ok=True)
    if pack is None:
        _create(
            folder / "__init__.py", f'"""The exercise pack {values["pack_name"]}."""\n', done, ""
        )
    if not (folder / "checks" / "__init__.py").exists():
        (folder / "checks").mkdir(exist_ok=True)
        _create(
            folder / "checks" / "__init__.py",
            '"""The judge side: one module per exercise."""\n',
            done,
            "",
        )
    for path, text, what in files:
        _create(path, text, done, what)
    _write_probe(probes_file, pack, values, SIMPLE_PROBE if simple else PROBE, done)
    _write_exercise_table(folder, pack is None, values, done)
    try:
        read_pack(folder)
    except PackError as exc:  # what we wrote must read: a bug of ours if not
        raise AssertionError(f"the scaffold's pack.toml does not read: {exc}") from None
    return done


def _write_probe(
    probes_file: Path, pack: Pack | None, values: dict[str, str], probe_text: str, done: Written
) -> None:
    """The probe: appended to the pack's probes module (made if there is none)."""
    helper, probes_module = values["probe_helper"], values["probes_module"]
    if probes_file.exists():
        current = probes_file.read_text(encoding="utf-8")
        face = r"^from grader\.pack\.worker import"
        imported = re.search(rf"{face}[^\n]*\b{helper}\b", current, re.M)
        parens = re.search(rf"{face} \(([^)]*)\)", current, re.M)
        has_it = imported or (parens and re.search(rf"\b{helper}\b", parens.group(1)))
        values["import"] = (
            "" if has_it else f"from grader.pack.worker import {helper}  # noqa: E402\n"
        )
        probe = fill(probe_text, values)
        probes_file.write_text(current.rstrip("\n") + "\n" + probe, encoding="utf-8")
        done.files.append((probes_file, "its probe, appended (worker side)"))
        if pack is not None and probes_module not in pack.worker:
            done.notes.append(
                f"{probes_module} is not in the worker list of {FILE}: add it, so that every "
                "worker has it loaded"
            )
    else:
        values["import"] = ""
        text = fill(PROBES_HEAD, values) + fill(probe_text, values)
        _create(probes_file, text, done, "its probe (worker side)")
        if pack is not None:
            done.notes.append(
                f"add {probes_module!r} to the worker list of {FILE}, so that every worker "
                "has it loaded"
            )


def _write_exercise_table(
    folder: Path, new_pack: bool, values: dict[str, str], done: Written
) -> None:
    """The exercise's [[exercise]] table: appended to pack.toml, or a new pack.toml."""
    toml = folder / FILE
    head = (
        fill(PACK_HEAD, values)
        if new_pack
        else toml.read_text(encoding="utf-8").rstrip("\n") + "\n"
    )
    toml.write_text(head + fill(EXERCISE, values), encoding="utf-8")
    done.files.append(
        (
            toml,
            "the pack, with the exercise's [[exercise]] table"
            if new_pack
            else "its [[exercise]] table, appended",
        )
    )


def _create(path: Path, text: str, done: Written, what: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if what:
        done.files.append((path, what))


def todo_count(written: Written) -> int:
    return sum(
        path.read_text(encoding="utf-8").count(TODO)
        for path, _ in written.files
        if path.suffix in (".py", ".toml")
    )
