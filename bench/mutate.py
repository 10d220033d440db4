"""Mutation testing of the checks: does the grader fail every small change to the solutions?

Each mutant (``grader.authoring.mutants``: one operator, constant, argument, default or
statement changed) of an instructor solution in ``tests/submissions/solution/exercises/`` is
written to a submission folder of its own and graded through ``grader.pipeline`` (the grader's
own example counts and the public seed). This is a thin command line over the grader's engine,
``grader.authoring.mutation``, which ``grade check-pack`` runs too. What the mutants know of the
first pack (its config vocabulary, GPT-2 small's values, and the code its grading never runs)
is the ``[mutation]`` table of ``llm_pack/pack.toml``, which ``grade check-pack`` reads too;
what stays here is which files are mutated. A mutant is *killed* when its exercise does not
pass (a check fails, an error, a timeout), and *survives* when it gets full marks. Survivors
are either holes in the checks or changes the contract allows (see ``docs/mutation.md``, which
lists them).

    python bench/mutate.py [-e ID ...] [--limit N] [-j N] [--seed N] [--max-examples N]
                           [--answers] [--book] [--kind KIND ... | --new] [--again JSON]
                           [--file NAME ...] [--json FILE] [--list]

Prints the mutation score per exercise and in total, then every survivor with its diff.
``--limit N`` grades only the first N mutants of each file; ``-j N`` grades in N judge
processes (default 1: the machine may be shared); ``--answers`` also mutates the corpus's
correct answers (``tests/corpus/exN_M/correct_*.py``: own copies of the book's classes, closed
forms), whose code reaches further than the solutions'; ``--book`` also mutates the answers
of the book's style (the seed-style notebook ``tests/notebooks/seed_style.txt``, taken apart by
the grader's own notebook intake: the book's classes copied in, ``nn.Parameter(w.T)``, the
124M config as GPT-2 small). ``--kind KIND`` keeps only the mutants of those operators and
``--new`` only those of the student-minded operators (``grader.authoring.mutops``); ``--again JSON``
grades again only the survivors of an earlier run (its ``--json``, made with the same options),
after a check changed; ``--file NAME`` mutates only the files of that name. Exit status 0
when every mutant was killed, 1 when some survived, 2 when an unmutated file itself fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from grader.authoring.mutants import KINDS, Mutant, mutants  # noqa: E402
from grader.authoring.mutation import (  # noqa: E402
    Job,
    Verdict,
    grade_source,
    judge,
    pack_settings,
    run,
    score_table,
    survivors_text,
)
from grader.authoring.mutops import NEW_KINDS  # noqa: E402
from grader.shared.packs import read_pack  # noqa: E402
from grader.shared.registry import BY_ID, EXERCISES  # noqa: E402

__all__ = [
    "KINDS",
    "Job",
    "Mutant",
    "Verdict",
    "grade_source",
    "judge",
    "run",
    "score_table",
    "survivors_text",
]

SOLUTION = ROOT / "tests" / "submissions" / "solution"
CORPUS = ROOT / "tests" / "corpus"
SEED_STYLE = ROOT / "tests" / "notebooks" / "seed_style.txt"
# What the mutants know of the first pack: its ``[mutation]`` table in ``llm_pack/pack.toml``, as
# ``grade check-pack`` reads it (one source): the vocabulary of the ``config`` operator (GPT-2
# small's values, the keys a student cross-wires) and, per exercise, the functions its grading
# never runs (4.1's and 4.2's ``forward``), left unmutated.
PACK = read_pack(ROOT / "llm_pack")
VOCABULARY, NEVER_RUN = pack_settings(PACK)


def mutants_of(source: str, kinds=None, skip=()) -> list[Mutant]:
    """The mutants of ``source`` with the first pack's vocabulary."""
    return mutants(source, kinds, skip, VOCABULARY)


def mutated_files(exercise_id: str, answers: bool = False) -> list[Path]:
    """The solution's file for ``exercise_id``, then (``answers``) the corpus's correct ones."""
    found = [SOLUTION / "exercises" / BY_ID[exercise_id].filename]
    if answers:
        found += sorted((CORPUS / BY_ID[exercise_id].module).glob("correct_*.py"))
    return found


def seed_style_answers() -> dict[str, str]:
    """The seed-style notebook's answer to each exercise, as ``grade`` takes it from the
    notebook (its cells in the 'percent' format: ``# %%`` starts a code cell)."""
    from grader.intake.cells import python_cell
    from grader.intake.notebook import cells_submission

    cells, kind, lines = [], None, []
    for line in SEED_STYLE.read_text(encoding="utf-8").splitlines() + ["# %%"]:
        if line in ("# %%", "# %% [markdown]"):
            if kind == "code":
                cells.append(python_cell(len(cells) + 1, len(cells) + 1, (), "\n".join(lines)))
            kind, lines = ("markdown" if "markdown" in line else "code"), []
        else:
            lines.append(line)
    sub = cells_submission(cells, SEED_STYLE.name, SEED_STYLE.name)
    try:
        return {k: p.read_text(encoding="utf-8") for k, p in sub.files.items()}
    finally:
        sub.cleanup()


def sources(exercise_id: str, answers: bool = False, book: bool = False) -> list[tuple[str, str]]:
    """(name, source) of every file mutated for ``exercise_id``: the solution's, the corpus's
    correct answers (``answers``), the seed-style notebook's answer (``book``)."""
    found = [(p.name, p.read_text(encoding="utf-8")) for p in mutated_files(exercise_id, answers)]
    if book:
        name = f"seed_style/{BY_ID[exercise_id].filename}"
        found.append((name, seed_style_answers()[exercise_id]))
    return found


def file_mutants(path: Path) -> list[Mutant]:
    return mutants_of(path.read_text(encoding="utf-8"))


def exercise_mutants(exercise_id: str) -> list[Mutant]:
    """The mutants of the solution's file for ``exercise_id``."""
    return file_mutants(mutated_files(exercise_id)[0])


# --- the report -------------------------------------------------------------------------------


def source_of(file: str) -> str:
    """Whose answer a mutated file is: the instructor's solution, the corpus's, the seed-style
    notebook's."""
    if file.startswith("seed_style/"):
        return "seed-style notebook"
    return "corpus answers" if file.startswith("correct_") else "solutions"


def source_table(verdicts: Iterable[Verdict]) -> str:
    """The same counts per source of the mutated files."""
    verdicts = list(verdicts)
    rows = ["| source | mutants | killed | survived |", "|---|---:|---:|---:|"]
    for source in ("solutions", "corpus answers", "seed-style notebook"):
        group = [v for v in verdicts if source_of(v.file) == source]
        killed = sum(v.killed for v in group)
        rows += [f"| {source} | {len(group)} | {killed} | {len(group) - killed} |"] if group else []
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-e", dest="exercises", action="append", choices=[e.id for e in EXERCISES])
    p.add_argument("--limit", type=int, help="grade only the first N mutants of each file")
    p.add_argument("-j", dest="processes", type=int, default=1, help="judge processes")
    p.add_argument("--seed", type=int, help="the grading seed (default: the public one)")
    p.add_argument("--max-examples", type=int, help="examples per check (default: the grader's)")
    p.add_argument("--answers", action="store_true", help="also the corpus's correct answers")
    p.add_argument("--book", action="store_true", help="also the seed-style notebook's answers")
    p.add_argument("--kind", dest="kinds", action="append", choices=KINDS, help="only these")
    p.add_argument("--new", action="store_true", help="only the student-minded operators")
    p.add_argument("--again", type=Path, metavar="JSON", help="only the survivors of that run")
    p.add_argument("--file", dest="files", action="append", help="only the files of this name")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write every verdict here")
    p.add_argument("--list", action="store_true", help="list the mutants, grade nothing")
    args = p.parse_args(argv)
    exercise_ids = args.exercises or [e.id for e in EXERCISES]

    jobs: list[Job] = []
    originals = []
    kinds = NEW_KINDS if args.new else tuple(args.kinds) if args.kinds else None
    again = None
    if args.again:  # the same options, the same mutants: grade the survivors of that run again
        earlier = json.loads(args.again.read_text())
        again = {(v["file"], v["index"]) for v in earlier if not v["killed"]}
    for ex_id in exercise_ids:
        for name, source in sources(ex_id, args.answers, args.book):
            if args.files and name not in args.files:
                continue
            found = mutants_of(source, kinds, NEVER_RUN.get(ex_id, ()))
            originals += [(ex_id, name, found[0].original)] if found else []
            for i, m in enumerate(found[: args.limit]):
                if again is not None and (name, i) not in again:
                    continue
                if args.list:
                    print(f"{name} #{i} line {m.line} [{m.kind}] {m.description}")
                jobs.append((ex_id, name, i, m, args.seed, args.max_examples))
    if args.list:
        return 0

    for ex_id, name, original in originals:  # unmutated (unparsed, as the mutants are): passes
        status, failing = grade_source(ex_id, original, args.seed, args.max_examples)
        if status != "passed":
            print(f"{name}: the unmutated file does not pass ({status}: {failing})")
            return 2

    began = time.monotonic()
    print(f"{len(jobs)} mutants of {', '.join(exercise_ids)}, {args.processes} process(es)")

    def progress(v: Verdict) -> None:
        mark = "killed  " if v.killed else "SURVIVED"
        print(f"  {v.file} #{v.index:<3} {mark} {v.seconds:5.2f} s  {v.description}")

    verdicts = run(jobs, args.processes, progress)
    print(f"\n{score_table(verdicts, exercise_ids)}\n\n{source_table(verdicts)}\n")
    print(f"graded in {time.monotonic() - began:.0f} s\n")
    print(survivors_text(verdicts))
    if args.json:
        args.json.write_text(json.dumps([asdict(v) for v in verdicts], indent=1) + "\n")
    return 0 if all(v.killed for v in verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
