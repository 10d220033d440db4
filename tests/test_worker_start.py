"""What a worker does before it imports the student's file, whatever the Python and torch:
the meta device's fast kernels (installed on every supported torch, or a slower path said
once), and a failure of the worker's own setup reported as the grader's, never the student's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import SOLUTION, make_submission

from grader.result.schema import WORKER_NOT_STARTED

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork server is Linux's")


def _python(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def _grade(*args: str, env: dict | None = None, script: str = "") -> subprocess.CompletedProcess:
    """``grade ARGS`` as a student runs it, after ``script`` (run in the same interpreter)."""
    return _python(
        script + "\nimport sys\nfrom grader.commands.cli import entry\n"
        f"sys.argv = ['grade', *{list(args)!r}]\nentry()\n",
        env,
    )


def test_the_fast_kernels_are_the_ones_that_run():
    proc = _python(
        """
        import sys, torch
        from grader.worker import metakernels
        assert metakernels.install() is None
        with torch.device("meta"):
            emb = torch.nn.Embedding(50257, 768)
            mask = torch.triu(torch.ones(1024, 1024), diagonal=1)
            lin = torch.nn.Linear(768, 768)
        assert mask.shape == (1024, 1024) and emb.weight.shape == (50257, 768)
        assert "torch._dynamo" not in sys.modules, "normal_ went through torch's own kernel"
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_a_refused_registration_keeps_torchs_kernels_and_says_why():
    proc = _python(
        """
        import torch
        from grader.worker import metakernels
        def refuse(*args, **kwargs):
            raise RuntimeError("there's already a kernel registered from python")
        kept, torch.library.Library.impl = torch.library.Library.impl, refuse
        reason = metakernels.install()
        torch.library.Library.impl = kept  # torch's own slow path registers kernels too
        assert reason and "already a kernel" in reason, reason
        assert metakernels.install() == reason  # once per process
        with torch.device("meta"):
            mask = torch.triu(torch.ones(5, 5), diagonal=1)
            lin = torch.nn.Linear(4, 3)
        assert mask.shape == (5, 5) and lin.weight.shape == (3, 4)
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_kernels_that_do_not_run_are_found_by_the_probe():
    """A registration torch accepts but does not use (a release that dispatches elsewhere)."""
    proc = _python(
        """
        import torch
        from grader.worker import metakernels
        kept = torch.library.Library.impl
        torch.library.Library.impl = lambda self, *args, **kwargs: None
        reason = metakernels.install()
        torch.library.Library.impl = kept
        assert reason and "own kernels for normal_, triu, uniform_" in reason, reason
        print("ok")
        """
    )
    assert proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_the_slower_path_grades_the_solution_fully_and_says_so_once():
    proc = _grade(str(SOLUTION), "--format", "json", env={"GRADER_META_KERNELS": "off"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["score"] == result["max_score"] == 60
    lines = [line for line in proc.stderr.splitlines() if "slower path" in line]
    assert len(lines) == 1, proc.stderr
    assert "GRADER_META_KERNELS=off" in lines[0]


def test_the_fast_path_says_nothing():
    proc = _grade(str(SOLUTION), "-e", "4.2", "--format", "json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "slower path" not in proc.stderr


# The worker side's setup made to fail in the fork server and in every fallback worker, as
# torch < 2.13 made the old kernels' registration fail.
BREAK_SETUP = """
from grader.protocol import boot
patch = "import grader.worker.metakernels as m; m.install = lambda: 1 / 0; "
boot.SPAWN_BOOT = boot.SPAWN_BOOT.replace("from grader.", patch + "from grader.", 1)
boot.FORK_SERVER_BOOT = boot.FORK_SERVER_BOOT.replace("from grader.", patch + "from grader.", 1)
"""


def test_a_worker_that_fails_its_own_setup_is_the_graders_failure():
    proc = _grade(str(SOLUTION), "--format", "json", script=BREAK_SETUP)
    assert proc.returncode == 2, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    for exercise in result["exercises"]:
        assert exercise["status"] == "error"
        for check in exercise["checks"]:
            assert check["message"].startswith(WORKER_NOT_STARTED), check["message"]
            assert "ZeroDivisionError" in check["message"]
            assert "importing your file" not in check["message"]
    said = [line for line in proc.stderr.splitlines() if WORKER_NOT_STARTED in line]
    assert len(said) == 1 and "not of your code" in said[0], proc.stderr


def test_a_student_file_that_exits_like_a_failed_setup_is_still_the_students(tmp_path: Path):
    """Student code runs only after the worker said it started: its exit status cannot pass
    for the grader's failure."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nos._exit(121)\n")
    folder = make_submission(tmp_path / "sub", {"3.1": bad})
    proc = _grade(str(folder), "-e", "3.1", "--format", "json")
    assert proc.returncode == 1, proc.stderr[-2000:]
    (exercise,) = json.loads(proc.stdout)["exercises"]
    assert exercise["status"] == "error"
    assert all(c["message"].startswith("importing your file failed") for c in exercise["checks"])
