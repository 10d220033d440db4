"""Mutation testing of a pack's checks: does the grader fail every small change to a solution?

Each mutant (``grader.authoring.mutants``: one operator, constant, argument, default or
statement changed) of an exercise's file is written to a submission folder of its own and
graded through ``grader.pipeline``, as ``grade`` grades (the grader's own example counts, the
public seed unless another is asked for). A mutant is *killed* when its exercise does not pass
(a check fails, an error, a timeout) and *survives* when it gets full marks. A survivor is a
hole in the checks or a change the exercise's statement allows; either way an author reads its
diff.

``grade check-pack`` and ``bench/mutate.py`` both grade mutants here: one engine.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from grader.authoring.mutants import Mutant, mutants
from grader.authoring.mutops import NO_VOCABULARY, Vocabulary
from grader.shared.packs import Pack
from grader.shared.tomlread import TOMLDecodeError, loads

__all__ = [
    "Job",
    "Mutant",
    "Verdict",
    "Vocabulary",
    "grade_source",
    "judge",
    "mutants",
    "pack_settings",
    "run",
    "run_rounds",
    "score_table",
    "spread",
    "survivors_text",
]


@dataclass(frozen=True)
class Verdict:
    """What grading one mutant gave."""

    exercise_id: str
    file: str  # the mutated file's name
    index: int  # the mutant's position among its file's mutants
    kind: str
    description: str
    line: int
    killed: bool
    status: str
    failing: tuple[str, ...]  # the checks that failed
    seconds: float
    diff: str


# exercise, file, index, mutant, seed (None: the public one), max_examples (None: the checks')
Job = tuple[str, str, int, Mutant, int | None, int | None]


def spread(found: list[Mutant], cap: int | None) -> list[tuple[int, Mutant]]:
    """(index, mutant) of at most ``cap`` of ``found``, spread evenly over the file (the first,
    then every len/cap-th), so that a capped run still reaches every part of it; all of them
    when ``cap`` is None."""
    indexed = list(enumerate(found))
    if cap is None or cap >= len(found):
        return indexed
    if cap <= 0:
        return []
    return [indexed[i * len(found) // cap] for i in range(cap)]


def pack_settings(pack: Pack) -> tuple[Vocabulary, dict[str, tuple[str, ...]]]:
    """The optional ``[mutation]`` table of ``pack``'s ``pack.toml``: the vocabulary of its
    configs and, per exercise id, the functions never mutated (code its grading never runs)::

        [mutation]
        source = "the base config"            # how the literals are named in descriptions
        literals = { emb_dim = 768, drop_rate = 0.1 }
        crossed = { emb_dim = ["context_length"] }
        skip = { "<id>" = ["forward"] }

    A table that is not as above is ignored, key by key (it never stops a run)."""
    try:
        data = loads((pack.folder / "pack.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, TOMLDecodeError):
        return NO_VOCABULARY, {}
    table = data.get("mutation", {})
    if not isinstance(table, dict):
        return NO_VOCABULARY, {}

    def names(value: object) -> tuple[str, ...]:
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    literals = table.get("literals", {})
    literals = (
        {str(k): v for k, v in literals.items() if isinstance(v, bool | int | float | str)}
        if isinstance(literals, dict)
        else {}
    )
    crossed = table.get("crossed", {})
    crossed = {str(k): names(v) for k, v in crossed.items()} if isinstance(crossed, dict) else {}
    skip = table.get("skip", {})
    skip = {str(k): names(v) for k, v in skip.items()} if isinstance(skip, dict) else {}
    return Vocabulary(literals, crossed, str(table.get("source", ""))), skip


# --- grading ----------------------------------------------------------------------------------

_STARTER = None  # this process's worker starter (one warm fork server per judge process)


def _init_judge() -> None:
    import torch

    torch.set_num_threads(1)


def _starter():
    global _STARTER
    if _STARTER is None:
        from grader.judge.launch.starter import chosen_starter

        _STARTER = chosen_starter()
    return _STARTER


def grade_source(
    exercise_id: str, source: str, seed: int | None = None, max_examples: int | None = None
) -> tuple[str, tuple[str, ...]]:
    """Grade ``source`` as a submission's file for ``exercise_id``, through the pipeline:
    (``"passed"`` or the exercise's status, the checks that failed)."""
    from grader import pipeline
    from grader.judge.seeds import PUBLIC_SEED, Seed
    from grader.shared.registry import BY_ID

    chosen = Seed(PUBLIC_SEED, "public") if seed is None else Seed(seed, "--seed")
    request = pipeline.Request(
        seed=chosen,
        exercises=[exercise_id],
        max_examples=max_examples,
        start=_starter(),
        processes=1,
    )
    with tempfile.TemporaryDirectory(prefix="mutant-") as folder:
        target = Path(folder) / "exercises" / BY_ID[exercise_id].filename
        target.parent.mkdir()
        target.write_text(source, encoding="utf-8")
        result = pipeline.finish(pipeline.open_path(Path(folder)), request)
    (ex,) = result.exercises
    passed = ex.status == "passed" and ex.score == ex.max_score
    return ("passed" if passed else ex.status), tuple(c.name for c in ex.checks if not c.passed)


def judge(job: Job) -> Verdict:
    """Grade one mutant (in a judge process of the pool, or in this one)."""
    exercise_id, file, index, mutant, seed, max_examples = job
    began = time.monotonic()
    status, failing = grade_source(exercise_id, mutant.source, seed, max_examples)
    return Verdict(
        exercise_id,
        file,
        index,
        mutant.kind,
        mutant.description,
        mutant.line,
        killed=status != "passed",
        status=status,
        failing=failing,
        seconds=round(time.monotonic() - began, 2),
        diff=mutant.diff(),
    )


def run(
    jobs: list[Job],
    processes: int = 1,
    progress: Callable[[Verdict], None] | None = None,
) -> list[Verdict]:
    """Every job's verdict, in the jobs' order; ``processes`` > 1 grades in a pool of fresh
    interpreters (each with its own fork server), which inherit the pack in use."""
    with ExitStack() as stack:
        graded: Iterator[Verdict] = map(judge, jobs)
        if processes > 1 and len(jobs) > 1:
            context = get_context("spawn")
            workers = min(processes, len(jobs))
            pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_judge)
            graded = stack.enter_context(pool).map(judge, jobs, chunksize=1)
        verdicts = []
        for verdict in graded:
            verdicts.append(verdict)
            if progress:
                progress(verdict)
        return verdicts


def run_rounds(
    jobs: list[Job],
    processes: int | None = None,
    progress: Callable[[Verdict], None] | None = None,
) -> list[Verdict]:
    """Every job's verdict, in the jobs' order, graded in rounds: a round is one submission
    holding one mutant of each exercise, graded once through the pipeline, whose engine
    spreads its exercises over ``processes`` judge processes (None: one per core) forked from
    this one. No interpreter starts: cheaper than ``run``'s pool for a few dozen mutants, and
    the same verdicts (an exercise is graded in a worker of its own, whatever the others are).
    The jobs of one round share their seed and example count (those of its first job)."""
    from grader import pipeline
    from grader.judge.seeds import PUBLIC_SEED, Seed
    from grader.shared.registry import BY_ID

    queues: dict[str, list[int]] = {}
    for position, job in enumerate(jobs):
        queues.setdefault(job[0], []).append(position)
    verdicts: dict[int, Verdict] = {}
    for number in range(max((len(q) for q in queues.values()), default=0)):
        members = [q[number] for q in queues.values() if number < len(q)]
        seed, max_examples = jobs[members[0]][4], jobs[members[0]][5]
        request = pipeline.Request(
            seed=Seed(PUBLIC_SEED, "public") if seed is None else Seed(seed, "--seed"),
            exercises=[jobs[m][0] for m in members],
            max_examples=max_examples,
            start=_starter(),
            processes=processes,
        )
        began = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="mutants-") as folder:
            answers = Path(folder) / "exercises"
            answers.mkdir()
            for m in members:
                exercise_id, mutant = jobs[m][0], jobs[m][3]
                (answers / BY_ID[exercise_id].filename).write_text(mutant.source, "utf-8")
            result = pipeline.finish(pipeline.open_path(Path(folder)), request)
        seconds = round(time.monotonic() - began, 2)
        graded = {ex.id: ex for ex in result.exercises}
        for m in members:
            exercise_id, file, index, mutant, _, _ = jobs[m]
            ex = graded[exercise_id]
            passed = ex.status == "passed" and ex.score == ex.max_score
            verdicts[m] = Verdict(
                exercise_id,
                file,
                index,
                mutant.kind,
                mutant.description,
                mutant.line,
                killed=not passed,
                status="passed" if passed else ex.status,
                failing=tuple(c.name for c in ex.checks if not c.passed),
                seconds=seconds,  # the round's
                diff=mutant.diff(),
            )
            if progress:
                progress(verdicts[m])
    return [verdicts[i] for i in range(len(jobs))]


def file_jobs(
    exercise_id: str,
    name: str,
    source: str,
    cap: int | None = None,
    seed: int | None = None,
    max_examples: int | None = None,
    kinds: Collection[str] | None = None,
    skip: Collection[str] = (),
    vocabulary: Vocabulary = NO_VOCABULARY,
) -> list[Job]:
    """The jobs grading at most ``cap`` mutants (spread over the file) of ``source``, the file
    ``name`` answering ``exercise_id``."""
    found = mutants(source, kinds, skip, vocabulary)
    return [(exercise_id, name, i, m, seed, max_examples) for i, m in spread(found, cap)]


# --- the report -------------------------------------------------------------------------------


def score_table(verdicts: Iterable[Verdict], exercise_ids: list[str]) -> str:
    """A markdown table: mutants, killed, survived and the score per exercise, and in total."""
    verdicts = list(verdicts)
    rows = ["| exercise | mutants | killed | survived | score |", "|---|---:|---:|---:|---:|"]

    def row(name: str, group: list[Verdict]) -> str:
        killed = sum(v.killed for v in group)
        score = f"{100 * killed / len(group):.1f} %" if group else "-"
        return f"| {name} | {len(group)} | {killed} | {len(group) - killed} | {score} |"

    for ex_id in exercise_ids:
        rows.append(row(ex_id, [v for v in verdicts if v.exercise_id == ex_id]))
    rows.append(row("total", verdicts))
    return "\n".join(rows)


def survivor_heading(v: Verdict) -> str:
    return f"--- {v.file} #{v.index} line {v.line} [{v.kind}] {v.description}"


def survivors_text(verdicts: Iterable[Verdict]) -> str:
    out = []
    for v in verdicts:
        if not v.killed:
            out.append(survivor_heading(v))
            out.append(v.diff)
    return "\n".join(out) if out else "no survivors"


def counts(verdicts: Iterable[Verdict]) -> Mapping[str, int]:
    verdicts = list(verdicts)
    killed = sum(v.killed for v in verdicts)
    return {"mutants": len(verdicts), "killed": killed, "survived": len(verdicts) - killed}
