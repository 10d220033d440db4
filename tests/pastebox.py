"""Reproduce snippets run as ``python -c SNIPPET`` would run them, from a warm interpreter
(``grader.authoring.pastes``, which ``grade check-pack`` pastes with too): the grader, the
packs and ``reference`` found from the repository (``PYTHONPATH``), as in a student's
environment where the package is installed.

``paste`` (``tests/support.py``) is the one way tests run a snippet.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from grader.authoring import pastes

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

BOX = pastes.PasteBox(ENV)


def fresh(snippet: str, cwd: Path) -> subprocess.CompletedProcess:
    """The same paste into a really fresh interpreter (``tests/test_snippets.py`` holds the
    two to the same output)."""
    return pastes.fresh(snippet, cwd, ENV)


# `grade` as the tests run it (``support.grade_cli``): ``python -m grader ARGS`` forked from a
# second warm interpreter, started with this process's environment (no PYTHONPATH added), so
# that each command skips the second a fresh interpreter spends importing torch. Only what the
# interpreter reads as it starts (PYTHON*, the locale) must be the box's, or the command runs
# in a fresh interpreter. The box has imported no pack, no judge and no check: the command
# imports them, and resolves its course, as a new process does.
#
# And the second `grade` spends starting its fork server (a fresh interpreter importing torch:
# the sandbox's template): the box starts templates itself, a few channels each
# (``ForkServer.shared``), and hands a command a channel no command had before, as a template
# of its own (``take_over``, as a batch's judge does; its exit closes the channel, which ends
# the workers it started), when the template is the one the command would start: the same
# command line (``sys.path``: the command's folder is on it when the grader is imported from
# there), the same environment for it and its workers, its home in the same TMPDIR, and the
# course every installed pack. Otherwise the command starts its own, as `grade` does. These
# templates keep no spare workers (a command may never grade: a usage error), and fork each
# worker when it is asked for.
GRADE_PRELUDE = r"""
import os, tempfile
from contextlib import contextmanager
from grader.judge.launch import starter
from grader.judge.launch.forkserver import ForkServer
from grader.protocol.boot import fork_server_arguments, worker_environment
from grader.shared import course

os.environ.clear()  # as the box was started (torch._dynamo sets TORCHINDUCTOR_CACHE_DIR)
os.environ.update(STARTING_ENV)
CHANNELS = 12
WAITING = 3  # templates, each of a different kind (``template_of``)
templates = {}  # what a template is (``template_of``) -> its channels no command has had
retired = []  # the processes of templates with no channel left to hand out, until they exit

@contextmanager
def as_command(job):
    # The box as the command's process is when it starts its fork server: its folder, its
    # environment, ``sys.path`` beginning with that folder.
    cwd, env = os.getcwd(), dict(os.environ)
    os.chdir(job["cwd"])
    if job.get("env") is not None:
        os.environ.clear()
        os.environ.update(job["env"])
    tempfile.tempdir = None
    course.use(None)
    try:
        yield
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None
        course.use(None)

def template_of():
    config = {"fds": [], "disable": [], "spares": 0, "refill": True}
    env = worker_environment("", course.child_environment())
    return repr((fork_server_arguments(config), sorted(env.items()), tempfile.gettempdir(),
                 os.environ.get("GRADER_SANDBOX_DEBUG")))

def before_fork(job):
    try:
        return channel_for(job)
    except Exception:  # what the command meets itself (an installed pack that is broken...)
        return None

def channel_for(job):
    retired[:] = [process for process in retired if process.poll() is None]
    with as_command(job):
        if course.CHOSEN in os.environ:
            return None
        key = template_of()
        # A few templates wait, the most recently used: commands alternate between a few
        # (from the repository, where the worker side is imported from the current folder,
        # and from elsewhere, where it is not); the others are let go.
        waiting = [k for k in templates if k != key]
        for other in waiting[: max(0, len(waiting) - (WAITING - 1))]:
            for channel in templates.pop(other):
                channel.let_go()
                retired.append(channel._process)
        channels = templates.pop(key, None)
        if channels and channels[0]._process.poll() is not None:  # it ended: another
            channels.clear()
        if not channels:
            channels = ForkServer.shared(CHANNELS, spares=0)  # on demand
    channel = channels.pop(0)
    if channels:
        templates[key] = channels  # last: the most recently used
    else:
        retired.append(channel._process)
    return channel

def in_child(job, channel):
    for channels in templates.values():
        for other in channels:
            other.let_go()
    if channel is not None:
        course.use(None)  # resolved from the command's own environment, as in a new process
        starter.take_over_default_server(channel)

def after_fork(job, channel):
    if channel is not None:
        channel.let_go()
"""
GRADE_BOX = pastes.PasteBox(dict(os.environ), prelude=GRADE_PRELUDE)
STARTUP = ("PYTHON", "LC_", "LANG")
RUN_MODULE = (
    "import runpy, sys\n"
    "sys.argv = ['-m', *{args!r}]\n"
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
)


def _startup(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP)}


def run_module(
    module: str,
    args: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    fresh: bool = False,
) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` in ``cwd`` with ``env``: forked from ``GRADE_BOX`` where the
    environment allows and not ``fresh``, else in a fresh interpreter. Past ``timeout`` it
    raises ``subprocess.TimeoutExpired`` either way: a hung command is never an exit status
    that a test of a failing command could take for the failure it expects."""
    command = [sys.executable, "-m", module, *args]
    if fresh or not hasattr(os, "fork") or _startup(env) != _startup(GRADE_BOX.env):
        return subprocess.run(
            command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
        )
    began = time.monotonic()
    done = GRADE_BOX.run(RUN_MODULE.format(args=list(args), module=module), cwd, timeout, env)
    if done.returncode == -9 and time.monotonic() - began >= timeout:  # the box killed it
        raise subprocess.TimeoutExpired(command, timeout, done.stdout, done.stderr)
    return subprocess.CompletedProcess(command, done.returncode, done.stdout, done.stderr)
