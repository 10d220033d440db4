"""Replies read by a thread, for platforms that cannot wait on a pipe with ``select``
(Windows); ``grader.judge.launch.handle.WorkerHandle`` uses it there."""

from __future__ import annotations

import queue
import threading
from typing import Any

from grader.protocol import wire


class ReplyReader:
    """Reads a worker's replies in a thread, for platforms that cannot wait on a pipe with
    ``select`` (Windows); ``get`` then waits on a queue, with the same time limit."""

    def __init__(self, fd: int):
        self._queue: queue.Queue = queue.Queue()
        self._failure: BaseException | None = None
        threading.Thread(target=self._run, args=(fd,), daemon=True).start()

    def _run(self, fd: int) -> None:
        while True:
            try:
                self._queue.put((True, wire.recv(fd)))
            except (wire.ChannelClosed, wire.BadMessage) as exc:
                self._queue.put((False, exc))
                return
            except OSError:
                self._queue.put((False, wire.ChannelClosed()))
                return

    def get(self, timeout: float) -> Any:
        if self._failure is not None:
            raise self._failure
        try:
            ok, value = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise wire.ChannelTimeout() from None
        if not ok:
            self._failure = value
            raise value
        return value
