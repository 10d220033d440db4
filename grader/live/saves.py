"""The saves ``grade --watch`` waits for, and what they change: which files of which folder
count, a fingerprint of what each exercise's grade depends on, the exercises to grade again,
and the result with them graded again. ``grader.commands.watch`` runs the loop.

Saves are seen by ``watchfiles`` (the operating system's file events, not polling), in a small
process of its own (``Saves``): this process forks judge processes to grade, and a fork must
not happen beside another thread (``grader.judge.parallel``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grader.pipeline import Submission
from grader.protocol.boot import BOOT, boot_arguments
from grader.shared import pipes
from grader.shared.errors import UsageError

if TYPE_CHECKING:
    from grader.result.schema import GradeResult

QUIET_MS = 50  # a save is graded once its folder has had no new event for this long
HELPERS = ""  # the fingerprint's key for the Python files beside the exercise files
WATCHER_BOOT = BOOT.format(module="grader.live.saves", function="report_saves")
POLL_MS = 500  # how often the watcher process checks that grade is still there
LOOK_S = 0.25  # how often a wait for saves looks whether the watch is over (end of input)


class InputEnded(Exception):
    """The watch's standard input (a pipe) has ended: whoever drove the watch is done."""


def input_ended(fd: int = 0) -> bool:
    """Whether ``fd`` is a pipe that has reached its end (a terminal or anything else: never).
    What arrives on the pipe meanwhile is read and dropped."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode) or not pipes.wait_readable(fd, 0):
            return False
        return os.read(fd, 1 << 12) == b""
    except OSError:  # closed, or not a file at all
        return False


class Counts:
    """Which files of the watched folder count: the one named ``name``, or else every file
    whose suffix is ``suffix`` (plain data: the watcher process gets it as JSON)."""

    def __init__(self, name: str = "", suffix: str = ".py"):
        self.name, self.suffix = name, suffix

    def __call__(self, path: Path) -> bool:
        return path.name == self.name if self.name else path.suffix == self.suffix


def watched(path: Path) -> tuple[Path, Counts, str]:
    """The folder to watch for ``grade PATH``, which of its files count (the notebook itself,
    or the Python files of ``exercises/``, or of the folder itself for loose files), and how
    to name them to the student."""
    path = Path(path).resolve()
    if path.suffix == ".ipynb":
        return path.parent, Counts(name=path.name), path.name
    folder = path.parent if path.is_file() else path
    if (folder / "exercises").is_dir():
        folder = folder / "exercises"
    return folder, Counts(suffix=".py"), folder.name + "/"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:  # deleted or unreadable meanwhile: grading says what it finds
        return f"unreadable: {exc.errno}".encode()


def fingerprint(submission: Submission, ids: list[str]) -> dict[str, bytes]:
    """What each exercise's grade depends on: its file's bytes (or why it is set aside, or
    nothing when it is missing), and under ``HELPERS`` the other Python files beside them."""
    prints: dict[str, bytes] = {}
    for ex_id in ids:
        if ex_id in submission.problems:
            prints[ex_id] = b"problem: " + submission.problems[ex_id].encode()
        elif ex_id in submission.files:
            prints[ex_id] = b"file: " + _read(submission.files[ex_id])
        else:
            prints[ex_id] = b"missing"
    exercise_files = set(submission.files.values())
    helpers = hashlib.sha256()
    for folder in sorted({p.parent for p in exercise_files}):
        for path in sorted(folder.glob("*.py")):
            if path not in exercise_files and path.is_file() and not path.is_symlink():
                helpers.update(path.name.encode() + b"\0" + _read(path) + b"\0")
    prints[HELPERS] = helpers.digest()
    return prints


def changed(before: dict[str, bytes], after: dict[str, bytes], ids: list[str]) -> list[str]:
    """The exercises to grade again, in course order."""
    if before.get(HELPERS) != after.get(HELPERS):
        return list(ids)
    return [ex_id for ex_id in ids if before.get(ex_id) != after.get(ex_id)]


def merged(previous: GradeResult, new: GradeResult) -> GradeResult:
    """``previous`` with the exercises ``new`` graded again replaced by their new results."""
    fresh = {e.id: e for e in new.exercises}
    exercises = [fresh.pop(e.id, e) for e in previous.exercises] + list(fresh.values())
    return dataclasses.replace(
        new,
        exercises=exercises,
        score=round(sum(e.score for e in exercises), 6),
        max_score=sum(e.max_score for e in exercises),
    )


class Saves:
    """Saves of the files of ``folder`` that ``counts``, seen from the moment it is made (by a
    watcher process, ``report_saves``, also while a grade runs): ``wait()`` blocks until there
    are some. A process, not a thread: this process forks judge processes while it grades."""

    def __init__(self, folder: Path, counts: Counts):
        self._folder = folder
        config = {"folder": str(folder), "name": counts.name, "suffix": counts.suffix}
        self._proc = subprocess.Popen(
            boot_arguments(WATCHER_BOOT, config),
            stdin=subprocess.PIPE,  # its end of file tells the watcher that grade has gone
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None  # pipes, above
        self._streams = (self._proc.stdin, self._proc.stdout)
        self._pending = b""
        self._ready = False  # the watcher said it watches
        self._early: set[Path] = set()  # saves read while waiting for that

    def _lines(self, block: bool, ended: Callable[[], bool]) -> list[bytes]:
        """The whole lines the watcher has written: at least one if ``block`` (unless
        ``ended()`` says to stop waiting: then ``InputEnded``)."""
        fd = self._streams[1].fileno()
        while True:
            if b"\n" in self._pending:
                *lines, self._pending = self._pending.split(b"\n")
                return lines
            if not block and not pipes.wait_readable(fd, 0):
                return []
            while block and not pipes.wait_readable(fd, LOOK_S):
                if ended():
                    raise InputEnded()
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise UsageError(f"cannot watch {self._folder} for saves: the watcher stopped")
            self._pending += chunk

    def _take(self, lines: list[bytes]) -> set[Path]:
        """The files the watcher's ``lines`` name as saved; its "ready" noted."""
        saved: set[Path] = set()
        for line in lines:
            message = json.loads(line)
            if isinstance(message, str):  # e.g. no file events here (inotify's limit)
                raise UsageError(f"cannot watch {self._folder} for saves: {message}")
            if isinstance(message, dict):  # {"ready": true}: watching from now on
                self._ready = True
            else:
                saved |= {Path(name) for name in message}
        return saved

    def wait(self, ended: Callable[[], bool] = lambda: False) -> set[Path]:
        """The files saved since the last call (blocks until one is, or until ``ended()``
        says the watch is over: then ``InputEnded``)."""
        saved, self._early = self._early, set()
        block = not saved
        while lines := self._lines(block, ended):
            saved |= self._take(lines)
            block = not saved
        return saved

    def wait_ready(self, ended: Callable[[], bool] = lambda: False) -> None:
        """Block until the watcher watches (a fresh interpreter takes a while to start, more
        on Windows): a save made before would not be seen. Saves seen meanwhile are kept for
        the next ``wait``."""
        while not self._ready:
            self._early |= self._take(self._lines(True, ended))

    def close(self) -> None:
        self._proc.kill()
        self._proc.wait()
        for stream in self._streams:
            stream.close()


def report_saves(config: dict) -> None:
    """The watcher process: one JSON line per save (the paths of the files that count), or one
    saying why it cannot watch; it ends when its standard input does (grade has gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is grade's, which then ends this
    counts = Counts(config["name"], config["suffix"])

    def tell(message: list[str] | str | dict[str, bool]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def grade_gone() -> bool:  # grade closed this process's stdin: its end of file
        return pipes.wait_readable(sys.stdin.fileno(), 0)

    said_ready = False
    try:
        try:
            import watchfiles
        except (ImportError, OSError):  # its compiled part does not load here (Wine)
            poll_saves(Path(config["folder"]), counts, tell, grade_gone)
            return
        for events in watchfiles.watch(
            config["folder"],
            watch_filter=lambda _change, name: counts(Path(name)),
            step=QUIET_MS,
            recursive=False,
            rust_timeout=POLL_MS,
            yield_on_timeout=True,
        ):
            if grade_gone():
                return
            if not said_ready:  # the first look at the folder has been made: it is watched
                tell({"ready": True})
                said_ready = True
            if events:
                tell(sorted({name for _change, name in events}))
    except Exception as exc:
        tell(f"{type(exc).__name__}: {exc}")


def _stamps(folder: Path, counts: Counts) -> dict[str, tuple[int, int]]:
    """Each file of ``folder`` that counts, with its modification time and size."""
    stamps = {}
    for entry in os.scandir(folder):
        if counts(Path(entry.name)) and entry.is_file():
            try:
                stat_of = entry.stat()
            except OSError:  # deleted meanwhile
                continue
            stamps[entry.path] = (stat_of.st_mtime_ns, stat_of.st_size)
    return stamps


def poll_saves(
    folder: Path,
    counts: Counts,
    tell: Callable[[list[str] | dict[str, bool]], None],
    gone: Callable[[], bool],
) -> None:
    """Saves seen by looking at the files' times and sizes every ``LOOK_S``, where the OS's
    file events cannot be had (watchfiles does not load): that it watches, then each file
    saved, made or deleted, until ``gone()``."""
    seen = _stamps(folder, counts)
    tell({"ready": True})
    while not gone():
        time.sleep(LOOK_S)
        now = _stamps(folder, counts)
        saved = sorted(name for name in seen.keys() | now.keys() if seen.get(name) != now.get(name))
        if saved:
            tell(saved)
        seen = now
