"""Starting a batch's judge processes, and setting each one up.

On Linux, when the batch's main process runs no other thread, the judges are forked from it
(``judge_processes``): it first starts the fork server they share (a clean process that imports
torch), then imports what judging needs while it does, and forks the judges, which find
everything imported and each take over a channel to the server. Elsewhere, each judge is a fresh
interpreter that starts its own fork server before it imports torch too, as ``grade`` does.

``init`` is the first code a judge runs: one torch thread, the worker starter (``starter``,
which ``grader.batch.pool`` grades with), a watch on the parent, a quick exit."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from grader.judge.launch.forkserver import ForkServer
    from grader.judge.launch.handle import Starter

starter: Starter | None = None  # the worker starter of this judge process (set by ``init_judge``)

# The judge processes already fill the cores: one torch thread each, in them and in their
# workers (whose fork servers inherit the variable).
THREADS = ("OMP_NUM_THREADS", "1")


def can_fork() -> bool:
    """Whether judges may be forked from this process: Linux, and no other thread running, as
    the kernel counts them (a thread holding a lock at the fork would leave it held forever in
    the child). ``judge_processes`` starts none before the fork: the fork server is another
    process, ``ready_to_judge`` starts no thread pool, and ``concurrent.futures`` forks every
    judge before it starts its own threads."""
    from grader.judge.parallel import threads_here

    return sys.platform.startswith("linux") and threads_here() == 1


def judge_processes(sandbox: str, judges: int) -> tuple[BaseContext, tuple, list[ForkServer]]:
    """The context to start ``judges`` judge processes with, the arguments of their ``init``,
    and the channels to the fork server started for them here, one per judge (``let_go`` and
    ``reap`` are the caller's)."""
    if not can_fork():  # a fresh interpreter is told the course (a fork inherits it)
        from grader.shared.course import current

        spawn = multiprocessing.get_context("spawn")
        return spawn, (sandbox, os.getpid(), None, None, current().choice), []
    from grader.judge.launch.starter import supported

    servers: list[ForkServer] = []
    if sandbox != "none" and supported():
        from grader.judge.launch.forkserver import ForkServer

        name, value = THREADS
        before = os.environ.get(name)
        os.environ.setdefault(name, value)  # the servers' environment is made from this one
        try:
            servers = ForkServer.shared(judges)
        finally:
            if before is None:
                del os.environ[name]
    from grader.judge.ready import ready_to_judge

    ready_to_judge()  # while the servers import torch; the judges forked next share it all
    context = multiprocessing.get_context("fork")
    slots = context.SimpleQueue()
    for slot in range(len(servers)):
        slots.put(slot)
    return context, (sandbox, os.getpid(), servers, slots), servers


def init(
    sandbox: str,
    parent: int,
    servers: list[ForkServer] | None = None,
    slots: Any = None,
    course: str | None = None,
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C
    if course is not None:  # a spawned judge: the batch's course (``Course.choice``)
        from grader.shared.course import choose

        choose(course)
    os.environ.setdefault(*THREADS)
    if servers:
        from grader.judge.launch.starter import take_over_default_server

        mine = servers[slots.get()]
        for other in servers:
            if other is not mine:
                other.let_go()  # its template must see the end of the channel with its judge
        take_over_default_server(mine)
    elif sandbox != "none":
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
