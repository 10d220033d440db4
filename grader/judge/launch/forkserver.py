"""The judge's side of the fork server: start it, ask it for workers, shut it down.

``ForkServer`` is a worker starter (``grader.judge.launch.handle.Starter``): calling it returns a
``WorkerHandle`` whose process the server forked. One server can be shared by the threads of
one judge process (requests are serialised by a lock; each takes a few milliseconds), and is
closed explicitly with ``close()``, as a context manager, or at exit.

A process may start a server for a child it then forks (``grade batch`` starts its judges'
servers first, so that their imports of torch run while it imports what judging needs): the
child calls ``take_over()`` and the parent ``let_go()``.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from grader.judge.launch.handle import WorkerHandle, worker_folders
from grader.protocol.boot import fork_server_arguments, worker_environment
from grader.shared.course import child_environment, current

if TYPE_CHECKING:
    from grader.protocol.limits import Limits

READY_TIMEOUT_S = 300.0  # importing torch on a loaded machine can be slow
REPLY_TIMEOUT_S = 60.0


class ServerFailed(Exception):
    """The fork server could not be started or stopped answering."""


class ForkServer:
    """A warm template process that forks sandboxed workers; ``disable`` names layers of
    ``grader.protocol.boot.LAYER_NAMES`` to leave out (for tests, or a kernel that
    misbehaves); ``spares`` workers wait ready (one per exercise by default), and each one
    handed out is replaced unless ``refill`` is false (a judge that grades once)."""

    def __init__(self, disable: Iterable[str] = (), spares: int = 6, refill: bool = True):
        self.disable = frozenset(disable)
        self.spares = spares
        self.refill = refill
        self._lock = threading.Lock()
        self._owner = os.getpid()
        self._parent = os.getpid()  # the template's parent: only it can wait for it
        self._peers: list[ForkServer] = [self]  # the channels to the same template (``shared``)
        self._process: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._home: str | None = None
        self._layers: dict[str, dict] | None = None
        self._ready = False
        self._failed: str | None = None
        self.template_pid: int | None = None
        self.slow_meta: str | None = None  # why the meta device's fast kernels are not in use
        self.course = current().choice  # the course whose probes its workers load

    # --- life cycle ---------------------------------------------------------------------

    def start(self) -> ForkServer:
        """Start the template process (returns at once; it imports torch in the background)."""
        with self._lock:
            self._start_locked()
        return self

    @classmethod
    def shared(cls, count: int, spares: int = 6) -> list[ForkServer]:
        """``count`` servers over one template process, started now: each talks to it over a
        channel of its own and is handed to a process of its own (``take_over``); the
        template serves them all, with ``spares`` spare workers a channel, until every channel
        is closed."""
        servers = [cls(spares=spares * count) for _ in range(count)]
        with servers[0]._lock:
            servers[0]._start_locked(servers)
        return servers

    def _start_locked(self, peers: list[ForkServer] | None = None) -> None:
        if self._process is not None or self._failed:
            return
        peers = peers or [self]
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET) for _ in peers]
        children = [child.fileno() for _, child in pairs]
        self._home = tempfile.mkdtemp(prefix="grade-server-")
        config = {
            "fds": children,
            "disable": sorted(self.disable),
            "spares": self.spares,
            "refill": self.refill,
        }
        debug = bool(os.environ.get("GRADER_SANDBOX_DEBUG"))
        try:
            self._process = subprocess.Popen(
                fork_server_arguments(config),
                pass_fds=children,
                stdin=subprocess.DEVNULL,
                stdout=None if debug else subprocess.DEVNULL,
                stderr=None if debug else subprocess.DEVNULL,
                cwd=self._home,
                env=worker_environment(self._home, child_environment()),
                start_new_session=True,
            )
        except OSError as exc:
            for peer, (parent, _) in zip(peers, pairs, strict=True):
                peer._failed = f"the fork server could not be started ({exc})"
                parent.close()
            return
        finally:
            for _, child in pairs:
                child.close()
        for peer, (parent, _) in zip(peers, pairs, strict=True):
            peer._process, peer._home, peer._sock = self._process, self._home, parent
            peer._peers = peers

    def close(self) -> None:
        """Stop the template and every worker it still runs."""
        with self._lock:
            sock, process, ready = self._sock, self._process, self._ready
            self._sock, self._ready = None, False
            self._failed = self._failed or "the fork server is closed"
            if sock is not None:
                sock.close()  # end of file: the template kills this channel's workers
            last = all(peer._sock is None for peer in self._peers)  # then the template exits
            if process is not None and last and os.getpid() == self._owner == self._parent:
                # killed at once while still importing torch: no worker to clean up yet
                self._end_template(kill_now=not ready)
            if last:
                self._remove_home()

    def _end_template(self, kill_now: bool, timeout: float = 5.0) -> None:
        """As the template's parent: kill it now, or once it has not exited within ``timeout``
        seconds, and wait for it."""
        assert self._process is not None  # only the template's parent ends it
        if kill_now:
            self._process.kill()
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def _remove_home(self) -> None:
        if self._home:
            import shutil

            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None

    def _is_parent(self) -> bool:
        return self._process is not None and os.getpid() == self._parent

    def take_over(self) -> None:
        """In a child forked after ``start()``: this process now owns the server. The template
        is not its child; it ends this channel's workers when this process closes the channel
        or exits, and removes its home as it exits (the parent's ``reap`` does too)."""
        self._owner = os.getpid()
        self._home = None

    def let_go(self) -> None:
        """In the parent, once a child has taken the server over: close this process's end of
        the channel (the template then ends with the child) and keep only what ``reap`` needs."""
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None
            self._failed = self._failed or "handed over to another process"

    def reap(self, timeout: float = 5.0) -> None:
        """In the parent, after ``let_go``: wait for the template to exit (kill it after
        ``timeout`` seconds)."""
        if self._is_parent():
            self._end_template(kill_now=False, timeout=timeout)
            self._remove_home()

    def __enter__(self) -> ForkServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # --- messages -----------------------------------------------------------------------

    def _receive(self, timeout: float) -> tuple[dict, list[int]]:
        deadline = time.monotonic() + timeout
        while True:
            if self._sock is None:
                raise ServerFailed("the fork server is closed")
            ready, _, _ = select.select([self._sock], [], [], 0.5)
            if ready:
                data, fds, _, _ = socket.recv_fds(self._sock, 1 << 16, 8)
                if not data:
                    raise ServerFailed("the fork server exited")
                return json.loads(data), fds
            process = self._process
            if self._is_parent() and process is not None and process.poll() is not None:
                raise ServerFailed(f"the fork server exited with status {process.poll()}")
            if time.monotonic() > deadline:
                raise ServerFailed(f"the fork server did not answer within {timeout:g} s")

    def _hello(self, until: str) -> None:
        """Read the template's start-up messages up to ``until`` ("layers" or "ready")."""
        self._start_locked()
        if self._failed:
            raise ServerFailed(self._failed)
        try:
            while not (self._ready or (until == "layers" and self._layers is not None)):
                message, fds = self._receive(READY_TIMEOUT_S)
                for fd in fds:
                    os.close(fd)
                if message.get("op") == "layers":
                    self._layers = message["layers"]
                elif message.get("op") == "ready":
                    self._ready = True
                    self.template_pid = int(message["pid"])
                    self.slow_meta = message.get("slow_meta") or None
                elif message.get("op") == "failed":
                    raise ServerFailed(f"the fork server failed: {message.get('reason')}")
        except ServerFailed as exc:
            self._failed = str(exc)
            raise

    def layers(self) -> dict[str, dict]:
        """Each layer's name -> {"on": bool, "detail": str} (waits for the probe)."""
        with self._lock:
            self._hello("layers")
            return dict(self._layers or {})

    def wait_ready(self) -> None:
        with self._lock:
            self._hello("ready")

    # --- starting workers ---------------------------------------------------------------

    def __call__(
        self,
        exercise_id: str,
        student_file: Path,
        submission_root: Path,
        limits: Limits,
        scratch: Path,
    ) -> WorkerHandle:
        workdir, output = worker_folders(exercise_id, scratch)
        job = {
            "op": "start",
            "exercise": exercise_id,
            "student_file": str(student_file),
            "root": str(submission_root),
            "workdir": str(workdir),
            "scratch_mb": limits.scratch_mb,
            "limits": limits.__dict__,
        }
        out_fd = os.open(output, os.O_WRONLY | os.O_APPEND)
        try:
            with self._lock:
                self._hello("ready")
                if self._sock is None:  # closed by another thread meanwhile
                    raise ServerFailed("the fork server is closed")
                socket.send_fds(self._sock, [json.dumps(job).encode()], [out_fd])
                reply, fds = self._receive(REPLY_TIMEOUT_S)
        except (ServerFailed, OSError) as exc:
            self._failed = self._failed or str(exc)
            raise ServerFailed(self._failed) from None
        finally:
            os.close(out_fd)
        if not reply.get("ok"):
            for fd in fds:
                os.close(fd)
            raise ServerFailed(f"the sandbox could not start a worker ({reply.get('reason')})")
        req_w, rep_r, status_r = fds[:3]
        pidfd = fds[3] if reply.get("pidfd") and len(fds) > 3 else None
        watch = _Exit(int(reply["pid"]), status_r, pidfd)
        return WorkerHandle(
            watch.pid,
            req_w,
            rep_r,
            output,
            limits,
            reaper=watch.returncode,
            killer=watch.kill,
            extra_fds=tuple(fd for fd in (status_r, pidfd) if fd is not None),
        )


class _Exit:
    """A fork-server worker's exit, as the judge sees it: the status pipe the server writes
    once it has reaped the worker, and a pidfd to kill it by."""

    def __init__(self, pid: int, status_fd: int, pidfd: int | None):
        self.pid, self.status_fd, self.pidfd = pid, status_fd, pidfd
        self.code: int | None = None
        self.reaped = False

    def _poll(self, timeout: float) -> bool:
        if self.reaped:
            return True
        try:
            ready, _, _ = select.select([self.status_fd], [], [], timeout)
            if ready:
                data = os.read(self.status_fd, 4)
                self.reaped = True
                if len(data) == 4:
                    self.code = struct.unpack("!i", data)[0]
        except (OSError, ValueError):
            self.reaped = True
        return self.reaped

    def returncode(self, pid: int | None = None) -> int | None:
        self._poll(0.5)
        return self.code

    def kill(self) -> None:
        if self._poll(0):
            return  # reaped: its PID may already belong to someone else
        try:
            os.killpg(self.pid, signal.SIGKILL)  # not reaped, so the group is still its own
        except OSError:
            pass
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
