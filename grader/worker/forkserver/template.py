"""The fork server: a warm template process that forks one sandboxed worker per exercise.

It is started by the judge (``grader.judge.launch.forkserver``) as a fresh interpreter with a clean
environment, so it is never the judge: it probes which isolation layers the kernel allows,
imports torch and the reference models, and then only forks. It never runs a torch operation
(OpenMP is not fork-safe: a child forked from a process that has run a multi-threaded op
hangs on its own first one) and never imports student code.

It keeps a few spare workers: forked, already inside fresh namespaces, waiting for a job
(``spares``, ``isolate``), so that handing a worker to the judge costs no fork. It answers the
judge over a ``SOCK_SEQPACKET`` socket: JSON messages, with file descriptors passed as
``SCM_RIGHTS``; one template may serve several judges (a batch's judges share one), each over a
socket of its own. Per worker it sends back the request and reply pipes, a status pipe (the
worker's wait status is written there once the server has reaped it) and a pidfd the judge can
kill it through without racing a reused PID. It is a child subreaper: processes a worker leaves
behind are re-parented to it and killed. When a judge goes away (end of file on its socket) it
kills that judge's workers, and once every judge has gone it exits.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys
import tempfile
from pathlib import Path

from grader.worker.forkserver.layers import LayerProbe
from grader.worker.forkserver.spares import MAX_MESSAGE, SpareWorkers
from grader.worker.sandbox import isolate, linux, roots
from grader.worker.sandbox.cgroup import PidsCgroups

IDLE_S = 0.01  # quiet for this long: the burst of requests of one grading is over


def send(sock: socket.socket, message: dict, fds: list[int] | tuple[int, ...] = ()) -> None:
    socket.send_fds(sock, [json.dumps(message).encode()], list(fds))


def _children() -> list[int]:
    """The PIDs of this process's children: from ``/proc/self/task/*/children`` (one small file
    a thread), else by reading every process's parent from ``/proc/*/stat`` (a hundred files),
    where the kernel does not keep that list."""
    try:
        listed: list[int] = []
        for task in os.scandir("/proc/self/task"):
            with open(f"{task.path}/children", "rb") as f:
                listed += [int(n) for n in f.read().split()]
        return listed
    except (OSError, ValueError):
        pass
    pids: list[int] = []
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) == me:
                pids.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return pids


class Template:
    """The fork server's state and its loop: its spare workers (``pool``), the workers it runs
    for the judges; the probe of the layers this kernel allows (``LayerProbe``) on the way in."""

    def __init__(self, judges: list[socket.socket], disable: set[str], spares: int, refill: bool):
        self.judges = judges  # one socket per judge this template serves
        self.disable = disable
        self.pool = SpareWorkers(judges, spares)
        self.workers: dict[int, int] = {}  # worker pid -> write end of its status pipe
        self.owners: dict[int, socket.socket] = {}  # worker pid -> the judge it was started for
        # False for a judge that grades once: the spares it asked for are all the workers it
        # needs, so one handed out is not replaced (a fork and an exit saved per exercise).
        self.refill = refill
        self.probe_dir = Path(tempfile.mkdtemp(prefix="probe-", dir=os.getcwd()))

    def probe(self) -> dict[str, dict]:
        """The layers this kernel allows (``LayerProbe``): from now on the spares are set up
        under them."""
        return LayerProbe(self.pool, self.disable, self.probe_dir, self.collect).probe()

    def collect(self) -> None:
        """Reap the children that have exited and kill what workers left behind."""
        self.reap()
        self.sweep()

    def tell_judges(self, message: dict) -> None:
        """Send ``message`` to every judge; one that is gone is dropped (``BrokenPipeError``
        once none is left)."""
        for judge in list(self.judges):
            try:
                send(judge, message)
            except OSError:
                self.gone(judge)
        if not self.judges:
            raise BrokenPipeError("every judge has gone")

    def start(self, judge: socket.socket, job: dict, fds: list[int]) -> None:
        out = fds[0] if fds else os.open(os.devnull, os.O_WRONLY)
        for extra in fds[1:]:
            os.close(extra)
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            worker, sock = self.pool.take_spare(job)
            if not self.refill:
                self.pool.spare_target = max(0, self.pool.spare_target - 1)
            self.pool.hand_over(sock, job, [out, req_r, rep_w])
        except (isolate.SetupError, OSError) as exc:
            for fd in (req_w, rep_r):
                os.close(fd)
            send(judge, {"ok": False, "reason": str(exc)})
            return
        finally:
            for fd in (out, req_r, rep_w):
                os.close(fd)
        status_r, status_w = os.pipe()
        self.workers[worker] = status_w
        self.owners[worker] = judge
        passed = [req_w, rep_r, status_r]
        try:
            passed.append(os.pidfd_open(worker))
            pidfd = True
        except (AttributeError, OSError):
            pidfd = False
        try:
            send(judge, {"ok": True, "pid": worker, "pidfd": pidfd}, passed)
        finally:
            for fd in passed:
                os.close(fd)

    def reap(self) -> None:
        """Reap every child that has exited; kill the group of a worker that has."""
        while True:
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            pid = info.si_pid
            for spare in [sp for sp in self.pool.spares if sp[0] == pid]:
                self.pool.spares.remove(spare)
                spare[1].close()
            if pid in self.workers:
                try:
                    os.killpg(pid, signal.SIGKILL)  # not reaped yet: the group is still its own
                except OSError:
                    pass
            _, status = os.waitpid(pid, 0)
            self.pool.retire_group(pid)
            status_w = self.workers.pop(pid, None)
            self.owners.pop(pid, None)
            if status_w is not None:
                try:
                    os.write(status_w, struct.pack("!i", os.waitstatus_to_exitcode(status)))
                except OSError:
                    pass
                os.close(status_w)
                self.sweep()

    def sweep(self) -> None:
        """Kill the processes that workers left behind (re-parented to this subreaper)."""
        pool = self.pool
        pool.stale_groups = [g for g in pool.stale_groups if not PidsCgroups.kill(g)]
        keep = set(self.workers) | {pid for pid, _ in pool.spares}
        for pid in _children():
            if pid not in keep:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def gone(self, judge: socket.socket) -> None:
        """A judge went away: kill the workers started for it (``reap`` collects them)."""
        self.judges.remove(judge)
        judge.close()
        for pid in [pid for pid, owner in self.owners.items() if owner is judge]:
            # The worker itself (PID 1 of its namespace: the others die with it), and its group
            # once it has one (a worker still setting up has not made it yet). Not reaped yet,
            # so neither number belongs to anyone else.
            for kill in (os.kill, os.killpg):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def shutdown(self) -> None:
        """Kill every worker and spare, and reap them (nobody else would)."""
        for _, sock in self.pool.spares:
            sock.close()  # end of file: a spare exits
        victims = list(self.workers) + [pid for pid, _ in self.pool.spares]
        self.pool.spares = []
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.sweep()
        for pid in victims:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.reap()
        if self.pool.cgroups is not None:
            self.pool.cgroups.close()

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        selector = selectors.DefaultSelector()
        for judge in self.judges:
            selector.register(judge, selectors.EVENT_READ, judge)
        selector.register(wake_r, selectors.EVENT_READ, "child")
        try:
            while True:
                wanting = len(self.pool.spares) < self.pool.spare_target
                # Spares are made once the judge has been quiet for a moment: the requests
                # of one grading come in a burst, and each must not wait for a fork.
                events = selector.select(timeout=IDLE_S if wanting else 5.0)
                for key, _ in events:
                    if key.data == "child":
                        os.read(wake_r, 4096)
                        continue
                    judge = key.data
                    try:
                        data, fds, _, _ = socket.recv_fds(judge, MAX_MESSAGE, 8)
                    except ConnectionResetError:
                        data, fds = b"", []
                    if not data:
                        selector.unregister(judge)
                        self.gone(judge)
                        if not self.judges:
                            return
                        continue
                    request = json.loads(data)
                    if request.get("op") == "start":
                        self.start(judge, request, fds)
                    else:
                        for fd in fds:
                            os.close(fd)
                self.reap()
                if self.pool.stale_groups:
                    self.sweep()
                if wanting and not events:
                    self.pool.top_up()  # only while the judge is not waiting
        finally:
            self.shutdown()


def preload() -> str | None:
    """Import what every worker needs, running no torch operation but the meta kernels' probe
    (on a 2 x 3 tensor with no storage), with the garbage collector off; then freeze its view
    of it all, so that a worker's collections do not write to (and so copy) every page it
    shares with this process (``heavy_imports``). Returns why the meta device's fast kernels
    are not in use, or None."""
    import resource  # noqa: F401

    from grader.shared.heavyimports import heavy_imports

    with heavy_imports():
        import torch  # noqa: F401
        import torch.nn  # noqa: F401

        from grader.worker import metakernels

        slow_meta = metakernels.install()  # meta without torch._dynamo and sympy (2 s)
        import grader.protocol.limits  # noqa: F401
        import grader.protocol.wire  # noqa: F401
        import grader.worker.serve  # noqa: F401
        from grader.worker import tables

        tables.load_all()  # every pack's worker side
    return slow_meta


def main(config: dict) -> None:
    template = Template(
        [socket.socket(fileno=fd) for fd in config["fds"]],
        set(config.get("disable", ())),
        int(config["spares"]),
        bool(config["refill"]),
    )
    try:
        linux.set_child_subreaper()
        # Worked out once, here, before any worker (the layers' probe's too) carves them out:
        # inside a worker's namespaces the pack may not be found again (an installation
        # under a folder the user nobody cannot pass, shown to it part by part).
        roots.judge_only_files()
        template.tell_judges({"op": "layers", "layers": template.probe()})
        slow_meta = preload()
        template.pool.runtime = isolate.runtime_paths()
        template.pool.top_up()
        template.tell_judges({"op": "ready", "pid": os.getpid(), "slow_meta": slow_meta})
        template.serve()
    except BrokenPipeError:
        pass
    except BaseException as exc:  # tell the judges why, then go
        for judge in template.judges:
            try:
                send(judge, {"op": "failed", "reason": f"{type(exc).__name__}: {exc}"})
            except OSError:
                pass
        raise
    finally:
        template.shutdown()
        import shutil

        # Its home (the judge made it; this process's cwd), also when the judge is gone.
        shutil.rmtree(template.probe_dir.parent, ignore_errors=True)
    # No interpreter teardown (tenths of a second with torch loaded), which the judge waits
    # for: every worker is reaped and the home removed; nothing else is left to save.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
