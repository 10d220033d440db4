"""The batch's judge processes: a few long-lived processes that grade submissions in parallel.

Each judge process is started once per batch, forked from this process once it has imported
torch and the checks (or, where that is not safe, a clean interpreter: ``grader.batch.judges``),
and set up by ``grader.batch.judges``: one torch thread (the processes already fill the cores),
one worker starter (a warm fork server of ``grader.judge.launch.starter`` when it is there, so
that no submission pays for an import of torch).
Submissions are handed out through ``concurrent.futures``; only the main process writes to OUT.

Processes, not threads: hypothesis and the reference computations are Python under the GIL,
and the checks seed torch's global random generator, so threads sharing one judge are both
slower (half the speed on 2 cores) and wrong (crashes, other scores), as
``bench/bench_batch.py --threads`` shows.

A judge process that dies (the grader itself crashing or running out of memory) costs only
the submissions it held: they are tried again in a fresh pool, and after ``MAX_ATTEMPTS``
recorded as errors to grade again on the next run. A judge process whose parent is gone
(``kill -9`` of the batch) exits by itself.

Every submission has a deadline (``judge_deadline``: what its exercises' own limits allow, with
room to spare). A judge still on a submission past it is killed by this process, and the
submission gets an ``error`` row that names the exercise and the check it stopped at, with the
results of the exercises finished before (``grader.batch.deadline``, which the judge notes its
progress for). It is not graded again under the same deadline (it would stall again), but is
under another (``Outcome.deadline``). The submissions the other judges held are graded again in
a fresh pool without that counting as one of their attempts. Nothing a submission does can
stall the batch.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from grader import pipeline
from grader.batch import deadline
from grader.batch import judges as boot  # starts and sets up the judge processes
from grader.batch.config import Settings
from grader.batch.entries import Entry, open_entry
from grader.judge import resilience
from grader.judge.seeds import Seed
from grader.pipeline import Request, SubmissionError

KILL = getattr(signal, "SIGKILL", signal.SIGTERM)  # Windows: SIGTERM is TerminateProcess

MAX_ATTEMPTS = 2
WATCH_S = 1.0  # how often this process looks for a judge past its deadline
DEADLINE_VARIABLE = deadline.VARIABLE  # seconds a judge may take on one submission
STARTED = "judge-started"  # in a job's scratch: "PID TIME" of the judge that took it on


@dataclass(frozen=True)
class Job:
    entry: Entry
    scratch: Path  # a folder inside OUT for this job: the unpacked zip, the workers' folders
    settings: Settings

    def __post_init__(self) -> None:  # absolute: OUT may be relative, and workers chdir
        object.__setattr__(self, "scratch", Path(self.scratch).resolve())


@dataclass
class Outcome:
    name: str
    result: dict  # the schema-1 result
    status: str  # "passed" | "failed" | "error"
    reason: str  # why status is "error" ("" otherwise)
    retry: bool = False  # the grader itself failed: grade this entry again on the next run
    graded: bool = True  # False: the entry could not be read, no student code ran
    deadline: float | None = None  # the judge was killed after this many seconds


def _request(job: Job, progress: Callable[..., None] | None = None) -> Request:
    """The pipeline's request for one job: the workers' folders inside the job's scratch in OUT
    (not in /tmp), so that what a judge killed with the batch leaves there, the next run over
    OUT removes. The seed is kept here: the ledger hides it from what goes back to students."""
    settings = job.settings
    workers = job.scratch / "workers"
    workers.mkdir(parents=True, exist_ok=True)
    return Request(
        seed=Seed(settings.seed, "batch"),
        exercises=list(settings.exercises),
        max_examples=settings.max_examples,
        limits=settings.limits,
        max_scores=settings.max_scores,
        check_points=settings.check_points,
        processes=1,  # the judge processes already fill the cores
        start=boot.starter,
        scratch_in=workers,
        progress=progress,
    )


def not_graded(job: Job, reason: str, retry: bool = False) -> Outcome:
    """The row of an entry that could not be graded: every exercise an error with the reason."""
    result = pipeline.not_graded(job.entry.name, _request(job), reason)
    return Outcome(job.entry.name, result.to_dict(), "error", reason, retry, graded=False)


def judge_deadline(settings: Settings) -> float:
    """Seconds a judge may spend on one submission: for each exercise, the import's and the
    checks' own limits and half a minute of the judge's own work; a minute to read it in.
    ``GRADER_JUDGE_DEADLINE_S`` sets another (a much slower machine)."""
    from grader.shared.registry import select

    named = os.environ.get(DEADLINE_VARIABLE, "").strip()
    if named:
        return float(named)
    limits = settings.limits
    per_exercise = limits.import_timeout_s + limits.exercise_budget_s + 30.0
    return 60.0 + per_exercise * len(select(list(settings.exercises) or None))


def grade_job(job: Job) -> Outcome:
    """Grade one entry; never raises for anything the entry holds. Its scratch is removed
    after, whatever happened."""
    resilience.set_label(job.entry.name)  # names this entry in $GRADE_TRACE_LOG
    job.scratch.mkdir(parents=True, exist_ok=True)
    (job.scratch / STARTED).write_text(f"{os.getpid()} {time.time()}")  # for the watchdog
    try:
        with deadline.tracking(job.scratch / deadline.PROGRESS) as tracker:
            return _grade_entry(job, tracker)
    finally:
        shutil.rmtree(job.scratch, ignore_errors=True)


def _grade_entry(job: Job, tracker: deadline.Tracker) -> Outcome:
    settings = job.settings
    try:
        submission = open_entry(
            job.entry, job.scratch / "unpacked", settings.unzip_mb * 2**20, settings.unzip_files
        )
        tracker.opened(submission)
    except SubmissionError as exc:
        return not_graded(job, str(exc))
    except Exception as exc:  # a bug of ours, not the student's: grade it again next time
        resilience.log_trace("reading the submission")
        return not_graded(job, f"the grader could not read it ({type(exc).__name__}: {exc})", True)
    problems = dict(submission.problems)  # files not run (not text, links)
    try:
        result = pipeline.finish(submission, _request(job, tracker.note))
    except Exception as exc:
        resilience.log_trace("grading the submission")
        return not_graded(job, f"the grader failed on it ({type(exc).__name__}: {exc})", True)
    reason = "; ".join(problems.values())
    status = "error" if reason else ("passed" if result.all_passed else "failed")
    return Outcome(job.entry.name, result.to_dict(), status, reason)


def gave_up(job: Job, seconds: float) -> Outcome:
    """The outcome of a job whose judge was killed after ``seconds``: what it noted of its
    progress (``grader.batch.deadline``) makes the result; the row is graded again only under
    another deadline."""
    settings = job.settings
    progress = deadline.read(job.scratch / deadline.PROGRESS)
    try:
        exercises = deadline.graded_exercises(list(settings.exercises), settings.max_scores)
        results, reason = deadline.given_up(exercises, settings.check_points, progress, seconds)
    except Exception:  # a bug of ours: the row says less, the batch goes on
        resilience.set_label(job.entry.name)
        resilience.log_trace("reading the progress of a judge past its deadline")
        return replace(
            not_graded(job, f"the grader gave up on it after {seconds:g} s"), deadline=seconds
        )
    base = not_graded(job, reason)
    result = {
        **base.result,
        "score": round(sum(r.score for r in results), 6),
        "max_score": sum(r.max_score for r in results),
        "exercises": [asdict(r) for r in results],
    }
    return replace(base, result=result, graded=progress.opened, deadline=seconds)


def _terminate(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        if p.is_alive():
            p.kill()


def _overdue(futures: dict[Future, Job], waiting: set[Future]) -> list[tuple[Future, int]]:
    """The jobs whose judge has worked on them past their deadline, with the judge's PID."""
    late = []
    now = time.time()
    for future in waiting:
        job = futures[future]
        try:
            pid, began = (job.scratch / STARTED).read_text().split()
        except (OSError, ValueError):
            continue  # not taken on yet (or just finished)
        if now - float(began) > judge_deadline(job.settings):
            late.append((future, int(pid)))
    return late


def run_jobs(
    jobs: list[Job], processes: int, sandbox: str, on_outcome: Callable[[Outcome], None]
) -> None:
    """Grade ``jobs`` in ``processes`` judge processes, calling ``on_outcome`` (in this
    process) as each finishes."""
    pending = list(jobs)
    attempts: Counter[str] = Counter()
    while pending:
        broken, given_up = _one_pool(pending, processes, sandbox, on_outcome)
        pending = _to_retry(broken, bool(given_up), attempts, on_outcome)


def _one_pool(
    pending: list[Job], processes: int, sandbox: str, on_outcome: Callable[[Outcome], None]
) -> tuple[list[Job], set[str]]:
    """Grade ``pending`` in one pool of judge processes: the jobs whose judge died (the pool
    broke under them) and the entries given up on (their judge killed past the deadline)."""
    broken: list[Job] = []
    given_up: set[str] = set()  # entries whose judge this process killed
    judges = max(1, min(processes, len(pending)))
    context, initargs, servers = boot.judge_processes(sandbox, judges)
    pool = ProcessPoolExecutor(
        max_workers=judges, mp_context=context, initializer=boot.init, initargs=initargs
    )
    try:
        futures: dict[Future, Job] = {pool.submit(grade_job, job): job for job in pending}
        for server in servers:  # the judges are forked: each has taken its server over
            server.let_go()
        _watch(futures, on_outcome, broken, given_up)
    except BaseException:
        _terminate(pool)
        raise
    finally:
        for server in servers:
            server.let_go()
    if given_up:
        _terminate(pool)  # its other judges may be gone with the one killed
    else:
        pool.shutdown(wait=True)
    for server in servers:
        server.reap()
    return broken, given_up


def _watch(
    futures: dict[Future, Job],
    on_outcome: Callable[[Outcome], None],
    broken: list[Job],
    given_up: set[str],
) -> None:
    """Wait for every job of ``futures``, calling ``on_outcome`` as each finishes; a judge
    past its job's deadline is killed (the entry added to ``given_up``), a job whose judge
    died is added to ``broken``."""
    waiting = set(futures)
    while waiting:
        done, waiting = wait(waiting, timeout=WATCH_S, return_when=FIRST_COMPLETED)
        for future, pid in _overdue(futures, waiting):
            job = futures[future]
            given_up.add(job.entry.name)
            try:
                os.kill(pid, KILL)
            except OSError:
                pass
            on_outcome(gave_up(job, judge_deadline(job.settings)))
        for future in sorted(done, key=lambda f: futures[f].entry.name):
            job = futures[future]
            if job.entry.name in given_up:
                continue
            outcome = _received(future, job)
            if outcome is None:
                broken.append(job)
            else:
                on_outcome(outcome)


def _received(future: Future, job: Job) -> Outcome | None:
    """The outcome a finished job's judge sent back; None when the judge died (the pool
    broke)."""
    try:
        return future.result()
    except BrokenProcessPool:
        return None
    except Exception as exc:  # e.g. a result that cannot be sent back
        resilience.set_label(job.entry.name)
        resilience.log_trace("receiving the result")
        return not_graded(job, f"the grader failed on it ({type(exc).__name__})", True)


def _to_retry(
    broken: list[Job],
    watchdog: bool,
    attempts: Counter[str],
    on_outcome: Callable[[Outcome], None],
) -> list[Job]:
    """The jobs of ``broken`` to grade again (each has ``MAX_ATTEMPTS``); the others are not
    graded. ``watchdog``: the pool was broken by a kill of this process's."""
    again = []
    for job in broken:
        shutil.rmtree(job.scratch, ignore_errors=True)  # a killed judge left it
        if not watchdog:  # a pool broken by the watchdog costs the others no attempt
            attempts[job.entry.name] += 1
        if attempts[job.entry.name] < MAX_ATTEMPTS:
            again.append(job)
        else:
            on_outcome(not_graded(job, "the grader's judge process died while grading it", True))
    return again
