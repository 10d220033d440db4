"""Which isolation layers this kernel allows: the fork server sets up a worker that does nothing
under a plan of layers, drops the layer that fails, and tries again (each layer once); a layer
the kernel refuses is left out of the plan and reported, never silently dropped.

``LayerProbe`` works through the server's spare workers (``SpareWorkers``): it leaves there the
plan the workers are set up under from then on, and the pids cgroups when the layers have them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from grader.worker.forkserver.spares import STEP_TIMEOUT_S, SpareWorkers, read_lines
from grader.worker.sandbox import isolate, linux
from grader.worker.sandbox.cgroup import PidsCgroups, pids_base

NEED_USER = ("net", "mount", "pid", "ipc")  # the layers a user namespace carries (not as root)


class LayerProbe:
    """One probe of the layers: ``wanted``, the layers still in the plan, and ``report``, what
    each layer came to (``{"on": ..., "detail": ...}``)."""

    def __init__(
        self,
        pool: SpareWorkers,
        disable: set[str],
        probe_dir: Path,
        collect: Callable[[], None],
    ) -> None:
        self.pool = pool
        self.disable = disable  # the layers turned off by the judge
        self.probe_dir = probe_dir  # the probe's student folder (an empty file)
        self.collect = collect  # reap the server's children and kill what they left
        self.root = os.geteuid() == 0
        self.wanted = set(isolate.LAYERS) - disable
        self.report: dict[str, dict] = {}
        for name in isolate.LAYERS:
            if name in disable:
                self.report[name] = {"on": False, "detail": "turned off"}

    def _off(self, name: str, detail: str) -> None:
        """Leave ``name`` out of the plan, saying why."""
        self.wanted.discard(name)
        self.report[name] = {"on": False, "detail": detail}

    def try_plan(self, plan: isolate.Plan, job: dict, null: int) -> tuple[str, str]:
        """Set up a worker that does nothing under ``plan``: ("", "") or what failed."""
        self.pool.plan = plan
        layer, reason = self.pool.make_spare(plan)
        if layer:
            return layer, reason
        report_r, report_w = os.pipe()
        try:
            pid, sock = self.pool.take_spare(job)
            self.pool.hand_over(sock, {**job, "probe": True}, [null, null, null, report_w])
        except isolate.SetupError as exc:
            return exc.layer, exc.reason
        finally:
            os.close(report_w)
        layer, reason, confirmed = "", "", False
        try:
            for line in read_lines(report_r, STEP_TIMEOUT_S):
                if line[:1] == b"K":
                    confirmed = True
                elif line[:1] == b"E":
                    layer, _, reason = line[1:].decode(errors="replace").partition("\t")
        finally:
            os.close(report_r)
        self.pool.retire_group(pid)
        if not confirmed and not layer:
            return "user", "the sandbox setup stopped without a word"
        return layer, reason

    def probe(self) -> dict[str, dict]:
        """Find the layers this kernel allows by setting up a worker that does nothing."""
        self._before_trying()
        abi = linux.landlock_abi()
        host = isolate.mount_namespace()
        if "landlock" in self.wanted and not abi:
            self._off("landlock", "the kernel has no Landlock")
        self.pool.runtime = isolate.runtime_paths()
        self._try_plans(abi, host)
        self.pool.plan = isolate.Plan(frozenset(self.wanted), abi, host)
        for name in self.wanted:
            self.report[name] = {"on": True, "detail": ""}
        self._explain(abi)
        return self.report

    def _before_trying(self) -> None:
        """Leave out what is known before any worker is set up: what a grader that is not root
        does not need, the cgroup where there is no pids controller."""
        if not self.root:
            for name in ("nobody", "cgroup"):
                self._off(name, "not needed: the grader is not root")
        elif "cgroup" in self.wanted:
            base = pids_base()
            if base is None:
                self._off("cgroup", "no pids cgroup controller here")
            else:
                PidsCgroups.clean_stale(base)
                self.pool.cgroups = PidsCgroups(base)
        self._nobody_needs_mount()

    def _nobody_needs_mount(self) -> None:
        # As root, the worker becomes nobody in its user namespace, or without one by
        # setuid; either way its scratch and its view of the installation need the mount layer.
        if "mount" not in self.wanted and "nobody" in self.wanted:
            self._off("nobody", "needs the mount layer")

    def _try_plans(self, abi: int, host: int) -> None:
        """Set up a worker under the wanted layers, dropping the one that fails, until one is
        set up (each layer fails once at most)."""
        student = self.probe_dir / "probe.py"
        student.write_text("")
        job = {
            "student_file": str(student),
            "root": str(self.probe_dir),
            "workdir": str(self.probe_dir),
            "scratch_mb": 1,
        }
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            for _ in range(len(isolate.LAYERS) + 1):
                plan = isolate.Plan(frozenset(self.wanted), abi, host)
                layer, reason = self.try_plan(plan, job, null)
                self.collect()
                if not layer:
                    break
                self._off(layer, reason)
                if layer == "user" and not self.root:
                    for needs_user in NEED_USER:
                        if needs_user in self.wanted:
                            self._off(needs_user, "needs the user namespace")
                self._nobody_needs_mount()
        finally:
            os.close(null)

    def _explain(self, abi: int) -> None:
        """What the layers that are on do not cover, in their details."""
        report, wanted = self.report, self.wanted
        # The process limit binds nobody (RLIMIT_NPROC), so the cgroup is not needed then; the
        # other way round it is: without nobody, a worker has root's access to files.
        if "nobody" in wanted and "cgroup" not in wanted and "cgroup" in report:
            report["cgroup"] = {
                "on": False,
                "detail": f"not needed: {report['cgroup']['detail']}"
                " (the nobody layer limits processes)",
            }
        if "pid" in wanted and "mount" not in wanted:
            report["pid"]["detail"] = "the host's /proc stays visible (no mount namespace)"
        if "landlock" in wanted and abi < 6:
            report["landlock"]["detail"] = f"ABI {abi}: " + (
                "no TCP or signal rules" if abi < 4 else "no signal rules"
            )
