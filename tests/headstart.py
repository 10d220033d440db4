"""Fresh-venv installs begun when the test session begins, so that their minutes of disk
writes (pip unpacking a 900 MB torch) overlap the CPU-bound tests instead of adding to them.

The tests that need one are marked ``@pytest.mark.install("NAME")``; ``conftest.py`` moves
them to the end of the run and starts, in one background thread, the installs of the marked
tests that were collected (one at a time: two at once would only fight over the same disk and
slow the grading tests around them). A test gets its install with ``wait("NAME")``: the
folder it happened in and every step's output, each step checked by the test itself.

Set ``GRADER_SKIP_INSTALL_TESTS=1`` to skip those tests (and their installs) locally.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = os.environ.get("GRADER_SKIP_INSTALL_TESTS") == "1"
SKIP_INSTALL = pytest.mark.skipif(SKIP, reason="GRADER_SKIP_INSTALL_TESTS=1: no fresh-venv install")
TIMEOUT = 1800


@dataclass
class Install:
    """One install's folder and the steps run so far (a step that failed is the last)."""

    folder: Path
    steps: dict[str, subprocess.CompletedProcess] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)

    def run(self, step: str, cmd: list[str], **kwargs) -> bool:
        began = time.monotonic()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
        except subprocess.TimeoutExpired as exc:
            proc = subprocess.CompletedProcess(cmd, -9, str(exc.stdout or ""), f"timed out: {exc}")
        self.steps[step] = proc
        self.seconds[step] = time.monotonic() - began
        return proc.returncode == 0

    def check(self, step: str) -> subprocess.CompletedProcess:
        """The step's output, after asserting that it ran and succeeded."""
        assert step in self.steps, f"{step}: not run (an earlier step failed: {self.failed()})"
        proc = self.steps[step]
        assert proc.returncode == 0, f"{step}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        return proc

    def failed(self) -> str:
        bad = [s for s, p in self.steps.items() if p.returncode != 0]
        return ", ".join(bad) or "none"


def release_install(folder: Path) -> Install:
    """``grade release`` into ``clone``, then the student README's install in a fresh venv."""
    job = Install(folder)
    clone, venv = folder / "clone", folder / "venv"
    job.paths.update(clone=clone, venv=venv)
    cli = [sys.executable, "-m", "grader.commands.cli"]
    if job.run("release", [*cli, "release", str(clone)], cwd=ROOT) and job.run(
        "venv", [sys.executable, "-m", "venv", str(venv)]
    ):
        pip = str(venv / "bin" / "pip")
        job.run("install", [pip, "install", "-q", "-c", "constraints.txt", "-e", ".[test]"],
                cwd=clone)  # fmt: skip
    return job


def unpack(bundle: Path, root: Path) -> None:
    """What Gradescope does with the zip: extract it to source/ (keeping the executable
    bits) and copy run_autograder to the root."""
    source = root / "source"
    with zipfile.ZipFile(bundle) as zf:
        for info in zf.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            target.chmod((info.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(source / "run_autograder", root / "run_autograder")


GRADESCOPE_MAX_EXAMPLES = 4  # the bundle's examples per check: the install is what is tested


def gradescope_setup(folder: Path) -> Install:
    """``grade gradescope`` into a zip, unpacked as Gradescope does, then its ``setup.sh``."""
    job = Install(folder)
    bundle, root = folder / "autograder.zip", folder / "autograder"
    job.paths.update(bundle=bundle, root=root)
    made = job.run(
        "bundle",
        [sys.executable, "-m", "grader.commands.cli", "gradescope", str(bundle),
         "--max-examples", str(GRADESCOPE_MAX_EXAMPLES)],
        cwd=ROOT,
    )  # fmt: skip
    if made:
        unpack(bundle, root)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_TORCH_INDEX": ""}
        job.run("setup.sh", ["bash", str(root / "source" / "setup.sh")], env=env,
                cwd=root / "source")  # fmt: skip
    return job


INSTALLS: dict[str, Callable[[Path], Install]] = {
    "release": release_install,
    "gradescope": gradescope_setup,
}

_done: dict[str, Install] = {}
_failed: dict[str, BaseException] = {}
_thread: threading.Thread | None = None
_folder: Path | None = None


def begin(names: list[str]) -> None:
    """Start the installs ``names`` one after the other in a background thread."""
    global _thread, _folder
    if _thread is not None or SKIP or not names:
        return
    _folder = Path(tempfile.mkdtemp(prefix="grader-installs-"))

    def work() -> None:
        for name in names:
            try:
                _done[name] = INSTALLS[name](_folder / name)
            except BaseException as exc:  # reported by the test that waits for it
                _failed[name] = exc

    _thread = threading.Thread(target=work, name="installs", daemon=True)
    _thread.start()


def wait(name: str) -> Install:
    """The install ``name``, begun now if no one began it (a test run on its own)."""
    begin([name])
    if _thread is not None:
        while name not in _done and name not in _failed and _thread.is_alive():
            _thread.join(timeout=1.0)
    if name in _failed:
        raise _failed[name]
    if name not in _done:  # the thread ran other installs only: run this one here
        _done[name] = INSTALLS[name](Path(tempfile.mkdtemp(prefix=f"grader-{name}-")))
    return _done[name]


def cleanup() -> None:
    if _thread is not None and not _thread.is_alive() and _folder is not None:
        shutil.rmtree(_folder, ignore_errors=True)
