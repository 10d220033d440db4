"""Fresh-venv installs begun when the test session begins, so that their minutes of disk
writes (pip unpacking a 900 MB torch) overlap the CPU-bound tests instead of adding to them.

The tests that need one are marked ``@pytest.mark.install("NAME")``; ``conftest.py`` moves
them to the end of the run and starts, in one background thread, the installs of the marked
tests that were collected (one at a time: two at once would only fight over the same disk and
slow the grading tests around them). A test gets its install from the ``fresh_install``
fixture (``using``): the folder it happened in and every step's output, each step checked by
the test itself; the folder is removed when the test is done. Under
pytest-xdist the installs run once, in the first worker that collects them, and any worker's
test finds their outcome in the folder the run shares.

Set ``GRADER_SKIP_INSTALL_TESTS=1`` to skip those tests (and their installs) locally.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        job.run(
            "install", [pip, "install", "-q", "-c", "constraints.txt", "-e", ".[test]"], cwd=clone
        )
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
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            "gradescope",
            str(bundle),
            "--max-examples",
            str(GRADESCOPE_MAX_EXAMPLES),
        ],
        cwd=ROOT,
    )
    if made:
        unpack(bundle, root)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADER_TORCH_INDEX": ""}
        job.run(
            "setup.sh", ["bash", str(root / "source" / "setup.sh")], env=env, cwd=root / "source"
        )
    return job


INSTALLS: dict[str, Callable[[Path], Install]] = {
    "release": release_install,
    "gradescope": gradescope_setup,
}


def to_json(job: Install) -> dict:
    return {
        "folder": str(job.folder),
        "steps": {
            step: {
                "args": p.args,
                "returncode": p.returncode,
                "stdout": p.stdout,
                "stderr": p.stderr,
            }
            for step, p in job.steps.items()
        },
        "seconds": job.seconds,
        "paths": {k: str(v) for k, v in job.paths.items()},
    }


def from_json(doc: dict) -> Install:
    return Install(
        Path(doc["folder"]),
        {s: subprocess.CompletedProcess(**p) for s, p in doc["steps"].items()},
        doc["seconds"],
        {k: Path(v) for k, v in doc["paths"].items()},
    )


# Under pytest-xdist every worker collects every test, and any worker may get an install
# test: the installs happen once, in the first process that asks (a lock file), in a folder
# that the whole run shares (``SHARED``, made by the process that started the run: the
# controller, or pytest itself without xdist); each one's outcome is written there as JSON,
# where any process finds it.
SHARED = "GRADER_HEADSTART_DIR"
_thread: threading.Thread | None = None
_made_here: Path | None = None


def configure() -> None:
    """Make the run's shared folder (in the process that starts the run; workers inherit it)."""
    global _made_here
    if SHARED not in os.environ:
        _made_here = Path(tempfile.mkdtemp(prefix="grader-installs-"))
        os.environ[SHARED] = str(_made_here)


def _shared() -> Path:
    configure()
    return Path(os.environ[SHARED])


def _outcome(name: str) -> Path:
    return _shared() / f"{name}.json"


def begin(names: list[str]) -> None:
    """Start the installs ``names`` one after the other in a background thread, unless some
    process of this run has started them already."""
    global _thread
    if _thread is not None or SKIP or not names:
        return
    mine = _shared() / f"begun.{os.getpid()}"
    mine.write_text("\n".join(names))
    try:  # a link is made whole or not at all: whoever reads "begun" reads every name
        os.link(mine, _shared() / "begun")
    except FileExistsError:
        return
    finally:
        mine.unlink()

    def work() -> None:
        for name in names:
            try:
                doc = to_json(INSTALLS[name](_shared() / name))
            except BaseException as exc:  # reported by the test that waits for it
                doc = {"error": f"{type(exc).__name__}: {exc}"}
            partial = _outcome(name).with_suffix(".part")
            partial.write_text(json.dumps(doc))
            partial.replace(_outcome(name))

    _thread = threading.Thread(target=work, name="installs", daemon=True)
    _thread.start()


def wait(name: str) -> Install:
    """The install ``name`` (begun now if no process of the run began the installs)."""
    begin([name])
    deadline = time.monotonic() + 2 * TIMEOUT
    begun = _shared() / "begun"
    while not _outcome(name).exists():
        if name not in begun.read_text().split():
            break  # the installs were begun for other tests: this one runs here
        assert time.monotonic() < deadline, f"install {name!r}: no outcome in {2 * TIMEOUT} s"
        time.sleep(1.0)
    if not _outcome(name).exists():  # the installs begun here were others: run this one now
        return INSTALLS[name](Path(tempfile.mkdtemp(prefix=f"grader-{name}-")))
    doc = json.loads(_outcome(name).read_text())
    if "error" in doc:
        raise RuntimeError(f"install {name!r} failed: {doc['error']}")
    return from_json(doc)


@contextmanager
def using(name: str) -> Iterator[Install]:
    """The install ``name``, for the one test that needs it; its folder (a venv with torch: a
    gigabyte and more, seconds to delete) is removed when that test is done, in its own process
    while the others go on, not at the end of the run."""
    job = wait(name)
    try:
        yield job
    finally:
        shutil.rmtree(job.folder, ignore_errors=True)


def finish() -> None:
    """At the end of a process's session: let the installs begun here finish (a test in
    another process may wait for them), then remove the shared folder if it was made here."""
    if _thread is not None:
        _thread.join(timeout=2 * TIMEOUT)
    if _made_here is not None:
        shutil.rmtree(_made_here, ignore_errors=True)
