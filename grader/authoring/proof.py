"""Proving a pack before students see it: ``grade check-pack``'s steps.

With the pack chosen and the public seed, everything is graded through ``grader.pipeline``:

1. *filled in*: no ``TODO(pack)`` place is left in the pack's files (its folder, stubs,
   solution and corpus); while one is, nothing else runs;
2. *solution*: the pack's solution gets full marks on every exercise, with the public seed and
   with another (a course grades with its own: a right answer must pass on any examples);
3. *stubs*: every exercise of the stubs reads "not done yet" and scores 0;
4. *corpus*: every ``wrong_*.py`` loses points and fails the checks its header names, every
   hint it shows is the pack's own words or the grader's generic ones
   (``grader.authoring.hint_origin``), and each of its failing checks' reproduce snippets
   runs as pasted to the failure it shows
   (``grader.authoring.reproduced``; a warning when the mistake is caught only near float
   noise); every ``correct_*.py`` gets full marks (``grader.authoring.corpus``); a file named
   neither fails; each exercise has at least one wrong answer (a check no wrong answer fails
   proves nothing);
5. *mutants*: up to N mutants of each solution file (``grader.authoring.mutation``), spread
   over the file, graded in rounds (one mutant of each exercise a submission); the survivors
   are reported with their diffs, never a failure.

The pack holds when steps 1-4 pass. Corpus cases of different exercises are graded together,
one file per exercise in a submission: an exercise's verdict never depends on the others'
(each runs in its own worker), and the engine spreads them over the judge processes.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path

from grader.authoring.corpus import CorpusCase, corpus_cases, first_line, problems, unnamed
from grader.authoring.mutants import Mutant
from grader.authoring.mutation import Job, Verdict, file_jobs, pack_settings, run_rounds
from grader.shared.packs import Exercise, Pack

TODO = "TODO(pack)"
TEXT_SUFFIXES = (".py", ".toml", ".md", ".txt", ".cfg", ".json")
DEFAULT_MUTANTS = 20  # per solution file: a two-exercise pack is proved in well under a minute
MAX_DETAILS = 20  # lines of detail shown under a step

PASS, FAIL, SKIP, NOTE = "PASS", "FAIL", "SKIP", "NOTE"
HOLDING = ("filled in", "solution", "stubs", "corpus")  # the steps a pack must pass


@dataclass
class Step:
    """One step's outcome: ``status`` PASS, FAIL, SKIP (not run) or NOTE (reported only)."""

    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class Proof:
    pack: Pack
    steps: list[Step] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)  # the mutants graded

    @property
    def holds(self) -> bool:
        return all(s.status == PASS for s in self.steps if s.name in HOLDING)

    @property
    def failed(self) -> list[str]:
        return [s.name for s in self.steps if s.name in HOLDING and s.status == FAIL]


# --- filled in --------------------------------------------------------------------------------


def _text_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.suffix in TEXT_SUFFIXES
        and not any(part == "__pycache__" or part.startswith(".") for part in p.parts[-4:])
    ]


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def todo_places(pack: Pack) -> list[str]:
    """Every ``TODO(pack)`` line in the pack's files, as ``file:line: text``."""
    folders = [pack.folder, *(p for p in pack.paths.values() if p is not None)]
    seen: set[Path] = set()
    places = []
    for folder in folders:
        for path in _text_files(folder):
            if path in seen:
                continue
            seen.add(path)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), start=1):
                if TODO in line:
                    places.append(f"{_shown(path)}:{number}: {line.strip()[:100]}")
    return places


def filled_in(pack: Pack) -> Step:
    places = todo_places(pack)
    if not places:
        return Step("filled in", PASS, f"no {TODO} place is left")
    files = len({p.split(":", 1)[0] for p in places})
    return Step(
        "filled in",
        FAIL,
        f"{len(places)} {TODO} place(s) in {files} file(s) are not filled in: write the "
        f"exercise there and remove each {TODO} comment",
        places,
    )


# --- grading through the pipeline ------------------------------------------------------------


# The solution's second seed (besides the public one): any other fixed seed would do.
OTHER_SEED = 7


@dataclass(frozen=True)
class Settings:
    """How the pack is graded: the public seed, the checks' own example counts unless
    ``max_examples``, ``processes`` judge processes (None: one per core)."""

    max_examples: int | None = None
    processes: int | None = None
    snippets: bool = True  # paste every failing check's snippet of the wrong answers

    def request(self, ids: Sequence[str], seed: int | None = None):
        from grader import pipeline
        from grader.judge.seeds import PUBLIC_SEED, Seed

        return pipeline.Request(
            seed=Seed(PUBLIC_SEED, "public") if seed is None else Seed(seed, "given"),
            exercises=list(ids),
            max_examples=self.max_examples,
            processes=self.processes,
        )


def _grade(
    folder: Path, ids: Sequence[str], settings: Settings, called: str, seed: int | None = None
):
    """The result of grading ``folder`` (its exercises ``ids``; the public seed unless
    ``seed``); a ``SubmissionError`` if it is no submission."""
    from grader import pipeline

    submission = pipeline.open_path(folder, called=called)
    return pipeline.finish(submission, settings.request(ids, seed))


def _declared(pack: Pack, key: str, name: str) -> Path | Step:
    """The pack's folder ``key``; the step ``name`` failed if it declares none or it is not
    there."""
    folder = pack.path(key)
    if folder is None:
        return Step(name, FAIL, f"the pack declares no {key} folder ({key} = ... in [pack])")
    if not folder.is_dir():
        return Step(name, FAIL, f"{_shown(folder)}: no such folder ({key} in pack.toml)")
    return folder


def solution(pack: Pack, exercises: Sequence[Exercise], settings: Settings) -> Step:
    from grader.pipeline import SubmissionError

    folder = _declared(pack, "solution", "solution")
    if isinstance(folder, Step):
        return folder
    ids, details, bad = [e.id for e in exercises], [], set()
    # The public seed, and another: a course grades with a seed of its own, and a right answer
    # that fails on other examples (ties the strategy draws, a tolerance too tight) would be
    # marked wrong there.
    for seed in (None, OTHER_SEED):
        try:
            result = _grade(folder, ids, settings, _shown(folder), seed)
        except SubmissionError as exc:
            return Step("solution", FAIL, str(exc))
        under = "" if seed is None else f" with --seed {seed}"
        for ex in result.exercises:
            if ex.status == "passed" and ex.score == ex.max_score:
                continue
            bad.add(ex.id)
            details.append(f"{ex.id}{under}: {ex.score:g}/{ex.max_score:g} ({ex.status})")
            details += [f"  {c.name}: {first_line(c.message)}" for c in ex.checks if not c.passed]
    n = len(ids)
    if bad:
        said = f"{len(bad)} of {n} exercise(s) do not get full marks"
        return Step("solution", FAIL, said, details)
    return Step("solution", PASS, f"{n} of {n} exercise(s) get full marks (two seeds)")


def stubs(pack: Pack, exercises: Sequence[Exercise], settings: Settings) -> Step:
    from grader.pipeline import SubmissionError
    from grader.result.common import is_not_done

    folder = _declared(pack, "stubs", "stubs")
    if isinstance(folder, Step):
        return folder
    try:
        result = _grade(folder, [e.id for e in exercises], settings, _shown(folder))
    except SubmissionError as exc:
        return Step("stubs", FAIL, str(exc))
    details = []
    for ex in result.exercises:
        wrong = [c for c in ex.checks if not is_not_done(c)]
        if ex.status == "missing":
            details.append(f"{ex.id}: no stub ({first_line(ex.checks[0].message)})")
        elif ex.score != 0 or ex.status != "failed" or wrong:
            said = "; ".join(f"{c.name}: {first_line(c.message, 90)}" for c in wrong[:3])
            details.append(
                f"{ex.id}: {ex.score:g}/{ex.max_score:g} ({ex.status}), not 'not done yet'"
                + (f" - {said}" if said else "")
            )
    n = len(result.exercises)
    if details:
        return Step(
            "stubs",
            FAIL,
            f"{len(details)} of {n} stub(s) do not read 'not done yet' with 0 points (a stub "
            "raises NotImplementedError in every function the student writes)",
            details,
        )
    return Step("stubs", PASS, f"{n} of {n} stub(s) read 'not done yet' and score 0")


def corpus(pack: Pack, exercises: Sequence[Exercise], settings: Settings) -> Step:
    folder = _declared(pack, "corpus", "corpus")
    if isinstance(folder, Step):
        return folder
    from grader.authoring import hint_origin
    from grader.authoring.pastes import PasteBox
    from grader.authoring.reproduced import near_noise, snippet_problems

    cases = corpus_cases(folder, exercises)
    details = [
        f"{ex.id}: no wrong answer in {_shown(folder / ex.module)}/ (wrong_*.py)"
        for ex in exercises
        if not any(c.exercise_id == ex.id and not c.correct for c in cases)
    ]
    details += [
        f"{_shown(path)}: named neither correct_*.py nor wrong_*.py, so not graded: rename it"
        for path in unnamed(folder, exercises)
    ]
    warnings: list[str] = []
    box = PasteBox() if settings.snippets else None
    by_id = {ex.id: ex for ex in exercises}
    writers = hint_origin.sources(pack.name, pack.folder, hint_origin.installed_others(pack.folder))
    per_exercise = [[c for c in cases if c.exercise_id == ex.id] for ex in exercises]
    scratch = Path(tempfile.mkdtemp(prefix="check-pack-"))
    try:
        for number, group in enumerate(zip_longest(*per_exercise), start=1):
            round_cases: list[CorpusCase] = [c for c in group if c is not None]
            folder_k = scratch / f"round{number}"
            (folder_k / "exercises").mkdir(parents=True)
            for case in round_cases:
                target = folder_k / "exercises" / by_id[case.exercise_id].filename
                shutil.copyfile(case.path, target)
            ids = [c.exercise_id for c in round_cases]
            result = _grade(folder_k, ids, settings, f"corpus round {number}")
            graded = {ex.id: ex for ex in result.exercises}
            for case in round_cases:
                got = graded[case.exercise_id]
                found = problems(case, got) + hint_origin.problems(got, writers)
                if not case.correct and box is not None:  # pasted where grade ran
                    found += snippet_problems(got, Path.cwd(), box.run)
                    noise = near_noise(got)
                    warnings += [f"warning: {_shown(case.path)}: {noise}"] if noise else []
                details += [f"{_shown(case.path)}: {problem}" for problem in found]
    finally:
        if box is not None:
            box.close()
        shutil.rmtree(scratch, ignore_errors=True)
    wrong = sum(not c.correct for c in cases)
    counted = f"{len(cases)} case(s), {wrong} wrong and {len(cases) - wrong} correct"
    warned = f"; {len(warnings)} warning(s)" if warnings else ""
    if details:
        summary = f"{len(details)} problem(s) in {counted}{warned}"
        return Step("corpus", FAIL, summary, details + warnings)
    summary = (
        f"{counted}: every wrong answer loses points where its header says"
        + (" and its snippets show it" if settings.snippets else "")
        + f", every correct one gets full marks{warned}"
    )
    return Step("corpus", PASS, summary, warnings)


# --- mutants ---------------------------------------------------------------------------------


def solution_file(pack: Pack, exercise: Exercise) -> Path | None:
    """The solution's file for ``exercise`` (loose in the solution folder or in its
    ``exercises/``)."""
    folder = pack.path("solution")
    if folder is None:
        return None
    for candidate in (folder / exercise.filename, folder / "exercises" / exercise.filename):
        if candidate.is_file():
            return candidate
    return None


def mutation(
    pack: Pack,
    exercises: Sequence[Exercise],
    cap: int,
    settings: Settings,
) -> tuple[Step, list[Verdict]]:
    vocabulary, skip = pack_settings(pack)
    jobs: list[Job] = []
    originals: list[Job] = []
    for ex in exercises:
        path = solution_file(pack, ex)
        if path is None:
            continue
        found = file_jobs(
            ex.id,
            ex.filename,
            path.read_text(encoding="utf-8"),
            cap,
            max_examples=settings.max_examples,
            skip=skip.get(ex.id, ()),
            vocabulary=vocabulary,
        )
        if found:
            # The mutants are diffs of the unparsed file (comments dropped): it must pass too.
            text = found[0][3].original
            unparsed = Mutant("original", "the solution as ast.unparse writes it", 0, text, text)
            originals.append((ex.id, ex.filename, -1, unparsed, None, settings.max_examples))
        jobs += found
    failing = [v for v in run_rounds(originals, settings.processes) if v.killed]
    if failing:
        details = [f"{v.exercise_id}: {v.status}: {'; '.join(v.failing)}" for v in failing]
        return Step("mutants", FAIL, "a solution fails once unparsed", details), []
    if not jobs:
        return Step("mutants", SKIP, "no mutant (nothing to change in the solutions)"), []
    verdicts = run_rounds(jobs, settings.processes)
    killed = sum(v.killed for v in verdicts)
    survived = len(verdicts) - killed
    summary = f"{killed} of {len(verdicts)} mutant(s) killed"
    if not survived:
        return Step("mutants", PASS, summary), verdicts
    return (
        Step(
            "mutants",
            NOTE,
            f"{summary}; {survived} survived, listed below (a change no check notices: a hole "
            "in the checks, or a change the statement allows)",
        ),
        verdicts,
    )


# --- all steps ---------------------------------------------------------------------------------


def prove(
    pack: Pack,
    exercises: Sequence[Exercise],
    mutants: int = DEFAULT_MUTANTS,
    settings: Settings | None = None,
    shown: Callable[[Step], None] | None = None,
) -> Proof:
    """Run the steps on ``exercises`` of ``pack`` (the pack in use); ``shown`` is called with
    each step as it ends."""
    settings = settings or Settings()
    proof = Proof(pack)

    def record(step: Step, began: float) -> None:
        step.seconds = round(time.monotonic() - began, 1)
        proof.steps.append(step)
        if shown:
            shown(step)

    began = time.monotonic()
    record(filled_in(pack), began)
    if proof.steps[-1].status != PASS:
        for name in ("solution", "stubs", "corpus", "mutants"):
            record(Step(name, SKIP, f"not run: fill in the {TODO} places first"), time.monotonic())
        return proof
    for run_step in (solution, stubs, corpus):
        began = time.monotonic()
        record(run_step(pack, exercises, settings), began)
    began = time.monotonic()
    if mutants <= 0:
        record(Step("mutants", SKIP, "not run (--mutants 0)"), began)
    elif proof.steps[1].status != PASS:
        record(Step("mutants", SKIP, "not run: the solution does not pass"), began)
    else:
        step, proof.verdicts = mutation(pack, exercises, mutants, settings)
        record(step, began)
    return proof
