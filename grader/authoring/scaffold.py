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


def slug(title: str, words: int = 4) -> str:
    """``title`` as a short snake_case name (its first ``words`` words)."""
    parts = re.findall(r"[a-z0-9]+", title.lower())
    return "_".join(parts[:words])


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


# --- the templates (<<key>> is replaced; nothing else is) -----------------------------------

STUB = '''"""Exercise <<id>>: <<title>>.

TODO(pack): the statement, as students read it: what to write, for which inputs, and what is
graded. Below, a worked example to replace (a running sum).

Your task: write ``<<function>>(x)``. Given a 1-D float tensor ``x``, return the tensor of its
running sums, ``y[i] = x[0] + x[1] + ... + x[i]``, with the shape and dtype of ``x``.

What is graded: the values, for any 1-D tensor of any length; ``x`` itself is left unchanged.

Hint: PyTorch has a function for it; a loop that keeps a total works too.
"""


# TODO(pack): the function(s) the student writes, with the statement's signature; each raises
# NotImplementedError until it is written (the grader then says "not done yet", not "wrong").
def <<function>>(x):
    """The running sums of the 1-D tensor ``x``."""
    raise NotImplementedError(
        "<<not_done>>"
        "<<not_done_where>>"
    )
'''

SOLUTION = '''"""Exercise <<id>>: <<title>> (the solution: students never see it)."""

import torch


# TODO(pack): the solution, with the stub's signature.
def <<function>>(x):
    return torch.cumsum(x, dim=0)
'''

CHECKS = '''"""Checks for exercise <<id>>: <<title>>.

Judge side: the examples, the reference answer and every comparison live here. The student's
code runs only in the worker (the probes of ``<<probes_module>>``), which sends back plain data.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.judge import hints
from grader.judge.properties import Check, CheckFailed, assert_close


# TODO(pack): the examples the property is checked on: a hypothesis strategy of plain data
# (small sizes find the same mistakes faster, and hypothesis shrinks a failure to a small one).
def examples() -> st.SearchStrategy[dict]:
    values = st.floats(min_value=-10, max_value=10, allow_nan=False, width=32)
    return st.fixed_dictionaries({"x": st.lists(values, min_size=1, max_size=8)})


# TODO(pack): the reference answer, computed here in the judge, never by the student's code.
def expected(ex: dict) -> torch.Tensor:
    return torch.cumsum(torch.tensor(ex["x"]), dim=0)


# TODO(pack): ask the worker (a probe of <<probes_module>>) and compare. CheckFailed says what
# is wrong in plain words; its kind (grader.judge.hints) chooses the hint shown.
def check_values(worker, ex: dict) -> None:
    got = worker.call("call", x=torch.tensor(ex["x"]))
    if not isinstance(got, torch.Tensor):
        kind = hints.returned(type(got).__name__)
        raise CheckFailed(f"<<function>>(x) returned a {type(got).__name__}, not a tensor", kind)
    assert_close(got, expected(ex), f"<<function>>(x) for x = {ex['x']}")


# TODO(pack): the snippet a student pastes in their clone to see the failure (the grader points
# its "from exercises..." line at the file it graded).
def reproduce(ex: dict) -> str:
    return f"""\\
import torch
from exercises.<<stem>> import <<function>>

x = torch.tensor({ex["x"]!r})
print("<<function>>(x) =", <<function>>(x))
print("expected:      ", torch.cumsum(x, dim=0))
"""


# TODO(pack): the checks: a name a student understands, points (scaled to the exercise's), and
# a hint for when the answer is wrong.
CHECKS = [
    Check(
        name="<<function>>(x) returns the running sums of x, for any 1-D tensor",
        points=10,
        strategy=examples(),
        run=check_values,
        hint="y[i] is the sum of x[0] ... x[i], the last one included: torch.cumsum(x, dim=0) "
        "computes it.",
        reproduce=reproduce,
    ),
]
'''

PROBES_HEAD = '''"""The worker side of the pack <<pack_name>>: what a worker does with a
student's module, one table of probes per exercise (named in pack.toml). Probes use torch and
the grader's probe library (``grader.worker.probes``), never the judge or hypothesis, and
judge nothing."""

from __future__ import annotations

from grader.worker.probes import plain
'''

PROBE = """

# --- exercise <<id>>: <<title>>
<<import>>

# TODO(pack): what the worker does with the student's module: call what the student wrote with
# the judge's inputs and send back plain data (``plain`` refuses anything else, in the
# student's words).
def _<<module>>_call(module, state, x):
    return plain(module.<<function>>(x), "<<function>> returned")


<<table>> = {"call": _<<module>>_call}
"""

WRONG = '''"""TODO(pack): a wrong answer students write, and why it is wrong; name the file after it
(wrong_<what it does>.py). Here: the total, not the running sums."""

import torch


# TODO(pack): the wrong answer, and below, part of the name of each check it must fail (the
# corpus's headers: expect-failing, expect-hint, expect-no-hint; see grader.authoring.corpus).
# expect-failing: <<check_name>>
def <<function>>(x):
    return x.sum() * torch.ones_like(x)
'''

CORRECT = '''"""TODO(pack): a right answer written otherwise than the solution (a loop,
another library call, a copy of shared code): the checks must not fail it. Here: a loop that
keeps a total."""

import torch


# TODO(pack): the unusual right answer.
def <<function>>(x):
    out = torch.empty_like(x)
    total = 0.0
    for i in range(len(x)):
        total = total + x[i]
        out[i] = total
    return out
'''

TEST = '''"""Exercise <<id>> (<<title>>) of the pack <<pack_name>>: ``grade check-pack`` proves it
(its solution gets full marks, its stub reads "not done yet", its corpus gets what it must),
and its checks have points and hints."""

import subprocess
import sys
from pathlib import Path

PACK = (Path(__file__).resolve().parent / <<pack_from_test>>).resolve()


def test_check_pack_proves_the_exercise():
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "check-pack", str(PACK), "-e", <<id_literal>>]
        + ["--mutants", "0"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_checks_have_points_and_hints():
    sys.path.insert(0, str(PACK.parent))
    from <<checks_module>> import CHECKS

    assert CHECKS and all(c.points > 0 and c.hint and c.reproduce for c in CHECKS)
'''

PACK_HEAD = """# The exercise pack <<pack_name>> (grade new-exercise wrote it). Paths are
# relative to this file; the solution and the corpus lie outside the package, which every
# worker may read.
[pack]
name = <<pack_name_literal>>
title = <<pack_title_literal>>
# imported by the fork server before it forks: every worker has them loaded
worker = [<<probes_literal>>]
# packages whose code every answer may share (left out of the similarity of two answers)
shared = []
stubs = "<<stubs>>"
solution = "<<solution>>"
corpus = "<<corpus>>"
"""

EXERCISE = """
[[exercise]]
id = <<id_literal>>
file = "<<filename>>"
title = <<title_literal>>
names = ["<<function>>"]
points = <<points>>
checks = "<<checks_module>>:CHECKS"
probes = "<<probes_module>>:<<table>>"
"""

CHECK_NAME = "<<function>>(x) returns the running sums of x, for any 1-D tensor"


def fill(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"<<{key}>>", value)
    left = re.findall(r"<<\w+>>", template)
    if left:  # a template and its values disagree: a bug of ours
        raise AssertionError(f"unfilled template keys: {left}")
    return template


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


def write(
    folder: Path,
    exercise_id: str,
    title: str,
    filename: str | None = None,
    function: str | None = None,
    points: float = 10.0,
) -> Written:
    """Write the scaffold of an exercise in the pack at ``folder`` (created when it holds no
    pack.toml: a new pack whose folders lie beside it). Nothing is overwritten: a file that
    exists already is a ``ScaffoldError`` before anything is written."""
    folder = folder.resolve()
    new_pack = not (folder / FILE).is_file()
    package = folder.name
    if not package.isidentifier() or keyword.iskeyword(package):
        raise ScaffoldError(
            f"{folder}: a pack's folder is a Python package: its name must be one "
            f"(letters, digits, _), e.g. {DEFAULT_PACK}"
        )
    pack = None
    if not new_pack:
        try:
            pack = read_pack(folder)
        except PackError as exc:
            raise ScaffoldError(str(exc)) from None
        if any(e.id == exercise_id for e in pack.exercises):
            raise ScaffoldError(f"the pack {pack.name} already has an exercise {exercise_id!r}")
    n = names_for(exercise_id, title, package, filename, function, points)
    if pack is not None and any(e.filename == n.filename for e in pack.exercises):
        raise ScaffoldError(f"the pack {pack.name} already has an exercise in {n.filename}")

    paths = (
        {k: (folder / v).resolve() for k, v in NEW_PACK_PATHS.items()}
        if new_pack
        else dict(pack.paths)
    )
    missing = [k for k in ("stubs", "solution", "corpus") if k not in paths]
    if missing:
        raise ScaffoldError(
            f"{folder / FILE} declares no {', '.join(missing)} folder: add "
            + ", ".join(f'{k} = "..."' for k in missing)
            + " to its [pack] table"
        )
    probes_module, probes_file = _probes_module(pack, package, folder)
    checks_module = f"{package}.checks.{n.module}"
    corpus = paths["corpus"] / n.module
    test_file = paths["corpus"].parent / f"test_{n.module}.py"
    pack_name = package.replace("_", "-") if new_pack else pack.name
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
        "checks_module": checks_module,
        "pack_from_test": json.dumps(_relative(folder, test_file.parent)),
        **{key: value for key, value in NEW_PACK_PATHS.items()},
    }
    values["check_name"] = fill(CHECK_NAME, values)

    files: list[tuple[Path, str, str]] = [  # (path, text, what it is)
        (paths["stubs"] / n.filename, fill(STUB, values), "the stub students get"),
        (paths["solution"] / n.filename, fill(SOLUTION, values), "the solution"),
        (folder / "checks" / f"{n.module}.py", fill(CHECKS, values), "the checks (judge side)"),
        (corpus / "wrong_answer_1.py", fill(WRONG, values), "a wrong answer"),
        (corpus / "correct_unusual_1.py", fill(CORRECT, values), "an unusual right answer"),
        (test_file, fill(TEST, values), "a test"),
    ]
    taken = [p for p, _, _ in files if p.exists()]
    if taken:
        raise ScaffoldError(f"{taken[0]} exists already: nothing was written")

    done = Written(folder, new_pack)
    folder.mkdir(parents=True, exist_ok=True)
    if new_pack:
        _create(folder / "__init__.py", f'"""The exercise pack {pack_name}."""\n', done, "")
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
    # The probe: appended to the pack's probes module (made if there is none).
    if probes_file.exists():
        current = probes_file.read_text(encoding="utf-8")
        imported = re.search(r"^from grader\.worker\.probes import[^\n]*\bplain\b", current, re.M)
        parens = re.search(r"^from grader\.worker\.probes import \(([^)]*)\)", current, re.M)
        has_plain = imported or (parens and re.search(r"\bplain\b", parens.group(1)))
        values["import"] = (
            "" if has_plain else "from grader.worker.probes import plain  # noqa: E402\n"
        )
        probe = fill(PROBE, values)
        probes_file.write_text(current.rstrip("\n") + "\n" + probe, encoding="utf-8")
        done.files.append((probes_file, "its probe, appended (worker side)"))
        if pack is not None and probes_module not in pack.worker:
            done.notes.append(
                f"{probes_module} is not in the worker list of {FILE}: add it, so that every "
                "worker has it loaded"
            )
    else:
        values["import"] = ""
        text = fill(PROBES_HEAD, values) + fill(PROBE, values)
        _create(probes_file, text, done, "its probe (worker side)")
        if pack is not None:
            done.notes.append(
                f"add {probes_module!r} to the worker list of {FILE}, so that every worker "
                "has it loaded"
            )
    # The [[exercise]] table.
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
    try:
        read_pack(folder)
    except PackError as exc:  # what we wrote must read: a bug of ours if not
        raise AssertionError(f"the scaffold's pack.toml does not read: {exc}") from None
    return done


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
