"""The documentation's commands are tests (issue 40): every command block of README.md,
docs/batch.md, docs/deploy.md and docs/notebooks.md is run as typed, through bash, with its
relative paths, from the folder the text says, and gets the results the text promises.

What is a command block: a fenced block whose language is ``bash`` (or ``sh``, ``shell``), or a
fence with no language whose first line is a ``grade``, ``python`` or ``pytest`` command
(docs/batch.md writes its commands so; its other plain fences are output, a tree, CSV). The
markdown is parsed (``command_blocks``), so a block added to these files is a new test case: it
runs in its file's workspace and every command of it must exit 0 unless ``EXPECT`` says what
else it promises. Its commands are its lines (``\\`` continuations joined, comment lines left
out); each runs on its own (``bash -c LINE``), so that each has its own exit status, one after
the other in the same folder.

Where they run: never in the repository itself (other work goes on in it), but in a fresh
folder per block that holds what the text says is there. One class is built once per module
(``kit``): the instructor solution as a folder (``alice/``), as a tagged notebook
(``bob.ipynb``), as an untagged notebook (``carol.ipynb``), zipped (``dave.zip``), an untagged
notebook zipped (``erin.zip``), and the bundled example submission (``example/``); every
``grade batch`` of the docs grades it, and it must give the five copies of the solution 60/60.

- README.md: "from the root of this repository": a copy of its ``examples/`` (what the commands
  read), and ``exercises/`` holding the solution (the students' block follows "Edit only the six
  files in exercises/"), ``work.ipynb`` (the untagged solution notebook).
- docs/deploy.md: an instructor's folder (the class in ``submissions/``); its pytest block runs
  in "a clone of the student edition", made with ``grade release`` as the page says, the
  solution in its ``exercises/``.
- docs/notebooks.md: a student's folder, ``work.ipynb`` the tagged solution notebook, the class
  in ``submissions/``.
- docs/batch.md: a folder with the class in ``subs/``, its ``grading.toml`` holding the seed
  (as the shards section says every shard needs). Its shards block runs once per module
  (``shards``); its export examples export the class it graded and merged, as ``out``.

Placeholders are real folders of that name in the workspace: ``SUBMISSIONS/`` is the class,
``OUT1``, ``OUT2`` and ``OUT3`` are the three shards of it that docs/batch.md's shards block
graded, ``STUDENT_REPO/``, ``OUT/`` and ``path/to/submission`` (the solution) are as named,
``roster.csv`` and ``classroom_roster.csv`` are rosters of the class. Only the notation that is
not shell is rewritten (``SUBSTITUTE``): an optional ``[-j N]`` becomes ``-j 2`` (two cores
here), and the ``...`` of "OUT1 OUT2 ..." is the third shard. No option is added to a
documented command (no ``-e``, no ``--max-examples``): each runs as a reader would type it.

What cannot run here is listed in ``SKIP`` and ``SKIP_BLOCKS``, each with why. The whole file is
``slow``: about 25 grader processes, each importing torch.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbsupport import solution_notebook
from support import ROOT, SOLUTION
from test_readme import quick_start_commands

from grader.shared.registry import EXERCISES

pytestmark = pytest.mark.slow

DOCS = ("README.md", "docs/batch.md", "docs/deploy.md", "docs/notebooks.md")
TIMEOUT_S = 600  # one command

# --- the markdown ---------------------------------------------------------------------------

SHELLS = {"bash", "sh", "shell"}
PLAIN_COMMANDS = ("grade ", "python ", "pytest ")  # a fence with no language holding commands
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    doc: str
    line: int  # of the opening fence, from 1
    commands: tuple[str, ...]  # as typed

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def fences(text: str) -> list[tuple[int, str, list[str]]]:
    """Every fenced code block of ``text``: (line of its opening fence, its info string, its
    lines with the fence's indentation removed, as CommonMark does in a list item)."""
    blocks, lines, n = [], text.splitlines(), 0
    while n < len(lines):
        opening = FENCE.match(lines[n])
        if not opening:
            n += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        body, k = [], n + 1
        while k < len(lines):
            close = lines[k].strip()
            if close.startswith(fence) and set(close) == {fence[0]}:
                break
            line = lines[k]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            k += 1
        blocks.append((n + 1, opening["info"].lower(), body))
        n = k + 1
    return blocks


def command_lines(body: list[str]) -> tuple[str, ...]:
    """The commands of a block: ``\\`` continuations joined, blank and comment lines left out."""
    commands, pending = [], ""
    for line in body:
        if pending:
            line, pending = pending + line.strip(), ""
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1].rstrip() + " "
            continue
        if line.strip() and not line.strip().startswith("#"):
            commands.append(line.strip())
    return tuple(commands)


def command_blocks(doc: str) -> list[Block]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = []
    for line, info, body in fences(text):
        commands = command_lines(body)
        plain = info == "" and bool(commands) and commands[0].startswith(PLAIN_COMMANDS)
        if commands and (info in SHELLS or plain):
            found.append(Block(doc, line, commands))
    return found


def key(command: str) -> str:
    """A command without its trailing comment, its spaces as typed otherwise."""
    return re.sub(r"\s+#\s.*$", "", command).strip()


BLOCKS = [b for doc in DOCS for b in command_blocks(doc)]

# --- what cannot run here -------------------------------------------------------------------

QUICK_START = quick_start_commands()  # tests/test_readme.py's reading of the block
INSTALL_STEPS = ("python3 -m venv", ". .venv/bin/activate", "pip install")


def grade_part(line: str) -> str:
    """A Quick start line without its install steps: what it does once installed."""
    steps = line.split(" && ")
    return " && ".join(s for s in steps if not s.startswith(INSTALL_STEPS))


# Commands that cannot run here, each with why (the command as typed, its comment aside).
SKIP = {
    # README, Quick start, line 2: installs into a new venv and runs this whole suite (this
    # file included). .ci/run runs it verbatim from a clean clone (tests/test_readme.py checks).
    # Line 1's install steps are not run either (the venv running this is that install); its
    # grade part is (``grade_part``).
    key(QUICK_START[1]): "installs, then runs the whole test suite: .ci/run runs it verbatim",
}
# Blocks that cannot run here, by their first command, each with why.
SKIP_BLOCKS = {
    # README, Development: the test suite itself (minutes; this file is one of its tests).
    'python -m pytest -q -m "not slow"': "runs the test suite, which holds this test",
    # docs/deploy.md: a student's install of the edition, from the network, into the venv that
    # runs these tests (tests/test_release.py installs an edition in a fresh venv).
    "pip install -c constraints.txt -e .": "installs from the network into the running venv",
    # docs/deploy.md, "Try the bundle": setup.sh makes a venv and installs the grader and torch
    # from the network (minutes), all in the fixed /tmp/ag that every process of this machine
    # shares; tests/test_gradescope_bundle.py runs setup.sh in a fresh venv and run_autograder
    # on uploads.
    "mkdir -p /tmp/ag/source /tmp/ag/submission": "setup.sh installs from the network, in /tmp/ag",
    # docs/batch.md: usage synopses (every option in brackets, alternatives with |): the
    # command lines below them run.
    "grade batch DIR -o OUT [-j N] [--config FILE] [-e ID ...] [--shard K/N | --shard auto]": (
        "a usage synopsis, not a command line"
    ),
    "grade export OUT --roster ROSTER.csv [--format moodle|canvas|csv] [--points | --percent]": (
        "a usage synopsis, not a command line"
    ),
    # docs/batch.md, Performance and Similar answers: benchmarks that generate and grade a
    # class of 50 (and 300) submissions, minutes on two cores; their figures are the page's.
    "python bench/bench_batch.py --size 50 -j 2 --threads": "a benchmark (minutes)",
    "python bench/bench_similarity.py --size 300 --copies 20 --quality": "a benchmark (minutes)",
}

# Notation that is not shell, and what runs instead.
SUBSTITUTE = {
    "[-j N]": "-j 2",  # optional: two cores here
    "OUT1 OUT2 ...": "OUT1 OUT2 OUT3",  # and more: the three shards of docs/batch.md's block
}


def as_run(command: str) -> str:
    if command == QUICK_START[0]:
        return grade_part(command)  # the grade part of Quick start's line 1, as typed
    for text, instead in SUBSTITUTE.items():
        command = command.replace(text, instead)
    return command


# --- the class -------------------------------------------------------------------------------

SOLVED = ("alice", "bob", "carol", "dave", "erin")  # the solution as each kind of entry
EXAMPLE_RIGHT = ("3.1", "3.2", "3.3")  # the example submission's right answers (README)
SHARD_SEED = 40  # subs/grading.toml's seed, for docs/batch.md's shards
SHARDS_BLOCK = "grade batch subs -o out/shard-1 --shard 1/3"  # its first command


def zip_folder(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w") as zf:
        for path in sorted(folder.rglob("*")):
            zf.write(path, path.relative_to(folder).as_posix())


def write_rosters(folder: Path) -> None:
    (folder / "roster.csv").write_text(
        "folder,identifier,name\n"
        + "".join(f"{n},{n}@uni.edu,{n.title()}\n" for n in (*SOLVED, "example")),
        encoding="utf-8",
    )
    (folder / "classroom_roster.csv").write_text(
        "identifier,github_username,github_id,name\n"
        + "".join(f"{n}@uni.edu,{n},{k},{n.title()}\n" for k, n in enumerate(SOLVED, 1))
        + "frank@uni.edu,,,Frank\n",  # has not joined yet
        encoding="utf-8",
    )


def run(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command`` through bash in ``cwd``, as a reader types it (the venv's bin first on PATH,
    as after the README's install; none of the test run's own pytest settings)."""
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def ok(proc: subprocess.CompletedProcess, status: int = 0) -> None:
    assert proc.returncode == status, (
        f"exit status {proc.returncode}, not {status}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> Path:
    """The class (see the module's docstring) and the solution's two notebooks, built once."""
    kit = tmp_path_factory.mktemp("docs-kit")
    shutil.copytree(SOLUTION, kit / "solution")
    solution_notebook(kit / "tagged.ipynb", tagged=True)
    solution_notebook(kit / "untagged.ipynb", tagged=False)
    cls = kit / "class"
    shutil.copytree(SOLUTION, cls / "alice")
    shutil.copyfile(kit / "tagged.ipynb", cls / "bob.ipynb")
    shutil.copyfile(kit / "untagged.ipynb", cls / "carol.ipynb")
    zip_folder(SOLUTION, cls / "dave.zip")
    with zipfile.ZipFile(cls / "erin.zip", "w") as zf:
        zf.write(kit / "untagged.ipynb", "erin.ipynb")
    shutil.copytree(ROOT / "examples" / "submission", cls / "example")
    write_rosters(kit)
    return kit


@pytest.fixture(scope="module")
def shards(kit, tmp_path_factory, request) -> Path:
    """docs/batch.md's shards block, run (and checked) once per module: the class graded in
    three shards, ``out/shard-1`` ... ``out/shard-3``, merged into ``out/all``. The README's
    ``grade merge OUT1 OUT2 ...`` merges these shards; batch.md's export examples export the
    merged class."""
    block = next((b for b in BLOCKS if key(b.commands[0]) == SHARDS_BLOCK), None)
    assert block is not None, f"docs/batch.md has no block that starts {SHARDS_BLOCK!r} now"
    ws = batch_workspace(kit, tmp_path_factory.mktemp("shards"), block, request)
    run_block(block, ws)
    return ws / "out"


def copy_class(kit: Path, target: Path) -> None:
    shutil.copytree(kit / "class", target)


def readme_workspace(kit: Path, ws: Path, block: Block, request) -> Path:
    """A copy of what the README's commands read from the repository's root, the student
    having solved the six exercises (the students' block), the class as SUBMISSIONS/."""
    shutil.copytree(ROOT / "examples", ws / "examples", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(kit / "solution" / "exercises", ws / "exercises")
    shutil.copyfile(kit / "untagged.ipynb", ws / "work.ipynb")
    copy_class(kit, ws / "SUBMISSIONS")
    write_rosters(ws)
    if any("OUT1" in c for c in block.commands):
        done = request.getfixturevalue("shards")
        for k in (1, 2, 3):
            shutil.copytree(done / f"shard-{k}", ws / f"OUT{k}")
    return ws


def deploy_workspace(kit: Path, ws: Path, block: Block, request) -> Path:
    """An instructor's folder with the class in submissions/; for the pytest block, a clone of
    the student edition (made as the page says) with the solution in it."""
    copy_class(kit, ws / "submissions")
    if not any(c.startswith("pytest") for c in block.commands):
        return ws
    ok(run("grade release clone", ws))
    clone = ws / "clone"
    for path in (kit / "solution" / "exercises").glob("*.py"):
        shutil.copyfile(path, clone / "exercises" / path.name)
    shutil.copytree(kit / "solution", clone / "path" / "to" / "submission")
    return clone


def notebooks_workspace(kit: Path, ws: Path, block: Block, request) -> Path:
    shutil.copyfile(kit / "tagged.ipynb", ws / "work.ipynb")
    copy_class(kit, ws / "submissions")
    return ws


def batch_workspace(kit: Path, ws: Path, block: Block, request) -> Path:
    """The class in ``subs/``, its grading.toml holding the course seed (as the shards section
    says every shard must); for the export examples, the class graded in ``out`` (its shards
    merged, by the shards block) and its rosters."""
    copy_class(kit, ws / "subs")
    (ws / "subs" / "grading.toml").write_text(f"seed = {SHARD_SEED}\n", encoding="utf-8")
    if any("--roster" in c for c in block.commands):
        shutil.copytree(request.getfixturevalue("shards") / "all", ws / "out")
        write_rosters(ws)
    return ws


WORKSPACES = {
    "README.md": readme_workspace,
    "docs/deploy.md": deploy_workspace,
    "docs/notebooks.md": notebooks_workspace,
    "docs/batch.md": batch_workspace,
}

# --- what the text promises -----------------------------------------------------------------


def read_csv(path_or_text) -> list[dict[str, str]]:
    text = (
        path_or_text.read_text(encoding="utf-8")
        if isinstance(path_or_text, Path)
        else (path_or_text)
    )
    return list(csv.DictReader(io.StringIO(text)))


def score_line(proc: subprocess.CompletedProcess, score: str) -> None:
    ok(proc)
    assert f"Score: {score} (100%)" in proc.stdout, proc.stdout[-2000:]


def why_not_full(out: Path, name: str) -> str:
    """The first failed check of ``name``'s result in ``out``, for the assertion message."""
    try:
        result = json.loads((out / "results" / f"{name}.json").read_text(encoding="utf-8"))
    except OSError as exc:
        return str(exc)
    for ex in result["exercises"]:
        for check in ex["checks"]:
            if not check["passed"]:
                return f"{ex['id']}: {check['name']}: {check['message'][:500]}"
    return ""


def class_graded(ws: Path, out: str, proc: subprocess.CompletedProcess | None = None) -> None:
    """``grade batch`` of the class into ``out``: every submission graded (exit status 0), the
    solution's folder, notebooks (tagged, untagged) and zips 60/60, the example three of six,
    and OUT as docs/batch.md lists it."""
    if proc is not None:
        ok(proc)
    folder = ws / out
    for name in ("index.html", "gradebook.csv", "gradebook.sqlite", "similarity.csv"):
        assert (folder / name).is_file(), f"{out}{name} was not written"
    rows = {r["name"]: r for r in read_csv(folder / "gradebook.csv")}
    assert set(rows) == {*SOLVED, "example"}
    for name in SOLVED:
        row = rows[name]
        assert (row["total"], row["max_total"], row["status"]) == ("60", "60", "passed"), (
            f"{name}: {row['total']}/{row['max_total']} {row['status']} {row['reason']}; "
            + why_not_full(folder, name)
        )
    example = rows["example"]
    assert example["status"] == "failed" and float(example["total"]) < 60
    assert all(example[i] == "10" for i in EXAMPLE_RIGHT), example
    for name in rows:
        result = json.loads((folder / "results" / f"{name}.json").read_text(encoding="utf-8"))
        assert result["seed"] == -1  # "course seed": what goes back to students hides it
        assert (folder / "reports" / f"{name}.html").is_file()
    pairs = read_csv(folder / "similarity.csv")
    assert {"alice", "bob"} in [{p["submission_a"], p["submission_b"]} for p in pairs]


def readme_quick_start(ws: Path, proc: subprocess.CompletedProcess) -> None:
    """ "a text report, report.html and result.json"; "grade exit status: 1 (...)"; "The example
    gets three exercises right and three wrong"."""
    ok(proc)
    assert "grade exit status: 1 " in proc.stdout, proc.stdout[-2000:]
    assert "Score:" in proc.stdout and (ws / "report.html").is_file()
    result = json.loads((ws / "result.json").read_text(encoding="utf-8"))
    right = [e["id"] for e in result["exercises"] if e["score"] == e["max_score"]]
    assert right == list(EXAMPLE_RIGHT), right


def html_report(ws: Path, proc: subprocess.CompletedProcess) -> None:
    score_line(proc, "60/60")
    assert "<html" in (ws / "report.html").read_text(encoding="utf-8").lower()


def merged(ws: Path, proc: subprocess.CompletedProcess) -> None:
    ok(proc)
    assert "merged 3 shards" in proc.stdout
    class_graded(ws, "OUT/")


def export_csv(ws: Path, proc: subprocess.CompletedProcess) -> None:
    """The default format (csv): every roster entry, its scores and status."""
    ok(proc)
    rows = {r["identifier"]: r for r in read_csv(proc.stdout)}
    for name in SOLVED:
        assert (rows[f"{name}@uni.edu"]["total"], rows[f"{name}@uni.edu"]["status"]) == (
            "60",
            "passed",
        )
    assert rows["example@uni.edu"]["status"] == "failed"


def released(folder: str, git: bool = False) -> Callable:
    def check(ws: Path, proc: subprocess.CompletedProcess) -> None:
        """The student edition: the stubs, no solution, no instructor test."""
        ok(proc)
        edition = ws / folder
        for ex in EXERCISES:
            text = (edition / "exercises" / ex.filename).read_text(encoding="utf-8")
            assert "NotImplementedError" in text
            assert text != (SOLUTION / "exercises" / ex.filename).read_text(encoding="utf-8")
        assert (edition / "pyproject.toml").is_file() and not (edition / "tests").exists()
        if git:
            log = run("git log --oneline", edition)
            ok(log)
            assert len(log.stdout.splitlines()) == 1  # "one commit"

    return check


def handed_out_notebook(name: str) -> Callable:
    def check(ws: Path, proc: subprocess.CompletedProcess) -> None:
        """One answer cell tagged exercise-X.Y per exercise."""
        ok(proc)
        nb = nbformat.read(str(ws / name), as_version=4)
        tags = [t for c in nb.cells for t in c.metadata.get("tags", [])]
        assert sorted(tags) == sorted(f"exercise-{ex.id}" for ex in EXERCISES)

    return check


def gradescope_bundle(ws: Path, proc: subprocess.CompletedProcess) -> None:
    """``setup.sh`` and ``run_autograder`` at the zip's root, the edition under package/."""
    ok(proc)
    names = zipfile.ZipFile(ws / "autograder.zip").namelist()
    assert {"setup.sh", "run_autograder"} <= set(names)
    assert any(n.startswith("package/") for n in names)
    assert not any("/solution/" in n for n in names)


def new_exercise(ws: Path, proc: subprocess.CompletedProcess) -> None:
    ok(proc)
    assert (ws / "my_course" / "my_pack" / "pack.toml").is_file()
    assert "TODO(pack)" in proc.stdout


def check_pack_of_the_scaffold(ws: Path, proc: subprocess.CompletedProcess) -> None:
    """Run right after new-exercise, before its TODO(pack) places are filled in ("fill in its
    TODO(pack)"): check-pack says so and does not hold (exit status 1)."""
    ok(proc, 1)
    assert "TODO(pack)" in proc.stdout and "does not hold" in proc.stdout


def pytest_graded(score: str) -> Callable:
    def check(ws: Path, proc: subprocess.CompletedProcess) -> None:
        ok(proc)
        assert f"Score: {score}" in proc.stdout and " passed" in proc.stdout, proc.stdout[-2000:]
        assert "failed" not in proc.stdout.splitlines()[-1]

    return check


def canvas(ws: Path, proc: subprocess.CompletedProcess) -> None:
    ok(proc)
    rows = list(csv.reader((ws / "canvas.csv").open(encoding="utf-8")))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention lab"]
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "60"
    assert {(r[3], r[-1]) for r in rows[2:]} == {(f"{n}@uni.edu", "60") for n in SOLVED}
    assert "frank@uni.edu" in proc.stdout + proc.stderr  # listed, never guessed


def moodle(ws: Path, proc: subprocess.CompletedProcess) -> None:
    ok(proc)
    rows = read_csv(ws / "moodle.csv")
    assert list(rows[0])[0] == "Email address" and len(rows[0]) == 1 + len(EXERCISES)
    for row in rows:
        if row["Email address"] != "example@uni.edu":
            assert set(list(row.values())[1:]) == {"100"}, row


def grades_csv(ws: Path, proc: subprocess.CompletedProcess) -> None:
    ok(proc)
    rows = {r["identifier"]: r["status"] for r in read_csv(ws / "grades.csv")}
    assert rows == {**{f"{n}@uni.edu": "passed" for n in SOLVED}, "example@uni.edu": "failed"}


def watched(ws: Path, command: str) -> subprocess.CompletedProcess:
    """``grade --watch``: grades, waits; a save grades that exercise again; Ctrl-C (SIGINT to
    the foreground process group, as a terminal sends it) ends it with exit status 0."""
    # Ctrl-C as a terminal has it: pytest-xdist's workers run with SIGINT ignored, and an
    # ignored signal stays ignored across exec (grade would then never see the Ctrl-C).
    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=ws,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(proc.stdout), daemon=True)
    reader.start()

    def wait_for(text: str, after: int = 0) -> int:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            for n, line in enumerate(list(seen)[after:], after):
                if text in line:
                    return n + 1
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} from grade --watch:\n{''.join(seen)[-3000:]}")

    try:
        first = wait_for("Watching")
        assert any("Score: 60/60" in line for line in seen[:first]), "".join(seen)[-3000:]
        student_file = ws / "exercises" / EXERCISES[0].filename
        student_file.write_text(student_file.read_text() + "\n# saved again\n")
        wait_for(f"Graded again: {EXERCISES[0].id}", first)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(timeout=10)
    return subprocess.CompletedProcess(command, proc.returncode, "".join(seen), "")


# Per command (as typed, comment aside): what the text promises. A command not listed here must
# exit 0. A callable takes the workspace and the finished command.
EXPECT: dict[str, Callable[[Path, subprocess.CompletedProcess], None]] = {
    grade_part(QUICK_START[0]): readme_quick_start,
    # README, For students (the workspace's exercises/ hold the solution)
    "grade": lambda ws, p: score_line(p, "60/60"),
    "grade -e 3.1 -e 4.2": lambda ws, p: score_line(p, "20/20"),
    "grade -v": lambda ws, p: score_line(p, "60/60"),
    "grade --html report.html": html_report,
    "grade work.ipynb": lambda ws, p: score_line(p, "60/60"),  # untagged; tagged: notebooks.md
    "grade --watch": lambda ws, p: ok(p),  # run by ``watched``
    # README, For instructors
    "grade batch SUBMISSIONS/ -o OUT/ [-j N]": lambda ws, p: class_graded(ws, "OUT/", p),
    "grade merge OUT1 OUT2 ... -o OUT": merged,
    "grade export OUT --roster roster.csv": export_csv,
    "grade release STUDENT_REPO/": released("STUDENT_REPO"),
    "grade notebook exercises.ipynb": handed_out_notebook("exercises.ipynb"),
    "grade gradescope autograder.zip": gradescope_bundle,
    # README, Your own exercises
    "grade --pack examples/ch5-pack/llm_ch5_pack examples/ch5-pack/solution": (
        lambda ws, p: score_line(p, "30/30")
    ),
    'grade new-exercise 5.2 --title "Top-p sampling" --pack my_course/my_pack': new_exercise,
    "grade check-pack my_course/my_pack": check_pack_of_the_scaffold,
    # docs/deploy.md
    "grade release student-edition --git": released("student-edition", git=True),
    "grade batch submissions/ -o results/ -j 8": lambda ws, p: class_graded(ws, "results/", p),
    "pytest --grade": pytest_graded("60/60"),
    "pytest --grade=path/to/submission": pytest_graded("60/60"),
    "pytest --grade --grade-exercise 3.1": pytest_graded("10/10"),
    # docs/notebooks.md (work.ipynb: the tagged notebook)
    "grade batch submissions/ -o out/": lambda ws, p: class_graded(ws, "out/", p),
    "pytest --grade=work.ipynb": pytest_graded("60/60"),
    "grade notebook chapter34.ipynb": handed_out_notebook("chapter34.ipynb"),
    # docs/batch.md, sending grades to the LMS
    'grade export out --roster classroom_roster.csv --format canvas --total-name "Attention lab" '
    "-o canvas.csv": canvas,
    "grade export out --roster roster.csv --format moodle --percent --items exercises "
    "-o moodle.csv": moodle,
    "grade export out --roster roster.csv > grades.csv": grades_csv,
    # docs/batch.md, shards (subs/grading.toml holds the seed)
    "grade merge out/shard-* -o out/all": lambda ws, p: class_graded(ws, "out/all/", p),
}
RUNNERS = {"grade --watch": watched}  # commands that do not end by themselves


def test_the_docs_have_the_blocks_this_file_knows():
    """The parser finds the blocks (a broken parser would test nothing), and every command
    skipped or promised here is still in the docs, as typed."""
    assert {b.doc for b in BLOCKS} == set(DOCS)
    typed = {key(c) for b in BLOCKS for c in b.commands}
    assert len(typed) >= 30
    firsts = {key(b.commands[0]) for b in BLOCKS}
    assert not set(SKIP) - typed, f"SKIP: no such command in the docs: {set(SKIP) - typed}"
    assert not set(SKIP_BLOCKS) - firsts, f"SKIP_BLOCKS: no such block: {set(SKIP_BLOCKS) - firsts}"
    promised = {k for k in EXPECT if k != grade_part(QUICK_START[0])}
    assert not promised - typed, f"EXPECT names commands no longer in the docs: {promised - typed}"


def test_the_parser_reads_fences_as_markdown_does():
    """Indented fences (in a list item), ~~~ fences, longer fences holding ```, continuations."""
    text = (
        "1. Grade:\n\n   ```bash\n   grade batch a/ \\\n     -o b/   # c\n   # note\n   ```\n"
        "~~~sh\ngrade x\n~~~\n````\n```bash\nnot a fence\n```\n````\n```python\nx = 1\n```\n"
    )
    found = [(line, info, command_lines(body)) for line, info, body in fences(text)]
    assert found == [
        (3, "bash", ("grade batch a/ -o b/   # c",)),
        (8, "sh", ("grade x",)),
        (11, "", ("```bash", "not a fence", "```")),
        (16, "python", ("x = 1",)),
    ]
    assert key("grade batch a/ -o b/   # c") == "grade batch a/ -o b/"


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_a_documented_block_runs_as_typed(block: Block, kit, tmp_path, request):
    if key(block.commands[0]) in SKIP_BLOCKS:
        pytest.skip(SKIP_BLOCKS[key(block.commands[0])])
    if key(block.commands[0]) == SHARDS_BLOCK:
        request.getfixturevalue("shards")  # runs it, once: other blocks use what it makes
        return
    run_block(block, WORKSPACES[block.doc](kit, tmp_path, block, request))


def run_block(block: Block, ws: Path) -> None:
    """Each command of ``block`` in ``ws``, one after the other, and what the text promises."""
    for command in (c for c in block.commands if key(c) not in SKIP):
        typed = as_run(command)
        runner = RUNNERS.get(key(command))
        proc = runner(ws, typed) if runner else run(typed, ws)
        check = EXPECT.get(key(typed)) or EXPECT.get(key(command)) or ok_default
        try:
            check(ws, proc)
        except AssertionError as exc:
            raise AssertionError(f"{block.id}: `{typed}` in {ws}: {exc}") from None


def ok_default(ws: Path, proc: subprocess.CompletedProcess) -> None:
    """A documented command that promises nothing else exits 0."""
    ok(proc)
