"""The sandbox's own behaviour: the fork server, its layers, bounds and life cycle.

(The attacks are in tests/test_sandbox_hostile.py.)
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import torch
from support import ROOT, SOLUTION, grade_folder, make_submission

import grader.commands.cli
import grader.judge.launch.starter
import reference
from grader.judge.launch.forkserver import ForkServer
from grader.judge.launch.handle import WorkerLost
from grader.judge.launch.spawn import start_spawn
from grader.judge.launch.starter import (
    LAYER_NAMES,
    SandboxStarter,
    SandboxUnavailable,
    default_server,
    off_layers,
    supported,
)
from grader.protocol.boot import KEEP_ENV, worker_environment
from grader.protocol.limits import Limits

pytestmark = pytest.mark.skipif(not supported(), reason="the fork server needs Linux")

LIMITS = Limits(call_timeout_s=20.0, import_timeout_s=60.0)


def start_with(starter, code: str, folder: Path, limits: Limits = LIMITS):
    """A worker for exercise 3.1 whose file is ``code``."""
    sub = folder / "sub"
    (sub / "exercises").mkdir(parents=True)
    student = sub / "exercises" / "ex3_1_weight_transfer.py"
    student.write_text(code, encoding="utf-8")
    scratch = folder / "scratch"
    scratch.mkdir()
    return starter("3.1", student, sub, limits, scratch)


@pytest.fixture(scope="module")
def starter():
    return SandboxStarter(default_server())


def test_worker_runs_a_large_matmul_at_full_thread_count_after_the_judge_computed(
    starter, tmp_path
):
    """OpenMP is not fork-safe: a child of a process that ran a multi-threaded op hangs on its
    own first one. The judge computes first here; its workers must not hang."""
    judge_threads = torch.get_num_threads()  # one, as in `grade`'s judge (tests/conftest.py)
    threads = 2
    torch.set_num_threads(threads)
    try:
        a = torch.randn(1024, 1024)
        assert torch.isfinite(a @ a).all()  # the judge has run a multi-threaded op
    finally:
        torch.set_num_threads(judge_threads)
    code = (
        "import torch\n"
        f"torch.set_num_threads({threads})\n"
        "a = torch.randn(2048, 2048)\n"
        "print('threads', torch.get_num_threads(), bool(torch.isfinite(a @ a).all()))\n"
        "def transfer_weights(sa_v2, sa_v1):\n    pass\n"
    )
    worker = start_with(starter, code, tmp_path)
    try:
        assert worker.receive(LIMITS.import_timeout_s) == "ready"
        assert f"threads {threads} True" in worker.output()
    finally:
        worker.close()


def test_layers_are_reported_by_name(starter):
    layers = starter.layers()
    assert set(layers) == set(LAYER_NAMES)
    assert all(isinstance(v["on"], bool) and isinstance(v["detail"], str) for v in layers.values())
    from grader.worker.sandbox.linux import landlock_abi

    assert layers["landlock"]["on"] == (landlock_abi() > 0)
    assert layers["fork server"]["on"]


def test_worker_sees_only_its_own_processes_and_scratch(starter, tmp_path):
    layers = starter.layers()
    code = (
        "import os\n"
        "print('procs', sorted(p for p in os.listdir('/proc') if p.isdigit()))\n"
        "print('ppid', os.getppid())\n"
        "open('mine.txt', 'w').write('ok')\n"
        "try:\n    open(__file__, 'a')\n    print('own file writable')\n"
        "except OSError:\n    print('own file read-only')\n"
        "def transfer_weights(sa_v2, sa_v1):\n    pass\n"
    )
    worker = start_with(starter, code, tmp_path)
    try:
        assert worker.receive(LIMITS.import_timeout_s) == "ready"
        out = worker.output()
    finally:
        worker.close()
    if layers["pid"]["on"]:
        assert "procs ['1']" in out and "ppid 0" in out
    if layers["mount"]["on"] or layers["landlock"]["on"]:
        assert "own file read-only" in out
    assert not (tmp_path / "sub" / "exercises" / "mine.txt").exists()


def test_strict_refuses_when_a_layer_is_off():
    server = ForkServer(disable={"net"}, spares=0).start()
    try:
        with pytest.raises(SandboxUnavailable, match="network namespace"):
            SandboxStarter(server, strict=True).check_strict()
    finally:
        server.close()


def test_strict_sandbox_flag_is_one_line_and_exit_status_2(monkeypatch, capsys):
    server = ForkServer(disable={"pid"}, spares=0).start()
    monkeypatch.setattr(grader.judge.launch.starter, "default_server", lambda *args: server)
    try:
        code = grader.commands.cli.main([str(SOLUTION), "-e", "3.1", "--strict-sandbox"])
    finally:
        server.close()
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "private process tree" in err


def test_strict_accepts_a_full_sandbox(starter):
    if off_layers(starter.layers()):
        pytest.skip(f"layers off on this machine: {off_layers(starter.layers())}")
    grader.judge.launch.starter.default_starter(strict=True)  # does not raise


@pytest.mark.skipif(os.geteuid() != 0, reason="the nobody layer drops root's rights")
def test_an_installation_nobody_can_reach_loses_no_layer(starter, tmp_path):
    """An installation under a folder the user nobody cannot pass (a clone in a 0700 folder, as
    in /root or a temp folder) keeps every layer: the fork server finds the pack's judge-only
    files before any worker drops to nobody (that search ran in the layers' probe's worker once,
    found no pack there and called the mount layer off, and the pid and nobody layers with it).
    """
    if off_layers(starter.layers()):
        pytest.skip(f"layers off on this machine: {off_layers(starter.layers())}")
    locked = tmp_path / "locked"
    for name in ("grader", "llm_pack", "reference"):
        shutil.copytree(ROOT / name, locked / name, ignore=shutil.ignore_patterns("__pycache__"))
    locked.chmod(0o700)
    code = (
        "import json\n"
        "from grader.judge.launch.starter import SandboxStarter, default_server, off_layers\n"
        "print(json.dumps(off_layers(SandboxStarter(default_server()).layers())))\n"
    )
    # chosen by its folder: the installed pack's name would find the clone's own copy
    env = {**os.environ, "PYTHONPATH": str(locked), "GRADER_PACK": str(locked / "llm_pack")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=locked,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {}, done.stderr


def test_layers_off_are_stated_once(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(grader.judge.launch.starter, "_announced", False)
    server = ForkServer(disable={"ipc"}, spares=0).start()
    try:
        starter = SandboxStarter(server)
        for i in range(2):
            (tmp_path / str(i)).mkdir()
            code = "def transfer_weights(a, b):\n    pass\n"
            start_with(starter, code, tmp_path / str(i)).close()
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.count("sandbox layers off here") == 1 and "IPC namespace" in err


def test_printing_is_capped_and_the_cut_is_said(starter, tmp_path):
    limits = Limits(max_output_kb=8, import_timeout_s=60.0)
    code = (
        "import os\n"
        "for _ in range(1000):\n    print('x' * 99)\n"
        "os.write(1, b'y' * 100_000)\n"
        "def transfer_weights(sa_v2, sa_v1):\n    pass\n"
    )
    worker = start_with(starter, code, tmp_path, limits)
    try:
        assert worker.receive(limits.import_timeout_s) == "ready"
        out = worker.output()
    finally:
        worker.close()
    assert out.startswith("x" * 99)
    assert out.endswith("[output cut at 8 KiB: the rest was dropped]")
    assert len(out) < 8 * 1024 + 100


def test_exercise_budget_stops_a_slow_exercise(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\ndef transfer_weights(sa_v2, sa_v1):\n    time.sleep(1.0)\n",
        encoding="utf-8",
    )
    sub = make_submission(tmp_path / "sub", {"3.1": slow})
    limits = Limits(call_timeout_s=30.0, exercise_budget_s=2.5, import_timeout_s=60.0)
    result = grade_folder(sub, ["3.1"], limits=limits)
    ex = result.exercises[0]
    assert ex.status == "timeout"
    assert any("used up its 2.5 s budget" in c.message for c in ex.checks)


def test_worker_environment_is_an_allow_list():
    source = {
        "PATH": "/bin",
        "GITHUB_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s",
        "LANG": "C.UTF-8",
        "HOME": "/home/me",
        "PYTHONPATH": "/evil",
    }
    env = worker_environment("/scratch", source)
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["HOME"] == env["TMPDIR"] == "/scratch" and env["LANG"] == "C.UTF-8"
    assert "PYTHONPATH" not in env


@pytest.mark.parametrize("how", ["fork server", "spawn"])
def test_worker_environment_end_to_end(how, starter, tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_TEST_SECRET_TOKEN", "hunter2")
    monkeypatch.setenv("SYSTEMROOT", "C:\\Windows")  # kept: Windows needs it in every process
    code = (
        "import os\nprint('env', sorted(os.environ))\n"
        "def transfer_weights(sa_v2, sa_v1):\n    pass\n"
    )
    worker = start_with(starter if how == "fork server" else start_spawn, code, tmp_path)
    try:
        assert worker.receive(LIMITS.import_timeout_s) == "ready"
        out = worker.output()
    finally:
        worker.close()
    names = set(eval(out.split("env ", 1)[1].splitlines()[0]))
    allowed = set(KEEP_ENV) | {
        "HOME",
        "USERPROFILE",  # Windows' names of the home, set to the same scratch folder
        "APPDATA",
        "LOCALAPPDATA",
        "TMPDIR",
        "TEMP",
        "TMP",
        "PYTHONHASHSEED",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
        "LC_CTYPE",
        "OMP_WAIT_POLICY",
        "MALLOC_MMAP_MAX_",
        "MALLOC_TRIM_THRESHOLD_",
        "TORCH_COMPILE_DISABLE",
    }
    assert names <= allowed, names - allowed
    if how == "spawn":  # its allow-list read before it cleared its environment, not after
        assert "SYSTEMROOT" in names


def test_threads_can_share_one_server(starter):
    results, errors = [], []

    def grade_one():
        try:
            results.append(grade_folder(SOLUTION, ["3.1", "4.1"], max_examples=3, start=starter))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=grade_one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [r.score for r in results] == [20.0, 20.0, 20.0]


def test_close_stops_the_template_and_its_workers(tmp_path):
    server = ForkServer(spares=0).start()
    hang = "import time\nwhile True:\n    time.sleep(1)\n"  # never ready
    worker = start_with(SandboxStarter(server), hang, tmp_path)
    template = server._process
    server.close()
    assert template.poll() is not None
    with pytest.raises(WorkerLost):
        worker.receive(5.0)  # its end of the pipe is gone with the worker
    assert not Path(f"/proc/{worker.pid}").exists()
    worker.close()


def test_judges_sharing_a_template_lose_only_their_own_workers(tmp_path):
    """A batch's judges share one template, each over its own channel: closing one channel ends
    that judge's workers and leaves the other judge served; closing the last ends the template."""
    first, second = ForkServer.shared(2, spares=0)
    assert first._process is second._process
    hang = "import time\nwhile True:\n    time.sleep(1)\n"  # never ready
    gone = start_with(SandboxStarter(first), hang, tmp_path / "first")
    first.close()
    deadline = time.monotonic() + 10.0
    while Path(f"/proc/{gone.pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{gone.pid}").exists()  # killed with its judge's channel
    gone.close()
    code = "def transfer_weights(a, b):\n    pass\n"
    worker = start_with(SandboxStarter(second), code, tmp_path / "second")
    assert worker.receive(LIMITS.import_timeout_s) == "ready"
    worker.close()
    assert second._process.poll() is None
    second.close()
    assert second._process.poll() is not None


def template_children(server: ForkServer) -> list[int]:
    """The processes whose parent is the fork server's template: its spares and workers."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(b")") + 2 :].split()[1]) == server.template_pid:
            pids.append(int(entry.name))
    return pids


@pytest.mark.parametrize("refill", [True, False])
def test_spares_handed_out_are_replaced_unless_the_judge_grades_once(tmp_path, refill):
    code = "def transfer_weights(a, b):\n    pass\n"
    with ForkServer(spares=2, refill=refill).start() as server:
        server.wait_ready()
        starter = SandboxStarter(server)
        for i in range(2):
            worker = start_with(starter, code, tmp_path / str(i))
            assert worker.receive(LIMITS.import_timeout_s) == "ready"
            worker.close()
        time.sleep(1.0)  # the server makes spares once the judge has been quiet for 10 ms
        deadline = time.monotonic() + 15.0  # forking them takes longer on a busy machine
        while refill and len(template_children(server)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(template_children(server)) == (2 if refill else 0)


def test_a_server_that_cannot_start_falls_back_to_fresh_interpreters(monkeypatch, tmp_path):
    server = ForkServer(spares=0)
    server._failed = "no fork server in this test"
    starter = SandboxStarter(server)
    worker = start_with(starter, "def transfer_weights(a, b):\n    pass\n", tmp_path)
    try:
        assert worker.process is not None  # a fresh interpreter, not a forked one
        assert worker.receive(LIMITS.import_timeout_s) == "ready"
    finally:
        worker.close()
    assert starter.layers()["fork server"]["on"] is False


def test_default_server_is_per_process():
    assert default_server() is default_server()
    assert default_server()._owner == os.getpid()


def test_scratch_of_the_judge_holds_nothing_after_grading(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    grade_folder(SOLUTION, ["3.1"], max_examples=2)
    assert list(tmp_path.iterdir()) == []


def test_spawn_with_a_reply_thread(tmp_path):
    """The Windows way of reading replies (a thread, no select on pipes), forced here."""
    starter = functools.partial(start_spawn, reader_thread=True)
    result = grade_folder(SOLUTION, ["3.1"], max_examples=3, start=starter, limits=LIMITS)
    assert result.score == result.max_score
    hang = "import time\ndef transfer_weights(sa_v2, sa_v1):\n    time.sleep(1000)\n"
    worker = start_with(starter, hang, tmp_path, Limits(call_timeout_s=2.0))
    try:
        assert worker.receive(LIMITS.import_timeout_s) == "ready"
        with pytest.raises(WorkerLost, match="did not finish within 2 s"):
            worker.call(
                "transfer",
                d_in=2,
                d_out=2,
                v2_state=reference.SelfAttention_v2(2, 2).state_dict(),
                v1_state=reference.SelfAttention_v1(2, 2).state_dict(),
            )
    finally:
        worker.close()
    assert worker.process.poll() is not None


CONTAINED_CHECK = """
import json, os, shutil, sys, tempfile
from pathlib import Path
from grader.protocol.limits import Limits
from grader.judge.launch.starter import SandboxStarter
from grader.judge.launch.forkserver import ForkServer

def proc_mounts():
    return [l for l in open("/proc/self/mountinfo") if l.split()[4] == "/proc"]

before = proc_mounts()
with ForkServer(disable=set(sys.argv[1:]), spares=1) as server:
    folder = Path(tempfile.mkdtemp())
    student = folder / "sub" / "exercises" / "ex3_1_weight_transfer.py"
    student.parent.mkdir(parents=True)
    student.write_text("import os\\nprint('procs', len(os.listdir('/proc')))\\n")
    worker = SandboxStarter(server)("3.1", student, folder / "sub", Limits(), folder)
    assert worker.receive(60) == "ready"
    seen = int(worker.output().split()[1])
    worker.close()
    shutil.rmtree(folder)
    layers = server.layers()
assert proc_mounts() == before, "a worker mounted over the grader's /proc"
print(json.dumps({"euid": os.geteuid(), "host_proc_seen": seen > 1,
                  "on": sorted(k for k, v in layers.items() if v["on"]), "layers": layers}))
"""


def run_contained(prefix: list[str], disable: set[str]) -> dict:
    """CONTAINED_CHECK run under ``prefix`` (an unshare(1) command line) with ``disable``."""
    run = subprocess.run(
        [*prefix, sys.executable, "-c", CONTAINED_CHECK, *sorted(disable)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


@functools.cache
def user_namespace_refused() -> str:
    """Why this machine gives this user no user namespace of its own ("" when it does)."""
    if not shutil.which("unshare"):
        return "unshare(1) is not installed"
    probe = ["unshare", "--user", "--map-root-user", "--mount", "true"]
    run = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    if run.returncode:
        why = run.stderr.strip() or f"exit status {run.returncode}"
        return f"the kernel refuses this user a user namespace ({' '.join(probe)}: {why})"
    return ""


# Each variant runs the grader inside a private mount namespace of its own (``--mount``), so that
# a regression cannot mount over this machine's /proc: only over that namespace's copy, where
# CONTAINED_CHECK sees it.
NO_MOUNT_AS_ROOT = {
    # The grader with real root rights: the mount would succeed anywhere it was tried.
    "real root": "unshare --mount --propagation private".split(),
    # The grader as root of a user namespace (a rootless container, or any user here): root's
    # path through the sandbox with the capabilities of that namespace, which owns the mount
    # namespace the grader runs in, so a stray mount of /proc would succeed there too.
    "root of a user namespace": "unshare -U --map-root-user --mount --propagation private".split(),
}


@pytest.mark.parametrize("how", NO_MOUNT_AS_ROOT, ids=list(NO_MOUNT_AS_ROOT))
def test_no_mount_layer_means_no_mount_at_all(how):
    """Without the mount layer (and with root's rights, real or in a user namespace), a worker
    must never mount a fresh /proc: it would land on the grader's. The PID layer stays on and the
    worker sees the host's processes."""
    if how == "real root" and (os.geteuid() != 0 or not shutil.which("unshare")):
        pytest.skip(
            "needs root and unshare(1): a grader with capabilities over the machine's own mount"
            " namespace ('root of a user namespace' checks the same path as any user)"
        )
    if how != "real root" and user_namespace_refused():
        pytest.skip(user_namespace_refused())
    seen = run_contained(NO_MOUNT_AS_ROOT[how], {"user", "mount"})
    assert seen["euid"] == 0
    assert "pid" in seen["on"], seen["layers"]  # the PID namespace on,
    assert seen["host_proc_seen"]  # and no private /proc: the grader's own shows through
    assert seen["layers"]["pid"]["detail"] == "the host's /proc stays visible (no mount namespace)"


def test_no_mount_layer_for_an_ordinary_user():
    """The ordinary user's path: the worker in a user namespace of its own but, without the
    mount layer, in the grader's mount namespace. It mounts nothing (the kernel would refuse
    it, and the PID layer would be lost), keeps its PID namespace and sees the host's /proc.
    Run as root, the grader is made an ordinary user first (root's uid shown as 65534 in a user
    namespace, where it keeps no capability)."""
    prefix = []
    if os.geteuid() == 0:
        if user_namespace_refused():
            pytest.skip(user_namespace_refused())
        prefix = ["unshare", "--map-user=65534", "--map-group=65534"]
    seen = run_contained(prefix, {"mount"})
    assert seen["euid"] != 0
    assert {"user", "pid"} <= set(seen["on"]) and "mount" not in seen["on"], seen["layers"]
    assert seen["host_proc_seen"]
    assert seen["layers"]["pid"]["detail"] == "the host's /proc stays visible (no mount namespace)"


@pytest.mark.parametrize("listed", [True, False], ids=["children file", "scan of /proc"])
def test_the_template_finds_its_children_with_or_without_the_kernels_list(listed, monkeypatch):
    """The sweep for processes workers left behind reads the kernel's list of the template's
    children, or, where the kernel keeps none, every process's parent."""
    from grader.worker.forkserver import template

    if not listed:
        real = os.scandir

        def scandir(path):
            if str(path).startswith("/proc/self/task"):
                raise FileNotFoundError(path)
            return real(path)

        monkeypatch.setattr(template.os, "scandir", scandir)
    # Started, not forked: a test process runs other threads (pytest-xdist's, torch's pool).
    children = [subprocess.Popen(["sleep", "30"]) for _ in range(3)]
    started = [child.pid for child in children]
    try:
        assert set(started) <= set(template._children())
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert not set(started) & set(template._children())
