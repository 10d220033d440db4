"""The compatibility matrix: the same verdicts on every Python and PyTorch the grader supports.

For each environment (a Python from this machine, a torch release from the package index) a
virtual environment is built once and kept in a cache (``~/.cache/llm-grader-compat``, or
``--cache``); the project is installed into it as a student installs it, WITHOUT
constraints.txt (``pip install -e .``). Then the same work set is graded there and with this
interpreter (the reference: the README's venv, Python 3.11 and the pinned torch):

- the instructor solution, the bundled example submission and the untouched stubs (``grade``);
- the solution as a student's notebook with demo cells after the answers, tagged and untagged;
- every case of the corpus of wrong and unusual answers (``grade batch``, one per exercise).

Every JSON result, less ``duration_s`` and ``torch_version``, must equal the reference's; the
solution and both notebooks must get full marks; ``grade`` must print nothing on stderr that
the reference does not. One row per environment; exit status 1 if any row differs.

    python bench/compat.py                 # the whole matrix (a few GB of downloads per torch)
    python bench/compat.py --corners       # the oldest torch on the oldest Python, the newest
                                           # torch on the newest Python (what .ci/run runs)
    python bench/compat.py --env 3.12:2.4.1 --env 3.13:newest

"newest" is the newest torch that pip installs here for that Python. Pythons are found as
``python3.X`` on PATH or under pyenv (``--python 3.X=PATH`` names one).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

OLDEST_TORCH = "2.4.1"
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# torch 2.4 has no wheels for Python 3.13 (its first release for 3.13 is 2.5).
MATRIX = [*((py, OLDEST_TORCH) for py in PYTHONS[:3]), *((py, "newest") for py in PYTHONS)]
CORNERS = [(PYTHONS[0], OLDEST_TORCH), (PYTHONS[-1], "newest")]
SEED = "20241"  # the public seed, given explicitly so that batch uses it too
IGNORED = ("duration_s", "torch_version")


# --- the work set ---------------------------------------------------------------------------


def work_set(dest: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """(single grades: name -> path, corpus batches: exercise id -> folder of submissions)."""
    from nbsupport import solution_notebook
    from support import CORPUS, SOLUTION, corpus_cases

    from grader.shared.registry import BY_ID

    singles = {
        "solution": dest / "solution",
        "example": dest / "example",
        "stubs": dest / "stubs",
        "notebook, tagged": solution_notebook(dest / "nb-tagged.ipynb", tagged=True),
        "notebook, untagged": solution_notebook(dest / "nb-untagged.ipynb", tagged=False),
    }
    shutil.copytree(SOLUTION, singles["solution"])
    shutil.copytree(ROOT / "examples" / "submission", singles["example"])
    shutil.copytree(ROOT / "exercises", singles["stubs"] / "exercises")
    batches: dict[str, Path] = {}
    for case in corpus_cases():
        folder = batches.setdefault(case.exercise_id, dest / f"corpus-{case.exercise_id}")
        sub = folder / case.path.relative_to(CORPUS).with_suffix("").name / "exercises"
        sub.mkdir(parents=True)
        shutil.copyfile(case.path, sub / BY_ID[case.exercise_id].filename)
    return singles, batches


# --- grading in one environment -------------------------------------------------------------


def grade_everything(grade: list[str], singles: dict, batches: dict, out: Path) -> dict:
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
    for ex_id, folder in batches.items():
        target = out / f"batch-{ex_id}"
        proc = subprocess.run(
            [*grade, "batch", str(folder), "-o", str(target), "-e", ex_id, "--seed", SEED],
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
        for path in sorted((target / "results").glob("*.json")):
            results[f"corpus {ex_id} {path.stem}"] = json.loads(path.read_text())
        if proc.returncode not in (0, 1):
            results[f"corpus {ex_id}"] = {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
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


def verdicts(result: dict) -> list:
    """What decides a grade: the score, each exercise's status and each check's outcome."""
    return [
        result.get("score"),
        result.get("error"),
        [
            (
                e["id"],
                e["status"],
                e["score"],
                [(c["name"], c["passed"], c["points"]) for c in e["checks"]],
            )
            for e in result.get("exercises", [])
        ],
    ]


def comparable(value):
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in IGNORED}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def differences(reference: dict, other: dict) -> tuple[list[str], list[str]]:
    """(verdicts that differ, and what grade printed that the reference did not;
    results that differ in their text only)."""
    ref, got = reference["results"], other["results"]
    out = [f"{name}: missing" for name in ref if name not in got]
    out += [f"{name}: not in the reference" for name in got if name not in ref]
    text = []
    for name in ref:
        if name not in got:
            continue
        a, b = comparable(ref[name]), comparable(got[name])
        if verdicts(a) != verdicts(b):
            out.append(f"{name}: {first_difference(verdicts(a), verdicts(b))}")
        elif a != b:
            text.append(f"{name}: {first_difference(a, b)}")
    for name, said in other["stderr"].items():
        extra = set(said.splitlines()) - set(reference["stderr"].get(name, "").splitlines())
        if extra:
            out.append(f"{name}: printed {sorted(extra)[0][:200]!r}")
    return out, text


def first_difference(a, b, where: str = "") -> str:
    if type(a) is not type(b):
        return f"{where or 'result'}: {str(a)[:120]!r} != {str(b)[:120]!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    if isinstance(a, str) and isinstance(b, str):
        at = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        a, b = a[max(0, at - 40) : at + 80], b[max(0, at - 40) : at + 80]
    return f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"


def full_marks(run: dict) -> list[str]:
    out = []
    for name in ("solution", "notebook, tagged", "notebook, untagged"):
        result = run["results"].get(name, {})
        if result.get("score") != result.get("max_score") or "score" not in result:
            out.append(f"{name}: {result.get('score', result.get('error'))}/60")
    return out


# --- environments ---------------------------------------------------------------------------


def find_python(version: str, named: dict[str, str]) -> str | None:
    """A Python ``version`` interpreter: named, under pyenv, or on PATH (a pyenv shim on PATH
    may name a version that is not selected, so each candidate is asked its version)."""
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = [named.get(version)]
    candidates += sorted(glob.glob(f"{pyenv}/versions/{version}.*/bin/python{version}"))[::-1]
    candidates.append(shutil.which(f"python{version}"))
    for candidate in filter(None, candidates):
        probe = [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
        try:
            said = subprocess.run(probe, capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        if said.strip() == version:
            return candidate
    return None


def pip(python: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=3600,
    )


def newest_torch(python: Path) -> str:
    """The torch release pip would install for this Python here (its metadata only)."""
    proc = pip(python, "install", "--dry-run", "--ignore-installed", "--no-deps", "-q",
               "--report", "-", "torch")  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"pip cannot resolve torch: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)["install"][0]["metadata"]["version"]


def environment(base_python: str, version: str, torch: str, cache: Path) -> tuple[Path, str]:
    """A venv with ``torch`` and the project installed without constraints (built once)."""
    if torch == "newest":
        cache.mkdir(parents=True, exist_ok=True)
        probe = cache / f"py{version}-probe"
        if not (probe / "bin" / "python").exists():
            subprocess.run([base_python, "-m", "venv", str(probe)], check=True)
        torch = newest_torch(probe / "bin" / "python")
    venv = cache / f"py{version}-torch{torch}"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import torch; print(torch.__version__.split('+')[0])"]
    ready = python.exists() and subprocess.run(check, capture_output=True, text=True).stdout
    if not ready or ready.strip() != torch:
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
        proc = pip(python, "install", "-q", f"torch=={torch}", "numpy")
        if proc.returncode != 0:
            raise RuntimeError(f"pip cannot install torch {torch}: {proc.stderr.strip()[-300:]}")
    # As a student installs it: no constraints file (pip's own configuration still applies).
    proc = pip(python, "install", "-q", "-e", str(ROOT))
    if proc.returncode != 0:
        raise RuntimeError(f"pip cannot install the project: {proc.stderr.strip()[-300:]}")
    return venv, torch


# --- the command ----------------------------------------------------------------------------


def parse_env(text: str) -> tuple[str, str]:
    version, _, torch = text.partition(":")
    if version not in PYTHONS or not torch:
        raise argparse.ArgumentTypeError(f"{text!r}: expected PY:TORCH, e.g. 3.10:2.4.1")
    return version, torch


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corners", action="store_true", help="the two corner environments")
    parser.add_argument("--env", type=parse_env, action="append", help="PY:TORCH (repeatable)")
    parser.add_argument("--python", action="append", default=[], help="3.X=PATH")
    parser.add_argument("--cache", type=Path, default=default_cache())
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--only-reference", action="store_true", help="grade here, nowhere else")
    parser.add_argument("--dump", type=Path, help="write the reference's results here (JSON)")
    args = parser.parse_args()
    wanted = [] if args.only_reference else args.env or (CORNERS if args.corners else MATRIX)
    named = dict(item.split("=", 1) for item in args.python)

    import torch

    with tempfile.TemporaryDirectory(prefix="compat-") as tmp:
        work = Path(tmp)
        singles, batches = work_set(work / "work")
        os.chdir(work)  # the same working folder for every environment: the same snippets
        began = time.monotonic()
        reference = grade_everything(grade_command(), singles, batches, work / "ref")
        if args.dump:
            args.dump.write_text(json.dumps(reference, indent=1, sort_keys=True))
        version = ".".join(map(str, sys.version_info[:2]))
        marks = "; ".join(full_marks(reference)) or "yes"
        took = time.monotonic() - began
        rows = [(f"{version} (reference)", torch.__version__.split("+")[0], marks, "-", took)]
        count = len(reference["results"])
        print(f"reference: Python {version}, torch {torch.__version__}: {count} results")
        failed = bool(full_marks(reference))
        masks = dropout_masks(sys.executable)
        outcomes: list[bool] = []  # one per environment: the same verdicts, full marks
        for version, torch_spec in wanted:
            began = time.monotonic()
            base = find_python(version, named)
            if base is None:
                rows.append((version, torch_spec, "-", f"no Python {version} here", 0.0))
                failed = True
                outcomes.append(False)
                continue
            try:
                venv, torch_version = environment(base, version, torch_spec, args.cache)
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                rows.append((version, torch_spec, "-", f"not installed: {exc}", 0.0))
                failed = True
                outcomes.append(False)
                continue
            run = grade_everything([str(venv / "bin" / "grade")], singles, batches,
                                   work / f"py{version}-{torch_version}")  # fmt: skip
            diffs, text = differences(reference, run)
            marks = full_marks(run)
            # Text may differ only where this torch draws other dropout masks than the
            # reference's: a wrong answer's own output (quoted in its message) differs then.
            other_masks = dropout_masks(str(venv / "bin" / "python")) != masks
            bad = bool(diffs or marks or (text and not other_masks))
            failed |= bad
            outcomes.append(not bad)
            same = "same verdicts" if not diffs else f"{len(diffs)} verdicts differ"
            if text:
                why = " (this torch draws other dropout masks)" if other_masks else ""
                same += f"; {len(text)} texts differ{why}"
            else:
                same += ", same JSON"
            rows.append((version, torch_version, "; ".join(marks) or "yes", same,
                         time.monotonic() - began))  # fmt: skip
            print(f"Python {version}, torch {torch_version}: {same}", flush=True)
            for diff in [*diffs, *text][:12]:
                print(f"    {diff}")
    table = render(rows, len(reference["results"]))
    print(table)
    print(f"compat: {outcomes.count(True)} passed, {outcomes.count(False)} failed")
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 1 if failed else 0


def grade_command() -> list[str]:
    """This environment's ``grade`` (its console script, as a student runs it)."""
    script = Path(sys.executable).parent / "grade"
    return [str(script)] if script.exists() else [sys.executable, "-m", "grader"]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "llm-grader-compat"


def render(rows: list[tuple], count: int) -> str:
    lines = [
        f"| Python | torch | solution and its notebooks 60/60 | {count} results vs the "
        "reference | time |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} | {e:.0f} s |" for a, b, c, d, e in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
