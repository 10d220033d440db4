"""``grade batch`` and ``grade merge`` end to end: bad input never stops the batch, a batch
killed with ``kill -9`` resumes to the same gradebook, shards merge to the same gradebook as one
run, and a changed submission is graded again.

Classes are small (5 submissions), graded on exercise 3.1 only with 2 examples per check, and
with the public seed given explicitly, so that separate OUT folders can be compared (by default a
batch draws a course seed of its own: tests/test_course_seed.py).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest
from nbsupport import solution_notebook
from support import CORPUS, ROOT, SOLUTION, grade_cli, make_submission

from grader.result.schema import SCHEMA_PATH

FAST = ["-e", "3.1", "--max-examples", "2", "--seed", "20241"]
SCHEMA = json.loads(SCHEMA_PATH.read_text())


def batch(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return grade_cli(
        "batch", *args, env={**os.environ, **(env or {})}, module="grader.commands.cli"
    )


def merge(*args: str) -> subprocess.CompletedProcess:
    return grade_cli("merge", *args, timeout=300, module="grader.commands.cli")


GRADE = str(Path(sys.executable).with_name("grade"))


def script(name: str, env: dict) -> subprocess.CompletedProcess:
    """Run one of the example job scripts as its scheduler would, with ``env`` set."""
    return subprocess.run(
        ["bash", str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, **env},
    )


def zip_folder(folder: Path, archive: Path, prefix: str) -> Path:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*.py")):
            zf.write(path, f"{prefix}/{path.relative_to(folder).as_posix()}")
    return archive


def make_class(root: Path) -> Path:
    """Five submissions of every kind that grades: folders, loose files, a zip, a notebook."""
    make_submission(root / "alice")
    make_submission(root / "bob", {"3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py"})
    zip_folder(SOLUTION, root / "carol.zip", "carol")
    solution_notebook(root / "dan.ipynb", tagged=True)
    erin = root / "erin"
    erin.mkdir()
    for path in (SOLUTION / "exercises").glob("*.py"):
        shutil.copyfile(path, erin / path.name)  # handed in without the exercises/ folder
    return root


def table_rows(db: sqlite3.Connection, table: str) -> list[tuple]:
    measured = {"duration_s", "result_sha256"}  # a time, and the hash of a file holding it
    columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] not in measured]
    return db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2").fetchall()


def state(out: Path) -> dict:
    """Everything a batch leaves in OUT that must not depend on how it was run (durations
    aside: they are measured)."""
    db = sqlite3.connect(out / "gradebook.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        tables = {t: table_rows(db, t) for t in ("submissions", "exercises", "checks")}
        meta = dict(db.execute("SELECT key, value FROM meta WHERE key != 'shard'"))
    finally:
        db.close()
    results = {}
    for path in sorted((out / "results").glob("*")):
        doc = json.loads(path.read_text())
        doc.pop("duration_s")
        results[path.name] = doc
    return {
        "csv": (out / "gradebook.csv").read_text(),
        "tables": tables,
        "meta": meta,
        "results": results,
        "files": sorted(
            p.relative_to(out).as_posix()
            for p in out.rglob("*")
            if p.is_file() and p.name != "index.html"
        ),
    }


def gradebook(out: Path) -> dict[str, dict[str, str]]:
    return {
        row["name"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))
    }


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    return make_class(tmp_path_factory.mktemp("class") / "submissions")


@pytest.fixture(scope="module")
def reference(klass, tmp_path_factory) -> Path:
    """One uninterrupted run: what every other way of running the batch must reproduce."""
    out = tmp_path_factory.mktemp("reference") / "out"
    proc = batch(str(klass), "-o", str(out), "-j", "2", *FAST)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out


def test_one_run_grades_every_kind_of_submission(reference):
    book = gradebook(reference)
    assert list(book) == ["alice", "bob", "carol", "dan", "erin"]
    for name in ("alice", "carol", "dan", "erin"):
        assert (book[name]["total"], book[name]["3.1"], book[name]["status"]) == (
            "10",
            "10",
            "passed",
        ), name
    assert book["bob"]["status"] == "failed" and float(book["bob"]["total"]) < 10
    assert set(book["alice"]) == {
        "name",
        "total",
        "max_total",
        "3.1",
        "status",
        "reason",
        "grader_version",
        "seed",
    }
    for path in (reference / "results").glob("*.json"):
        jsonschema.validate(json.loads(path.read_text()), SCHEMA)
    assert not (reference / ".work").exists()


def test_which_check_most_students_failed_is_one_query(reference):
    db = sqlite3.connect(reference / "gradebook.sqlite")
    (exercise, check, failed), *_ = db.execute(
        """
        SELECT c.exercise_id, c.name, COUNT(*) AS failed
        FROM checks AS c JOIN submissions AS s ON s.name = c.submission
        WHERE s.graded AND NOT c.passed
        GROUP BY c.exercise_id, c.name
        ORDER BY failed DESC, c.exercise_id, c.name
        """
    ).fetchall()
    bob = json.loads((reference / "results" / "bob.json").read_text())
    bob_failed = [c["name"] for c in bob["exercises"][0]["checks"] if not c["passed"]]
    assert (exercise, failed) == ("3.1", 1) and check in bob_failed


def test_the_example_queries_in_the_docs_run(reference):
    docs = (ROOT / "docs" / "batch.md").read_text()
    queries = [q for q in re.findall(r"```sql\n(.*?)```", docs, re.S) if q.startswith("SELECT")]
    assert len(queries) == 2
    db = sqlite3.connect(reference / "gradebook.sqlite")
    most_failed, averages = (db.execute(q).fetchall() for q in queries)
    assert most_failed and most_failed[0][0] == "3.1"
    assert averages == [("3.1", 9.0, 10.0, 0)]  # four full marks and bob's 5 out of 10


def test_html_report_per_submission(reference):
    pytest.importorskip(
        "grader.result.report_html", reason="the HTML report renderer has not landed"
    )
    db = sqlite3.connect(reference / "gradebook.sqlite")
    paths = [p for (p,) in db.execute("SELECT report_path FROM submissions")]
    assert paths and all(p and (reference / p).is_file() for p in paths)
    assert "bob" in (reference / "reports" / "bob.html").read_text()


def bad_zip(path: Path, name: str, data: bytes = b"x = 1\n", mode: int = 0) -> Path:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    with zipfile.ZipFile(path, "w") as zf:
        for sol in (SOLUTION / "exercises").glob("*.py"):
            zf.write(sol, f"exercises/{sol.name}")
        zf.writestr(info, data)
    return path


def make_bad_class(root: Path, absolute: Path) -> dict[str, str]:
    """One good submission and one of each kind of bad input; returns name -> expected reason.
    ``absolute`` is where the zip with an absolute path would write."""
    root.mkdir(parents=True)
    make_submission(root / "good")
    (root / "corrupt.zip").write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    bad_zip(root / "climber.zip", "../../evil.py")
    bad_zip(root / "absolute.zip", str(absolute))
    bad_zip(root / "linker.zip", "exercises/helper.py", b"/etc/passwd", stat.S_IFLNK | 0o777)
    with zipfile.ZipFile(root / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("exercises/ex3_1_weight_transfer.py", b"x = 1\n" + bytes(3 * 2**20))
    (root / "empty").mkdir()
    latin = make_submission(root / "latin")
    target = latin / "exercises" / "ex3_1_weight_transfer.py"
    target.write_bytes(b"# r\xe9ponse\n" + target.read_bytes())
    (root / "scrambled.ipynb").write_text("{ this is not json", encoding="utf-8")
    (root / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    (root / "notes.txt").write_text("not a submission\n")
    (root / "grading.toml").write_text(
        'exercises = ["3.1"]\nmax_examples = 2\n[limits]\nunzip_mb = 1\n', encoding="utf-8"
    )
    return {
        "corrupt": "not a valid zip file",
        "climber": "points outside the submission",
        "absolute": "is an absolute path",
        "linker": "is a symbolic link",
        "bomb": "zip bomb",
        "empty": "no exercises/ folder",
        "latin": "exercises/ex3_1_weight_transfer.py is not UTF-8 text (byte 0xe9 on line 1)",
        "scrambled": "not a readable notebook",
        "deep": "its JSON is nested too deeply to read",  # an error row, not regraded
        "notes.txt": "not a submission",
    }


def test_bad_input_never_stops_the_batch(tmp_path):
    expected = make_bad_class(tmp_path / "bad", tmp_path / "evil.py")
    out = tmp_path / "out"
    proc = batch(str(tmp_path / "bad"), "-o", str(out), "-j", "2")  # settings from grading.toml
    assert proc.returncode == 1, proc.stderr  # some submissions could not be graded
    book = gradebook(out)
    assert set(book) == {"good", *expected}
    assert book["good"]["status"] == "passed" and book["good"]["total"] == "10"
    for name, reason in expected.items():
        assert book[name]["status"] == "error", name
        assert reason in book[name]["reason"], (name, book[name]["reason"])
        assert "\n" not in book[name]["reason"]
        if name != "absolute":  # whose reason quotes the path it asked for
            assert str(tmp_path) not in book[name]["reason"]  # no scratch paths
        jsonschema.validate(json.loads((out / "results" / f"{name}.json").read_text()), SCHEMA)
    # The non-UTF-8 file is not run, and its exercise says why.
    latin = json.loads((out / "results" / "latin.json").read_text())
    assert latin["exercises"][0]["status"] == "error"
    assert "not UTF-8 text" in latin["exercises"][0]["checks"][0]["message"]
    assert not list(tmp_path.rglob("evil.py"))  # neither ../../evil.py nor the absolute one
    assert not (out / ".work").exists()
    assert f"/{len(expected) + 1}] " in proc.stdout  # a plain line per submission
    # Bad input is a final verdict: a second run grades none of it again.
    again = batch(str(tmp_path / "bad"), "-o", str(out), "-j", "2")
    assert f"0 graded now, {len(expected) + 1} from an earlier run" in again.stdout, again.stdout


def wait_for(predicate, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the batch never got there"
        time.sleep(0.05)


def start_batch(klass: Path, out: Path, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            "batch",
            str(klass),
            "-o",
            str(out),
            "-j",
            "1",
            *FAST,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, **(env or {})},
    )


def kill9(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # the batch and its judge processes, as a node dies
    proc.wait()


def test_kill_9_then_resume_gives_the_same_gradebook(klass, reference, tmp_path):
    out = tmp_path / "out"
    tmp = tmp_path / "tmp"  # the batches' temporary folder
    tmp.mkdir()
    env = {"TMPDIR": str(tmp)}
    early = start_batch(klass, out, env)  # killed while starting up
    wait_for(lambda: (out / "gradebook.sqlite").exists())
    kill9(early)
    late = start_batch(klass, out, env)  # killed as soon as a result has been written
    wait_for(lambda: any((out / "results").glob("*.json")) if (out / "results").exists() else False)
    kill9(late)
    db = sqlite3.connect(out / "gradebook.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    committed = db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    db.close()
    assert committed < 5

    proc = batch(str(klass), "-o", str(out), "-j", "2", *FAST, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"{5 - committed} graded now, {committed} from an earlier run" in proc.stdout
    assert state(out) == state(reference)
    # The killed judges' folders (workers', a notebook's) were in OUT, and this run removed them;
    # none is left in /tmp. (A fork server's home is left out: one made just before a kill at
    # start-up, whose template never ran, can stay behind, as it could before.)
    assert not (out / ".work").exists()
    assert [p.name for p in tmp.iterdir() if not p.name.startswith("grade-server-")] == []

    again = batch(str(klass), "-o", str(out), "-j", "2", *FAST)
    assert "0 graded now, 5 from an earlier run" in again.stdout
    assert state(out) == state(reference)


def test_changed_submission_is_graded_again(klass, reference, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    changed = tmp_path / "class"
    shutil.copytree(klass, changed)
    shutil.copyfile(
        SOLUTION / "exercises" / "ex3_1_weight_transfer.py",
        changed / "bob" / "exercises" / "ex3_1_weight_transfer.py",
    )
    shutil.rmtree(changed / "erin")  # withdrawn
    proc = batch(str(changed), "-o", str(out), "-j", "1", *FAST)
    assert proc.returncode == 0, proc.stderr
    assert "1 graded now, 3 from an earlier run" in proc.stdout
    book = gradebook(out)
    assert list(book) == ["alice", "bob", "carol", "dan"]
    assert book["bob"]["status"] == "passed"
    assert not (out / "results" / "erin.json").exists()


def test_other_settings_regrade_everything(klass, reference, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(reference, out)
    proc = batch(str(klass), "-o", str(out), "-j", "2", *FAST, "--seed", "5")
    assert "5 graded now, 0 from an earlier run" in proc.stdout
    assert {row["seed"] for row in gradebook(out).values()} == {"5"}


def test_shards_merge_to_the_same_gradebook_as_one_run(klass, reference, tmp_path):
    """Shard 1 of 2 as the example Slurm array task 0 runs it, shard 2 as a GitHub Actions
    matrix job does (GRADE_SHARD_INDEX/COUNT), merged by the example Slurm merge job."""
    subs = tmp_path / "subs"
    shutil.copytree(klass, subs)
    (subs / "grading.toml").write_text('exercises = ["3.1"]\nmax_examples = 2\nseed = 20241\n')
    graded = tmp_path / "graded"
    common = {"SUBMISSIONS": str(subs), "OUT": str(graded), "GRADE": GRADE}
    slurm = {
        "SLURM_ARRAY_TASK_ID": "0",
        "SLURM_ARRAY_TASK_COUNT": "2",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_CPUS_PER_TASK": "1",
    }
    one = script("slurm-grade.sbatch", {**common, **slurm})
    assert one.returncode == 0, one.stderr
    assert "shard 1/2" in one.stdout
    github = {"GRADE_SHARD_INDEX": "1", "GRADE_SHARD_COUNT": "2"}
    two = batch(str(subs), "-o", str(graded / "shard-1"), "-j", "1", "--shard", "auto", env=github)
    assert two.returncode == 0, two.stderr
    assert "shard 2/2" in two.stdout
    sizes = [len(gradebook(graded / s)) for s in ("shard-0", "shard-1")]
    assert sorted(sizes) == [2, 3]
    merged = script("slurm-merge.sbatch", common)
    assert merged.returncode == 0, merged.stderr
    assert state(graded / "merged") == state(reference)
    again = merge(str(graded / "shard-1"), str(graded / "shard-0"), "-o", str(graded / "merged"))
    assert again.returncode == 0 and state(graded / "merged") == state(reference)


def test_merge_refuses_shards_graded_differently(reference, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(reference, other)
    db = sqlite3.connect(other / "gradebook.sqlite")
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
    settings["seed"] = 99
    db.execute("UPDATE meta SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    db.execute("UPDATE meta SET value = 'other' WHERE key = 'settings_hash'")
    db.commit()
    db.close()
    proc = merge(str(reference), str(other), "-o", str(tmp_path / "all"))
    assert proc.returncode == 2
    assert "different settings (seed)" in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["/no/such/folder", "-o", "OUT"], "no such folder"),
        (["CLASS", "-o", "OUT", "-j", "0"], "-j must be at least 1"),
        (["CLASS", "-o", "OUT", "--shard", "3/2"], "between 1 and N"),
        (["CLASS", "-o", "OUT", "--shard", "1/2"], "a sharded batch grades every shard with"),
        (["CLASS", "-o", "OUT", "--config", "/no/such.toml"], "no such file"),
        (["CLASS", "-o", "OUT", "-e", "9.9"], "unknown exercise '9.9'"),
    ],
)
def test_usage_errors(klass, tmp_path, args, needle):
    args = [str(klass) if a == "CLASS" else str(tmp_path / "o") if a == "OUT" else a for a in args]
    proc = batch(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr and proc.stderr.count("\n") == 1


def test_the_judges_are_forked_from_the_main_process_with_torch_imported_once(tmp_path):
    """On Linux, a main process that runs no other thread imports torch and the checks once,
    and the judge processes forked from it find them imported (a spy set in the main process
    runs in each judge: a fresh interpreter would not have it)."""
    klass = tmp_path / "class"
    make_submission(klass / "alice")
    make_submission(klass / "bob")
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    code = (
        "import os, sys\n"
        "from grader.batch import judges\n"
        "from grader.commands import cli\n"
        "original = judges.init_judge\n"
        "def spy(*args):\n"
        f"    with open(os.path.join({str(marks)!r}, str(os.getpid())), 'w') as f:\n"
        "        f.write(str('torch' in sys.modules and 'hypothesis' in sys.modules))\n"
        "    original(*args)\n"
        "judges.init_judge = spy\n"
        f"code = cli.main(['batch', {str(klass)!r}, '-o', {str(out)!r}, '-j', '2', *{FAST!r}])\n"
        "print('torch' in sys.modules, code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600
    )
    assert proc.stdout.split()[-2:] == ["True", "0"], proc.stdout + proc.stderr
    assert [p.read_text() for p in marks.iterdir()] == ["True", "True"]
    assert (out / "similarity.csv").is_file() and (out / "gradebook.csv").is_file()


def test_judges_are_fresh_interpreters_when_the_main_process_runs_threads(monkeypatch):
    """A fork while another thread holds a lock would leave it held in the judge forever."""
    from grader.batch import judges
    from grader.judge import parallel

    monkeypatch.setattr(parallel, "threads_here", lambda: 2)  # as the kernel counts them
    from grader.shared import course

    with course.using(course.resolve("llm-ch3-4")):  # as grade --pack NAME batch chooses it
        context, initargs, servers = judges.judge_processes("default", 2)
    assert context.get_start_method() == "spawn" and servers == []
    assert initargs[-1] == "llm-ch3-4"  # a fresh interpreter is told the course (judges.init)
