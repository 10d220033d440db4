"""One verdict wherever a submission is graded (``grader.pipeline``).

The same answers, graded with one seed through each front end: ``grade`` (the command line),
a batch's judge, the Gradescope bundle's run, ``pytest --grade``, ``grader.check`` (the
notebook judge's ``answer``) and the tests' own entry (``support.grade_folder``, which every
test that grades goes through), give the same result: the same JSON, less ``duration_s`` and the
places a message names (a folder's file and line, a kernel's cell); for Gradescope, the same
document its format makes of ``grade``'s result; for pytest, the same failing checks.

The answers mix corpus cases (wrong, and unusual but right), a hostile file and the files
that must not run (a Latin-1 byte in a comment, a byte-order mark, lines ended by CR alone, a
NUL byte): a refusal left out of the pipeline, or applied in one front end only, makes these
differ (try it: comment out ``refuse``'s body).
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT, SOLUTION, grade_folder, make_submission
from test_pytest_plugin import junit_verdicts

import grader.commands.cli
from grader.shared.registry import BY_ID

pytestmark = pytest.mark.slow

SEED, FAST = 4242, "2"
CORPUS = ROOT / "tests" / "corpus"
HOSTILE = ROOT / "tests" / "hostile"


def _bytes(exercise: str, mangle) -> bytes:
    return mangle((SOLUTION / "exercises" / BY_ID[exercise].filename).read_bytes())


ODD_BYTES = {  # exercise -> the solution's file with bytes that decide whether it runs
    "3.1": lambda b: b"# r\xe9ponse (Latin-1)\n" + b,
    "3.2": lambda b: b"\xef\xbb\xbf" + b,  # a byte-order mark: still UTF-8 text
    "3.3": lambda b: b.replace(b"\n", b"\r"),  # CR-only lines: Python reads them
    "4.1": lambda b: b.replace(b"\n", b"\n\x00", 1),  # a NUL byte: not text
    "4.2": lambda b: b + b"x = " + b"1+" * 1000 + b"1\n",  # nested too deep
    "4.3": lambda b: b + b"#" * (5 * 2**20) + b"\n",  # over the size a worker may copy
}
REFUSED = {  # what each refusal says; every other exercise of the odd folder passes
    "3.1": "is not UTF-8 text (byte 0xe9 on line 1)",
    "4.1": "is not text (it holds a NUL byte, on line 2)",
    "4.2": "nests its code more than 200 levels deep",
    "4.3": "exercise files may be at most 4 MiB",
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("parity")
    odd = root / "odd-files"
    for exercise, mangle in ODD_BYTES.items():
        odd.mkdir(exist_ok=True)
        (odd / BY_ID[exercise].filename).write_bytes(_bytes(exercise, mangle))
    made = {
        "odd": make_submission(root / "odd", {e: odd / BY_ID[e].filename for e in ODD_BYTES}),
        "corpus": make_submission(
            root / "corpus",
            {
                "3.1": CORPUS / "ex3_1" / "wrong_no_transpose.py",
                "3.2": CORPUS / "ex3_2" / "correct_factory.py",
                "4.2": CORPUS / "ex4_2" / "wrong_decimal_megabytes.py",
                "4.3": HOSTILE / "tamper_probe_table.py",
            },
        ),
    }
    return made


def comparable(doc: dict) -> dict:
    """A result without what may differ between front ends: its time and the places named."""
    doc = json.loads(json.dumps(doc))
    doc.pop("duration_s", None)
    doc.pop("submission", None)

    def places(text: str) -> str:
        return re.sub(r"\(in [^)]*\)", "(in ...)", text)

    def key(text: str) -> str:  # an exception's cause is keyed by its file (or cell) and line
        return re.sub(r"^(raised:\w+):.*$", r"\1:...", text)

    for ex in doc["exercises"]:
        for check in ex["checks"]:
            check["message"] = places(check["message"])
            check["reproduce"] = None  # names the submission where the student has it
            if check.get("cause"):
                cause = check["cause"]
                cause.update(key=key(cause["key"]), text=places(cause["text"]))
                cause["hint"] = places(cause["hint"])
        for entry in ex.get("diagnosis", []):
            entry.update(key=key(entry["key"]), cause=places(entry["cause"]))
            entry["hint"] = places(entry["hint"])
    return doc


def via_grade(folder: Path, capsys) -> dict:
    code = grader.commands.cli.main(
        [str(folder), "--format", "json", "--seed", str(SEED), "--max-examples", FAST]
    )
    assert code in (0, 1)
    return json.loads(capsys.readouterr().out)


def via_batch(folder: Path, tmp_path: Path) -> dict:
    from grader.batch.config import Settings
    from grader.batch.entries import Entry
    from grader.batch.pool import Job, grade_job

    settings = Settings(seed=SEED, max_examples=int(FAST))
    outcome = grade_job(Job(Entry(folder.name, folder, "folder"), tmp_path / "job", settings))
    return outcome.result


def via_gradescope(folder: Path, tmp_path: Path) -> dict:
    from grader.editions.autograder import SETTINGS, run_autograder

    root = tmp_path / "autograder"
    shutil.copytree(folder, root / "submission")
    (root / "source").mkdir()
    (root / "source" / SETTINGS).write_text(json.dumps({"seed": SEED, "max_examples": 2}))
    run_autograder(root)
    return json.loads((root / "results" / "results.json").read_text())


def as_gradescope(doc: dict) -> dict:
    from grader.result import formats
    from grader.result.schema import from_dict

    buffer = io.StringIO()
    formats.emit("gradescope", from_dict(doc), buffer)
    return json.loads(buffer.getvalue())


def gradescope_tests(doc: dict) -> list[tuple]:
    """Gradescope's tests less their text (whose snippets name the submission where it lies)."""
    return [
        (t["name"], t["number"], t["score"], t["max_score"], t.get("status")) for t in doc["tests"]
    ]


def via_check(folder: Path, exercise: str) -> dict:
    """``grader.check(exercise)`` as the notebook judge answers it, the file's text its cell."""
    from grader.live.nbjudge import Verdicts, answer
    from grader.pipeline import default_start

    text = (folder / "exercises" / BY_ID[exercise].filename).read_bytes()
    request = {
        "inputs": ["", text.decode("utf-8", "replace")],
        "exercises": [exercise],
        "seed": SEED,
        "max_examples": int(FAST),
    }
    return answer(request, default_start(), Verdicts())["result"]


def pytest_verdicts(folder: Path, tmp_path: Path) -> dict[tuple[str, str], bool]:
    xml = tmp_path / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--grade={folder}",
            "--grade-seed",
            str(SEED),
            "--grade-max-examples",
            FAST,
            f"--junitxml={xml}",
            "-q",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    return junit_verdicts(xml)


@pytest.mark.parametrize("which", ["odd", "corpus"])
def test_every_front_end_gives_the_same_result(which, folders, tmp_path, capsys):
    folder = folders[which]
    graded = via_grade(folder, capsys)
    expected = comparable(graded)
    if which == "odd":  # each refusal is applied (the same everywhere, as what follows holds)
        for ex in graded["exercises"]:
            if ex["id"] in REFUSED:
                assert ex["status"] == "error", ex["id"]
                assert REFUSED[ex["id"]] in ex["checks"][0]["message"], ex["checks"][0]
            else:
                assert ex["status"] == "passed", ex["id"]
    assert comparable(via_batch(folder, tmp_path)) == expected
    in_the_tests = grade_folder(folder, seed=SEED, max_examples=int(FAST))
    assert comparable(in_the_tests.to_dict()) == expected
    got, wanted = via_gradescope(folder, tmp_path), as_gradescope(graded)
    assert got["score"] == wanted["score"]
    assert gradescope_tests(got) == gradescope_tests(wanted)
    in_a_kernel = [e["id"] for e in graded["exercises"] if e["status"] != "missing"]
    if which == "odd":  # a kernel's cells are text already: no bytes to refuse there
        in_a_kernel = []
    # From cells only the definitions an exercise asks for (and what they need) are taken:
    # the hostile file's top-level attack is not, so it is not the same answer there.
    in_a_kernel = [e for e in in_a_kernel if e != "4.3"]
    for exercise in in_a_kernel:
        from_cell = comparable(via_check(folder, exercise))["exercises"]
        (mine,) = [e for e in expected["exercises"] if e["id"] == exercise]
        assert from_cell == [mine], exercise
    verdicts = {
        (e["id"], c["name"]): c["passed"]
        for e in graded["exercises"]
        for c in e["checks"]
        if e["status"] != "missing"
    }
    assert pytest_verdicts(folder, tmp_path) == verdicts
