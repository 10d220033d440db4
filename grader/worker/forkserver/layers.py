"""Which isolation layers this kernel allows: the fork server sets up a worker that does nothing
under a plan of layers, drops the layer that fails, and tries again (each layer once); a layer
the kernel refuses is left out of the plan and reported, never silently dropped.

``LayerProbe`` is a part of ``grader.worker.forkserver.template.Template`` and uses its state
(``disable``, ``plan``, ``runtime``, ``cgroups``, ``groups``, ``stale_groups``, ``probe_dir``)
and its other parts (``make_spare``, ``take_spare``, ``hand_over``, ``reap``, ``sweep``).
"""

from __future__ import annotations

import os

from grader.worker.forkserver.spares import STEP_TIMEOUT_S, read_lines
from grader.worker.sandbox import isolate, linux
from grader.worker.sandbox.cgroup import PidsCgroups, pids_base


class LayerProbe:
    def try_plan(self, plan: isolate.Plan, job: dict, null: int) -> tuple[str, str]:
        """Set up a worker that does nothing under ``plan``: ("", "") or what failed."""
        self.plan = plan
        layer, reason = self.make_spare(plan)
        if layer:
            return layer, reason
        report_r, report_w = os.pipe()
        try:
            pid, sock = self.take_spare(job)
            self.hand_over(sock, {**job, "probe": True}, [null, null, null, report_w])
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
        group = self.groups.pop(pid, None)
        if group is not None:
            self.stale_groups.append(group)
        if not confirmed and not layer:
            return "user", "the sandbox setup stopped without a word"
        return layer, reason

    def probe(self) -> dict[str, dict]:
        """Find the layers this kernel allows by setting up a worker that does nothing."""
        wanted = set(isolate.LAYERS) - self.disable
        root = os.geteuid() == 0
        report = {
            name: {"on": False, "detail": "turned off"}
            for name in isolate.LAYERS
            if name in self.disable
        }
        if not root:
            wanted -= {"nobody", "cgroup"}
            for name in ("nobody", "cgroup"):
                report[name] = {"on": False, "detail": "not needed: the grader is not root"}
        elif "cgroup" in wanted:
            base = pids_base()
            if base is None:
                wanted.discard("cgroup")
                report["cgroup"] = {"on": False, "detail": "no pids cgroup controller here"}
            else:
                PidsCgroups.clean_stale(base)
                self.cgroups = PidsCgroups(base)
        # As root, the worker becomes nobody in its user namespace, or without one by
        # setuid; either way its scratch and its view of the installation need the mount layer.
        if "mount" not in wanted and "nobody" in wanted:
            wanted.discard("nobody")
            report["nobody"] = {"on": False, "detail": "needs the mount layer"}
        abi = linux.landlock_abi()
        host = isolate.mount_namespace()
        if "landlock" in wanted and not abi:
            wanted.discard("landlock")
            report["landlock"] = {"on": False, "detail": "the kernel has no Landlock"}
        self.runtime = isolate.runtime_paths()
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
                plan = isolate.Plan(frozenset(wanted), abi, host)
                layer, reason = self.try_plan(plan, job, null)
                self.reap()
                self.sweep()
                if not layer:
                    break
                wanted.discard(layer)
                report[layer] = {"on": False, "detail": reason}
                if layer == "user" and not root:
                    for needs_user in ("net", "mount", "pid", "ipc"):
                        if needs_user in wanted:
                            wanted.discard(needs_user)
                            report[needs_user] = {"on": False, "detail": "needs the user namespace"}
                if "mount" not in wanted and "nobody" in wanted:
                    wanted.discard("nobody")
                    report["nobody"] = {"on": False, "detail": "needs the mount layer"}
        finally:
            os.close(null)
        self.plan = isolate.Plan(frozenset(wanted), abi, host)
        for name in wanted:
            report[name] = {"on": True, "detail": ""}
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
        return report
