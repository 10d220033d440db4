"""What a worker may read (issue 32, DESIGN 5.10): its own copy of the submission and the
installation, never a folder because it is on ``sys.path`` or is the current one, and, when
the grader runs as root, only what the user ``nobody`` may read.

The attacks are two files of the hostile corpus: ``read_course_files.py`` (3.1) looks for the
course's seed, a gradebook, classmates' files and the solution from every folder on
``sys.path``, the current one and their parents; ``read_etc_shadow.py`` (4.1) reads what only
root may read. Both put what they got in their error message, which the report shows. Here
they are graded from a course folder (the current folder holds grading.toml, a gradebook and
the submissions) by every front end: ``grade``, ``python -m grader``, single and ``batch``,
``pytest --grade`` and ``grader.check`` in a notebook's kernel.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from support import ROOT, SOLUTION, grade_folder, make_submission

import grader
import grader.commands.cli
import grader.judge.launch.starter
import reference
from grader.judge.launch.forkserver import ForkServer
from grader.judge.launch.starter import (
    SandboxStarter,
    SandboxUnavailable,
    default_server,
    starter_for,
    supported,
)
from grader.worker.sandbox import roots

pytestmark = pytest.mark.skipif(not supported(), reason="the fork server needs Linux")

HOSTILE = ROOT / "tests" / "hostile"
GRADE = str(Path(sys.executable).with_name("grade"))
EX31 = "ex3_1_weight_transfer.py"


def covered(path: str, folders: list[str]) -> bool:
    path = os.path.realpath(path)
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


# --- the read roots -----------------------------------------------------------------------------


STARTUP_HOOKS = ("sitecustomize", "usercustomize")


def test_read_roots_come_from_the_installation_not_from_sys_path(tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "lib").mkdir(parents=True)
    monkeypatch.chdir(course)
    monkeypatch.setattr(sys, "path", ["", str(course), str(course / "lib"), *sys.path])
    # The fork server works these out in a fresh interpreter that never imports the stubs'
    # package; this test process may have (tests/test_stubs.py), and each package imported
    # counts (``module_paths``).
    for name in [n for n in sys.modules if n == "exercises" or n.startswith("exercises.")]:
        monkeypatch.delitem(sys.modules, name)
    found = roots.runtime_paths()
    readable = found + roots.SYSTEM_READ
    for needed in (torch.__file__, os.__file__, grader.__file__, reference.__file__, json.__file__):
        assert covered(needed, readable), needed
    for private in (
        course,
        course / "lib",
        ROOT,
        ROOT / "tests" / "submissions",
        ROOT / "exercises",
    ):
        assert not covered(str(private), readable), f"{private} is readable"
    assert not any(covered(f, [str(course)]) for f in found)  # nothing below it either
    etc = {p for p in readable if p == "/etc" or p.startswith("/etc/")}
    # The interpreter's own start-up hooks are read wherever they really lie: Debian's Python
    # links /usr/lib/python3.X/sitecustomize.py to /etc/python3.X/sitecustomize.py.
    hooks = {os.path.realpath(sys.modules[n].__file__) for n in STARTUP_HOOKS if n in sys.modules}
    assert all(os.path.isfile(h) for h in hooks)
    assert etc <= {"/etc/ld.so.cache", "/etc/localtime"} | hooks
    assert "/dev" not in readable and "/sys" not in readable and "/usr" not in readable


def test_folders_nobody_cannot_pass_are_found(tmp_path):
    private = tmp_path / "private"
    inside = private / "pkg"
    inside.mkdir(parents=True)
    private.chmod(0o700)
    hidden = roots._hidden_from_nobody([str(inside)])
    (top,) = hidden
    assert covered(str(inside), [top]) and hidden[top] == [str(inside)]
    private.chmod(0o755)
    assert str(private) not in roots._hidden_from_nobody([str(inside)])


def test_a_worker_forgets_the_folders_it_may_not_read(monkeypatch, tmp_path):
    kept = os.path.dirname(os.__file__)
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), kept])
    monkeypatch.setattr(sys, "path_importer_cache", {str(tmp_path): None, kept: None})
    roots.forget_other_folders([kept])
    assert sys.path == [kept] and list(sys.path_importer_cache) == [kept]


# --- a course folder, graded from inside it ------------------------------------------------------


def snoop_source(course: Path) -> str:
    return (HOSTILE / "read_course_files.py").read_text().replace("@COURSE@", str(course))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder: grading.toml, a gradebook, and two submissions in ``subs/``: alice's
    3.1 snoops, her classmate's files are the solution marked with a secret of their own."""
    folder = tmp_path_factory.mktemp("course")
    seed = str(secrets.randbelow(10**12) + 10**12)
    marks = {
        "seed": seed,
        "gradebook": "gb" + secrets.token_hex(6),
        "classmate": "mate" + secrets.token_hex(6),
        "solution": "Instructor solution",
    }
    if os.access("/etc/shadow", os.R_OK):
        marks["shadow"] = Path("/etc/shadow").read_text().splitlines()[0]
    (folder / "grading.toml").write_text(f"seed = {seed}\n")
    (folder / "gradebook.csv").write_text(f"submission,score\n{marks['gradebook']},60\n")
    staged = folder / "staged.py"
    staged.write_text(snoop_source(folder))
    make_submission(
        folder / "subs" / "alice",
        {ex: None for ex in "3.2 3.3 4.1 4.2 4.3".split()} | {"3.1": staged},
    )
    staged.unlink()
    mate = make_submission(folder / "subs" / f"classmate_{marks['classmate']}")
    for file in (mate / "exercises").iterdir():
        file.write_text(f"# {marks['classmate']}\n" + file.read_text())
    return folder, marks


def assert_private(text: str, marks: dict, course: Path) -> None:
    assert "snooped:" in text  # the attack ran, and its message reached the report
    for what, mark in marks.items():
        assert mark not in text, f"the {what} leaked: {text[:3000]}"
    assert f"{course}/" not in text and f"| {course} (" not in text  # no file, no listing


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env, timeout=900)


COMMANDS = {"grade": [GRADE], "python -m grader": [sys.executable, "-m", "grader"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_single_grade_run_from_the_course_folder_reads_none_of_it(command, course):
    folder, marks = course
    proc = run([*COMMANDS[command], "subs/alice", "-e", "3.1", "--format", "json"], folder)
    assert proc.returncode == 1, proc.stderr
    (ex,) = json.loads(proc.stdout)["exercises"]
    assert ex["status"] == "error"
    assert_private(proc.stdout + proc.stderr, marks, folder)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_batch_run_from_the_course_folder_reads_none_of_it(command, course, tmp_path):
    folder, marks = course
    out = folder / f"out-{command.split()[0]}"
    args = ["batch", "subs", "-o", str(out), "--config", "grading.toml", "-e", "3.1", "-j", "2"]
    proc = run([*COMMANDS[command], *args], folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    mate = json.loads((out / "results" / f"classmate_{marks['classmate']}.json").read_text())
    assert mate["score"] == mate["max_score"]
    for seen_by_alice in (out / "results" / "alice.json", out / "reports" / "alice.html"):
        assert_private(seen_by_alice.read_text(), marks, folder)
    shutil.rmtree(out)


def test_pytest_grade_from_the_course_folder_reads_none_of_it(course):
    folder, marks = course
    proc = run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--grade=subs/alice",
            "--grade-exercise",
            "3.1",
            "--grade-max-examples",
            "2",
            "-rA",
        ],
        folder,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert_private(proc.stdout + proc.stderr, marks, folder)


@pytest.mark.slow
def test_grader_check_in_a_kernel_started_in_the_course_folder_reads_none_of_it(course):
    """The snoop as a notebook cell (inside ``transfer_weights``: the cell runs in the
    student's own kernel too, where it may read what it likes)."""
    from nbclient import NotebookClient
    from nbformat import v4

    folder, marks = course
    body = snoop_source(folder).split("\n\n\ndef transfer_weights")[0]
    cell = "def transfer_weights(sa_v2, sa_v1):\n" + textwrap.indent(body, "    ")
    nb = v4.new_notebook()
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
    )
    shown = []
    with client.setup_kernel(env={**os.environ, "JPY_SESSION_NAME": str(folder / "hw.ipynb")}):
        for source in ("import grader", cell, 'grader.check("3.1")'):
            nb.cells.append(v4.new_code_cell(source))
            client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
            shown += [json.dumps(o) for o in nb.cells[-1].outputs]
    assert_private("\n".join(shown), marks, folder)


# --- root is never the student -------------------------------------------------------------------

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root here only")


def shadow_submission(tmp_path: Path) -> Path:
    return make_submission(tmp_path / "sub", {"4.1": HOSTILE / "read_etc_shadow.py"})


@as_root
@pytest.mark.parametrize("disable", [(), ("landlock",)], ids=["all layers", "no landlock"])
def test_root_only_files_stay_out_of_the_report(disable, tmp_path):
    """As root, with or without Landlock: the worker is nobody on the host, so /etc/shadow,
    root's home and the raw disk are out of its reach, and it gets an ordinary error."""
    server = ForkServer(disable=disable, spares=2).start() if disable else default_server()
    starter = starter_for(server) if disable else SandboxStarter(server)
    try:
        if not starter.layers()["nobody"]["on"]:
            pytest.skip(f"the nobody layer is off here: {starter.layers()['nobody']['detail']}")
        result = grade_folder(shadow_submission(tmp_path), ["4.1", "3.1"], start=starter)
    finally:
        if disable:
            server.close()
    by_id = {e.id: e for e in result.exercises}
    assert by_id["3.1"].status == "passed"
    assert by_id["4.1"].status == "error"
    message = by_id["4.1"].checks[0].message
    assert "root-only:" in message and "uid_map: 0 65534 1" in message, message
    assert "/etc/shadow: PermissionError" in message
    shadow = Path("/etc/shadow").read_text().splitlines()
    assert not any(line and line in message for line in shadow)
    assert "read 512 bytes" not in message
    if not disable:  # Landlock: not even the files of /etc that everyone may read
        assert "/etc readable: []" in message


@as_root
def test_root_is_never_the_student():
    """As root, the nobody layer is on, or it is off for a reason that ``--strict-sandbox``
    refuses: never "not needed"."""
    nobody = SandboxStarter(default_server()).layers()["nobody"]
    assert not nobody["detail"].startswith("not needed"), nobody
    server = ForkServer(disable={"mount"}, spares=0).start()
    try:
        nobody = server.layers()["nobody"]
        assert not nobody["on"] and nobody["detail"] == "needs the mount layer"
        with pytest.raises(SandboxUnavailable, match="unprivileged worker user"):
            SandboxStarter(server, strict=True).check_strict()
    finally:
        server.close()


@as_root
def test_strict_sandbox_refuses_to_grade_with_roots_file_access(monkeypatch, capsys):
    server = ForkServer(disable={"mount"}, spares=0).start()
    monkeypatch.setattr(grader.judge.launch.starter, "default_server", lambda *args: server)
    try:
        code = grader.commands.cli.main([str(SOLUTION), "-e", "4.1", "--strict-sandbox"])
    finally:
        server.close()
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "unprivileged worker user" in err, err
