"""``grade batch DIR -o OUT``: grade every submission in DIR, in parallel, resumably.

Writes, in OUT: ``results/NAME.json`` (schema 1) and ``reports/NAME.html`` per submission
(``NAME`` made unique where a file system ignoring case would confuse two: see
``grader.batch.ledger``), ``gradebook.csv``, ``gradebook.sqlite``, ``similarity.csv`` and
``index.html`` (the class dashboard). Run the same command again after a crash and it grades
only what is missing or has changed since: other contents, other settings (the packs' code
included: the line before the progress says what changed), or a row the grader gave up on
under another deadline.

Exit status: 0 when every submission was graded, 1 when some could not be (rows with status
error), 2 on a usage error or a failure of the grader itself. A failure of the grader on one
submission is that submission's ``error`` row (graded again on the next run), never the end of
the batch; its traceback goes to ``OUT/grader-errors.log``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from grader.commands.options import (
    EXIT_FAILED,
    EXIT_PASSED,
    add_exercise_option,
    add_grading_options,
    add_out_option,
    limit_options,
)
from grader.judge.resilience import TRACE_LOG_ENV, log_trace, set_label
from grader.shared.errors import UsageError
from grader.shared.safetext import one_line, safe_name

TRACE_LOG = "grader-errors.log"  # in OUT: tracebacks of the grader's own failures


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade batch",
        description="Grade every submission in DIR (folders with exercises/, .zip files of "
        "one, notebooks): one JSON result and HTML report each, a gradebook (CSV and SQLite) "
        "and a class dashboard in OUT. Resumable: run it again to finish an interrupted batch.",
    )
    p.add_argument("dir", type=Path, metavar="DIR", help="the folder of submissions")
    add_out_option(p, "results, reports, the gradebook and the dashboard")
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="submissions graded at once (default: the number of cores)",
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="a grading.toml (default: DIR/grading.toml when it exists)",
    )
    add_exercise_option(p)
    p.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="grade only the K-th of N slices of DIR (1 <= K <= N), or 'auto' to "
        "read it from a Slurm job array or GRADE_SHARD_INDEX/GRADE_SHARD_COUNT; "
        "combine the shards' OUT folders with 'grade merge'",
    )
    p.add_argument("--title", default="Class dashboard", help="the dashboard's title")
    p.add_argument(
        "--compare-public",
        action="store_true",
        help="also grade with the public seed (into OUT/public-seed) and flag in the dashboard "
        "each exercise that passes the public examples but not the course's",
    )
    add_grading_options(
        p,
        seed_help="the course's grading seed (default: seed in grading.toml, else one drawn "
        "on the first run and kept in OUT)",
    )
    return p


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def settings_from(args: argparse.Namespace):
    """The batch's settings, the grading.toml read (or None), and where the seed was given
    (None: the course seed kept in OUT, or a new one; see ``grader.batch.course_seed``)."""
    from grader.batch.config import CONFIG_NAME, ConfigError, build_settings, read_config
    from grader.batch.course_seed import given_source

    config_path = args.config or (args.dir / CONFIG_NAME)
    try:
        config = read_config(config_path) if args.config or config_path.is_file() else {}
        limits = limit_options(args)
        sandbox = "none" if args.no_sandbox else "strict" if args.strict_sandbox else "default"
        settings = build_settings(
            config, args.exercises, args.seed, args.max_examples, limits, sandbox
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    source = given_source(args.seed, config)
    return settings, (config_path if config_path.is_file() else None), source


def select_entries(args: argparse.Namespace, config_path: Path | None):
    """The entries to grade, the shard (``K/N`` or None) and every entry's name in DIR (each
    shard names OUT's files over the whole class)."""
    from grader.batch.entries import ShardError, discover, parse_shard, shard

    skip = (args.out,) + ((config_path,) if config_path else ())
    entries = discover(args.dir, skip)
    names = [e.name for e in entries]
    if args.shard is None:
        return entries, None, names
    try:
        k, n = parse_shard(args.shard)
    except ShardError as exc:
        raise UsageError(str(exc)) from None
    return shard(entries, k, n), f"{k}/{n}", names


def entry_hash(entry, content_hash) -> str:
    """The entry's content hash; one that cannot be read gets a hash of why (its grading will
    say so in its row), never a crash of the batch."""
    try:
        return content_hash(entry)
    except OSError as exc:
        return f"unreadable-{exc.errno}"


def outcome_row(outcome) -> tuple[dict, dict, str]:
    """The ``submissions`` columns an outcome decides (``status``, ``reason``, ``graded``,
    ``retry``), its result with every string made safe, and the reason the progress shows.

    An exercise the grader itself failed on makes the row an ``error`` graded again next
    time (its traceback is in OUT/grader-errors.log); a tampered exercise is shown."""
    from grader.result.schema import grader_failed, is_tampered
    from grader.shared.safetext import MESSAGE_LIMIT, safe_value

    result = safe_value(outcome.result, MESSAGE_LIMIT)
    status, reason, retry = outcome.status, outcome.reason, outcome.retry
    failed = [ex["id"] for ex in result["exercises"] if grader_failed(ex)]
    if failed and status != "error":
        status, retry = "error", True
        reason = f"the grader failed on {', '.join(failed)} (traceback in {TRACE_LOG})"
    reason = one_line(reason, 300)
    tampered = [ex["id"] for ex in result["exercises"] if is_tampered(ex)]
    shown = reason or (f"tampered with the grader in {', '.join(tampered)}" if tampered else "")
    row = {"status": status, "reason": reason, "graded": int(outcome.graded), "retry": retry}
    return row, result, shown


def record_safely(ledger, row: dict, result: dict, hide_seed: bool = False) -> None:
    """``ledger.record``, which a failure of ours never turns into the end of the batch: the
    submission gets an ``error`` row (graded again next time) and the traceback is logged."""
    try:
        ledger.record(row, result, hide_seed=hide_seed)
        return
    except Exception as exc:
        set_label(row["name"])
        log_trace("recording the result")
        why = one_line(f"the grader could not record its result ({type(exc).__name__}: {exc})")
    row = {**row, "status": "error", "reason": why, "content_hash": None}
    try:
        ledger.record(row, result, render_report=False, hide_seed=hide_seed)
    except Exception:  # not even that: no row, so the next run grades it again
        log_trace("recording the error row")


def finish(ledger, title: str) -> None:
    """The class-level outputs, rebuilt from the database (so a resumed run writes the same)."""
    from grader.analysis.insight import write_insight
    from grader.classview.dashboard import write_dashboard
    from grader.classview.gradebook import write_gradebook

    ledger.fill_reports()
    if ledger.report_errors:
        print(
            f"grade: warning: no HTML report for {len(ledger.report_errors)} submission(s); "
            "first: {}: {}".format(*map(one_line, next(iter(ledger.report_errors.items())))),
            file=sys.stderr,
        )
    write_gradebook(ledger.db, ledger.out / "gradebook.csv")
    write_insight(ledger.db, ledger.out)  # similarity.csv, failure groups
    write_dashboard(ledger.db, ledger.out / "index.html", title)


def graded_again(
    ledger, names: set[str], before: str | None, settings, deadline_now: float
) -> list[str]:
    """Why rows of OUT for ``names`` are graded again, in a line each: other settings than
    the run that wrote them (``before``, its settings as kept in meta), or a row the grader
    gave up on under another deadline than ``deadline_now``."""
    from grader.batch.config import changes
    from grader.batch.deadline import deadline_hash

    fingerprint = settings.fingerprint()
    stale, timed = 0, dict[float, int]()
    for name, kept in ledger.db.execute("SELECT name, settings_hash FROM submissions"):
        if name not in names:
            continue
        hashed, _, seconds = kept.partition("@deadline=")
        if hashed != fingerprint:
            stale += 1
        elif seconds and kept != deadline_hash(fingerprint, deadline_now):
            timed[seconds] = timed.get(seconds, 0) + 1
    lines = []
    if stale:
        try:
            said = changes(json.loads(before or "{}"), settings.describe())
        except (ValueError, AttributeError):
            said = []
        lines.append(
            f"settings changed since the last run into {ledger.out} "
            f"({'; '.join(said) or 'not recorded'}): {stale} submission"
            f"{'s' if stale != 1 else ''} graded again"
        )
    for seconds, count in sorted(timed.items()):
        lines.append(
            f"{count} submission{'s' if count != 1 else ''} the grader gave up on after "
            f"{seconds} s graded again (the deadline is now {deadline_now:g} s)"
        )
    return lines


def summary_line(db) -> tuple[str, int]:
    counts = dict(db.execute("SELECT status, COUNT(*) FROM submissions GROUP BY status"))
    total = sum(counts.values())
    parts = [f"{counts.get(s, 0)} {s}" for s in ("passed", "failed", "error")]
    return f"{total} submission{'s' if total != 1 else ''}: " + ", ".join(parts), counts.get(
        "error", 0
    )


def _jobs(args: argparse.Namespace) -> int:
    """How many submissions to grade at once; a UsageError for a folder argument that is not
    one."""
    if not args.dir.is_dir():
        raise UsageError(
            f"{args.dir}: no such folder"
            if not args.dir.exists()
            else f"{args.dir}: grade batch takes a folder of submissions"
        )
    jobs = cores() if args.jobs is None else args.jobs
    if jobs < 1:
        raise UsageError("-j must be at least 1")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"{args.out}: exists and is not a folder")
    return jobs


@contextmanager
def _trace_log(out: Path) -> Iterator[None]:
    """The judge processes started inside inherit the batch's trace log."""
    before = os.environ.get(TRACE_LOG_ENV)
    os.environ[TRACE_LOG_ENV] = str((out / TRACE_LOG).resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TRACE_LOG_ENV, None)
        else:
            os.environ[TRACE_LOG_ENV] = before


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    jobs = _jobs(args)
    settings, config_path, seed_source = settings_from(args)
    entries, shard_text, class_names = select_entries(args, config_path)
    if shard_text and seed_source is None:
        from grader.batch.course_seed import shard_needs_seed

        raise UsageError(shard_needs_seed())
    if settings.sandbox == "strict":  # refuse now, in one line, not in every judge process
        from grader.batch.judges import make_starter
        from grader.judge.launch.starter import close_default_server

        make_starter("strict")
        close_default_server()

    from grader.batch.course_seed import settle
    from grader.batch.deadline import deadline_hash
    from grader.batch.entries import content_hash
    from grader.batch.ledger import Ledger
    from grader.batch.pool import Job, judge_deadline, run_jobs
    from grader.batch.progress import Progress

    ledger = Ledger(args.out)
    settings, seed = settle(settings, seed_source, ledger)
    fingerprint = settings.fingerprint()
    deadline_now = judge_deadline(settings)
    before = ledger.meta_value("settings")
    for line in graded_again(ledger, {e.name for e in entries}, before, settings, deadline_now):
        print(line, flush=True)
    ledger.set_meta(settings.ledger_meta(shard_text or ""))
    ledger.expect(class_names)
    shutil.rmtree(ledger.scratch, ignore_errors=True)
    hashes = {e.name: entry_hash(e, content_hash) for e in entries}
    given_up = deadline_hash(fingerprint, deadline_now)  # a row it gave up on, this deadline
    todo = [e for e in entries if not ledger.done(e.name, hashes[e.name], fingerprint, given_up)]
    by_name = {e.name: e for e in entries}
    progress = Progress(len(entries), len(entries) - len(todo))

    def record(outcome) -> None:
        entry = by_name[outcome.name]
        row, result, shown = outcome_row(outcome)
        row.update(
            name=entry.name,
            source=safe_name(entry.path.name),
            kind=entry.kind,
            content_hash=None if row.pop("retry") else hashes[entry.name],
            settings_hash=fingerprint
            if outcome.deadline is None
            else deadline_hash(fingerprint, outcome.deadline),
        )
        record_safely(ledger, row, result, hide_seed=seed.hidden)
        progress.update(entry.name, row["status"], result["score"], result["max_score"], shown)

    try:
        with _trace_log(args.out):
            jobs_list = [Job(e, ledger.scratch / ledger.stem(e.name), settings) for e in todo]
            run_jobs(jobs_list, jobs, settings.sandbox, record)
    finally:
        progress.close()
    ledger.prune({e.name for e in entries})
    from grader.analysis.insight import collect_answers

    collect_answers(ledger, entries, hashes, settings)  # for similarity.csv
    shutil.rmtree(ledger.scratch, ignore_errors=True)
    if args.compare_public:
        from grader.analysis.compare import grade_public

        grade_public(args.out, entries, hashes, settings, jobs)
    finish(ledger, args.title)
    line, errors = summary_line(ledger.db)
    ledger.close()
    reused = len(entries) - len(todo)
    print(
        f"{line} ({len(todo)} graded now, {reused} from an earlier run)"
        + (f"; shard {shard_text}" if shard_text else "")
    )
    print(f"gradebook: {args.out / 'gradebook.csv'}  dashboard: {args.out / 'index.html'}")
    sys.stdout.flush()
    return EXIT_FAILED if errors else EXIT_PASSED
