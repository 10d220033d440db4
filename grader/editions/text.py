"""The words of what ``grade release`` writes for students (the README, the ``pyproject.toml``,
each pack's ``pack.toml``, the GitHub Actions workflow that grades every push, the
``.gitignore``) and of the introduction of ``grade notebook``. Nothing here names an exercise:
what belongs to a course comes from the packs in use, their ``title`` and their ``[text]``
table, and from the registry (ids, titles, the names each exercise asks for, how many there
are).

The ``[text]`` keys a pack may set (markdown; each is optional, and without it the grader says
something plainer):

- ``heading``: the heading of the README and of the notebook (default: the pack's title);
- ``about``: what the exercises come from, read after "N exercises from" (default: the title);
- ``imports``: what an answer may import besides its own code, as one paragraph;
- ``report_example``: one failing exercise as ``grade`` prints it, shown in the README's
  "Read the report" (default: an outline made of the first exercise's id and title).

``README`` and ``WORKFLOW`` are ``str.format`` templates (literal braces doubled).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from grader.intake.cells import TAG_PREFIX
from grader.shared.packs import ENTRY_POINTS, Exercise, Pack

# --- words made of the packs ---------------------------------------------------------------


def course_title(packs: Sequence[Pack]) -> str:
    return " + ".join(p.title for p in packs)


def heading(packs: Sequence[Pack]) -> str:
    return " / ".join(p.text.get("heading") or p.title for p in packs)


def counted(n: int, noun: str = "exercise") -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def about(packs: Sequence[Pack]) -> str:
    """One sentence per pack: "N exercises from <about>."."""
    return " ".join(
        f"{counted(len(p.exercises))} from {p.text.get('about') or '*' + p.title + '*'}."
        for p in packs
    )


def imports(packs: Sequence[Pack]) -> list[str]:
    return [p.text["imports"].strip() for p in packs if p.text.get("imports", "").strip()]


def tag_range(exercises: Sequence[Exercise]) -> str:
    """```exercise-<first>` ... `exercise-<last>``` (one tag when there is one exercise)."""
    first, last = exercises[0].id, exercises[-1].id
    if first == last:
        return f"`{TAG_PREFIX}{first}`"
    return f"`{TAG_PREFIX}{first}` ... `{TAG_PREFIX}{last}`"


def some_names(exercises: Sequence[Exercise]) -> str:
    """A few of the names the exercises ask for, as ```a`, `b`, ...``."""
    names = list(dict.fromkeys([exercises[0].names[0], exercises[-1].names[-1]]))
    more = ", ..." if sum(len(e.names) for e in exercises) > len(names) else ""
    return ", ".join(f"`{n}`" for n in names) + more


def everything(n: int) -> str:
    """How the README and the notebook say "all of them"."""
    return "the exercise" if n == 1 else f"all {n} exercises"


# --- the README ----------------------------------------------------------------------------


def commands(exercises: Sequence[Exercise]) -> str:
    """The README's list of grade commands, with the comments in one column."""
    rows = [
        ("grade", f"{everything(len(exercises))}"),
        (f"grade -e {exercises[0].id}", "one exercise (repeat -e for more)"),
        ("grade -v", "every failure in full"),
        ("grade --html report.html", "the same report as a web page"),
        ("grade my_answers.ipynb", "a notebook (see below)"),
        ("grade --watch", "grade, then again each time you save a file (Ctrl-C to stop)"),
    ]
    width = max(len(c) for c, _ in rows) + 2
    return "\n".join(f"{c.ljust(width)}# {what}" for c, what in rows)


def report_example(packs: Sequence[Pack], exercises: Sequence[Exercise]) -> str:
    for pack in packs:
        if pack.text.get("report_example", "").strip():
            return pack.text["report_example"].strip("\n")
    ex = exercises[0]
    return "\n".join(
        [
            f"  {ex.id}  {ex.title}    5/10    failed",
            "  ...",
            f"{ex.id} {ex.title}",
            "  x <what the check asks>  (0/5)",
            "      <what went wrong, in plain words>",
            "      Counterexample: <the smallest input that breaks it>",
            "      Hint: <where to look>",
            "      Reproduce (paste into Python in your clone):",
            "        ...",
            "Score: 5/10  (0 of 1 exercises passed, 1.3 s)",
        ]
    )


def readme(packs: Sequence[Pack], exercises: Sequence[Exercise], cpu_index: str) -> str:
    table = "\n".join(
        f"| {ex.id} {ex.title} | `exercises/{ex.filename}` | "
        + ", ".join(f"`{n}`" for n in ex.names)
        + " |"
        for ex in exercises
    )
    return README.format(
        heading=heading(packs),
        about=about(packs),
        table=table,
        imports="".join(f"{p}\n\n" for p in imports(packs)),
        cpu_index=cpu_index,
        commands=commands(exercises),
        report=report_example(packs, exercises),
        tags=tag_range(exercises),
        names=some_names(exercises),
        first=exercises[0].id,
        all=everything(len(exercises)),
    )


README = """\
# {heading}

{about}

You edit only the files in `exercises/`; `grade` tells you which checks pass, and for each one
that fails, a small input that breaks your code, a snippet that reproduces it and a hint.

| exercise | file | you write |
|---|---|---|
{table}

{imports}## Install (once)

You need Python 3.10 to 3.13.

```bash
python3 -m venv .venv
source .venv/bin/activate          # Windows: .venv\\Scripts\\activate
pip install -c constraints.txt -e .
```

`grade` is a command of that environment: in each new terminal, activate it again (the second
line) first, or run `python -m grader` instead of `grade`.

`constraints.txt` pins the PyTorch version the grader expects. On Linux without a GPU, add
`--extra-index-url {cpu_index}` to the `pip install` line: it
installs the small CPU build of PyTorch instead of one with several GB of CUDA libraries.

## Work on an exercise

Each file in `exercises/` starts with the exercise statement: the task, what is graded, and a
hint. Replace the `raise NotImplementedError(...)` with your answer; keep the names of the
functions, classes and variables the file defines, the grader calls them.

## Check your work

```bash
{commands}
```

`grade` never changes your files. It runs your code in separate, time- and memory-limited
processes, so an infinite loop or a crash in one exercise costs only that exercise. It gives the
same score on every run; `grade --seed N` tries other examples.

Your grade may come from examples you have not seen: the course can grade with a seed of its
own (in GitHub Actions, on Gradescope, or when your instructor grades the class), and reports
graded that way say "course seed". An answer that is right for any input passes with both
seeds; one that is tuned to the examples `grade` shows you does not.

The exit status is 0 when every check passes and 1 when some check fails (2 means `grade`
could not read what you gave it).

`pytest` runs the same checks as tests, one test per check (install it with
`pip install -c constraints.txt -e ".[test]"`): the pass/fail of each test is the grader's.

## Read the report

```
{report}
```

- One line per exercise: its score and its status. `passed`: every check passed. `failed`:
  some check failed (a stub that is not done yet is `failed`, with the message "not done yet").
  `error`: your file could not be imported (the message says where). `timeout`: your code
  took too long. `missing`: the file was not found.
- Under each exercise that lost points, each failed check (`x`), with points earned and
  possible, and what went wrong in plain words.
- **Counterexample**: the smallest input the grader found that breaks your code. The
  grader tries many sizes and seeds, not only the example of the statement, and then shrinks
  the failing case.
- **Reproduce**: a snippet to paste into `python` at the root of this repository: it builds
  that input and prints what your code computes next to what was expected.
- **Hint**: where to look.

## Notebooks

If you prefer a notebook, `grade NOTEBOOK.ipynb` grades it without running it: it takes, for
each exercise, the cell tagged {tags}, or, in an untagged notebook,
the definitions with the exercise's names ({names}) and what they
need (imports, your own classes). Demo code, prints, `!` and `%` lines are left out; the report
says which cells were used. Save the notebook before grading it. Inside the notebook,
`import grader; grader.check("{first}")` grades an exercise from the cells you have run (no save
needed) and shows the result under the cell; `grader.check_all()` grades {all}.

## Hand in

Commit and push. The workflow in `.github/workflows/classroom.yml` installs this repository
and runs `grade` on every push: the Actions tab shows the score table, each failed check is
annotated on its exercise file, and the HTML report is attached to the run.
"""

# --- the pyproject -------------------------------------------------------------------------


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
        )
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def dump_toml(doc: dict, prefix: str = "") -> str:
    """A small TOML writer for pyproject data: tables of strings, numbers, lists and tables."""
    scalars = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    lines = [f"[{prefix}]"] if prefix and (scalars or not tables) else []
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items()]
    if lines:
        lines.append("")
    for k, v in tables.items():
        lines.append(dump_toml(v, f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)))
    return "\n".join(lines)


def pyproject(
    doc: dict,
    packs: Sequence[Pack],
    packages: Sequence[str],
    modules: Sequence[str],
    data: dict[str, list[str]],
    requires: Sequence[str],
) -> str:
    """The student edition's ``pyproject.toml``, from the project's (``doc``): the same
    dependencies (and ``requires``, what the packs import besides) and commands, a small
    ``test`` extra instead of the developer tools, ``pytest`` set to grade the clone, the
    ``packages`` and ``modules`` shipped (with their ``data`` files), and one entry point per
    pack (the project's own entry points to packs are left out: those may not ship)."""
    project = dict(doc["project"])
    project["name"] = "-".join(p.name for p in packs) + "-student-edition"
    project["description"] = f"{course_title(packs)}: the exercises and their grader."
    project["readme"] = "README.md"
    project["dependencies"] = [*project.get("dependencies", []), *requires]
    project["optional-dependencies"] = {"test": ["pytest>=8"]}
    entry_points = {k: v for k, v in project.get("entry-points", {}).items() if k != ENTRY_POINTS}
    entry_points.setdefault("pytest11", {"grade": "grader.commands.pytest_plugin"})
    entry_points[ENTRY_POINTS] = {p.name: p.package for p in packs}
    project["entry-points"] = entry_points
    ours = doc.get("tool", {}).get("setuptools", {})
    setuptools: dict = {"packages": {"find": {"include": [f"{p}*" for p in packages]}}}
    if modules:
        setuptools["py-modules"] = list(modules)
    package_data = {
        k: v for k, v in ours.get("package-data", {}).items() if k.split(".")[0] == "grader"
    }
    setuptools["package-data"] = {**package_data, **data}
    tool = {
        "setuptools": setuptools,
        "pytest": {"ini_options": {"grade_path": ".", "addopts": "-p no:cacheprovider"}},
    }
    out = {"build-system": doc["build-system"], "project": project, "tool": tool}
    header = (
        f"# The student edition of {course_title(packs)}.\n"
        "# Install: pip install -c constraints.txt -e .   (see README.md)\n\n"
    )
    return header + dump_toml(out).rstrip("\n") + "\n"


def pack_toml(text: str, stubs_folder: str) -> str:
    """A pack's ``pack.toml`` for the edition: in its ``[pack]`` table, the stubs are the
    student's folder ``stubs_folder`` beside it (said where the stubs were) and there is no
    solution, no corpus."""
    stubs = f'stubs = "../{stubs_folder}"  # the student\'s answers (grade release)'
    out, in_pack, said = [], False, False
    for line in text.splitlines():
        header = re.match(r"\s*\[\s*([^\]\s]+)\s*\]", line)
        if header or line.lstrip().startswith("[["):
            if in_pack and not said:
                out.append(stubs)
            in_pack, said = bool(header) and header.group(1) == "pack", said or in_pack
        elif in_pack and re.match(r"\s*(stubs|solution|corpus)\s*=", line):
            if not said:
                out.append(stubs)
            said = True
            continue
        out.append(line)
    return "\n".join(out + ([stubs] if in_pack and not said else [])) + "\n"


# --- the workflow and .gitignore -----------------------------------------------------------

WORKFLOW = """\
# Grades the exercises on every push: the score table goes to the run's summary, each failed
# check becomes an annotation on its file, and the HTML report is kept as an artifact.
name: Grade

on:
  push:
  pull_request:
  workflow_dispatch:

permissions:
  contents: read

jobs:
  grade:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
          cache-dependency-path: |
            pyproject.toml
            constraints.txt
      - name: Install
        # The CPU build of PyTorch: the pinned version without the CUDA libraries.
        run: pip install --extra-index-url {cpu_index} -c constraints.txt -e .
      - name: Grade
        env:
          # The course's grading seed, from a repository or organization secret named
          # GRADE_SEED: the examples are then ones no student has seen, and no output of this
          # job shows the number ("course seed"). Without the secret: the public seed.
          GRADE_SEED: ${{{{ secrets.GRADE_SEED }}}}
        run: grade --format github --html grade-report.html
      - name: Keep the HTML report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: grade-report
          path: grade-report.html
          if-no-files-found: ignore
"""

GITIGNORE = """\
.venv/
__pycache__/
*.egg-info/
.hypothesis/
.pytest_cache/
.ipynb_checkpoints/
# What grade writes when asked (--html, --json, the CI formats redirected to a file)
grade-report.html
report.html
result.json
results.json
report.xml
"""
