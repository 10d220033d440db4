"""Exercise packs: what ``pack.toml`` must hold (each mistake one clear line), how the packs in
use are chosen (installed, ``--pack NAME``, ``--pack FOLDER``), and a pack written outside
the grader graded by ``grade`` like the first pack, its checks in the judge and its probes in
the sandboxed worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.shared import course, packs, registry
from grader.shared.packs import PackError, read_pack

ROOT = Path(__file__).resolve().parents[1]

EXERCISE = """
[[exercise]]
id = "{id}"
file = "{file}"
title = "Double every number"
names = ["double"]
points = 4
checks = "{package}.checks:CHECKS"
probes = "{package}.probes:PROBES"
"""

CHECKS = '''
"""Judge side of the test pack."""
from hypothesis import strategies as st

from grader.judge.properties import Check, CheckFailed


def check_double(worker, xs):
    got = worker.call("double", xs=xs)
    if got != [2 * x for x in xs]:
        raise CheckFailed(f"double({xs}) returned {got}, expected {[2 * x for x in xs]}")


CHECKS = [
    Check(
        name="double doubles every number",
        points=1,
        strategy=st.lists(st.integers(-5, 5), max_size=4),
        run=check_double,
        hint="multiply each number by 2",
        reproduce=lambda xs: f"from exercises.ex_double import double\\nprint(double({xs}))",
        counterexample=lambda xs: {"xs": xs},
    )
]
'''

PROBES = '''
"""Worker side of the test pack."""
from grader.worker.probes import plain


def _double(module, state, xs):
    return plain(module.double(list(xs)), "double returned")


PROBES = {"double": _double}
'''


def write_pack(folder: Path, package: str = "tinypack", ex_id: str = "9.1", **head) -> Path:
    """A one-exercise pack in ``folder/package`` with its solution beside it."""
    pkg = folder / package
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A test pack."""\n')
    (pkg / "checks.py").write_text(CHECKS)
    (pkg / "probes.py").write_text(PROBES)
    lines = [f'name = "{head.pop("name", package)}"', 'title = "A pack for tests"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in head.items()]
    toml = "[pack]\n" + "\n".join(lines) + "\n"
    toml += EXERCISE.format(id=ex_id, file="ex_double.py", package=package)
    (pkg / "pack.toml").write_text(toml)
    return pkg


def answer(folder: Path, body: str) -> Path:
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / "ex_double.py").write_text(textwrap.dedent(body))
    return folder


@pytest.fixture
def chosen(monkeypatch):
    """Leaves the course as it was: every installed pack at the start, and afterwards the
    course and ``sys.path`` as before (``course.choose`` changes both for every later test of
    this process otherwise)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    with course.using(course.resolve("")):
        yield


def test_the_first_pack_is_installed_and_declares_its_exercises(chosen):
    (first,) = course.packs()
    assert first.name == "llm-ch3-4"
    assert [e.id for e in registry.EXERCISES] == [e.id for e in first.exercises]
    assert all(e.pack == first.name for e in first.exercises)
    assert registry.pack_of(registry.EXERCISES[0]) is first
    assert first.path("stubs") == (ROOT / "exercises").resolve()


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda t: t.replace('name = "tinypack"', ""), "a [pack] table with a name is needed"),
        (lambda t: t.split("[[exercise]]")[0], "declares no [[exercise]]"),
        (lambda t: t.replace('id = "9.1"', 'id = "9 1"'), "is not a short name"),
        (lambda t: t.replace('names = ["double"]\n', ""), "lacks names"),
        (lambda t: t.replace("tinypack.checks:CHECKS", "tiny pack"), "checks must read module"),
        (lambda t: t.replace('"ex_double.py"', '"../x.py"'), "is not a module's file name"),
        (lambda t: t + t[t.index("[[exercise]]") :], "declared twice"),
        (lambda t: t.replace("points = 4", 'points = "many"'), "must be numbers"),
        (lambda t: t.replace("[pack]", "[pack]\nsolution = 'answers'"), "outside the package"),
        (lambda t: t + "\n[oops", "cannot be read"),
    ],
)
def test_a_broken_pack_toml_is_refused_in_one_line(tmp_path, change, says):
    pkg = write_pack(tmp_path)
    toml = pkg / "pack.toml"
    toml.write_text(change(toml.read_text()))
    with pytest.raises(PackError) as err:
        read_pack(pkg)
    assert says in str(err.value)
    assert "\n" not in str(err.value)


def test_a_folder_without_pack_toml_is_not_a_pack(tmp_path):
    with pytest.raises(PackError, match="not an exercise pack"):
        read_pack(tmp_path)


def test_a_chosen_folder_replaces_the_installed_packs_and_is_importable(tmp_path, chosen):
    pkg = write_pack(tmp_path / "course", solution="../solution")
    before = dict(os.environ)
    course.choose(str(pkg))
    assert course.current().choice == str(pkg.resolve())
    assert dict(os.environ) == before  # children are handed it: course.child_environment
    assert course.child_environment()[packs.CHOSEN] == str(pkg.resolve())
    assert [e.id for e in registry.EXERCISES] == ["9.1"]
    assert registry.BY_ID["9.1"].checks == "tinypack.checks:CHECKS"
    assert str(pkg.parent) in sys.path  # its modules import, here and in every worker
    assert course.packs()[0].path("solution") == (tmp_path / "course" / "solution").resolve()


def test_an_unknown_pack_name_is_refused_and_the_packs_in_use_stay(chosen):
    with pytest.raises(PackError, match="no exercise pack named 'nope'"):
        course.choose("nope")
    assert packs.CHOSEN not in os.environ
    assert [p.name for p in course.packs()] == ["llm-ch3-4"]


def test_an_installed_pack_is_chosen_by_name(chosen):
    course.choose("llm-ch3-4")
    assert len(registry.EXERCISES) == len(read_pack(ROOT / "llm_pack").exercises)


def test_a_broken_installed_pack_does_not_stop_choosing_another_by_name(monkeypatch):
    """An installed pack whose module is gone (an old install, a moved checkout) is said when
    every pack is in use, and does not stop a course that names another."""
    declared = [*packs.entry_points(), ("gone-pack", "no_such_module_here")]
    monkeypatch.setattr(packs, "entry_points", lambda: declared)
    with pytest.raises(PackError, match="the installed pack 'gone-pack' names 'no_such_module"):
        packs.installed()
    assert packs.installed(name_only="llm-ch3-4") == [ROOT / "llm_pack"]


def _grade(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != packs.CHOSEN}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_grade_with_a_pack_from_its_folder(tmp_path):
    """No change to the grader: its checks run in the judge, its probe in the sandboxed worker,
    for a right answer, a wrong one (shrunk counterexample, snippet) and a stub."""
    pkg = write_pack(tmp_path / "course")
    right = answer(tmp_path / "right", "def double(xs):\n    return [x + x for x in xs]\n")
    wrong = answer(tmp_path / "wrong", "def double(xs):\n    return [x * x for x in xs]\n")
    stub = answer(
        tmp_path / "stub", "def double(xs):\n    raise NotImplementedError('not done yet')\n"
    )
    graded = {}
    for name, folder in (("right", right), ("wrong", wrong), ("stub", stub)):
        done = _grade("--pack", str(pkg), str(folder), "--format", "json", cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
        graded[name] = json.loads(done.stdout)
    assert graded["right"]["score"] == graded["right"]["max_score"] == 4
    (ex,) = graded["wrong"]["exercises"]
    assert ex["id"] == "9.1" and ex["score"] == 0
    (check,) = ex["checks"]
    assert check["counterexample"] == {"xs": [1]}  # shrunk: the smallest list it fails on
    assert "double(" in check["reproduce"]
    assert "not done yet" in graded["stub"]["exercises"][0]["checks"][0]["message"]


def test_grade_pack_option_errors_are_one_line(tmp_path):
    done = _grade("--pack", str(tmp_path), ".", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not an exercise pack" in done.stderr
    done = _grade("--pack", cwd=tmp_path)
    assert done.returncode == 2 and "--pack needs" in done.stderr


@pytest.mark.parametrize("group", ["grader.exercises", "pytest11", "console_scripts"])
def test_entry_points_are_those_importlib_metadata_finds(group):
    from importlib.metadata import entry_points

    assert packs.entry_points(group) == sorted((e.name, e.value) for e in entry_points(group=group))


def test_two_courses_one_after_the_other_in_one_process(tmp_path, chosen):
    """The course is a value: graded for one course, then for another, in one process, a
    submission gets each course's own exercises, the environment is never touched (nothing
    leaks into a later test), and each course is handed to its workers."""
    from grader import pipeline
    from grader.judge.seeds import PUBLIC_SEED, Seed

    first = course.resolve(str(write_pack(tmp_path / "a", "packa", "8.1")))
    second = course.resolve(str(write_pack(tmp_path / "b", "packb", "9.1")))
    right = answer(tmp_path / "right", "def double(xs):\n    return [x + x for x in xs]\n")
    environ, in_use = dict(os.environ), course.current()
    graded = {}
    for each in (first, second, first):
        with course.using(each):  # the intake reads the course's files
            submission = pipeline.open_path(right)
            assert course.child_environment()[packs.CHOSEN] == each.choice
        request = pipeline.Request(seed=Seed(PUBLIC_SEED, "public"), course=each)
        result = pipeline.finish(submission, request)  # the request carries the course
        graded.setdefault(each.choice, []).append(result)
        assert dict(os.environ) == environ and course.current() is in_use
        skipped = pipeline.not_graded("x", request, "a reason")
        assert [e.id for e in skipped.exercises] == [each.exercises[0].id]
    for each, ex_id in ((first, "8.1"), (second, "9.1")):
        for result in graded[each.choice]:
            assert [e.id for e in result.exercises] == [ex_id]
            assert result.score == result.max_score == 4, result.exercises[0].checks
