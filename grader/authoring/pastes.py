"""Reproduce snippets run as ``python -c SNIPPET`` would run them, from a warm interpreter.

A snippet's own work takes a few hundredths of a second; a fresh interpreter spends more than
a second importing torch first (and another importing ``torch._dynamo`` when the snippet builds
a module on the meta device), and ``grade check-pack`` (and the project's tests) paste dozens
of snippets. So a ``PasteBox`` keeps one server that has imported torch (and nothing of the
grader's or a pack's: the snippet must find them as a student's paste does), and forks a child
per snippet. The child is set up as ``python -c`` sets itself up: the snippet's folder current
and first on ``sys.path`` (as ``''``), a fresh ``__main__`` namespace, output to its own files,
exit status 1 and a traceback on stderr when the snippet raises; in a process group of its
own, so that a paste past its deadline is killed with all it started while the server goes
on (it was started again each time: a second and more). The server never runs a torch
operation, so its children may use threads; and it forks only while it runs no other thread
(numpy's OpenBLAS, which torch loads, stops its pool for a fork and starts it again only when
used): a thread holding a lock at the fork would leave it held forever in the child. The server
checks this after each fork and stops if it ever fails. Without ``os.fork`` (Windows), each
snippet runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVER = r"""
import atexit, json, os, struct, sys, traceback
STARTING_ENV = dict(os.environ)  # for a prelude: importing torch._dynamo sets a variable
import torch  # the second a fresh interpreter would spend, once
# What torch imports lazily and a snippet meets at once: a module built on the meta device (as
# a snippet that counts parameters builds one) imports torch._dynamo, another second a paste.
# Imports only: the thread OpenBLAS starts with them stops for each fork (checked below). A
# torch whose dynamo refuses this Python refuses it in the snippet too, as a fresh one would.
try:
    import torch._dynamo
except Exception:
    pass

requests, replies = os.fdopen(int(sys.argv[1]), "rb"), os.fdopen(int(sys.argv[2]), "wb")
base_path = list(sys.path[1:])  # without the server's own '' (its folder)

# What a prelude (``PasteBox(prelude=...)``) may replace: a value the server prepares for a
# job before it forks, which the child gets (its environment and folder already the job's)
# and the server lets go of after the fork.
def before_fork(job):
    return None

def in_child(job, token):
    pass

def after_fork(job, token):
    pass

exec(sys.argv[3], globals())

def run(job, token):
    if job.get("env") is not None:  # this paste's own environment (the server's otherwise)
        os.environ.clear()
        os.environ.update(job["env"])
    os.chdir(job["cwd"])
    sys.path[:] = [""] + base_path
    in_child(job, token)
    for fd, name in ((1, "out"), (2, "err")):
        target = os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.argv[:] = ["-c"]
    main = type(sys)("__main__")
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(job["snippet"], "<string>", "exec"), main.__dict__)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:  # printed as python -c prints it: no frame of this server
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next)
        code = 1
    atexit._run_exitfuncs()  # as python -c does at exit: a notebook's extracted files go
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)

while True:
    head = requests.read(4)
    if len(head) < 4:
        break
    job = json.loads(requests.read(struct.unpack("!I", head)[0]))
    token = before_fork(job)
    child = os.fork()
    if child == 0:
        os.setpgid(0, 0)  # its own group, which a hung paste is killed with (and the server not)
        requests.close()
        replies.close()
        run(job, token)
    try:
        os.setpgid(child, child)  # here too: the group exists before its number is sent
    except OSError:
        pass  # the child made it already, or has already ended
    after_fork(job, token)
    replies.write(struct.pack("!i", child))
    replies.flush()
    # as Python 3.12+ counts them for its warning (where the kernel says; elsewhere trusted)
    threads = len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else 1
    assert threads == 1, f"the paste box forked while it ran {threads} threads"
    _, status = os.waitpid(child, 0)
    replies.write(struct.pack("!i", os.waitstatus_to_exitcode(status)))
    replies.flush()
"""


class PasteBox:
    """One warm server; ``run`` pastes a snippet into it (one snippet at a time). ``env`` is
    the environment the snippets run in (default: this process's, without ``GRADER_PACK``, as
    a student's fresh shell has it). ``prelude``: code the server runs once before it serves;
    it may define ``before_fork(job)``, ``in_child(job, token)`` and ``after_fork(job, token)``
    (``SERVER``), and must leave the server without threads."""

    def __init__(self, env: dict[str, str] | None = None, prelude: str = "") -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self.env = dict(env) if env is not None else pasting_env()
        self.prelude = prelude

    def _start(self) -> subprocess.Popen:
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(req_r), str(rep_w), self.prelude],
            pass_fds=(req_r, rep_w),
            cwd=tempfile.gettempdir(),
            env=self.env,
            start_new_session=True,  # its own group: a hung snippet dies with the server
        )
        os.close(req_r)
        os.close(rep_w)
        return proc

    def run(
        self, snippet: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """``snippet`` run as ``python -c`` in ``cwd``; exit status -9 when it did not finish
        within ``timeout`` seconds. ``env``: the snippet's environment instead of the box's
        (read when the snippet runs; the interpreter was set up with the box's)."""
        if not hasattr(os, "fork"):  # no warm server without fork: a fresh interpreter
            return fresh(snippet, cwd, self.env if env is None else env, timeout)
        with self._lock, tempfile.TemporaryDirectory(prefix="paste-") as tmp:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = self._start()
            out, err = Path(tmp) / "out", Path(tmp) / "err"
            job = json.dumps(
                {
                    "snippet": snippet,
                    "cwd": str(cwd),
                    "out": str(out),
                    "err": str(err),
                    "env": env,
                }
            ).encode()
            os.write(self._req_w, struct.pack("!I", len(job)) + job)
            code = self._wait(timeout)
            return subprocess.CompletedProcess(
                [sys.executable, "-c", snippet],
                code,
                out.read_text(errors="replace") if out.exists() else "",
                err.read_text(errors="replace") if err.exists() else "",
            )

    def _wait(self, timeout: float) -> int:
        """The exit status of the paste just sent; -9 when it did not finish within
        ``timeout`` seconds. A hung paste is killed with its process group and the server
        goes on; a server that does not answer is stopped (started afresh next time)."""
        began = time.monotonic()
        sent = _read_exact(self._rep_r, 4, timeout)  # the child's number, once it is forked
        if sent is not None:
            left = max(0.0, timeout - (time.monotonic() - began))
            reply = _read_exact(self._rep_r, 4, left)
            if reply is not None:
                return struct.unpack("!i", reply)[0]
            try:
                os.killpg(struct.unpack("!i", sent)[0], signal.SIGKILL)
            except OSError:
                pass
            if _read_exact(self._rep_r, 4, 30) is not None:  # reaped: the server answers
                return -9
        self.close()
        return -9

    def close(self) -> None:
        """Stop the server (and any snippet it still runs)."""
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._proc.wait()
            os.close(self._req_w)
            os.close(self._rep_r)
            self._proc = None


def _read_exact(fd: int, n: int, timeout: float) -> bytes | None:
    import select

    data = b""
    while len(data) < n:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return None
        chunk = os.read(fd, n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def pasting_env() -> dict[str, str]:
    """The environment of a student's fresh shell: this one without ``GRADER_PACK`` (which
    ``grade --pack`` sets for its own processes only)."""
    from grader.shared.packs import CHOSEN

    return {k: v for k, v in os.environ.items() if k != CHOSEN}


def fresh(
    snippet: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """The same paste into a really fresh interpreter; exit status -9 past ``timeout``."""
    try:
        return subprocess.run(
            [sys.executable, "-c", snippet],
            cwd=cwd,
            env=pasting_env() if env is None else env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        out, err = (
            s.decode(errors="replace") if isinstance(s, bytes) else s or ""
            for s in (exc.stdout, exc.stderr)
        )
        return subprocess.CompletedProcess(exc.cmd, -9, out, err)
