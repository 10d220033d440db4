"""Setting up one of a batch's judge processes. ``init`` is the first code it runs, kept free of
heavy imports: it starts the sandbox's fork server (which imports torch in its own process)
before this process imports torch too, as ``grade`` does, then sets up the judge: one torch
thread, the worker starter (``starter``, which ``grader.batch.pool`` grades with), a watch on
the parent, a quick exit."""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.judge.launch.handle import Starter

starter: Starter | None = None  # the worker starter of this judge process (set by ``init_judge``)


def init(sandbox: str, parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    # The judge processes already fill the cores: one torch thread each, here and in the
    # workers (whose fork server inherits the variable).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if sandbox != "none":
        from grader.judge.launch.starter import prestart

        prestart()
    init_judge(sandbox, parent)


def make_starter(sandbox: str) -> Starter:
    """The worker starter for ``Settings.sandbox``, chosen as ``grade`` chooses it."""
    from grader.judge.launch.starter import chosen_starter

    return chosen_starter(sandbox == "none", sandbox == "strict")


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(3)


def init_judge(sandbox: str, parent: int) -> None:
    """Set up this judge process (after ``init`` started the fork server)."""
    global starter
    from grader.judge.ready import ready_to_judge

    ready_to_judge()
    starter = make_starter(sandbox)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    atexit.register(_exit_now)  # runs first (last registered): see there


def _exit_now() -> None:
    """End a judge process at once when the pool shuts it down: tearing down an interpreter
    that holds torch takes seconds, and this process has nothing left to save."""
    if sys.modules.get("grader.judge.launch.starter"):
        sys.modules["grader.judge.launch.starter"].close_default_server()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
