"""Workers started while the judge is still importing torch.

A cold ``grade`` spends its first second importing torch, in the judge and (at the same time)
in the fork server. Asking the fork server for the submission's workers from a thread, before
the judge's own import begins, lets their start and the import of the student's files happen
during that second instead of after it. Nothing here imports torch: the thread only talks to
the fork server (or spawns interpreters), and hands the workers to
``grader.judge.engine.grade_request``, which may then fork judge processes: only once the
thread has ended (``take`` waits until the kernel no longer lists it, which on Python before
3.13 is a moment after ``join`` returns).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.judge.parallel import processes, worker_limits
from grader.shared.registry import select

if TYPE_CHECKING:
    from grader.intake.submission import Submission
    from grader.judge.launch.handle import WorkerHandle
    from grader.protocol.limits import Limits


class EarlyWorkers:
    """The workers of ``submission``'s selected exercises, started in a background thread."""

    def __init__(
        self, submission: Submission, exercise_ids: list[str] | None, limits: Limits, start
    ):
        self.scratch = Path(tempfile.mkdtemp(prefix="grade-"))
        self.handles: dict[str, WorkerHandle] = {}
        self._failure: BaseException | None = None
        self._args = (submission, exercise_ids, limits, start)
        self._thread = threading.Thread(target=self._run, name="early-workers", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        submission, exercise_ids, limits, start = self._args
        try:
            chosen = [ex for ex in select(exercise_ids) if ex.id in submission.files]
            limits = worker_limits(limits, len(chosen), processes())  # as ``grade`` will
            for ex in chosen:
                self.handles[ex.id] = start(
                    ex.id, submission.files[ex.id], submission.root, limits, self.scratch
                )
        except BaseException as exc:  # raised again in the judge's thread, by take()
            self._failure = exc

    def take(self) -> tuple[dict[str, WorkerHandle], Path]:
        """The started workers and their scratch folder (waits for the thread to end)."""
        self._join()
        if self._failure is not None:
            self.discard()
            raise self._failure
        return self.handles, self.scratch

    def _join(self) -> None:
        """Wait for the thread, and for its OS thread to be gone: before 3.13, ``join`` returns
        as the thread finishes its Python code, a moment before the kernel lets it go."""
        self._thread.join()
        task = f"/proc/self/task/{self._thread.native_id}"
        until = time.monotonic() + 1.0
        while os.path.exists(task) and time.monotonic() < until:
            time.sleep(0.0002)

    def discard(self) -> None:
        """Close every worker and remove the scratch (when grading never happens)."""
        self._join()
        for handle in self.handles.values():
            handle.close()
        shutil.rmtree(self.scratch, ignore_errors=True)
