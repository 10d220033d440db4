"""The grader on a macOS-like Python on Linux (``tests/macos_like.py``: ``sys.platform`` is
``darwin``, no ``/proc``, none of Linux's own calls, ``ru_maxrss`` in bytes), every process it
starts included: no fork server, no Landlock, workers started as fresh interpreters, memory
bounded by the worker's own watch. The verdicts are Linux's (issue 54, DESIGN §5.14): of
``grade`` on the solution (60/60) and the bundled example, and of ``grade batch``; and
``grade --watch`` grades a save again and ends at the end of its input.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from macos_like import Lines, build
from support import CORPUS, ROOT, grade_cli, make_submission

sys.path.insert(0, str(ROOT / "bench"))

from compat_compare import verdicts  # noqa: E402

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="simulates macOS on Linux, where /proc is"
)

WAIT_S = 600  # a bound against a hang only


@pytest.fixture(scope="session")
def macos_python(tmp_path_factory) -> Path:
    """The macOS-like interpreter, made once a test process."""
    return build(tmp_path_factory.mktemp("macos-like") / "venv")


def run(python: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), *args], cwd=cwd, capture_output=True, text=True, timeout=WAIT_S
    )


@pytest.fixture(scope="session")
def macos_graded(macos_python, tmp_path_factory):
    """``grade PATH --json`` with the macOS-like interpreter, once a test process for each
    path: (its exit status, its stderr, its JSON result)."""
    cache: dict[str, tuple[int, str, dict]] = {}

    def graded(path: str) -> tuple[int, str, dict]:
        if path not in cache:
            out = tmp_path_factory.mktemp("macos-graded") / "result.json"
            done = run(macos_python, "-m", "grader", path, "--json", str(out))
            assert out.exists(), done.stderr[-3000:]
            cache[path] = done.returncode, done.stderr, json.loads(out.read_text())
        return cache[path]

    return graded


LOOKS = """
import os, pathlib, resource, select, signal, sys
from grader.judge.launch import starter
from grader.worker import bounds

refused = []
for look in (
    lambda: open("/proc/self/stat"),
    lambda: open(b"/proc/self/statm", "rb"),
    lambda: os.open("/proc/self/stat", os.O_RDONLY),
    lambda: os.listdir("/proc"),
    lambda: os.scandir("/proc/self/task"),
    lambda: pathlib.Path("/proc/self/cgroup").read_text(),
    lambda: os.stat("/proc/1"),
):
    try:
        look()
    except FileNotFoundError:
        refused.append(True)
print(sys.platform, len(refused), pathlib.Path("/proc/1").exists())
print(
    [hasattr(os, "pidfd_open"), hasattr(signal, "pidfd_send_signal"),
     hasattr(os, "sched_getaffinity"), hasattr(select, "epoll")]
)
print(starter.supported(), bounds._address_space_now())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 2**20)  # bytes, not KiB
print(len(os.listdir(sys.prefix)) > 0, os.path.exists(sys.executable))  # elsewhere: as ever
"""


def test_the_interpreter_looks_like_macos_even_isolated(macos_python):
    """What a worker (started with ``-I``) sees: macOS's platform, no /proc, none of Linux's
    own calls; so no fork server and no memory limit but the watch."""
    done = run(macos_python, "-I", "-c", LOOKS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:5] == [
        "darwin 7 False",
        "[False, False, False, False]",
        "False None",
        "True",
        "True True",
    ]


@pytest.mark.slow
def test_the_platform_tests_pass_on_it(macos_python):
    """What the GitHub Actions workflow runs on macOS (.github/workflows/platforms.yml)."""
    done = run(macos_python, "-m", "pytest", "-q", "-n", "0", "tests/test_platforms.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout.splitlines()[-1]


GRADED = ("tests/submissions/solution", "examples/submission")


@pytest.mark.slow
@pytest.mark.parametrize("path", GRADED)
def test_grade_gives_linuxs_verdicts(macos_graded, path, tmp_path):
    code, stderr, got = macos_graded(path)
    out = tmp_path / "linux.json"
    linux = grade_cli(path, "--json", str(out), timeout=WAIT_S)
    reference = json.loads(out.read_text())
    assert "fork server (warm workers): not available on darwin" in stderr
    assert "internal error" not in stderr
    assert verdicts(got) == verdicts(reference)
    assert code == linux.returncode
    if path == "tests/submissions/solution":
        assert got["score"] == got["max_score"] == 60


PROBE = """
import os, sys
try:
    open("/proc/self/stat")
    proc = "a /proc"
except FileNotFoundError:
    proc = "no /proc"
pidfd = hasattr(os, "pidfd_open")
raise RuntimeError(f"a worker on {sys.platform} with {proc}, pidfd_open {pidfd}")
"""

HOG = """
import time

hog = b"x" * 2**30  # resident at once: 1 GiB, far past the 256 MB a worker may use here
time.sleep(60)
"""


@pytest.mark.slow
def test_a_worker_is_macos_like_and_its_memory_is_bounded_by_its_watch(macos_python, tmp_path):
    exercises = tmp_path / "probe" / "exercises"
    exercises.mkdir(parents=True)
    (exercises / "ex3_1_weight_transfer.py").write_text(PROBE)
    (exercises / "ex3_2_wrapper_2d.py").write_text(HOG)
    out = tmp_path / "probe.json"
    args = ("-e", "3.1", "-e", "3.2", "--memory-mb", "256", "--json", str(out))
    done = run(macos_python, "-m", "grader", str(tmp_path / "probe"), *args)
    assert done.returncode == 1, done.stderr[-3000:]  # some checks failed: graded, no crash
    probe, hog = json.loads(out.read_text())["exercises"]
    assert probe["status"] == "error"
    assert "a worker on darwin with no /proc, pidfd_open False" in probe["checks"][0]["message"]
    assert hog["status"] in ("error", "timeout") and hog["score"] == 0
    assert all("too much memory" in c["message"] for c in hog["checks"])


@pytest.mark.slow
def test_grade_batch_grades_each_as_grade_does(macos_python, macos_graded, tmp_path):
    klass = tmp_path / "class"
    shutil.copytree(ROOT / GRADED[0], klass / "alice")
    shutil.copytree(ROOT / GRADED[1], klass / "bob")
    out = tmp_path / "out"
    done = run(macos_python, "-m", "grader", "batch", str(klass), "-o", str(out), "-j", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    found = {p.stem: json.loads(p.read_text()) for p in sorted(out.glob("results/*.json"))}
    assert sorted(found) == ["alice", "bob"]
    assert found["alice"]["score"] == 60
    for name, path in zip(("alice", "bob"), GRADED, strict=True):
        assert verdicts(found[name]) == verdicts(macos_graded(path)[2])


@pytest.mark.slow
def test_grade_watch_grades_a_save_again_and_ends_with_its_input(macos_python, tmp_path):
    submission = make_submission(tmp_path / "watched")
    proc = subprocess.Popen(
        [str(macos_python), "-m", "grader", str(submission), "-e", "4.1", "--watch"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(proc)
    try:
        first = lines.wait_for("Watching", timeout=WAIT_S)  # said once its watcher watches:
        wrong = CORPUS / "ex4_1" / "wrong_forgets_biases.py"  # one save is seen
        shutil.copyfile(wrong, submission / "exercises" / "ex4_1_parameter_counts.py")
        again = lines.wait_for("Graded again: 4.1", first, timeout=WAIT_S)
        proc.stdin.close()  # the end of its input ends the watch
        assert proc.wait(timeout=WAIT_S) == 0, proc.stderr.read()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    regraded = [x for x in lines.seen[first:again] if x.strip().startswith("4.1")]
    assert regraded and "failed" in regraded[0]
