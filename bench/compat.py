"""The compatibility matrix: the same verdicts on every Python, PyTorch and hypothesis the
grader supports.

For each environment (a Python from this machine, a torch release and a hypothesis release from
the package index) a virtual environment is built once and kept in a cache
(``~/.cache/llm-grader-compat``, or ``--cache``); the project is installed into it as a student
installs it, WITHOUT constraints.txt (``pip install -e .``; bench/compat_envs.py). Then the same
work set is graded there and with this interpreter (the reference: the README's venv, Python
3.11 and the pinned torch and hypothesis):

- the instructor solution, and the solution as a student's untagged notebook with demo cells
  after the answers, each with ``grade`` as a student runs it;
- in one ``grade batch`` (a batch's judges start once): the bundled example submission, the
  untouched stubs, the tagged notebook, and every case of the corpus of wrong and unusual
  answers.

Every JSON result, less ``duration_s`` and ``torch_version``, must equal the reference's, but
for the words of exceptions the answer raised (``your code raised RuntimeError: <torch's
message> (in ...)``): those are torch's (2.15 starts some with ``mm: ``), compared apart and
reported, never a failure. Where the environment's torch draws other dropout masks, a wrong
answer's own output differs, so texts may differ there; where its hypothesis is another release,
a check may show another shrunk counterexample, and its text may differ with it (only there).
The solution and both notebooks must get full marks; ``grade`` must print nothing on stderr that
the reference does not. One row per environment; exit status 1 if any row differs.

    python bench/compat.py                 # the whole matrix (a few GB of downloads per torch)
    python bench/compat.py --corners       # the oldest torch and hypothesis on the oldest
                                           # Python, the newest ones on the newest Python
                                           # (what .ci/run runs)
    python bench/compat.py --env 3.12:2.2.2 --env 3.13:newest:oldest

An environment is PY:TORCH[:HYPOTHESIS]. "newest" torch is the newest release pip installs for
that Python with no constraints (2.15.0 on 2026-11-27); hypothesis is "oldest" (the lower bound
of its range in pyproject.toml), "newest" (the default: the newest release in the range for that
Python) or a release. Pythons are found as ``python3.X`` on PATH or under pyenv (``--python
3.X=PATH`` names one).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from compat_compare import differences
from compat_envs import PYTHONS, default_cache, environment, find_python, use_hypothesis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

OLDEST_TORCH = "2.2.2"  # the last release for Intel Macs
# The corners: each end of torch and of hypothesis once, in two runs (.ci/run's time).
CORNERS = [(PYTHONS[0], OLDEST_TORCH, "oldest"), (PYTHONS[-1], "newest", "newest")]
# torch 2.2 has no wheels for Python 3.13 (its first release for 3.13 is 2.5); 2.14.1 is the
# newest this machine's pip installs under its cap; "newest" the newest there is (2.15.0).
TORCHES = [*((py, OLDEST_TORCH) for py in PYTHONS[:3]), *((py, "2.14.1") for py in PYTHONS)]
TORCHES += [(py, "newest") for py in PYTHONS]
MATRIX = [*((py, t, "newest") for py, t in TORCHES), *((py, t, "oldest") for py, t, _ in CORNERS)]
SEED = "20241"  # the public seed, given explicitly so that batch uses it too


# --- the work set ---------------------------------------------------------------------------


# Whole submissions graded in the corpus's batch (result file stem -> name in the run): every
# single ``grade`` costs a judge and a fork server started cold, about 3 s a row.
IN_BATCH = {"whole_example": "example", "whole_stubs": "stubs", "whole_nb": "notebook, tagged"}


def work_set(dest: Path) -> tuple[dict[str, Path], Path]:
    """(single grades: name -> path, the corpus: a folder of submissions for one batch, with
    the whole submissions of ``IN_BATCH`` beside the corpus's cases)."""
    from nbsupport import solution_notebook
    from support import CORPUS, SOLUTION, corpus_cases

    from grader.shared.registry import BY_ID

    singles = {
        "solution": dest / "solution",
        "notebook, untagged": solution_notebook(dest / "nb-untagged.ipynb", tagged=False),
    }
    shutil.copytree(SOLUTION, singles["solution"])
    corpus = dest / "corpus"
    shutil.copytree(ROOT / "examples" / "submission", corpus / "whole_example")
    shutil.copytree(ROOT / "exercises", corpus / "whole_stubs" / "exercises")
    solution_notebook(corpus / "whole_nb.ipynb", tagged=True)
    # One batch for the whole corpus (a batch's judges start once, not once per exercise): a
    # submission per case, named EXERCISE-CASE, holding that exercise's file only.
    for case in corpus_cases():
        name = f"{case.exercise_id}-{case.path.relative_to(CORPUS).with_suffix('').name}"
        sub = corpus / name / "exercises"
        sub.mkdir(parents=True)
        shutil.copyfile(case.path, sub / BY_ID[case.exercise_id].filename)
    return singles, corpus


# --- grading in one environment -------------------------------------------------------------


def grade_everything(grade: list[str], singles: dict, corpus: Path, out: Path) -> dict:
    """Every result of the work set graded with the ``grade`` command given, and what each
    single grade printed on stderr."""
    results: dict[str, dict] = {}
    stderr: dict[str, str] = {}
    env = {k: v for k, v in os.environ.items() if k != "GRADE_SEED"}
    for name, path in singles.items():
        proc = subprocess.run(
            [*grade, str(path), "--format", "json", "--seed", SEED],
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        stderr[name] = proc.stderr.strip()
        try:
            results[name] = json.loads(proc.stdout)
        except ValueError:
            results[name] = {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    target = out / "batch-corpus"
    proc = subprocess.run(
        [*grade, "batch", str(corpus), "-o", str(target), "--seed", SEED],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    for path in sorted((target / "results").glob("*.json")):
        result = json.loads(path.read_text())
        if path.stem in IN_BATCH:
            results[IN_BATCH[path.stem]] = result
            continue
        ex_id, _, case = path.stem.partition("-")
        # the case's exercise: the others are missing from its submission, in every run
        result["exercises"] = [e for e in result["exercises"] if e["id"] == ex_id]
        results[f"corpus {ex_id} {case}"] = result
    if proc.returncode not in (0, 1):
        results["corpus"] = {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
    return {"results": results, "stderr": stderr}


DROPOUT_PROBE = (
    "import torch; torch.manual_seed(0); "
    "print(torch.nn.functional.dropout(torch.ones(256), 0.5, True).tolist())"
)


def dropout_masks(python: str) -> str:
    """The masks this environment's torch draws for dropout after ``manual_seed(0)``: torch
    releases (and CPUs) draw different ones, so a wrong answer's own output may differ."""
    proc = subprocess.run([python, "-c", DROPOUT_PROBE], capture_output=True, text=True)
    return proc.stdout.strip()


def full_marks(run: dict) -> list[str]:
    out = []
    for name in ("solution", "notebook, tagged", "notebook, untagged"):
        result = run["results"].get(name, {})
        if result.get("score") != result.get("max_score") or "score" not in result:
            out.append(f"{name}: {result.get('score', result.get('error'))}/60")
    return out


# --- the command ----------------------------------------------------------------------------


def parse_env(text: str) -> tuple[str, str, str]:
    parts = text.split(":")
    version, torch = parts[0], parts[1] if len(parts) > 1 else ""
    hypothesis = parts[2] if len(parts) > 2 else "newest"
    if version not in PYTHONS or not torch or not hypothesis:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected PY:TORCH[:HYPOTHESIS], e.g. 3.10:2.2.2 or 3.13:newest:oldest"
        )
    return version, torch, hypothesis


Row = tuple[str, str, str, str, str, float]  # Python, torch, hypothesis, marks, vs, seconds


class Graded(NamedTuple):
    """The work set graded in one environment (``grade_in``), to ``compare``."""

    versions: tuple[str, str, str, Path]  # Python, torch, hypothesis, the venv
    run: dict
    seconds: float


def grade_in(spec: tuple[str, str, str], args, work: tuple) -> Graded | Row:
    """Build (or reuse) the environment ``spec`` and grade the work set there: (its versions,
    its run, the seconds taken), or its row when it cannot be built (``work``: the singles, the
    corpus, the temporary folder)."""
    version, torch_spec, hypothesis_spec = spec
    singles, corpus, tmp = work
    began = time.monotonic()
    base = find_python(version, dict(item.split("=", 1) for item in args.python))
    if base is None:
        return (version, torch_spec, hypothesis_spec, "-", f"no Python {version} here", 0.0)
    try:
        venv, torch_version = environment(base, version, torch_spec, args.cache)
        hypothesis_version = use_hypothesis(venv, hypothesis_spec)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        return (version, torch_spec, hypothesis_spec, "-", f"not installed: {exc}", 0.0)
    label = f"py{version}-{torch_version}-{hypothesis_version}"
    run = grade_everything([str(venv / "bin" / "grade")], singles, corpus, tmp / label)
    return Graded((version, torch_version, hypothesis_version, venv), run, time.monotonic() - began)


def compare(graded: Graded, reference: dict, masks: str, reference_hypothesis: str) -> Row:
    """The row of one environment graded (``grade_in``), its last column saying FAILED where
    it differs from the ``reference`` run (whose torch draws dropout ``masks``)."""
    (version, torch_version, hypothesis_version, venv), run, seconds = graded
    other_examples = hypothesis_version != reference_hypothesis  # it draws other examples
    diffs, text, quoted, shrunk = differences(reference, run, other_examples)
    marks = full_marks(run)
    # The grader's words may differ only where this torch draws other dropout masks than the
    # reference's: a wrong answer's own output (quoted in its message) differs then.
    other_masks = dropout_masks(str(venv / "bin" / "python")) != masks
    same = "same verdicts" if not diffs else f"{len(diffs)} verdicts differ"
    if text:
        why = " (this torch draws other dropout masks)" if other_masks else ""
        same += f"; {len(text)} texts differ{why}"
    if quoted:
        same += f"; {len(quoted)} differ in torch's own exception messages only"
    if shrunk:
        same += f"; {len(shrunk)} show other counterexamples (this hypothesis shrinks otherwise)"
    same += "" if text or quoted or shrunk else ", same JSON"
    print(f"Python {version}, torch {torch_version}, hypothesis {hypothesis_version}: {same}")
    for diff in [*diffs, *text, *quoted, *shrunk][:12]:
        print(f"    {diff}", flush=True)
    ok = not (diffs or marks or (text and not other_masks))
    row = (version, torch_version, hypothesis_version, "; ".join(marks) or "yes", same, seconds)
    return row if ok else (*row[:4], f"FAILED: {same}", row[5])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corners", action="store_true", help="the two corner environments")
    parser.add_argument("--env", type=parse_env, action="append", help="PY:TORCH[:HYPOTHESIS]")
    parser.add_argument("--python", action="append", default=[], help="3.X=PATH")
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--only-reference", action="store_true", help="grade here, nowhere else")
    parser.add_argument("--dump", type=Path, help="write the reference's results here (JSON)")
    args = parser.parse_args()
    wanted = [] if args.only_reference else args.env or (CORNERS if args.corners else MATRIX)

    import hypothesis
    import torch

    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        work = Path(tmp)
        singles, corpus = work_set(work / "work")  # graded in every environment
        os.chdir(work)  # the same working folder for every environment: the same snippets
        began = time.monotonic()
        # One environment after the other (two at once took as long, with more CPU).
        reference = grade_everything(grade_command(), singles, corpus, work / "ref")
        seconds = time.monotonic() - began
        graded = [grade_in(spec, args, (singles, corpus, work)) for spec in wanted]
        if args.dump:
            args.dump.write_text(json.dumps(reference, indent=1, sort_keys=True))
        version = ".".join(map(str, sys.version_info[:2]))
        marks = "; ".join(full_marks(reference)) or "yes"
        versions = (torch.__version__.split("+")[0], hypothesis.__version__)
        rows: list[Row] = [(f"{version} (reference)", *versions, marks, "-", seconds)]
        count = len(reference["results"])
        print(f"reference: Python {version}, torch {versions[0]}, {count} results", flush=True)
        failed = bool(full_marks(reference))
        against = (reference, dropout_masks(sys.executable), versions[1])
        rows += [compare(g, *against) if isinstance(g, Graded) else g for g in graded]
    outcomes = [not row[4].startswith(("FAILED", "no Python", "not installed")) for row in rows[1:]]
    table = render(rows, count)
    print(table)
    print(f"compat: {outcomes.count(True)} passed, {outcomes.count(False)} failed")
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 1 if failed or not all(outcomes) else 0


def grade_command() -> list[str]:
    """This environment's ``grade`` (its console script, as a student runs it)."""
    script = Path(sys.executable).parent / "grade"
    return [str(script)] if script.exists() else [sys.executable, "-m", "grader"]


def render(rows: list[Row], count: int) -> str:
    head = f"| Python | torch | hypothesis | solution and its notebooks 60/60 | {count} results "
    lines = [head + "vs the reference | time |", "|---|---|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} | {e} | {f:.0f} s |" for a, b, c, d, e, f in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
