"""What a pack's author meets (issue 42): an exception in the author's own check is said as
"your check <file> line N raised ..." with exit status 2 (and what to do for a backward pass
under the judge's ``torch.no_grad()``), never as the grader's internal error; a reproduce
snippet of a pack graded from its folder runs as pasted, without ``GRADER_PACK``; ``grade
release`` refuses with every leaking file and the remedy in ``pack.toml``. Each on the tiny pack
of ``tests/tinypack.py``, changed as the test needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tinypack
from support import grade_cli

from grader.authoring.pastes import pasting_env
from grader.result.schema import CHECK_RAISED, GRADER_FAILED


def grade(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``grade ARGS`` in ``cwd`` as a user runs it (no ``GRADER_PACK`` of the test's)."""
    env = pasting_env()
    return grade_cli(*args, cwd=cwd, env=env, timeout=300)


def tiny(folder: Path, checks: str | None = None) -> Path:
    """The tiny pack in ``folder``, its check's body given a first line of ``checks``."""
    pack = tinypack.make_tiny_pack(folder)
    if checks is not None:
        text = (pack / "checks.py").read_text()
        first = '    got = worker.call("double", x=x)\n'
        assert first in text
        (pack / "checks.py").write_text(text.replace(first, first + checks))
    return pack


def line_of(path: Path, text: str) -> int:
    (number,) = [n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line]
    return number


# --- an exception in the author's check ----------------------------------------------------

BACKWARD = """\
    import torch
    w = torch.ones(1, requires_grad=True)
    (w * got).sum().backward()  # the author's reference wants gradients
"""


def test_an_authors_check_that_raises_is_named_with_its_line_and_exit_status_2(tmp_path):
    pack = tiny(tmp_path, BACKWARD)
    line = line_of(pack / "checks.py", ".backward()")
    proc = grade("--pack", str(pack), "../tiny_solution", "--format", "json", cwd=pack)
    assert proc.returncode == 2, proc.stderr
    (exercise,) = json.loads(proc.stdout)["exercises"]
    assert exercise["status"] == "error" and exercise["score"] == 0
    message = exercise["checks"][0]["message"]
    assert message.startswith(
        f"{CHECK_RAISED}tiny_pack/checks.py line {line} raised RuntimeError: element 0 of tensors "
        "does not require grad"
    ), message
    assert "torch.no_grad()" in message and "with torch.enable_grad():" in message
    assert GRADER_FAILED not in message and "internal error" not in proc.stderr
    assert f"grade: your check tiny_pack/checks.py line {line} raised RuntimeError" in proc.stderr


def test_an_authors_check_raising_anything_else_gets_no_gradient_advice(tmp_path):
    pack = tiny(tmp_path, "    {}['missing']\n")
    proc = grade("--pack", str(pack), "../tiny_solution", "--format", "json", cwd=pack)
    assert proc.returncode == 2, proc.stderr
    message = json.loads(proc.stdout)["exercises"][0]["checks"][0]["message"]
    line = line_of(pack / "checks.py", "['missing']")
    assert message == f"{CHECK_RAISED}tiny_pack/checks.py line {line} raised KeyError: 'missing'"


# --- a snippet of a pack graded from its folder --------------------------------------------


def paste(snippet: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -c SNIPPET`` in ``cwd``, as a student pastes it: no ``GRADER_PACK``."""
    env = pasting_env()
    return subprocess.run(
        [sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def test_a_folder_packs_snippet_runs_as_pasted_without_grader_pack(tmp_path):
    tiny(tmp_path)
    answer = tmp_path / "alice" / "exercises"
    answer.mkdir(parents=True)
    (answer / tinypack.FILENAME).write_text(tinypack.WRONG)
    proc = grade("--pack", "tiny_pack", "alice", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    (check,) = json.loads(proc.stdout)["exercises"][0]["checks"]
    snippet = check["reproduce"]
    assert "use_pack('tiny_pack')" in snippet and "load_exercise('alice', 't1')" in snippet
    pasted = paste(snippet, tmp_path)
    assert pasted.returncode == 0, pasted.stderr[-2000:]
    x = check["counterexample"]
    assert pasted.stdout.strip() == str(3 * x)  # the wrong answer's value: the failure shown
    # Where the folder is not (a student's clone, the pack installed), the line does nothing.
    elsewhere = paste(
        "from grader.commands.reproduce import use_pack\nuse_pack('tiny_pack')\n"
        "import os; print(os.environ.get('GRADER_PACK'))",
        answer,
    )
    assert elsewhere.returncode == 0 and elsewhere.stdout.strip() == "None", elsewhere.stderr


# --- grade release's refusal ---------------------------------------------------------------


def leaky_pack(folder: Path) -> Path:
    """The tiny pack with two of its modules holding the solution's lines."""
    pack = tiny(folder)
    for name in ("oracle.py", "helpers.py"):
        (pack / name).write_text(tinypack.SOLUTION)
    return pack


def test_release_refuses_with_every_leaking_file_and_the_remedy(tmp_path):
    from grader.editions.leaks import REFUSING, SolutionLeaked
    from grader.editions.release import build_release
    from grader.shared.packs import read_pack

    pack = leaky_pack(tmp_path / "course")
    with pytest.raises(SolutionLeaked) as refused:
        build_release(tmp_path / "out", packs=(read_pack(pack),))
    said = str(refused.value)
    assert said.startswith(f"{REFUSING}tiny_pack/helpers.py holds 2 line(s) of tiny-course's")
    assert "; tiny_pack/oracle.py holds 2 line(s)" in said and "(2 files)" in said
    assert 'shared = ["exercises", "tiny_pack.helpers", "tiny_pack.oracle"] in ' in said
    assert said.endswith(
        "pack.toml; else take the solution's lines out of those files "
        "(compute the expected answer another way)"
    )
    assert not (tmp_path / "out").exists()
    # The remedy works: with the modules shared, the release is written.
    toml = pack / "pack.toml"
    toml.write_text(
        toml.read_text().replace(
            'shared = ["exercises"]',
            'shared = ["exercises", "tiny_pack.helpers", "tiny_pack.oracle"]',
        )
    )
    build_release(tmp_path / "out", packs=(read_pack(pack),))
    assert (tmp_path / "out" / "tiny_pack" / "oracle.py").is_file()
