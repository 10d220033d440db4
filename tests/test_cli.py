"""The ``grade`` command: exit codes, JSON schema, determinism, ``--seed``, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support import CORPUS, ROOT, SOLUTION, grade_cli, make_submission

from grader.result.schema import SCHEMA_PATH

SCHEMA = json.loads(SCHEMA_PATH.read_text())
FAST = ["--max-examples", "4"]


def grade(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    return grade_cli(*args, cwd=cwd, env=env, timeout=300, module="grader.commands.cli")


def grade_here(capsys, *args: str) -> subprocess.CompletedProcess:
    """``grade ARGS`` run in this process (its fork server stays warm between tests): for the
    tests of what grade writes, not of how its process starts and ends (those use ``grade``)."""
    from grader.commands.cli import main

    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["grade", *args], code, out, err)


def strip_duration(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "duration_s"}


@pytest.fixture(scope="module")
def mutant_submission(tmp_path_factory) -> Path:
    return make_submission(
        tmp_path_factory.mktemp("mutant"),
        {"3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py"},
    )


def test_exit_0_and_valid_json_when_everything_passes(tmp_path):
    out = tmp_path / "r.json"
    proc = grade(str(SOLUTION), "-e", "3.1", "--json", str(out), *FAST)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["score"] == doc["max_score"] == 10


def test_exit_1_when_a_check_fails(mutant_submission, capsys):
    proc = grade_here(capsys, str(mutant_submission), "-e", "3.1", "--format", "json", *FAST)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    (ex,) = doc["exercises"]
    failing = [c for c in ex["checks"] if not c["passed"]]
    assert ex["status"] == "failed" and failing
    assert failing[0]["counterexample"] is not None
    assert "transfer_weights" in failing[0]["reproduce"]
    assert ex["score"] == sum(c["points"] for c in ex["checks"])


def test_same_json_on_every_run_apart_from_duration(mutant_submission, capsys):
    runs = [
        json.loads(grade(str(mutant_submission), "-e", "3.1", "--format", "json", *FAST).stdout),
        json.loads(
            grade_here(
                capsys, str(mutant_submission), "-e", "3.1", "--format", "json", *FAST
            ).stdout
        ),
    ]  # a new process and a warm one
    assert strip_duration(runs[0]) == strip_duration(runs[1])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["/no/such/folder"], "no such file or folder"),
        (["-e", "9.9"], "unknown exercise"),
        (["--max-examples", "0"], "--max-examples"),
    ],
)
def test_usage_errors_exit_2_with_one_line(args, needle):
    proc = grade(*args)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_not_a_submission_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    proc = grade(str(tmp_path / "notes.txt"))
    assert proc.returncode == 2 and "not a submission" in proc.stderr
    proc = grade(str(tmp_path))
    assert proc.returncode == 2 and "no exercises/ folder" in proc.stderr


def test_missing_file_is_missing_not_a_crash(tmp_path, capsys):
    folder = make_submission(tmp_path / "s", {"3.2": None})
    proc = grade_here(capsys, str(folder), "-e", "3.1", "-e", "3.2", "--format", "json", *FAST)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    status = {e["id"]: e["status"] for e in doc["exercises"]}
    assert status == {"3.1": "passed", "3.2": "missing"}


def test_syntax_error_is_error_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("def transfer_weights(a, b)\n    pass\n")
    folder = make_submission(tmp_path / "s", {"3.1": bad})
    doc = json.loads(grade_here(capsys, str(folder), "-e", "3.1", "--format", "json", *FAST).stdout)
    (ex,) = doc["exercises"]
    assert ex["status"] == "error" and ex["score"] == 0
    assert "ex3_1_weight_transfer.py, line 1" in ex["checks"][0]["message"]


def test_non_utf8_source_is_an_error_not_a_crash(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_bytes(b'NAME = "caf\xe9"\ndef transfer_weights(a, b):\n    pass\n')
    folder = make_submission(tmp_path / "s", {"3.1": bad})
    proc = grade_here(capsys, str(folder), "-e", "3.1", "--format", "json", *FAST)
    assert proc.returncode == 1, proc.stderr
    (ex,) = json.loads(proc.stdout)["exercises"]
    assert ex["status"] == "error"


def test_text_report_has_no_colour_when_not_a_tty(mutant_submission, capsys):
    proc = grade_here(capsys, str(mutant_submission), "-e", "3.1", *FAST)
    assert "\x1b[" not in proc.stdout
    assert "Score: " in proc.stdout and "Reproduce" in proc.stdout


def test_grading_leaves_nothing_behind(tmp_path):
    """Nothing in the working folder (e.g. no .hypothesis cache). And ``grade`` skips the
    interpreter's teardown, not its own clean-up: the fork server, its workers and every
    temporary folder are gone when it returns, and the output is whole."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    proc = grade_cli(
        str(SOLUTION),
        "-e",
        "3.1",
        *FAST,
        "--format",
        "json",
        cwd=work,
        env={**os.environ, "TMPDIR": str(tmp)},
        module="grader.commands.cli",
        fresh=True,  # its own fork server, to see that it is gone
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 10
    assert list(work.iterdir()) == []
    assert list(tmp.iterdir()) == []
    left = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(tmp) in os.readlink(entry / "cwd"):
                left.append(entry.name)
        except OSError:
            continue
    assert left == []


def test_a_usage_error_of_a_subcommand_is_one_line_under_python_m(tmp_path):
    # Run as ``python -m grader.commands.cli`` the command line is ``__main__``: its errors must
    # still be the one class the subcommands raise (grader.shared.errors), not an "internal error".
    (tmp_path / "class").mkdir()
    proc = grade(
        "batch",
        str(tmp_path / "class"),
        "-o",
        str(tmp_path / "out"),
        "--shard",
        "1/2",
        cwd=Path.cwd(),
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("grade: error: ") and "internal error" not in proc.stderr


def test_version_names_what_decides_a_grade_without_importing_torch():
    import hypothesis
    import torch

    from grader import __version__

    probe = (
        "import sys\n"
        "from grader.commands.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit as exc:\n"
        "    print('exit', exc.code, 'torch' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    python = ".".join(map(str, sys.version_info[:3]))
    assert proc.stdout.splitlines() == [
        f"grade {__version__} (Python {python}, torch {torch.__version__}, "
        f"hypothesis {hypothesis.__version__})",
        "exit 0 False",
    ], proc.stderr


def test_the_report_suggests_rerunning_the_first_exercise_left_short(tmp_path, capsys):
    folder = make_submission(
        tmp_path / "alice", {"4.1": CORPUS / "ex4_1" / "wrong_counts_mask_buffer.py"}
    )
    proc = grade_here(capsys, str(folder), "-e", "4.1", "--seed", "7", *FAST)
    assert proc.returncode == 1, proc.stderr
    (footer,) = [line for line in proc.stdout.splitlines() if line.startswith("More:")]
    assert footer.startswith(f"More: grade {folder} --seed 7 --max-examples 4 -e 4.1 -v ")


def test_rerun_command_keeps_what_decides_the_examples():
    from grader.commands.cli import grade_parser, rerun_command

    assert rerun_command(grade_parser().parse_args([])) == "grade"
    args = grade_parser().parse_args(["my work.ipynb", "-e", "3.1", "--seed", "5", "-v"])
    assert rerun_command(args) == "grade 'my work.ipynb' --seed 5"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/stat")
def test_the_time_reported_counts_from_the_process_start():
    """The duration covers what ran before the grader was imported (here a 0.3 s sleep)."""
    code = (
        "import time; time.sleep(0.3); from grader.shared import timing; "
        "print(timing.since_start())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert float(proc.stdout) >= 0.3, proc.stderr


@pytest.mark.parametrize("value", ["1", "true", "-", "timings.json"])
def test_grader_timings_set_as_a_switch_prints_and_a_file_name_is_written(
    value, tmp_path, monkeypatch, capsys
):
    """``GRADER_TIMINGS=1`` prints the figures on stderr (it made a file named ``1``)."""
    from grader.shared import timing

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(timing.ENV, value)
    monkeypatch.setattr(timing, "enabled", True)
    monkeypatch.setattr(timing, "_phases", {})  # this test's figures only, none left behind
    timing.mark("graded")
    timing.write()
    written = sorted(p.name for p in tmp_path.iterdir())
    if value.endswith(".json"):
        assert (
            written == [value] and "graded" in json.loads((tmp_path / value).read_text())["phases"]
        )
    else:
        assert written == [] and "graded" in json.loads(capsys.readouterr().err)["phases"]


def test_heavy_imports_turn_the_collector_off_then_freeze_and_turn_it_back_on():
    code = (
        "import gc\n"
        "from grader.shared.heavyimports import heavy_imports\n"
        "with heavy_imports():\n"
        "    assert not gc.isenabled()\n"
        "    import json\n"
        "assert gc.isenabled() and gc.get_freeze_count() > 0\n"
        "frozen = gc.get_freeze_count()\n"
        "gc.disable()\n"
        "with heavy_imports():\n"
        "    made = [[] for _ in range(1000)]\n"
        "assert not gc.isenabled()  # left as it was found\n"
        "assert gc.get_freeze_count() == frozen  # once: what grading makes later is collected\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "present, selected, workers",
    [
        (["3.1", "3.2", "3.3", "4.1", "4.2", "4.3"], None, 6),
        (["3.1", "3.2", "3.3", "4.1", "4.2", "4.3"], ["4.3", "3.1"], 2),
        (["3.1", "4.2"], None, 2),  # the other four are missing: graded with no worker
        (["3.1", "4.2"], ["4.2", "4.3"], 1),
        ([], ["4.3"], 1),  # at least one, never a fork server with none
    ],
)
def test_a_grade_asks_for_a_worker_per_exercise_it_will_run(present, selected, workers):
    from grader.commands.cli import workers_needed
    from grader.intake.submission import Submission

    submission = Submission("s", ROOT, {ex: ROOT / f"{ex}.py" for ex in present})
    assert workers_needed(selected, submission) == workers


@pytest.mark.parametrize("fresh", [False, True], ids=["borrowed", "fresh"])
def test_a_command_past_its_timeout_is_a_timeout_not_an_exit_status(tmp_path, fresh):
    """The tests' way to run a command (forked from the warm box, or fresh) raises on a hang:
    a test that expects a failing exit status never passes on a command that hung."""
    hang = ("-n", "1", "import time; time.sleep(30)")
    with pytest.raises(subprocess.TimeoutExpired):
        grade_cli(*hang, cwd=tmp_path, timeout=1, module="timeit", fresh=fresh)
    done = grade_cli("-n", "1", "pass", cwd=tmp_path, timeout=60, module="timeit", fresh=fresh)
    assert done.returncode == 0 and "loop" in done.stdout
