"""Choosing how the judge's workers start, and saying which sandbox layers are off
(docs/sandbox.md).

``chosen_starter`` is the one place that chooses the worker starter (``grader.pipeline``'s
``resolve`` and ``default_start`` ask it, so do ``grade``'s and ``grade batch``'s options). Its
default, ``default_starter()``: on Linux, a shared fork server (``ForkServer``) whose workers
run inside every isolation layer the kernel allows; elsewhere, or when the fork server cannot
start, a fresh interpreter per worker (``grader.judge.launch.spawn.start_spawn``). Layers that
are off are stated once on stderr; ``default_starter(strict=True)`` refuses instead
(``SandboxUnavailable``).

``prestart()`` starts the shared fork server early, so that it imports torch while the judge
does the same.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from grader.protocol.boot import LAYER_NAMES
from grader.shared.errors import UsageError

if TYPE_CHECKING:
    from grader.judge.launch.forkserver import ForkServer
    from grader.judge.launch.handle import Starter, WorkerHandle
    from grader.protocol.limits import Limits


class SandboxUnavailable(UsageError):  # the CLI turns it into one line and exit status 2
    """``--strict-sandbox`` and a sandbox layer is off here."""


def supported() -> bool:
    """Whether this platform can run the fork server (Linux, with ``fork``)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


_lock = threading.Lock()
_default = None
_announced = False
_announced_meta = False


def default_server(spares: int = 6, refill: bool = True) -> ForkServer:
    """The fork server shared by this process (started on first use, closed at exit, started
    again for another course: its workers load the probes of the course it was started for);
    the first use sets its spares (``ForkServer``)."""
    global _default
    from grader.judge.launch.forkserver import ForkServer
    from grader.shared.course import current

    with _lock:
        if _default is not None and _default._owner == os.getpid():
            if _default.course == current().choice:
                return _default
            _default.close()
        _default = ForkServer(spares=spares, refill=refill).start()
        return _default


def take_over_default_server(server: ForkServer) -> None:
    """Make ``server``, started by the process this one was forked from, this process's
    shared fork server (``ForkServer.take_over``)."""
    global _default
    with _lock:
        server.take_over()
        _default = server


def close_default_server() -> None:
    global _default
    with _lock:
        server, _default = _default, None
    if server is not None and server._owner == os.getpid():
        server.close()


atexit.register(close_default_server)


def prestart() -> None:
    """Start the shared fork server now, in the background (a no-op where there is none)."""
    if supported():
        default_server()


def off_layers(layers: dict[str, dict]) -> dict[str, str]:
    """The layers that are off for a reason other than not being needed."""
    return {
        name: info.get("detail", "")
        for name, info in layers.items()
        if not info.get("on") and not info.get("detail", "").startswith("not needed")
    }


def describe_off(off: dict[str, str]) -> str:
    return "; ".join(
        f"{LAYER_NAMES.get(k, k)}: {v}" if v else LAYER_NAMES.get(k, k)
        for k, v in sorted(off.items())
    )


def _announce(off: dict[str, str]) -> None:
    global _announced
    if off and not _announced:
        _announced = True
        print(f"grade: sandbox layers off here: {describe_off(off)}", file=sys.stderr)


def _announce_slow_meta(reason: str | None) -> None:
    """Say once that the workers build models on ``meta`` with torch's own kernels."""
    global _announced_meta
    if reason and not _announced_meta:
        _announced_meta = True
        print(
            "grade: models on the meta device are built on a slower path here "
            f"(the same checks and verdicts): {reason[:200]}",
            file=sys.stderr,
        )


class SandboxStarter:
    """A worker starter over a fork server, falling back to fresh interpreters (stated once)
    if the server cannot start; ``strict`` makes any missing layer an error instead."""

    def __init__(self, server, strict: bool = False):
        self.server = server
        self.strict = strict
        self.fallback: str | None = None
        self._lock = threading.Lock()

    def layers(self) -> dict[str, dict]:
        from grader.judge.launch.forkserver import ServerFailed

        if self.server is None:
            return {"fork server": {"on": False, "detail": "not available on " + sys.platform}}
        try:
            layers = self.server.layers()
        except ServerFailed as exc:
            return {"fork server": {"on": False, "detail": str(exc)}}
        return {
            **layers,
            "fork server": {"on": self.fallback is None, "detail": self.fallback or ""},
        }

    def check_strict(self) -> None:
        off = off_layers(self.layers())
        if off:
            raise SandboxUnavailable(
                f"--strict-sandbox: these sandbox layers are off here: {describe_off(off)}"
            )

    def __call__(
        self,
        exercise_id: str,
        student_file: Path,
        submission_root: Path,
        limits: Limits,
        scratch: Path,
    ) -> WorkerHandle:
        from grader.judge.launch.forkserver import ServerFailed

        if self.server is not None and self.fallback is None:
            try:
                handle = self.server(exercise_id, student_file, submission_root, limits, scratch)
                _announce(off_layers(self.layers()))
                _announce_slow_meta(self.server.slow_meta)
                return handle
            except ServerFailed as exc:
                with self._lock:
                    self.fallback = self.fallback or str(exc)
                if self.strict:
                    raise SandboxUnavailable(f"--strict-sandbox: {exc}") from None
                _announce({"fork server": f"{exc}; workers start as fresh interpreters"})
        elif self.server is None:
            _announce(
                {
                    "fork server": f"not available on {sys.platform}; "
                    "workers start as fresh interpreters"
                }
            )
        from grader.judge.launch.spawn import start_spawn

        return start_spawn(
            exercise_id,
            student_file,
            submission_root,
            limits,
            scratch,
            landlock=sys.platform.startswith("linux"),
        )


def default_starter(strict: bool = False, spares: int = 6, refill: bool = True) -> SandboxStarter:
    """The starter ``grade`` uses; with ``strict`` it raises ``SandboxUnavailable`` now if any
    isolation layer is off on this machine. ``spares`` and ``refill``: see ``ForkServer``."""
    server = default_server(spares, refill) if supported() else None
    starter = SandboxStarter(server, strict)
    if strict:
        starter.check_strict()
    return starter


def starter_for(server: ForkServer) -> SandboxStarter:
    """A starter over a server of your own (``ForkServer(disable=...)``), e.g. in tests."""
    return SandboxStarter(server)


def chosen_starter(
    no_sandbox: bool = False, strict: bool = False, spares: int = 6, refill: bool = True
) -> Starter:
    """The worker starter ``--no-sandbox`` or ``--strict-sandbox`` asks for; the default one
    for neither."""
    if no_sandbox:
        from grader.judge.launch.spawn import start_spawn

        return start_spawn
    return default_starter(strict=strict, spares=spares, refill=refill)
