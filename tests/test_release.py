"""``grade release OUT``: the student edition. It holds the stubs, the reference, the grader,
the templates, a student pyproject/README/workflow, and never a solution or instructor test;
installed in a fresh environment it grades its stubs 0/60 and a solved copy 60/60.

The install test creates a virtual environment and installs torch into it (from the local
wheel cache when there is one); set GRADER_SKIP_INSTALL_TESTS=1 to skip it locally. CI runs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import headstart
import pytest
from support import ROOT, SOLUTION

from grader.commands.cli import UsageError
from grader.commands.release import (
    TORCH_CPU_INDEX,
    build_release,
    distinctive_lines,
    solution_leaks,
)
from grader.shared import tomlread
from grader.shared.registry import EXERCISES


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rel") / "student-edition"
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", "release", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
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
            "pyproject.toml",
            "reference",
        ]
        + (["templates"] if (ROOT / "templates").is_dir() else [])
    )
    for ex in EXERCISES:
        stub = (release / "exercises" / ex.filename).read_text()
        assert stub == (ROOT / "exercises" / ex.filename).read_text()
        assert "raise NotImplementedError" in stub
    assert (release / "reference" / "__init__.py").is_file()
    assert (release / "grader" / "judge" / "checks" / "ex3_1.py").is_file()
    assert not list(release.rglob("__pycache__"))
    assert not list(release.rglob("test_*.py")) and not (release / "tests").exists()
    assert (release / "constraints.txt").read_text() == (ROOT / "constraints.txt").read_text()


def test_no_file_of_the_release_holds_a_solution(release):
    solutions = distinctive_lines(ROOT)
    assert len(solutions) == len(EXERCISES)  # every solution file has distinctive lines
    assert solution_leaks(release, solutions) == []
    # The scan would see one: a solved exercise file anywhere in the tree.
    leaky = release.parent / "leaky"
    shutil.copytree(release, leaky)
    shutil.copyfile(
        SOLUTION / "exercises" / EXERCISES[5].filename,
        leaky / "grader" / "judge" / "checks" / "helper.py",
    )
    leaks = solution_leaks(leaky, solutions)
    assert len(leaks) == 1 and "grader/judge/checks/helper.py" in leaks[0]


def test_refuses_to_release_solved_exercises(tmp_path):
    fake_root = tmp_path / "project"
    for name in ("grader", "reference", "exercises"):
        shutil.copytree(ROOT / name, fake_root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copyfile(ROOT / name, fake_root / name)
    shutil.copyfile(
        SOLUTION / "exercises" / EXERCISES[0].filename,
        fake_root / "exercises" / EXERCISES[0].filename,
    )
    with pytest.raises(UsageError, match="does not hold the stubs"):
        build_release(tmp_path / "out", root=fake_root)
    assert not (tmp_path / "out").exists()


def test_refuses_a_folder_that_is_not_empty(release):
    with pytest.raises(UsageError, match="not empty"):
        build_release(release)


def test_student_pyproject_installs_the_same_package_with_pytest_grading(release):
    ours = tomlread.loads((ROOT / "pyproject.toml").read_text())
    theirs = tomlread.loads((release / "pyproject.toml").read_text())
    assert theirs["project"]["dependencies"] == ours["project"]["dependencies"]
    assert theirs["project"]["scripts"] == ours["project"]["scripts"]
    assert theirs["project"]["entry-points"]["pytest11"] == {
        "grade": "grader.commands.pytest_plugin"
    }
    assert theirs["tool"]["setuptools"] == ours["tool"]["setuptools"]
    assert theirs["tool"]["pytest"]["ini_options"]["grade_path"] == "."
    assert "dev" not in theirs["project"].get("optional-dependencies", {})


def test_readme_and_workflow_tell_how_to_install_and_grade(release):
    readme = (release / "README.md").read_text()
    for needle in (
        "pip install -c constraints.txt -e .",
        "grade -e 3.1",
        "--html",
        "Counterexample",
        "Reproduce",
        "exercises/ex4_3_split_dropout.py",
        "source .venv/bin/activate",
        "python -m grader",
        "grade --watch",
    ):
        assert needle in readme, needle
    workflow = (release / ".github" / "workflows" / "classroom.yml").read_text()
    assert f"pip install --extra-index-url {TORCH_CPU_INDEX} -c constraints.txt -e ." in workflow
    assert "run: grade --format github" in workflow
    assert "\t" not in workflow


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
