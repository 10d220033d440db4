"""Benchmark: ``grade batch`` on a generated class against grading it one submission at a time.

The class mixes the instructor solution with corpus mutants (tests/corpus: one exercise file
replaced by a known-buggy or unusual-but-correct answer). Prints the batch's wall time and
submissions per second, the wall time of running ``grade SUB`` for each submission in turn (a
new process each, as a script looping over a class would), and their ratio (target: at most
1/3). With ``--threads`` it also times the alternative design, threads in one judge process,
and checks that it gives the same scores.

    python bench/bench_batch.py [--size 50] [-j 2] [-e ID ...] [--max-examples N]
                                [--one-by-one K] [--threads] [--keep DIR]
    python bench/bench_batch.py --copies 24 [-j 2]

``--copies N`` grades N copies of the solution instead, and reports the batch's time per
submission (its start-up included) as a ratio to ``import torch`` timed in the same run, its
CPU time, the peak memory (summed PSS of the batch's process tree) per judge process, and the
floor that the solution's own code sets: its CPU time per submission in the workers (from
``GRADER_TIMINGS``) spread over the cores, which no batch can beat.

Only public tools are used: this repository's ``grade`` and the Python standard library.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_RATIO = 0.35  # --copies: a batch's wall time per submission, over `import torch`
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))


def gradable_exercises() -> list[str]:
    """The exercises whose check modules exist in this checkout."""
    from grader.shared.registry import EXERCISES

    return [e.id for e in EXERCISES if importlib.util.find_spec(f"llm_pack.checks.{e.module}")]


def copies_row(args: argparse.Namespace, work: Path) -> None:
    """``--copies``: per-submission time of a batch of solution copies, as a ratio to torch."""
    from measure import run, torch_seconds
    from support import make_submission

    klass = work / "copies"
    for i in range(args.copies):
        make_submission(klass / f"copy{i:03d}")
    python = sys.executable
    torch_seconds(python)  # warm the page cache
    base = [torch_seconds(python)]
    out = work / "out-copies"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [
        python,
        "-m",
        "grader.commands.cli",
        "batch",
        str(klass),
        "-o",
        str(out),
        "-j",
        str(args.jobs),
    ]
    # Timed alone: sampling PSS reads every process's smaps_rollup 50 times a second, which
    # walks page tables under each process's memory lock and took a third off the batch's speed
    # (29.3 s against 20.9 s for the same 24 copies). The memory is taken in a run of its own.
    batch = run(cmd)
    base.append(torch_seconds(python))
    torch_s = sum(base) / 2
    per = batch.wall_s / args.copies
    assert len(scores_of(out)) == args.copies, "the batch did not grade every submission"
    shutil.rmtree(out)
    memory = run(cmd, memory=True)
    student = student_code_s(python, klass / "copy000")
    print(
        f"import torch {torch_s:.2f} s; batch of {args.copies} solution copies, -j {args.jobs}: "
        f"{batch.wall_s:.1f} s = {per:.2f} s per submission = {per / torch_s:.2f}x import "
        f"torch (goal <= {GOAL_RATIO}x, start-up included)"
    )
    print(
        f"CPU time of the batch (user + system, whole tree): {batch.cpu_s:.1f} s = "
        f"{batch.cpu_s / args.copies:.2f} s per submission"
    )
    cores = min(args.jobs, os.cpu_count() or 1)
    left = GOAL_RATIO * torch_s * cores - student  # the CPU a submission the goal leaves the rest
    print(
        f"the solution's own code in the workers: {student:.2f} s of CPU per submission; on "
        f"{cores} cores that alone is {student / cores:.2f} s per submission = "
        f"{student / cores / torch_s:.2f}x. The goal leaves {left:.2f} s of CPU per "
        "submission for the judge, the workers' start and end and the imports; they take "
        f"{batch.cpu_s / args.copies - student:.2f} s in this batch"
    )
    if memory.peak_pss_mib is not None:
        print(
            f"peak memory (PSS, whole tree, a second run): {memory.peak_pss_mib:.0f} MiB = "
            f"{memory.peak_pss_mib / args.jobs:.0f} MiB per judge (goal < 1536)"
        )


def student_code_s(python: str, submission: Path, runs: int = 3) -> float:
    """The CPU time the solution's own code takes per submission: the workers' compute time
    (``GRADER_TIMINGS``) of one cold ``grade``, summed over the exercises; median of ``runs``.
    The workers get one torch thread, as in a batch, so their compute time is CPU time."""
    from bench_grade import breakdown

    sums = []
    for _ in range(runs):
        figures = breakdown(python, submission, env={"OMP_NUM_THREADS": "1"})
        sums.append(sum(v["worker_compute"] for v in figures["exercises"].values()))
    return statistics.median(sums)


def make_class(folder: Path, size: int, exercises: list[str], seed: int = 1) -> dict[str, str]:
    """``size`` submissions in ``folder``: about a third the plain solution, the rest one
    corpus file swapped in. Returns name -> what it is."""
    from support import corpus_cases, make_submission

    rng = random.Random(seed)
    cases = [c for c in corpus_cases() if c.exercise_id in exercises]
    made = {}
    for i in range(size):
        name = f"student{i:03d}"
        if not cases or rng.random() < 1 / 3:
            make_submission(folder / name)
            made[name] = "solution"
        else:
            case = rng.choice(cases)
            make_submission(folder / name, {case.exercise_id: case.path})
            made[name] = case.id
    return made


def wall(cmd: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, check=False, **kwargs
    )
    return time.perf_counter() - start


def grading_args(args: argparse.Namespace) -> list[str]:
    out = [x for e in args.exercises for x in ("-e", e)]
    return out + (["--max-examples", str(args.max_examples)] if args.max_examples else [])


def scores_of(out: Path) -> dict[str, float]:
    return {p.stem: json.loads(p.read_text())["score"] for p in (out / "results").glob("*.json")}


def thread_worker(argv: list[str]) -> None:
    """The alternative design, timed from outside: threads sharing one judge process."""
    p = argparse.ArgumentParser()
    p.add_argument("klass", type=Path)
    p.add_argument("-j", type=int)
    p.add_argument("-e", action="append")
    p.add_argument("--max-examples", type=int)
    p.add_argument("--scores", type=Path)
    a = p.parse_args(argv)
    from grader import pipeline
    from grader.judge.seeds import PUBLIC_SEED, Seed

    # Resolved once (the starter, the course), so that the threads share one fork server.
    request = pipeline.resolve(pipeline.Request(Seed(PUBLIC_SEED, "public"), a.e, a.max_examples))

    def one(folder: Path) -> tuple[str, float | str]:
        try:
            result = pipeline.finish(pipeline.open_path(folder), request)
        except BaseException as exc:  # the grader is not thread-safe: count, do not stop
            return folder.name, f"crashed: {type(exc).__name__}"
        return folder.name, result.score

    with ThreadPoolExecutor(a.j) as pool:
        scores = dict(pool.map(one, sorted(a.klass.iterdir())))
    a.scores.write_text(json.dumps(scores))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=50)
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("-e", "--exercise", action="append", dest="exercises", default=None)
    p.add_argument("--max-examples", type=int, default=None)
    p.add_argument(
        "--one-by-one",
        type=int,
        default=None,
        metavar="K",
        help="time `grade` on K submissions only and extrapolate (default: all)",
    )
    p.add_argument(
        "--threads",
        action="store_true",
        help="also time threads in one judge process instead of judge processes",
    )
    p.add_argument("--keep", type=Path, default=None, help="keep the class and OUT here")
    p.add_argument(
        "--copies",
        type=int,
        default=None,
        metavar="N",
        help="grade N copies of the solution; time per submission vs torch",
    )
    args = p.parse_args()
    if args.copies:
        work = args.keep or Path(tempfile.mkdtemp(prefix="bench-batch-"))
        copies_row(args, work)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
        return
    args.exercises = args.exercises or gradable_exercises()

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-batch-"))
    klass, out = work / "class", work / "out"
    shutil.rmtree(klass, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    made = make_class(klass, args.size, args.exercises)
    mutants = sum(kind != "solution" for kind in made.values())
    print(
        f"class: {args.size} submissions ({args.size - mutants} solution, {mutants} corpus "
        f"mutants); exercises {' '.join(args.exercises)}; max-examples "
        f"{args.max_examples or 'default'}; -j {args.jobs}"
    )

    grade_cmd = [sys.executable, "-m", "grader.commands.cli"]
    batch_s = wall(
        [*grade_cmd, "batch", str(klass), "-o", str(out), "-j", str(args.jobs), *grading_args(args)]
    )
    batch_scores = scores_of(out)
    assert len(batch_scores) == args.size, "the batch did not grade every submission"
    print(f"batch -j {args.jobs}        {batch_s:8.1f} s  {args.size / batch_s:6.2f} submissions/s")

    names = sorted(made)
    sample = names[: args.one_by_one] if args.one_by_one else names
    single = [
        wall([*grade_cmd, str(klass / n), "--format", "json", *grading_args(args)]) for n in sample
    ]
    one_by_one_s = sum(single) * len(names) / len(sample)
    how = "" if len(sample) == len(names) else f" (timed {len(sample)}, extrapolated)"
    print(
        f"one by one (grade) {one_by_one_s:8.1f} s  {args.size / one_by_one_s:6.2f} "
        f"submissions/s{how}"
    )
    print(f"ratio batch/one-by-one {batch_s / one_by_one_s:6.2f}  (target <= 0.33)")

    if args.threads:
        scores_file = work / "thread-scores.json"
        thread_cmd = [
            sys.executable,
            __file__,
            "--thread-worker",
            str(klass),
            "-j",
            str(args.jobs),
            "--scores",
            str(scores_file),
        ]
        thread_cmd += [x for e in args.exercises for x in ("-e", e)]
        if args.max_examples:
            thread_cmd += ["--max-examples", str(args.max_examples)]
        thread_s = wall(thread_cmd)
        thread_scores = json.loads(scores_file.read_text()) if scores_file.exists() else {}
        crashed = sum(isinstance(v, str) for v in thread_scores.values())
        differ = sum(thread_scores.get(n) != s for n, s in batch_scores.items()) - crashed
        print(
            f"threads in 1 judge {thread_s:8.1f} s  {args.size / thread_s:6.2f} "
            f"submissions/s; processes are {thread_s / batch_s:.2f}x as fast"
        )
        print(
            f"  threads vs the batch: {crashed} submissions crashed the grader, {differ} "
            "got another score (torch's global RNG and hypothesis are per process)"
        )
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--thread-worker":
        thread_worker(sys.argv[2:])
    else:
        main()
