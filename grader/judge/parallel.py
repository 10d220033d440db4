"""Grading several exercises at once: one forked judge process per exercise.

A judge spends much of an exercise waiting for its worker, and a worker waits for the judge
while it computes the next expected value. Forked after the judge has imported torch, the
reference and the checks (and started every worker), one judge process per exercise lets the
exercises overlap on the machine's cores: while one judge computes, the workers of the others
run. Each child grades exactly what the sequential judge would (same checks, same seeds, same
examples) and sends its ``ExerciseResult`` back as JSON over a pipe; the parent never runs
student code either. A child that fails (a bug of ours) or overruns its budget becomes an
``error`` or ``timeout`` result for its exercise only.

Only a process that runs no other thread forks (``alone``): a thread holding a lock at the fork
(torch's OpenMP pool, a library's pool, a thread of a test runner or of a host such as pytest)
would leave that lock held forever in the child, and Python 3.12+ warns of it. ``grade``'s judge
is such a process (``grader.judge.ready``); elsewhere the exercises are graded one after the
other, to the same result.
"""

from __future__ import annotations

import io
import json
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace

from grader.judge import replay
from grader.judge.scoring import check_named
from grader.protocol.limits import Limits
from grader.result.schema import GRADER_FAILED, CheckResult, ExerciseResult, Status
from grader.shared import timing

GRACE_S = 30.0  # beyond an exercise's own budgets, before the parent gives up on a child


def supported() -> bool:
    return hasattr(os, "fork") and hasattr(os, "pipe")


def threads_here() -> int:
    """The threads this process runs, as the kernel counts them (``/proc/self/task``: every
    thread, torch's OpenMP pool and other libraries' included), or where there is no such
    list, as Python counts them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def alone() -> bool:
    """Whether judge processes may be forked from this process now: it can fork, and it runs
    no other thread."""
    return supported() and threads_here() == 1


def _run_child(write_fd: int, job: Callable[[], list[ExerciseResult]]) -> None:
    said = io.StringIO()  # what the judge tells the user goes out through the parent
    sys.stderr = said
    try:
        try:
            single_threaded()
            replay.since_fork()
            payload = {"results": [asdict(r) for r in job()], "timings": timing.snapshot()}
            payload["replays"] = replay.exported()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised
            payload = {"failure": f"{type(exc).__name__}: {exc}"}
        payload["stderr"] = said.getvalue()
        data = memoryview(json.dumps(payload).encode())
        while data:
            data = data[os.write(write_fd, data) :]
    finally:
        os._exit(0)  # no atexit handlers: the fork server and the scratch are the parent's


def single_threaded() -> None:
    """One torch thread in a forked judge, as in ``grade``'s (``grader.judge.ready``): the
    judge's tensors are small and the cores are its workers'. Its parent had no thread pool to
    hand down (``alone``): with one thread torch never starts one here either."""
    import torch

    torch.set_num_threads(1)


def _results(data: bytes) -> dict[str, ExerciseResult] | str:
    try:
        payload = json.loads(data)
        if payload.get("stderr"):
            sys.stderr.write(payload["stderr"])
        if "failure" in payload:
            return str(payload["failure"])
        timing.merge(payload.get("timings") or {})
        replay.adopt(payload.get("replays") or [], check_named)
        return {
            e["id"]: ExerciseResult(**{**e, "checks": [CheckResult(**c) for c in e["checks"]]})
            for e in payload["results"]
        }
    except (ValueError, KeyError, TypeError) as exc:
        return f"the judge process sent no result ({type(exc).__name__})"


def balanced_groups(costs: dict[str, float], n: int) -> list[list[str]]:
    """Exercise ids split into at most ``n`` groups of about equal cost (longest first)."""
    groups: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(max(1, n))]
    for ex_id in sorted(costs, key=lambda e: -costs[e]):
        load, members = min(groups, key=lambda g: g[0])
        groups.remove((load, members))
        groups.append((load + costs[ex_id], [*members, ex_id]))
    return [members for _, members in groups if members]


def processes() -> int:
    """How many judge processes the cores this process may use can keep busy."""
    return len(_cores())


def worker_limits(limits: Limits, jobs: int, processes: int) -> Limits:
    """``limits`` for the workers of ``jobs`` exercises graded by up to ``processes`` judge
    processes at once: unless ``limits`` names a number, each worker's torch gets its share of
    the cores (one thread each on two cores), so that workers running side by side do not start
    more threads than there are cores; a worker that runs alone keeps torch's default (a thread
    per core)."""
    at_once = min(jobs, processes)
    if limits.torch_threads or at_once <= 1:
        return limits
    return replace(limits, torch_threads=max(1, len(_cores()) // at_once))


def _cores() -> set[int]:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def run_forked(
    jobs: dict[str, Callable[[], list[ExerciseResult]]],
    keep_fds: dict[str, tuple[int, ...]],
    members: dict[str, list[str]],
    deadline_s: float,
    failed: Callable[[str, Status, str], ExerciseResult],
) -> dict[str, ExerciseResult]:
    """Run each job (a group's name -> a function grading its exercises) in a forked child.

    This process must run no other thread (``alone()``). ``keep_fds`` names, per group, the
    descriptors its child needs (its workers' pipes); a
    child closes those of the other groups. ``members`` lists each group's exercise ids;
    ``failed(exercise_id, status, reason)`` makes the result of an exercise whose child died
    or overran ``deadline_s``.
    """
    if (threads := threads_here()) > 1:  # the caller asks ``alone()`` first
        raise RuntimeError(f"judge processes are not forked from a process of {threads} threads")
    readers, pids = _fork_all(jobs, keep_fds)
    chunks, timed_out = _read_all(readers, pids, deadline_s)
    return _collected(chunks, timed_out, members, deadline_s, failed)


def _fork_all(
    jobs: dict[str, Callable[[], list[ExerciseResult]]], keep_fds: dict[str, tuple[int, ...]]
) -> tuple[dict[int, str], dict[str, int]]:
    """A child forked per job: the pipe each writes its results to (read end -> group), and
    each group's pid."""
    all_fds = {fd for fds in keep_fds.values() for fd in fds}
    readers: dict[int, str] = {}
    pids: dict[str, int] = {}
    for ex_id, job in jobs.items():
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its result is what the tests see)
            os.close(r)
            for fd in all_fds - set(keep_fds.get(ex_id, ())):
                try:
                    os.close(fd)
                except OSError:
                    pass
            for fd in readers:
                os.close(fd)
            _run_child(w, job)
        os.close(w)
        readers[r] = ex_id
        pids[ex_id] = pid
    return readers, pids


def _read_all(
    readers: dict[int, str], pids: dict[str, int], deadline_s: float
) -> tuple[dict[str, list[bytes]], set[str]]:
    """What each child wrote until it ended or ``deadline_s`` passed; the groups whose
    children overran (killed). Every child is reaped."""
    chunks: dict[str, list[bytes]] = {ex_id: [] for ex_id in pids}
    timed_out: set[str] = set()
    end = time.monotonic() + deadline_s
    try:
        while readers:
            left = end - time.monotonic()
            ready, _, _ = select.select(list(readers), [], [], max(0.0, left))
            if not ready and left <= 0:
                timed_out.update(readers.values())
                break
            for fd in ready:
                data = os.read(fd, 1 << 20)
                if data:
                    chunks[readers[fd]].append(data)
                else:
                    os.close(fd)
                    del readers[fd]
    finally:
        for fd in readers:
            os.close(fd)
        for ex_id, pid in pids.items():
            if ex_id in timed_out:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return chunks, timed_out


def _collected(
    chunks: dict[str, list[bytes]],
    timed_out: set[str],
    members: dict[str, list[str]],
    deadline_s: float,
    failed: Callable[[str, Status, str], ExerciseResult],
) -> dict[str, ExerciseResult]:
    """Each exercise's result: its child's, or a timeout or grader failure for it."""
    results: dict[str, ExerciseResult] = {}
    for group in chunks:
        outcome = (
            f"the grader gave up on this exercise after {deadline_s:g} s"
            if group in timed_out
            else _results(b"".join(chunks[group]))
        )
        for ex_id in members[group]:
            if isinstance(outcome, dict) and ex_id in outcome:
                results[ex_id] = outcome[ex_id]
            elif group in timed_out:
                results[ex_id] = failed(ex_id, "timeout", str(outcome))
            else:
                said = failed(ex_id, "error", f"{GRADER_FAILED}{outcome}")
                results[ex_id] = replace(said, verdict="grader-failed")
    return results
