"""Grades that cannot be memorized (issue 18), where the grade counts: ``grade batch`` with
default settings draws a course seed once and keeps it (also across ``kill -9``), the Gradescope
bundle carries its own, and neither shows in what students get back; ``--compare-public`` flags
the lookup-table answer of ``seedsupport.make_answers``; the student edition holds no
grading.toml.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest
from seedsupport import (
    COURSE,
    EX41,
    SCHEMA,
    committed,
    grade_json,
    make_answers,
    meta,
    run,
    score_41,
    seeds_in_gradebook,
)
from support import ROOT, SOLUTION, make_submission
from test_gradescope_bundle import run_autograder, simulated_root

from grader.judge.seeds import PUBLIC_SEED
from grader.result.schema import HIDDEN_SEED


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Path]:
    return make_answers(tmp_path_factory.mktemp("answers"))


@pytest.fixture(scope="module")
def graded_class(answers, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """The lookup table and a right answer, graded by ``grade batch`` with default settings."""
    klass = tmp_path_factory.mktemp("class")
    shutil.copytree(answers["lookup"], klass / "lookup")
    (klass / "right" / "exercises").mkdir(parents=True)
    shutil.copyfile(SOLUTION / "exercises" / EX41, klass / "right" / "exercises" / EX41)
    out = tmp_path_factory.mktemp("graded") / "out"
    proc = run("batch", str(klass), "-o", str(out), "-j", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return klass, out, proc


def test_batch_grades_with_a_course_seed_drawn_once_and_kept(graded_class):
    klass, out, _ = graded_class
    lookup = json.loads((out / "results" / "lookup.json").read_text())
    right = json.loads((out / "results" / "right.json").read_text())
    assert score_41(lookup) < 10 and score_41(right) == 10
    seed = int(meta(out)["drawn_seed"])
    assert seed != PUBLIC_SEED and meta(out)["seed"] == str(seed)
    assert seeds_in_gradebook(out) == {seed}  # the instructor's gradebook records it
    csv = (out / "gradebook.csv").read_text()
    assert csv.splitlines()[0].endswith(",seed") and f",{seed}\n" in csv
    assert f"course seed {seed}" in (out / "index.html").read_text()
    # What goes back to students says "course seed", never the number.
    for name in ("lookup", "right"):
        doc = json.loads((out / "results" / f"{name}.json").read_text())
        jsonschema.validate(doc, SCHEMA)
        assert doc["seed"] == HIDDEN_SEED
        report = (out / "reports" / f"{name}.html").read_text()
        assert "course seed" in report
        assert not re.search(rf"\b{seed}\b", json.dumps(doc) + report), name


def test_a_repeated_batch_keeps_its_seed_and_compares_with_the_public_one(graded_class):
    klass, out, _ = graded_class
    seed = meta(out)["drawn_seed"]
    proc = run("batch", str(klass), "-o", str(out), "-j", "1", "--compare-public")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 graded now, 2 from an earlier run" in proc.stdout  # same seed: nothing to redo
    assert "public seed (--compare-public): 2 to grade" in proc.stdout
    assert meta(out)["drawn_seed"] == seed and seeds_in_gradebook(out) == {int(seed)}
    public = json.loads((out / "public-seed" / "results" / "lookup.json").read_text())
    assert public["seed"] == PUBLIC_SEED and score_41(public) == 10
    dashboard = (out / "index.html").read_text()
    assert re.search(r'id="n-public-only">1<', dashboard)
    flagged = re.findall(
        r'data-v="(\w+)"><a [^\n]*passes only the public examples \(4\.1\)', dashboard
    )
    assert flagged == ["lookup"]


def test_the_seed_of_grading_toml_is_the_course_seed(graded_class, tmp_path):
    klass, _, _ = graded_class
    subs = tmp_path / "subs"
    shutil.copytree(klass / "lookup", subs / "lookup")
    (subs / "grading.toml").write_text(f'exercises = ["4.1"]\nseed = {COURSE}\n')
    out = tmp_path / "out"
    proc = run("batch", str(subs), "-o", str(out), "-j", "1")
    assert proc.returncode == 0, proc.stderr
    assert "drawn_seed" not in meta(out) and seeds_in_gradebook(out) == {COURSE}
    doc = json.loads((out / "results" / "lookup.json").read_text())
    assert doc["seed"] == HIDDEN_SEED
    # The same score as grade with the same seed.
    alone = grade_json(subs / "lookup", "--seed", str(COURSE))
    assert doc["score"] == alone["score"]
    # The same checks, verdicts and evidence; only the path snippets load the answer from
    # differs: a batch names the student's clone ("."), grade the folder it was given.
    ours, theirs = doc["exercises"][0], alone["exercises"][0]
    for check in ours["checks"] + theirs["checks"]:
        check["reproduce"] = re.sub(
            r"load_exercise\('[^']*'", "load_exercise(PATH", check["reproduce"] or ""
        )
    assert ours == theirs


def test_a_batch_killed_with_kill_9_resumes_with_the_seed_it_drew(tmp_path):
    klass = tmp_path / "class"
    for name in ("ann", "ben", "cat", "dov", "eve"):  # 3.1 and 4.1 each: a few seconds
        make_submission(klass / name, {e: None for e in ("3.2", "3.3", "4.2", "4.3")})
    out = tmp_path / "out"
    first = subprocess.Popen(
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
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while committed(out) < 1:  # killed once the first submission is in the gradebook
        assert time.monotonic() < deadline and first.poll() is None, "nothing was graded"
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)  # the batch and its judge processes, as a node dies
    first.wait()
    before = committed(out)
    assert 1 <= before < 5
    drawn = meta(out)["drawn_seed"]
    assert seeds_in_gradebook(out) == {int(drawn)}
    proc = run("batch", str(klass), "-o", str(out), "-j", "1")
    assert proc.returncode == 0, proc.stderr
    # Graded under the same settings, seed included: what was committed is not graded again.
    assert f"{5 - before} graded now, {before} from an earlier run" in proc.stdout
    assert meta(out)["drawn_seed"] == drawn and seeds_in_gradebook(out) == {int(drawn)}


# --- Gradescope and the student edition ---------------------------------------------------------


def build_bundle(out: Path, *args: str) -> Path:
    proc = run("gradescope", str(out), *args)
    assert proc.returncode == 0, proc.stderr
    return out


def bundle_venv(folder: Path) -> Path:
    """What setup.sh builds, in short: a ``grade`` that runs the bundle's own package (this
    interpreter, with ``ROOT/source/package`` first on the path)."""
    script = folder / "bin" / "grade"
    script.parent.mkdir(parents=True)
    script.write_text(
        "#!/bin/sh\n"
        f'exec "{sys.executable}" -c "import sys; sys.path.insert(0, sys.argv.pop(1)); '
        'from grader.commands.cli import entry; entry()" "$AUTOGRADER_ROOT/source/package" "$@"\n'
    )
    script.chmod(0o755)
    return folder


def test_the_gradescope_bundle_grades_with_its_own_seed(answers, tmp_path):
    bundle = build_bundle(tmp_path / "autograder.zip")
    with zipfile.ZipFile(bundle) as zf:
        settings = json.loads(zf.read("bundle.json"))
        mode = (zf.getinfo("bundle.json").external_attr >> 16) & 0o777
        package = {i.filename: zf.read(i) for i in zf.infolist() if i.filename != "bundle.json"}
    seed = settings["seed"]
    assert isinstance(seed, int) and seed != PUBLIC_SEED and mode == 0o600
    assert not [name for name, data in package.items() if str(seed).encode() in data]

    root = simulated_root(tmp_path, bundle, bundle_venv(tmp_path / "venv"))
    shutil.copyfile(answers["lookup"] / "exercises" / EX41, root / "submission" / EX41)
    results = run_autograder(root)
    got = sum(t["score"] for t in results["tests"] if t["name"].startswith("4.1 "))
    assert got < 10
    assert results["extra_data"]["seed"] == "course seed"
    assert "course seed" in results["output"]
    assert not re.search(rf"\b{seed}\b", json.dumps(results))  # no field a student sees


def test_the_bundle_takes_its_seed_from_grading_toml_or_the_command_line(tmp_path):
    config = tmp_path / "grading.toml"
    config.write_text(f'seed = {COURSE}\nmax_examples = 3\n[points."4.1"]\nmax_score = 20\n')

    def bundle_json(zip_path: Path) -> dict:
        with zipfile.ZipFile(zip_path) as zf:
            return json.loads(zf.read("bundle.json"))

    from_config = bundle_json(build_bundle(tmp_path / "a.zip", "--config", str(config)))
    assert from_config["seed"] == COURSE and from_config["max_examples"] == 3
    assert from_config["max_scores"] == {"4.1": 20}
    given = bundle_json(build_bundle(tmp_path / "b.zip", "--config", str(config), "--seed", "5"))
    assert given["seed"] == 5
    first, second = (bundle_json(build_bundle(tmp_path / f"{n}.zip"))["seed"] for n in "cd")
    assert first != second  # drawn for each bundle


def test_the_student_edition_never_holds_a_grading_toml(tmp_path):
    from grader.editions.release import PACKAGES, build_release

    root = tmp_path / "project"
    for name in (*PACKAGES, "templates"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "constraints.txt"):
        shutil.copyfile(ROOT / name, root / name)
    shutil.copytree(SOLUTION, root / "tests" / "submissions" / "solution")
    for folder in (root, root / "exercises", root / "grader", root / "submissions"):
        folder.mkdir(exist_ok=True)
        (folder / "grading.toml").write_text(f"seed = {COURSE}\n")
    files = build_release(tmp_path / "edition", root)
    assert not [p for p in files if p.name == "grading.toml"]
    assert not [p for p in files if str(COURSE) in p.read_text(errors="replace")]
    workflow = (tmp_path / "edition" / ".github" / "workflows" / "classroom.yml").read_text()
    assert "GRADE_SEED: ${{ secrets.GRADE_SEED }}" in workflow
