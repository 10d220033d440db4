"""No process of the grader forks beside another thread.

A thread that holds a lock when its process forks (torch's OpenMP pool, another library's
pool, a thread of ours) leaves that lock held forever in the child; Python 3.12+ warns of it
("This process ... is multi-threaded, use of fork() may lead to deadlocks in the child").
Here every fork of ``grade``, ``grade batch`` and ``grade --watch`` is seen by a hook that
counts the process's threads right after it, in the parent (where Python counts them for its
warning), so that these tests fail on Python 3.10 and 3.11 too, which never warn; on 3.12+
the warning itself must not appear either. The fork server, which forks its workers, is
checked from outside: once it has forked its spares it runs one thread.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT, SOLUTION

from grader.judge import parallel

EXAMPLE = ROOT / "examples" / "submission"
WARNING = "multi-threaded, use of fork()"
TWO_CORES = len(os.sched_getaffinity(0)) >= 2 if hasattr(os, "sched_getaffinity") else False

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or not parallel.supported(),
    reason="counts threads in /proc/self/task (Linux)",
)

# ``grade`` with ARGS, a hook writing "PID THREADS" to LOG after each fork of any process of
# it that Python runs (the judges it forks inherit the hook; the fork server is a fresh
# interpreter, checked on its own below).
HOOK = """\
import os
def _after_fork():
    with open({log!r}, "a") as f:
        f.write(f"{{os.getpid()}} {{len(os.listdir('/proc/self/task'))}}\\n")
os.register_at_fork(after_in_parent=_after_fork)
from grader.commands.cli import entry
entry()
"""


def hooked(log: Path) -> list[str]:
    """The command line of ``grade`` with the hook (its arguments follow), every warning
    shown."""
    return [sys.executable, "-W", "always::DeprecationWarning", "-c", HOOK.format(log=str(log))]


def run_hooked(log: Path, *args: str) -> subprocess.CompletedProcess:
    """``grade ARGS`` with the fork hook, from the repository."""
    return subprocess.run(
        [*hooked(log), *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )


def forks(log: Path) -> list[int]:
    """The thread count after each fork the hook saw."""
    if not log.exists():
        return []
    return [int(line.split()[1]) for line in log.read_text().splitlines()]


def test_grade_forks_its_judges_alone(tmp_path):
    log = tmp_path / "forks"
    run = run_hooked(log, str(EXAMPLE), "--max-examples", "2")
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert WARNING not in run.stderr + run.stdout
    seen = forks(log)
    if TWO_CORES:  # one judge process per core: on two or more, the exercises are spread
        assert seen, "grade forked no judge process"
    assert seen == [1] * len(seen)


def test_grade_batch_forks_its_judges_alone(tmp_path):
    submissions = tmp_path / "class"
    submissions.mkdir()
    for name, source in (("alice", EXAMPLE), ("bob", SOLUTION)):
        shutil.copytree(source, submissions / name)
    log = tmp_path / "forks"
    run = run_hooked(log, "batch", str(submissions), "-o", str(tmp_path / "out"), "-j", "2")
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert WARNING not in run.stderr + run.stdout
    seen = forks(log)
    assert seen, "grade batch forked no judge process"
    assert seen == [1] * len(seen)


def test_grade_watch_forks_its_judges_alone(tmp_path):
    """``--watch`` watches for saves in a process of its own, not in a thread beside the
    judge: its first grade forks judge processes as ``grade`` does."""
    log = tmp_path / "forks"
    proc = subprocess.Popen(
        [*hooked(log), str(EXAMPLE), "--max-examples", "2", "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        # A shell may start background jobs with Ctrl-C ignored; a student's terminal does not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    out = b""
    try:
        deadline = time.monotonic() + 300
        while b"Watching " not in out and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                out += chunk
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rest, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, err = proc.communicate()
    text = (out + rest).decode(errors="replace") + err.decode(errors="replace")
    assert b"Watching " in out, text[-3000:]
    assert proc.returncode == 0, text[-3000:]
    assert WARNING not in text
    seen = forks(log)
    if TWO_CORES:
        assert seen, "grade --watch forked no judge process"
    assert seen == [1] * len(seen)


def test_the_fork_server_forks_its_workers_alone():
    """The fork server imports torch and never runs an operation (no OpenMP pool); numpy's
    OpenBLAS, which torch loads, stops its pool for the first fork and never needs it again.
    Once the server has forked its spares, it and they run one thread each."""
    from grader.judge.launch.forkserver import ForkServer

    with ForkServer(spares=2).start() as server:
        server.wait_ready()  # it has forked a spare by then, and makes the others when idle
        server_tasks = Path(f"/proc/{server.template_pid}/task")
        deadline = time.monotonic() + 30
        spares: list[str] = []
        while len(spares) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            spares = [
                pid
                for task in server_tasks.iterdir()
                for pid in (task / "children").read_text().split()
            ]
        assert len(spares) >= 1
        assert len(list(server_tasks.iterdir())) == 1
        for pid in spares:
            try:
                assert len(os.listdir(f"/proc/{pid}/task")) == 1
            except FileNotFoundError:  # a step of a spare's making, gone meanwhile
                pass


def test_the_notebook_judge_forks_its_judges_alone():
    """``grader.check_all()`` is graded by the kernel's judge process (a fresh interpreter,
    never the kernel, whose threads are Jupyter's), which spreads the exercises over forked
    judge processes: after it has, it still runs one thread, as it did when it forked (nothing
    in it starts one)."""
    from nbsupport import solution_source

    from grader.live.nbcheck import JudgeProcess
    from grader.shared.registry import EXERCISES

    judge = JudgeProcess()
    try:
        inputs = ["", "import torch", *(solution_source(e.id) for e in EXERCISES)]
        reply = judge.ask({"inputs": [*inputs, "grader.check_all()"], "max_examples": 2})
        assert reply["result"]["score"] == reply["result"]["max_score"], reply
        assert judge._proc is not None
        assert len(os.listdir(f"/proc/{judge._proc.pid}/task")) == 1
    finally:
        judge.close()


def test_a_grade_of_one_exercise_runs_its_judge_forked_under_a_deadline(tmp_path):
    """``grade -e ID`` grades in a forked judge process too: ``parallel.run_forked`` is the
    watchdog of a grade (the child is killed past its deadline, the exercise a ``timeout``)."""
    log = tmp_path / "forks"
    run = run_hooked(log, str(SOLUTION), "-e", "3.1", "--max-examples", "2")
    assert run.returncode == 0, run.stderr[-3000:]
    if TWO_CORES:
        assert forks(log) == [1], "the one exercise was graded without a forked judge"
