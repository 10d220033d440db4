"""``grade release OUT``: the student edition of the packs in use. It holds each pack's stubs
as ``exercises/``, the pack's package (pack.toml pointing at them, checks, probes) and the code
it needs (the first pack's ``reference``), the grader, the templates, a student
pyproject/README/workflow, and never a solution, a corpus or an instructor test; installed in a
fresh environment it grades its stubs 0/60 and a solved copy 60/60. A second pack (a tiny one,
``tests/tinypack.py``), released with ``grade --pack FOLDER release``, makes an edition of its
own whose grader, run from the edition's folder, grades its one exercise.

The install test creates a virtual environment and installs torch into it (from the local
wheel cache when there is one); set GRADER_SKIP_INSTALL_TESTS=1 to skip it locally. CI runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import headstart
import pytest
import tinypack
from support import ROOT, SOLUTION, grade_cli

from grader.commands.cli import UsageError
from grader.editions.release import (
    TORCH_CPU_INDEX,
    build_release,
    distinctive_lines,
    solution_leaks,
)
from grader.editions.shipping import notes
from grader.editions.text import pack_toml
from grader.shared import tomlread
from grader.shared.packs import read_pack
from grader.shared.registry import EXERCISES

FIRST_PACK = read_pack(ROOT / "llm_pack")


def cli(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return grade_cli(*args, cwd=cwd, env=env, module="grader.commands.cli")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rel") / "student-edition"
    proc = cli("release", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_release_holds_what_a_student_needs_and_nothing_else(release):
    top = sorted(p.name for p in release.iterdir())
    assert top == sorted(
        [
            ".github",
            ".gitignore",
            "README.md",
            "constraints.txt",
            "exercises",
            "grader",
            "llm_pack",
            "pyproject.toml",
            "reference",
        ]
        + (["templates"] if (ROOT / "templates").is_dir() else [])
    )
    for ex in EXERCISES:
        stub = (release / "exercises" / ex.filename).read_text()
        assert stub == (FIRST_PACK.path("stubs") / ex.filename).read_text()
        assert "raise NotImplementedError" in stub
    assert (release / "reference" / "__init__.py").is_file()
    for name in ("__init__.py", "pack.toml", "probes.py", "strategies.py", "checks/ex3_1.py"):
        assert (release / "llm_pack" / name).is_file(), name
    shipped = read_pack(release / "llm_pack")  # its stubs are the student's, nothing else
    assert shipped.paths == {"stubs": (release / "exercises").resolve()}
    assert [e.id for e in shipped.exercises] == [e.id for e in EXERCISES]
    assert shipped.text == FIRST_PACK.text
    assert not list(release.rglob("__pycache__"))
    assert not list(release.rglob("test_*.py")) and not (release / "tests").exists()
    assert (release / "constraints.txt").read_text() == (ROOT / "constraints.txt").read_text()


def test_the_first_packs_edition_grades_its_stubs_with_its_own_grader(release):
    env = {**os.environ, "PYTHONPATH": str(release)}
    where = subprocess.run(
        [
            sys.executable,
            "-c",
            "import grader, reference; print(grader.__file__, reference.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=release,
        env=env,
        timeout=60,
    )
    assert all(p.startswith(str(release)) for p in where.stdout.split()), where.stdout
    proc = cli(
        "--pack",
        str(release / "llm_pack"),
        ".",
        "--format",
        "json",
        "--max-examples",
        "1",
        cwd=release,
        env=env,
    )
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["score"], doc["max_score"]) == (0, sum(e.max_score for e in EXERCISES))
    for ex in doc["exercises"]:
        assert ex["status"] == "failed" and "not done yet" in ex["checks"][0]["message"], ex


def test_no_file_of_the_release_holds_a_solution(release):
    solutions = distinctive_lines()
    assert len(solutions) == len(EXERCISES)  # every solution file has distinctive lines
    assert solution_leaks(release, solutions) == []
    # The scan would see one: a solved exercise file anywhere in the tree.
    leaky = release.parent / "leaky"
    shutil.copytree(release, leaky)
    shutil.copyfile(
        SOLUTION / "exercises" / EXERCISES[5].filename,
        leaky / "llm_pack" / "checks" / "helper.py",
    )
    leaks = solution_leaks(leaky, solutions)
    assert len(leaks) == 1 and "llm_pack/checks/helper.py" in leaks[0]


def test_refuses_to_release_solved_exercises(tmp_path):
    folder = tinypack.make_tiny_pack(tmp_path / "course")
    shutil.copyfile(
        tmp_path / "course" / "tiny_solution" / tinypack.FILENAME,
        folder / "stubs" / tinypack.FILENAME,
    )
    with pytest.raises(UsageError, match="not all stubs"):
        build_release(tmp_path / "out", packs=(read_pack(folder),))
    assert not (tmp_path / "out").exists()


def test_refuses_to_release_a_pack_whose_code_holds_its_solution(tmp_path):
    folder = tinypack.make_tiny_pack(tmp_path / "course")
    shutil.copyfile(tmp_path / "course" / "tiny_solution" / tinypack.FILENAME, folder / "notes.py")
    with pytest.raises(UsageError, match="refusing to release a solution: tiny_pack/notes.py"):
        build_release(tmp_path / "out", packs=(read_pack(folder),))
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()


def test_refuses_a_folder_that_is_not_empty(release):
    with pytest.raises(UsageError, match="not empty"):
        build_release(release)


def test_the_pack_toml_of_the_edition_keeps_all_but_the_instructors_paths():
    text = (ROOT / "llm_pack" / "pack.toml").read_text()
    edition = tomlread.loads(pack_toml(text, "exercises"))
    ours = tomlread.loads(text)
    assert edition["pack"] == {
        **{k: v for k, v in ours["pack"].items() if k not in ("solution", "corpus")},
        "stubs": "../exercises",
    }
    assert edition["text"] == ours["text"] and edition["exercise"] == ours["exercise"]
    without = tomlread.loads(pack_toml('[pack]\nname = "x"\n\n[[exercise]]\nid = "a"\n', "ex"))
    assert without["pack"] == {"name": "x", "stubs": "../ex"} and without["exercise"]


def test_student_pyproject_installs_the_grader_and_the_pack_with_pytest_grading(release):
    ours = tomlread.loads((ROOT / "pyproject.toml").read_text())
    theirs = tomlread.loads((release / "pyproject.toml").read_text())
    assert theirs["project"]["dependencies"] == ours["project"]["dependencies"]
    assert theirs["project"]["scripts"] == ours["project"]["scripts"]
    entry_points = theirs["project"]["entry-points"]
    assert entry_points["pytest11"] == {"grade": "grader.commands.pytest_plugin"}
    assert entry_points["grader.exercises"] == {FIRST_PACK.name: "llm_pack"}
    setuptools = theirs["tool"]["setuptools"]
    assert sorted(setuptools["packages"]["find"]["include"]) == sorted(
        ["grader*", "exercises*", "llm_pack*", "reference*"]
    )
    assert setuptools["package-data"]["llm_pack"] == ["pack.toml"]
    assert (
        setuptools["package-data"]["grader"] == ours["tool"]["setuptools"]["package-data"]["grader"]
    )
    assert theirs["tool"]["pytest"]["ini_options"]["grade_path"] == "."
    assert "dev" not in theirs["project"].get("optional-dependencies", {})


def test_readme_and_workflow_tell_how_to_install_and_grade(release):
    readme = (release / "README.md").read_text()
    for needle in (
        f"# {FIRST_PACK.text['heading']}",
        f"{len(EXERCISES)} exercises from {FIRST_PACK.text['about']}",
        FIRST_PACK.text["imports"],
        "pip install -c constraints.txt -e .",
        f"grade -e {EXERCISES[0].id}",
        "--html",
        "Counterexample",
        "Reproduce",
        f"exercises/{EXERCISES[-1].filename}",
        f"`exercise-{EXERCISES[0].id}` ... `exercise-{EXERCISES[-1].id}`",
        "source .venv/bin/activate",
        "python -m grader",
        "grade --watch",
        FIRST_PACK.text["report_example"].strip(),
    ):
        assert needle in readme, needle
    for ex in EXERCISES:
        assert f"| {ex.id} {ex.title} | `exercises/{ex.filename}` |" in readme
    workflow = (release / ".github" / "workflows" / "classroom.yml").read_text()
    assert f"pip install --extra-index-url {TORCH_CPU_INDEX} -c constraints.txt -e ." in workflow
    assert "run: grade --format github" in workflow
    assert "\t" not in workflow


# --- a second pack ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory) -> tuple[Path, Path]:
    """(the tiny pack's course folder, its edition), made by ``grade --pack FOLDER release``."""
    course = tmp_path_factory.mktemp("tiny") / "course"
    folder = tinypack.make_tiny_pack(course)
    out = course.parent / "tiny-edition"
    proc = cli("--pack", str(folder), "release", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "1 exercise of tiny-course" in proc.stdout
    return course, out


def test_a_second_packs_edition_holds_its_stubs_and_code_not_its_solution_nor_corpus(tiny_release):
    course, out = tiny_release
    top = sorted(p.name for p in out.iterdir())
    # Nothing of the first pack: no reference, no llm_pack.
    assert top == sorted(
        [
            ".github",
            ".gitignore",
            "README.md",
            "constraints.txt",
            "exercises",
            "grader",
            "pyproject.toml",
            tinypack.PACKAGE,
        ]
        + (["templates"] if (ROOT / "templates").is_dir() else [])
    )
    assert sorted(p.name for p in (out / "exercises").iterdir()) == [tinypack.FILENAME]
    assert (out / "exercises" / tinypack.FILENAME).read_text() == tinypack.STUB
    package = out / tinypack.PACKAGE
    # Its stubs folder is exercises/ now.
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py",
        "checks.py",
        "pack.toml",
        "probes.py",
    ]
    assert (package / "checks.py").read_text() == tinypack.CHECKS
    shipped = read_pack(package)
    assert shipped.paths == {"stubs": (out / "exercises").resolve()}
    assert shipped.text["heading"] == tinypack.HEADING
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            for line in (*tinypack.SOLUTION_LINES, tinypack.CORPUS_LINE):
                assert line not in text, (path, line)
    theirs = tomlread.loads((out / "pyproject.toml").read_text())
    assert theirs["project"]["entry-points"]["grader.exercises"] == {
        tinypack.NAME: tinypack.PACKAGE
    }
    assert "llm_pack*" not in theirs["tool"]["setuptools"]["packages"]["find"]["include"]
    readme = (out / "README.md").read_text()
    for needle in (
        f"# {tinypack.HEADING}",
        "1 exercise from the tiny course",
        f"| {tinypack.ID} {tinypack.TITLE} |",
        f"grade -e {tinypack.ID}",
        f"`exercise-{tinypack.ID}`",
        "`double`",
        "Nothing to import",
    ):
        assert needle in readme, needle
    for first_pack in ("grade -e 3.1", "exercise-3.1", "reference", "Chapters", "transfer_weights"):
        assert first_pack not in readme, first_pack


def test_a_second_packs_edition_builds_a_wheel_that_registers_the_pack(tiny_release, tmp_path):
    _, out = tiny_release
    source = tmp_path / "source"  # a copy: pip builds in the tree it is given
    shutil.copytree(out, source)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(entry_points).decode()
    assert f"[grader.exercises]\n{tinypack.NAME} = {tinypack.PACKAGE}\n" in entry_points
    for name in ("pack.toml", "checks.py", "probes.py"):
        assert f"{tinypack.PACKAGE}/{name}" in names, name
    assert f"exercises/{tinypack.FILENAME}" in names and "grader/commands/cli.py" in names


def test_a_second_packs_edition_grades_it_from_its_own_folder(tiny_release):
    course, out = tiny_release
    env = {**os.environ, "PYTHONPATH": str(out)}  # the edition's grader, not this clone's

    def grade() -> tuple[int, dict]:
        proc = cli(
            "--pack",
            str(out / tinypack.PACKAGE),
            ".",
            "--format",
            "json",
            "--max-examples",
            "3",
            cwd=out,
            env=env,
        )
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        return proc.returncode, json.loads(proc.stdout)

    code, doc = grade()  # the stub as handed out
    assert code == 1 and (doc["score"], doc["max_score"]) == (0, 10)
    (ex,) = doc["exercises"]
    assert ex["id"] == tinypack.ID and "not done yet" in ex["checks"][0]["message"]
    answer = out / "exercises" / tinypack.FILENAME
    shutil.copyfile(course / "tiny_corpus" / f"ex{tinypack.ID}" / "wrong_triples.py", answer)
    code, doc = grade()
    assert code == 1 and doc["score"] == 0
    assert doc["exercises"][0]["checks"][0]["counterexample"] is not None
    shutil.copyfile(course / "tiny_solution" / tinypack.FILENAME, answer)
    code, doc = grade()
    assert code == 0 and doc["score"] == 10
    answer.write_text(tinypack.STUB)


# --- a real install --------------------------------------------------------------------------


def venv_run(cwd: Path, *cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=1800)


@headstart.SKIP_INSTALL
@pytest.mark.install("release")
def test_the_release_installs_in_a_fresh_venv_and_grades_stubs_0_and_solutions_60(fresh_install):
    job = fresh_install
    for step in ("release", "venv", "install"):
        job.check(step)
    print(f"\nfresh-venv install of the release: {job.seconds['install']:.0f} s")
    clone, venv = job.paths["clone"], job.paths["venv"]
    grade = str(venv / "bin" / "grade")

    proc = venv_run(clone, grade, "--format", "json", "--max-examples", "2")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["score"], doc["max_score"]) == (0, 60)
    assert [e["id"] for e in doc["exercises"]] == [e.id for e in EXERCISES]  # the edition's pack

    for ex in EXERCISES:
        shutil.copyfile(SOLUTION / "exercises" / ex.filename, clone / "exercises" / ex.filename)
    proc = venv_run(clone, grade, "--format", "json", "--max-examples", "4")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert json.loads(proc.stdout)["score"] == 60

    # pytest in the clone grades it too (grade_path = "." in its pyproject).
    proc = venv_run(clone, str(venv / "bin" / "pytest"), "-q", "--grade-max-examples", "2")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "Score: 60/60" in proc.stdout


# --- what git leaves out ---------------------------------------------------------------------

TOOL_OUTPUTS = (  # what grade, pytest and a notebook write in a clone
    "report.html",
    "grade-report.html",
    "result.json",
    "results.json",
    "report.xml",
    ".pytest_cache/v/cache/lastfailed",
    ".hypothesis/examples/x",
    ".ipynb_checkpoints/work-checkpoint.ipynb",
    "exercises/__pycache__/ex3_1_weight_transfer.cpython-311.pyc",
)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("edition", ["student edition", "this repository"])
def test_git_ignores_what_the_tools_write(release, tmp_path, edition):
    clone = tmp_path / "clone"
    (clone / "exercises").mkdir(parents=True)
    gitignore = release / ".gitignore" if edition == "student edition" else ROOT / ".gitignore"
    shutil.copyfile(gitignore, clone / ".gitignore")
    (clone / "exercises" / "ex3_1_weight_transfer.py").write_text("# my answer\n")
    for name in TOOL_OUTPUTS:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text("output\n")
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True, timeout=60)
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert sorted(proc.stdout.splitlines()) == [
        "?? .gitignore",
        "?? exercises/ex3_1_weight_transfer.py",  # the student's work is never left out
    ]


# --- which of a pack's files ship, and why ------------------------------------------------------


def lora_copy(tmp_path: Path, judge: str, shared: str) -> Path:
    """The LoRA test pack with an answer key nothing imports, its ``judge`` and ``shared`` set."""
    copy = tmp_path / "course"
    shutil.copytree(
        ROOT / "tests" / "lora_pack", copy, ignore=shutil.ignore_patterns("__pycache__")
    )
    folder = copy / "lora_pack"
    (folder / "answer_key.py").write_text('"""The instructor\'s notes."""\nNOTES = "E.1"\n')
    text = (folder / "pack.toml").read_text()
    text = text.replace('judge = ["lora_pack.checks", "lora_pack.oracle"]', f"judge = {judge}")
    text = text.replace(
        'shared = ["lora_pack.models", "lora_pack.oracle", "exercises"]', f"shared = {shared}"
    )
    (folder / "pack.toml").write_text(text)
    return folder


def test_a_judge_only_module_nothing_needs_stays_out_of_the_student_edition(tmp_path):
    judge = '["lora_pack.checks", "lora_pack.oracle", "lora_pack.answer_key"]'
    pack = read_pack(lora_copy(tmp_path, judge, '["lora_pack.models", "lora_pack.oracle"]'))
    said = notes([pack])
    assert "  left out  lora_pack/answer_key.py: judge-only, not needed by the checks" in said
    assert "  ships  lora_pack/checks.py: judge side: the checks a student's grade runs" in said
    shipped = {
        p.relative_to(tmp_path / "out").as_posix()
        for p in build_release(tmp_path / "out", packs=(pack,))
    }
    assert {"lora_pack/checks.py", "lora_pack/oracle.py", "lora_pack/probes.py"} <= shipped
    assert "lora_pack/answer_key.py" not in shipped
    kept = build_release(tmp_path / "autograder", packs=(pack,), student=False)
    assert tmp_path / "autograder" / "lora_pack" / "answer_key.py" in kept  # the judge's copy


def test_a_judge_only_module_ships_when_shared_or_when_a_check_imports_it(tmp_path):
    judge = '["lora_pack.checks", "lora_pack.oracle", "lora_pack.answer_key"]'
    shared = '["lora_pack.models", "lora_pack.answer_key"]'
    said = notes([read_pack(lora_copy(tmp_path, judge, shared))])
    assert "  ships  lora_pack/answer_key.py: judge-only, listed in shared" in said
    oracle = "  ships  lora_pack/oracle.py: judge-only, imported by lora_pack.checks (the grade "
    assert any(line.startswith(oracle) for line in said), said


def test_grade_release_says_what_it_ships_and_why(tmp_path):
    pack = ROOT / "tests" / "lora_pack" / "lora_pack"
    proc = cli("--pack", str(pack), "release", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    assert "lora-course: lora_pack/, without its stubs, solution and corpus" in proc.stdout
    assert "  ships  lora_pack/oracle.py: judge-only, listed in shared" in proc.stdout
