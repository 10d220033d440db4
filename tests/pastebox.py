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
# that each command skips the second a fresh interpreter spends importing torch. The grader is
# imported afresh in every child, as in a new process; only what the interpreter reads as it
# starts (PYTHON*, the locale) must be the box's, or the command runs in a fresh interpreter.
GRADE_BOX = pastes.PasteBox(dict(os.environ))
STARTUP = ("PYTHON", "LC_", "LANG")
RUN_MODULE = (
    "import runpy, sys\n"
    "sys.argv = ['-m', *{args!r}]\n"
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
)


def _startup(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(STARTUP)}


def run_module(
    module: str, args: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` in ``cwd`` with ``env``: forked from ``GRADE_BOX`` where the
    environment allows, else in a fresh interpreter; exit status -9 past ``timeout``."""
    command = [sys.executable, "-m", module, *args]
    if not hasattr(os, "fork") or _startup(env) != _startup(GRADE_BOX.env):
        return subprocess.run(
            command, capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
        )
    done = GRADE_BOX.run(RUN_MODULE.format(args=list(args), module=module), cwd, timeout, env)
    return subprocess.CompletedProcess(command, done.returncode, done.stdout, done.stderr)
