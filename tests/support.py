"""Helpers shared by the tests: building submissions from the solution and corpus files,
and grading them quickly (few examples per check), through the pipeline every front end
takes (``grader.pipeline``: refuse, judge, visible, clean up)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from grader.authoring.corpus import CorpusCase
from grader.authoring.corpus import corpus_cases as read_corpus
from grader.intake.load import load_submission
from grader.intake.submission import Submission
from grader.judge.seeds import PUBLIC_SEED, Seed
from grader.pipeline import Request, finish, refuse
from grader.result.schema import GradeResult
from grader.shared.registry import BY_ID, EXERCISES

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = ROOT / "tests" / "submissions" / "solution"
CORPUS = ROOT / "tests" / "corpus"
STUBS = ROOT  # the repository itself holds the stubs in exercises/

# Few examples per check keep the suite fast; the grader's defaults are larger.
TEST_MAX_EXAMPLES = 8


def corpus_cases() -> list[CorpusCase]:
    """The first pack's corpus, read by the grader's one parser (``grader.authoring.corpus``)."""
    return read_corpus(CORPUS, EXERCISES)


def make_submission(
    dest: Path, replacements: dict[str, Path] | None = None, base: Path = SOLUTION
) -> Path:
    """A submission folder: ``base``'s exercise files, with ``replacements`` (id -> file)."""
    target = dest / "exercises"
    target.mkdir(parents=True, exist_ok=True)
    for ex in EXERCISES:
        src = (replacements or {}).get(ex.id, base / "exercises" / ex.filename)
        if src is not None and Path(src).exists():
            shutil.copyfile(src, target / BY_ID[ex.id].filename)
    return dest


def grade_folder(
    path: Path,
    exercises: list[str] | None = None,
    max_examples: int | None = TEST_MAX_EXAMPLES,
    seed: int | None = None,
    shown_as: str | None = None,
    **kwargs,
) -> GradeResult:
    """Grade ``path``; its snippets name it ``shown_as`` (default: its path from here).
    A notebook's exercise files are removed after, as ``grade`` removes them."""
    submission = refuse(load_submission(path, shown_as=shown_as))  # as the pipeline does
    return grade(submission, exercises, max_examples=max_examples, seed=seed, **kwargs)


def grade(
    submission: Submission,
    exercises: list[str] | None = None,
    seed: int | None = None,
    max_examples: int | None = TEST_MAX_EXAMPLES,
    **fields,
) -> GradeResult:
    """Grade ``submission`` (taken in and refused) through ``grader.pipeline.finish``, as every
    front end does; ``fields`` are the ``Request``'s others (``limits``, ``start``,
    ``processes``, ``progress``...). The seed is the public one unless given (as ``--seed``).
    The submission's temporary files are removed after."""
    value = PUBLIC_SEED if seed is None else seed
    chosen = Seed(value, "public" if value == PUBLIC_SEED else "--seed")
    request = Request(chosen, exercises, max_examples, **fields)
    return finish(submission, request)


def clone_of(dest: Path, replacements: dict[str, Path] | None = None) -> Path:
    """A submission folder laid out like a student's clone (with exercises/__init__.py, so
    that ``import exercises`` in a snippet finds the clone's files, not the installed stubs)."""
    folder = make_submission(dest, replacements)
    (folder / "exercises" / "__init__.py").write_text("")
    return folder


def paste(snippet: str, cwd: Path) -> subprocess.CompletedProcess:
    """A reproduce snippet run as ``python -c`` in ``cwd``, the grader and ``reference``
    importable (as in a student's environment, where the package is installed): forked from
    a warm interpreter that has imported torch only (``tests/pastebox.py``)."""
    from pastebox import BOX

    return BOX.run(snippet, cwd)


def grade_cli(
    *args: str,
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    module: str = "grader",
    fresh: bool = False,
) -> subprocess.CompletedProcess:
    """``python -m grader ARGS`` (or another ``module``) in ``cwd``, its output captured as
    text: a whole command, its own process, forked from a warm interpreter that has imported
    torch (and started its fork servers) only (``tests/pastebox.py``). ``env``: its whole
    environment (default: this process's). ``fresh``: in a fresh interpreter, starting its
    own fork server (for a test of what a command leaves behind)."""
    from pastebox import run_module

    env = dict(os.environ) if env is None else env
    return run_module(module, list(args), cwd, env, timeout, fresh=fresh)


def run_snippet(source: str, folder: Path) -> str:
    """Run a reproduce snippet as a student would (in their clone); it must succeed."""
    proc = paste(source, folder)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


# The start of ``judged_alone``'s script: a judge set up as ``grade``'s, ``forks`` counting the
# forks of judge processes.
ALONE = """\
import json, sys
sys.path.insert(0, {tests!r})
from grader.judge.ready import ready_to_judge
ready_to_judge()
from grader.judge import parallel
forks = []
_run_forked = parallel.run_forked
def _counted(*args, **kwargs):
    forks.append(parallel.threads_here())
    return _run_forked(*args, **kwargs)
parallel.run_forked = _counted
"""


def judged_alone(body: str) -> object:
    """Run ``body`` as a judge in a fresh interpreter and return what it prints last (JSON):
    there the process runs no other thread, and grading forks judge processes, which it never
    does beside the threads of a test process (pytest-xdist's, a library's pool; see
    ``grader.judge.parallel.alone``). ``body`` may use ``grade_folder``, ``SOLUTION``,
    ``CORPUS``, ``make_submission``, ``parallel`` and ``forks`` (the number of threads at each
    fork of judge processes)."""
    script = ALONE.format(tests=str(ROOT / "tests"))
    script += "from support import CORPUS, SOLUTION, grade_folder, make_submission\n" + body
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])
