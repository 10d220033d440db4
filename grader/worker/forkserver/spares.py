"""Spare workers: forked ahead of time, already inside fresh namespaces, waiting for a job, so
that handing a worker to the judge costs no fork (``isolate`` has the steps). A spare that gets
its job sets the sandbox up around the student's files and runs ``grader.worker.entry``.

``SpareWorkers`` holds them and the pids cgroups they run in; the fork server
(``grader.worker.forkserver.template.Template``) owns one, and so does the probe of the layers
(``grader.worker.forkserver.layers``) while it runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

from grader.protocol.boot import SETUP_FAILED
from grader.worker import bounds
from grader.worker.entry import run_worker
from grader.worker.sandbox import isolate, linux, roots
from grader.worker.sandbox.cgroup import PidsCgroups

MAX_MESSAGE = 1 << 16
STEP_TIMEOUT_S = 30.0


def read_lines(fd: int, timeout: float) -> Iterator[bytes]:
    """Newline-ended messages from a child's pipe, until end of file or ``timeout``."""
    buffer = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            yield b"Etimeout\tthe sandbox setup did not answer"
            return
        chunk = os.read(fd, 4096)
        if not chunk:
            return
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line


def _move_fds(fds: dict[int, int]) -> None:
    """Give the worker exactly the descriptors in ``fds`` (target -> current)."""
    high = {target: fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for target, fd in fds.items()}
    for target, fd in high.items():
        os.dup2(fd, target)
    os.closerange(max(fds) + 1, 1 << 20)


class SpareWorkers:
    """The spare workers of one fork server, the plan of layers they are set up under and the
    pids cgroups they run in."""

    def __init__(self, judges: list[socket.socket], target: int) -> None:
        # The server's sockets to its judges (its own list: a judge that goes is removed from
        # it), closed in every child: a spare never talks to a judge but through its job.
        self.judges = judges
        self.plan = isolate.Plan(frozenset())  # found by the probe of the layers
        self.runtime: list[str] = []  # the folders a worker needs to run (``isolate``)
        self.spares: list[tuple[int, socket.socket]] = []  # workers waiting for a job
        self.spare_target = target
        self.cgroups: PidsCgroups | None = None  # when the layers have the cgroup
        self.groups: dict[int, Path] = {}  # worker pid -> its pids cgroup
        self.stale_groups: list[Path] = []  # cgroups whose processes are still dying

    def retire_group(self, pid: int) -> None:
        """The worker ``pid`` has gone: its cgroup is removed once its processes are dead."""
        group = self.groups.pop(pid, None)
        if group is not None:
            self.stale_groups.append(group)

    def make_spare(self, plan: isolate.Plan) -> tuple[str, str]:
        """Fork a worker that waits for its job inside fresh namespaces; ("", "") or the layer
        that failed and why."""
        if "nobody" in plan:
            roots.hidden_from_nobody(self.runtime)  # here, with the host's view of owners
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        report_r, report_w = os.pipe()
        maps_r, maps_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for judge in self.judges:
                    os.close(judge.detach())
                for fd in (parent.detach(), report_r, maps_w):
                    os.close(fd)
                self._intermediate(plan, child, report_w, maps_r)
            finally:
                os._exit(1)
        child.close()
        os.close(report_w)
        os.close(maps_r)
        worker: int | None = None
        layer, reason = "", ""
        try:
            for line in read_lines(report_r, STEP_TIMEOUT_S):
                kind, body = line[:1], line[1:].decode(errors="replace")
                if kind == b"U":
                    try:
                        isolate.write_maps(pid, plan)
                        os.write(maps_w, b"M")
                    except OSError as exc:
                        layer, reason = "nobody" if "nobody" in plan else "user", str(exc)
                        os.write(maps_w, b"X")
                elif kind == b"P":
                    worker = int(body)
                elif kind == b"E":
                    layer, _, reason = body.partition("\t")
        finally:
            os.close(report_r)
            os.close(maps_w)
            os.waitpid(pid, 0)
        if worker is None or layer:
            parent.close()
            return layer or "user", reason or "the sandbox setup stopped without a word"
        if self.cgroups is not None and "cgroup" in plan:
            try:  # now, while it waits: moving a process into a cgroup takes milliseconds
                self.groups[worker] = self.cgroups.create(bounds.thread_allowance())
                PidsCgroups.move(self.groups[worker], worker)
            except OSError as exc:
                parent.close()
                os.kill(worker, signal.SIGKILL)
                return "cgroup", str(exc)
        self.spares.append((worker, parent))
        return "", ""

    def _intermediate(
        self, plan: isolate.Plan, job_sock: socket.socket, report_w: int, maps_r: int
    ) -> None:
        def tell(message: str) -> None:
            os.write(report_w, message.encode() + b"\n")

        def wait_for_maps() -> None:
            tell("U")
            if os.read(maps_r, 1) != b"M":
                raise isolate.SetupError("user", "the user mapping could not be written")

        try:
            isolate.enter_namespaces(plan, wait_for_maps)
        except isolate.SetupError as exc:
            tell(f"E{exc.layer}\t{exc.reason}")
            os._exit(1)
        worker = os.fork()
        if worker == 0:
            os.close(report_w)
            os.close(maps_r)
            self._spare(plan, job_sock)
        tell(f"P{worker}")
        os._exit(0)

    def _spare(self, plan: isolate.Plan, job_sock: socket.socket) -> None:
        """A spare worker: wait for the job, set the sandbox up, serve the judge."""
        code = SETUP_FAILED
        try:
            data, fds, _, _ = socket.recv_fds(job_sock, MAX_MESSAGE, 8)
            if not data:
                os._exit(0)
            # Its parent is now this server (the intermediate child was reaped before the
            # spare was listed): should the server die, so does the worker.
            linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
            job = json.loads(data)
            out, req_r, rep_w, files_fd, report_w = fds + [-1] * (5 - len(fds))
            try:
                packed = os.pread(files_fd, isolate.MAX_COPY_BYTES + (1 << 16), 0)
                placement = isolate.prepare_filesystem(
                    plan,
                    packed,
                    Path(job["student_file"]),
                    Path(job["root"]),
                    Path(job["workdir"]),
                    int(job["scratch_mb"]),
                    self.runtime,
                )
                isolate.confine(plan, placement, self.runtime)
            except Exception as exc:
                if not isinstance(exc, isolate.SetupError):  # a bug of ours: say what
                    exc = isolate.SetupError(
                        "mount" if "mount" in plan else "user", f"{type(exc).__name__}: {exc}"
                    )
                where = report_w if job.get("probe") else out
                os.write(where, f"E{exc.layer}\t{exc.reason}\n".encode())
                os._exit(SETUP_FAILED)
            if job.get("probe"):
                os.write(report_w, b"K\n")
                os._exit(0)
            from grader.protocol.limits import Limits

            null = os.open(os.devnull, os.O_RDONLY)
            _move_fds({0: null, 1: out, 2: out, 3: req_r, 4: rep_w})
            run_worker(
                job["exercise"],
                placement.student_file,
                placement.submission_root,
                placement.workdir,
                Limits(**job["limits"]),
                "user" in plan,
                3,
                4,
            )
        finally:
            os._exit(code)

    def take_spare(self, job: dict) -> tuple[int, socket.socket]:
        """A spare for ``job``, moved into its cgroup; raise ``SetupError`` if none can be had."""
        while not self.spares:
            layer, reason = self.make_spare(self.plan)
            if layer:
                raise isolate.SetupError(layer, reason)
        pid, sock = self.spares.pop(0)
        if pid in self.groups:
            try:
                limit = job.get("limits", {}).get("max_processes", 64)
                PidsCgroups.limit(self.groups[pid], limit + bounds.thread_allowance())
            except OSError as exc:
                sock.close()
                raise isolate.SetupError("cgroup", str(exc)) from None
        return pid, sock

    def hand_over(self, sock: socket.socket, job: dict, fds: list[int]) -> None:
        """Send the job to a spare, with the student's files read here (with the server's
        rights, never through a link) and handed over in a memfd."""
        files = os.memfd_create("submission", os.MFD_CLOEXEC)
        try:
            rel, content = isolate.read_submission(Path(job["student_file"]), Path(job["root"]))
            os.write(files, isolate.pack_files(rel, content))
            socket.send_fds(sock, [json.dumps(job).encode()], fds[:3] + [files] + fds[3:])
        finally:
            os.close(files)
            sock.close()

    def top_up(self) -> None:
        """Make one spare if there are fewer than wanted (between the judge's requests)."""
        if len(self.spares) < self.spare_target:
            self.make_spare(self.plan)
