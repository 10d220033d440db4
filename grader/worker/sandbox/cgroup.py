"""A pids cgroup per worker, for a grader that runs as root.

The kernel does not apply ``RLIMIT_NPROC`` to root, even inside a user namespace, so a fork
bomb graded by root would only be stopped by the time limit. Where the grader is root and the
``pids`` controller is there (cgroup v1, or v2 with ``pids`` enabled below the grader's own
cgroup), each worker gets a cgroup with ``pids.max``: its processes and threads, all of them,
are counted, and all of them can be listed and killed.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


def pids_base() -> Path | None:
    """The pids cgroup folder this process lives in, if processes can be moved below it."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "pids" in controllers.split(","):
            base = ROOT / "pids" / path.lstrip("/")
            if base.is_dir():
                return base
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            base = ROOT / path.lstrip("/")
            try:
                enabled = (base / "cgroup.subtree_control").read_text().split()
            except OSError:
                return None
            return base if "pids" in enabled else None
    return None


class PidsCgroups:
    """The worker cgroups of one fork server, under ``<base>/grade-<server pid>``."""

    def __init__(self, base: Path):
        self.top = base / f"grade-{os.getpid()}"
        self.count = 0

    def create(self, max_tasks: int) -> Path:
        self.top.mkdir(exist_ok=True)
        self.count += 1
        group = self.top / f"w{self.count}"
        group.mkdir()
        self.limit(group, max_tasks)
        return group

    @staticmethod
    def limit(group: Path, max_tasks: int) -> None:
        (group / "pids.max").write_text(f"{max_tasks}\n")

    @staticmethod
    def move(group: Path, pid: int) -> None:
        """Put process ``pid`` (a child that has not forked yet) into ``group``."""
        (group / "cgroup.procs").write_text(f"{pid}\n")

    @staticmethod
    def kill(group: Path) -> bool:
        """Kill every process in ``group``; True when it is empty (and then removed)."""
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            group.rmdir()
            return True
        except OSError:
            return False

    @classmethod
    def clean_stale(cls, base: Path) -> None:
        """Remove what fork servers that were killed left under ``base`` (their PID is gone)."""
        for top in base.glob("grade-*"):
            pid = top.name.removeprefix("grade-")
            if not pid.isdigit() or Path(f"/proc/{pid}").exists():
                continue
            for group in [g for g in top.iterdir() if g.is_dir()]:
                cls.kill(group)
            try:
                top.rmdir()
            except OSError:
                pass

    def close(self) -> None:
        if self.top.is_dir():
            for group in self.top.iterdir():
                if group.is_dir():
                    self.kill(group)
            try:
                self.top.rmdir()
            except OSError:
                pass
