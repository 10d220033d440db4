"""The words of what the editions write for students: ``grade release``'s README,
``pyproject.toml``, each pack's ``pack.toml``, the GitHub Actions workflow that grades every
push and the ``.gitignore`` (from the templates in ``templates/edition/``, TOML by
``tomlkit``), and the introduction of ``grade notebook``. Nothing here names an exercise: what
belongs to a course comes from the packs in use, their ``title`` and their ``[text]`` table,
and from the registry (ids, titles, the names each exercise asks for, how many there are).

The ``[text]`` keys a pack may set (markdown; each is optional, and without it the grader says
something plainer):

- ``heading``: the heading of the README and of the notebook (default: the pack's title);
- ``about``: what the exercises come from, read after "N exercises from" (default: the title);
- ``imports``: what an answer may import besides its own code, as one paragraph;
- ``report_example``: one failing exercise as ``grade`` prints it, shown in the README's
  "Read the report" (default: an outline made of the first exercise's id and title).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import jinja2
import tomlkit

from grader.intake.cells import TAG_PREFIX
from grader.result.template_files import templates_dir
from grader.shared.packs import ENTRY_POINTS, Exercise, Pack

FOLDER = "edition"  # the editions' templates, in templates/


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir() / FOLDER),
        autoescape=False,  # markdown, TOML, YAML and shell: nothing here is HTML
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


def render(name: str, **values: object) -> str:
    """The template ``templates/edition/<name>`` filled with ``values``."""
    return _environment().get_template(name).render(**values)


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
    """The student edition's ``README.md``."""
    return render(
        "README.md.j2",
        heading=heading(packs),
        about=about(packs),
        exercises=exercises,
        imports=imports(packs),
        cpu_index=cpu_index,
        commands=commands(exercises),
        report=report_example(packs, exercises),
        tags=tag_range(exercises),
        names=some_names(exercises),
        first=exercises[0].id,
        all=everything(len(exercises)),
    )


# --- the pyproject -------------------------------------------------------------------------


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
    return render(
        "pyproject.toml.j2", title=course_title(packs), tables=tomlkit.dumps(out).rstrip("\n")
    )


def pack_toml(text: str, stubs_folder: str) -> str:
    """A pack's ``pack.toml`` (``text``) for the edition, its comments kept: in its ``[pack]``
    table, the stubs are the student's folder ``stubs_folder`` beside it (said where the stubs
    were) and there is no solution, no corpus."""
    doc = tomlkit.parse(text)
    if "pack" not in doc:
        doc.add("pack", tomlkit.table())
    stubs = tomlkit.item(f"../{stubs_folder}")
    stubs.comment("the student's answers (grade release)")
    stubs.trivia.comment_ws = "  "
    pack = doc["pack"]
    pack["stubs"] = stubs  # in the place of the pack's own stubs, if it says where they are
    for key in ("solution", "corpus"):
        pack.pop(key, None)
    return tomlkit.dumps(doc)


# --- the workflow and .gitignore -----------------------------------------------------------


def workflow(cpu_index: str) -> str:
    """The GitHub Actions workflow that grades every push (``.github/workflows/``)."""
    return render("classroom.yml.j2", cpu_index=cpu_index)


def gitignore() -> str:
    return render("gitignore.j2")
