"""Every POSIX-only call has its other-platform path (DESIGN §5.14), held here on Linux with
the POSIX function taken away; the real Windows Python runs in ``bench/windows_check.py``
(under Wine, from .ci/run).

- the wire reads without ``os.readv`` (Windows' Python has none);
- a pipe is waited on without ``select`` (Windows' takes sockets only): ``PeekNamedPipe``'s
  loop, its end counted as readable;
- ``grade --watch`` ends at the end of its input when that is a pipe, never on a terminal;
- macOS: memory is bounded by the worker's own watch (macOS enforces neither ``RLIMIT_AS``
  nor ``RLIMIT_RSS``), and the process limit counts the user's processes with ``ps``;
- the batch's files are written without ``os.fchmod`` (Windows before Python 3.13) and a judge
  past its deadline is killed without ``SIGKILL``;
- a worker's environment names its home the Windows way too; colour codes only on a console
  that reads them; Windows' crash statuses in words.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import types

import pytest
import torch

from grader.batch import ledger, pool
from grader.judge.launch.handle import describe_exit
from grader.live import saves
from grader.protocol import boot, wire
from grader.result import report_text
from grader.shared import pipes


def test_the_wire_reads_whole_messages_without_readv(monkeypatch):
    monkeypatch.setattr(wire, "_READV", None)
    read_end, write_end = os.pipe()
    message = {"weights": torch.arange(300_000, dtype=torch.float32), "name": "W_query"}
    sender = threading.Thread(target=wire.send, args=(write_end, message))
    sender.start()
    try:
        got = wire.recv(read_end, timeout=60)
    finally:
        sender.join()
        os.close(read_end)
        os.close(write_end)
    assert got["name"] == "W_query" and torch.equal(got["weights"], message["weights"])


def test_a_wait_on_a_pipe_without_select_looks_until_data_or_the_time_is_up(monkeypatch):
    looks = iter([False, False, True])
    monkeypatch.setattr(pipes, "_has_data", lambda fd: next(looks))
    assert pipes._wait_windows(5, timeout=30)
    monkeypatch.setattr(pipes, "_has_data", lambda fd: False)
    assert not pipes._wait_windows(5, timeout=0.05)
    assert not pipes._wait_windows(5, timeout=0)


@pytest.mark.parametrize(
    "peeked, readable",
    [((3, 0), True), ((0, 0), False), (BrokenPipeError(32, "ended"), True), (OSError(50), False)],
    ids=["holds bytes", "empty", "its writer gone", "not a pipe Windows can ask (Wine)"],
)
def test_what_peeking_at_a_windows_pipe_says(monkeypatch, peeked, readable):
    def peek(handle, size):
        if isinstance(peeked, BaseException):
            raise peeked
        return peeked

    monkeypatch.setitem(sys.modules, "_winapi", types.SimpleNamespace(PeekNamedPipe=peek))
    monkeypatch.setitem(sys.modules, "msvcrt", types.SimpleNamespace(get_osfhandle=int))
    assert pipes._has_data(7) is readable


def test_a_pipe_is_readable_when_it_holds_data_or_has_ended():
    read_end, write_end = os.pipe()
    try:
        assert not pipes.wait_readable(read_end, 0)
        os.write(write_end, b"x")
        assert pipes.wait_readable(read_end, 0)
        os.read(read_end, 1)
        os.close(write_end)
        assert pipes.wait_readable(read_end, 1)  # its end: a read returns b""
    finally:
        os.close(read_end)


def test_the_end_of_a_piped_input_is_seen_and_what_came_before_it_is_dropped():
    read_end, write_end = os.pipe()
    try:
        assert not saves.input_ended(read_end)  # open, nothing in it
        os.write(write_end, b"some keys\n")
        assert not saves.input_ended(read_end)  # read and dropped
        os.close(write_end)
        assert saves.input_ended(read_end)
    finally:
        os.close(read_end)
    with open(os.devnull) as null:  # not a pipe (a terminal is not either): never an end
        assert not saves.input_ended(null.fileno())
    assert not saves.input_ended(999)  # no such descriptor


def test_a_wait_for_saves_ends_when_the_input_has(tmp_path):
    watcher = saves.Saves(tmp_path, saves.Counts(suffix=".py"))
    try:
        with pytest.raises(saves.InputEnded):
            watcher.wait(ended=lambda: True)
        watcher.wait_ready()  # from here on, one save is seen: no race with its start
        (tmp_path / "answer.py").write_text("x = 1\n")
        deadline = time.monotonic() + 120  # a bound against a hang only
        assert watcher.wait(ended=lambda: time.monotonic() > deadline) == {tmp_path / "answer.py"}
    finally:
        watcher.close()


MEMORY_HOG = """
import resource, sys, time
from grader.worker import bounds
# Linux starts a process with the peak its parent reached before exec (a test process's, with
# torch, can be large): the hog goes past that peak, plus its allowance
unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB here
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
bounds.watch_memory(64 * 2**20)
hog = bytearray(base + 256 * 2**20)
for i in range(0, len(hog), 4096):
    hog[i] = 1
time.sleep(10)
print("not stopped")
"""


@pytest.mark.skipif(os.name == "nt", reason="no 'resource' module on Windows")
def test_the_memory_watch_ends_a_worker_past_its_allowance():
    """What bounds memory where the OS enforces no limit (macOS): the worker's own watch."""
    done = subprocess.run(
        [sys.executable, "-c", MEMORY_HOG], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == boot.OUT_OF_MEMORY, done.stderr
    assert "memory watch" in done.stderr and "not stopped" not in done.stdout
    assert "too much memory" in describe_exit(boot.OUT_OF_MEMORY)


@pytest.mark.skipif(os.name == "nt", reason="Windows has neither RLIMIT_NPROC nor ps")
def test_the_process_limit_counts_the_users_processes_without_proc():
    from grader.worker import bounds

    counted = bounds._processes_of_uid(os.getuid())
    assert 1 <= counted < 100_000  # this process at least, as ps lists them


def test_the_batch_writes_its_files_without_fchmod(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "fchmod")
    ledger.atomic_write(tmp_path / "gradebook.csv", "a,b\n")
    assert (tmp_path / "gradebook.csv").read_text() == "a,b\n"


def test_a_judge_past_its_deadline_is_killed_with_what_the_platform_has():
    if hasattr(signal, "SIGKILL"):  # POSIX: nothing it can catch; Windows: TerminateProcess
        assert pool.KILL is signal.SIGKILL
    else:
        assert pool.KILL is signal.SIGTERM


def test_a_workers_home_is_its_scratch_by_every_name(tmp_path):
    env = boot.worker_environment(str(tmp_path), {"SYSTEMROOT": r"C:\Windows", "SECRET": "x"})
    for name in ("HOME", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP", "TMPDIR"):
        assert env[name] == str(tmp_path)
    assert env["SYSTEMROOT"] == r"C:\Windows" and "SECRET" not in env


class Console:
    def __init__(self, tty: bool):
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def fileno(self) -> int:
        raise OSError("not a console")


def test_colour_only_on_a_console_that_reads_it(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert report_text.use_colour(Console(tty=True))
    assert not report_text.use_colour(Console(tty=False))
    monkeypatch.setattr(os, "name", "nt")  # Windows: the console is asked, and this one fails
    assert not report_text.ansi_console(Console(tty=True))
    assert not report_text.use_colour(Console(tty=True))


def test_windows_crash_statuses_are_named():
    assert "access violation" in describe_exit(0xC0000005)
    assert "stack overflow" in describe_exit(0xC00000FD)


def test_a_windows_workers_job_has_the_limits_of_its_worker():
    """The job object's limits, laid out as Windows reads them (144 bytes on 64-bit Windows):
    Wine ends a job's processes (bench/windows_check.py) but enforces none of its limits."""
    from grader.judge.launch import winjob
    from grader.protocol.limits import Limits

    limits = Limits(memory_mb=512, max_processes=9, cpu_s=30)
    info = winjob.limits_for(limits)
    flags = info.BasicLimitInformation.LimitFlags
    assert flags & winjob.KILL_ON_JOB_CLOSE and flags & winjob.PROCESS_MEMORY
    assert flags & winjob.ACTIVE_PROCESS and flags & winjob.PROCESS_TIME
    assert info.ProcessMemoryLimit == (512 + winjob.BASELINE_MB) * 2**20
    assert info.BasicLimitInformation.ActiveProcessLimit == 9
    assert info.BasicLimitInformation.PerProcessUserTimeLimit == 30 * 10**7
    if sys.maxsize > 2**32:
        assert ctypes.sizeof(info) == 144


def test_saves_are_seen_by_looking_where_file_events_cannot_be_had(tmp_path):
    """``grade --watch`` where watchfiles' compiled part does not load (Wine): the files'
    times and sizes, looked at every LOOK_S; a save, a new file and a deletion are told."""
    (tmp_path / "ex.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("not graded\n")
    told: list[list[str] | dict[str, bool]] = []
    gone = threading.Event()
    looker = threading.Thread(
        target=saves.poll_saves,
        args=(tmp_path, saves.Counts(suffix=".py"), told.append, gone.is_set),
    )
    looker.start()
    try:
        time.sleep(3 * saves.LOOK_S)
        (tmp_path / "ex.py").write_text("x = 22\n")
        (tmp_path / "notes.txt").write_text("still not graded\n")
        deadline = time.monotonic() + 30  # a bound against a hang only
        while len(told) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        (tmp_path / "helper.py").write_text("y = 2\n")
        while len(told) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        gone.set()
        looker.join(10)
    assert not looker.is_alive()
    assert told[:3] == [{"ready": True}, [str(tmp_path / "ex.py")], [str(tmp_path / "helper.py")]]


def test_a_tamper_seen_after_the_last_reply_is_read_with_a_reply_thread_too(tmp_path):
    """Windows reads replies in a thread: ``finish`` still asks the worker to end and reads
    its exit status, where a tripwire that went off after the last reply is."""
    from grader.judge.launch.handle import Tampered, WorkerHandle
    from grader.judge.launch.reader import ReplyReader
    from grader.protocol.limits import Limits

    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    ends_tampered = "import os\nos.read(0, 1 << 16)\nos._exit(113)\n"  # reads the END request
    proc = subprocess.Popen([sys.executable, "-c", ends_tampered], stdin=req_r)
    os.close(req_r)
    handle = WorkerHandle(
        proc.pid,
        req_w,
        rep_r,
        tmp_path / "out.txt",
        Limits(),
        process=proc,
        reader=ReplyReader(rep_r),
        started=True,
    )
    try:
        with pytest.raises(Tampered):
            handle.finish()
    finally:
        os.close(rep_w)
        handle.close()
    assert 113 in boot.TAMPERED


def test_a_submissions_file_is_read_without_o_nofollow_and_a_link_is_still_refused(
    tmp_path, monkeypatch
):
    """Windows' os has no O_NOFOLLOW (nor O_NONBLOCK): a link is refused by a look first."""
    from grader.shared import regular

    monkeypatch.delattr(os, "O_NOFOLLOW")
    monkeypatch.setattr(regular, "FLAGS", os.O_RDONLY)
    (tmp_path / "data.txt").write_bytes(b"one\r\ntwo\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "data.txt")
    assert regular.read_regular(tmp_path / "data.txt", 100) == b"one\r\ntwo\n"
    assert regular.read_regular(tmp_path / "link.txt", 100) is None
    assert regular.read_regular(tmp_path / "data.txt", 3) is None  # over the limit
