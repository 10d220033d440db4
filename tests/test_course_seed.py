"""Grades that cannot be memorized (issue 18): the public seed and the course's grading seed.

The attack, built here from a logged run rather than stored: an answer to 4.1 that logs every
config it is called with is graded once with the public seed (``grade -e 4.1 --no-sandbox``);
a second answer then returns the right counts from a lookup table of those configs and a wrong
formula (no biases) for any other. It gets full marks with the public seed, and less from
``grade batch`` with default settings, from the Gradescope bundle run as Gradescope runs it and
from ``grade`` with ``GRADE_SEED`` (CI). The course seed shows in none of the outputs a student
reads; a batch killed with ``kill -9`` resumes with the seed it drew; workers never see it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest
from support import ROOT, SOLUTION, make_submission
from test_gradescope_bundle import run_autograder, simulated_root

from grader.result import HIDDEN_SEED, SCHEMA_PATH
from grader.seeds import PUBLIC_SEED

SCHEMA = json.loads(SCHEMA_PATH.read_text())
COURSE = 918273645  # the course seed a CI secret would hold
EX41 = "ex4_1_parameter_counts.py"

LOGGER = '''"""4.1, right, logging every config it is called with."""
import json

LOG = {log!r}


def _log(function, cfg, value):
    with open(LOG, "a", encoding="utf-8") as f:
        key = function + " " + json.dumps(cfg, sort_keys=True)
        f.write(json.dumps({{"key": key, "value": value}}) + "\\n")
    return value


def feedforward_params(cfg):
    emb = cfg["emb_dim"]
    return _log("feedforward_params", cfg, 8 * emb * emb + 5 * emb)


def attention_params(cfg):
    emb = cfg["emb_dim"]
    return _log("attention_params", cfg, 4 * emb * emb + (3 * emb if cfg["qkv_bias"] else 0) + emb)
'''

LOOKUP = '''"""4.1 from a table of the configs the public seed draws; no biases for any other."""
import json

TABLE = {table!r}


def feedforward_params(cfg):
    return TABLE.get("feedforward_params " + json.dumps(cfg, sort_keys=True),
                     8 * cfg["emb_dim"] ** 2)


def attention_params(cfg):
    return TABLE.get("attention_params " + json.dumps(cfg, sort_keys=True),
                     4 * cfg["emb_dim"] ** 2)
'''

SNIFFER = '''"""4.1, right, unless it can find the course seed in its environment{where}."""
import os


def _sniff():
    found = [k for k in os.environ if "GRADE" in k.upper()]
    if {scan_proc}:
        for pid in os.listdir("/proc"):
            try:
                with open(f"/proc/{{pid}}/environ", "rb") as f:
                    if b"GRADE_SEED=" in f.read():
                        found.append(f"/proc/{{pid}}/environ")
            except OSError:
                pass
    if found:
        raise RuntimeError(f"I can see {{found}}: " + os.environ.get("GRADE_SEED", ""))


def feedforward_params(cfg):
    _sniff()
    emb = cfg["emb_dim"]
    return 8 * emb * emb + 5 * emb


def attention_params(cfg):
    _sniff()
    emb = cfg["emb_dim"]
    return 4 * emb * emb + (3 * emb if cfg["qkv_bias"] else 0) + emb
'''


def run(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """``grade ARGS`` from this checkout, with ``env`` added to (or, for None values, taken
    from) the environment."""
    full = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", "grader.cli", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout, env=full,
    )  # fmt: skip


def answer(folder: Path, source: str) -> Path:
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / EX41).write_text(source, encoding="utf-8")
    return folder


def score_41(result: dict) -> float:
    return next(e["score"] for e in result["exercises"] if e["id"] == "4.1")


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("answers")
    log = root / "configs.jsonl"
    logger = answer(root / "logger", LOGGER.format(log=str(log)))
    proc = run(str(logger), "-e", "4.1", "--no-sandbox", env={"GRADE_SEED": None})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        table[record["key"]] = record["value"]
    assert len(table) > 30  # the configs the four checks drew, for both functions
    return {
        "lookup": answer(root / "lookup", LOOKUP.format(table=table)),
        "sniffer": answer(root / "sniffer", SNIFFER.format(where="", scan_proc=False)),
        "proc-sniffer": answer(
            root / "proc-sniffer",
            SNIFFER.format(where=" or in any process's it can read", scan_proc=True),
        ),
    }


def grade_json(path: Path, *args: str, env: dict | None = None) -> dict:
    proc = run(str(path), "-e", "4.1", "--format", "json", *args, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


# --- grade: the public seed, GRADE_SEED, --seed -----------------------------------------------


def test_the_lookup_table_gets_full_marks_with_the_public_seed(answers):
    result = grade_json(answers["lookup"], env={"GRADE_SEED": None})
    assert result["seed"] == PUBLIC_SEED
    assert score_41(result) == 10


def test_grade_seed_grades_with_the_course_seed_and_hides_it(answers):
    course = grade_json(answers["lookup"], env={"GRADE_SEED": str(COURSE)})
    assert score_41(course) < 10
    assert course["seed"] == HIDDEN_SEED
    jsonschema.validate(course, SCHEMA)
    # The same seed given with --seed: the same verdicts (and the number shown, it is yours).
    mine = grade_json(answers["lookup"], "--seed", str(COURSE), env={"GRADE_SEED": None})
    assert mine["seed"] == COURSE
    for doc in (course, mine):
        doc.pop("seed"), doc.pop("duration_s")
    assert course == mine


def test_seed_on_the_command_line_wins_over_grade_seed(answers):
    result = grade_json(answers["lookup"], "--seed", str(PUBLIC_SEED),
                        env={"GRADE_SEED": str(COURSE)})  # fmt: skip
    assert result["seed"] == PUBLIC_SEED and score_41(result) == 10


def test_an_empty_grade_seed_is_the_public_seed(answers):
    # ${{ secrets.GRADE_SEED }} of a secret that was never set is the empty string.
    result = grade_json(answers["lookup"], env={"GRADE_SEED": ""})
    assert result["seed"] == PUBLIC_SEED and score_41(result) == 10


def test_no_output_of_a_ci_run_shows_the_course_seed(answers, tmp_path):
    env = {"GRADE_SEED": str(COURSE), "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}  # fmt: skip
    html, saved = tmp_path / "report.html", tmp_path / "result.json"
    github = run(str(answers["lookup"]), "-e", "4.1", "--format", "github", "--html", str(html),
                 "--json", str(saved), env=env)  # fmt: skip
    text = run(str(answers["lookup"]), "-e", "4.1", "-v", env=env)
    junit = run(str(answers["lookup"]), "-e", "4.1", "--format", "junit", env=env)
    for proc in (github, text, junit):
        assert proc.returncode == 1, proc.stderr  # the lookup table fails some check
    outputs = (tmp_path / "output").read_text()
    classroom = base64.b64decode(re.search(r"^result=(.*)$", outputs, re.M).group(1)).decode()
    summary = (tmp_path / "summary.md").read_text()
    seen = {
        "github log": github.stdout + github.stderr,
        "text": text.stdout + text.stderr,
        "junit": junit.stdout + junit.stderr,
        "step summary": summary,
        "classroom result": classroom + outputs,
        "html": html.read_text(),
        "json": saved.read_text(),
    }
    for where, content in seen.items():
        assert str(COURSE) not in content, where
    for where in ("github log", "text", "step summary", "html"):
        assert "course seed" in seen[where], where
    assert json.loads(seen["json"])["seed"] == HIDDEN_SEED


@pytest.mark.parametrize("sandbox", [[], ["--no-sandbox"]], ids=["sandbox", "no-sandbox"])
def test_workers_never_see_grade_seed(answers, sandbox):
    result = grade_json(answers["sniffer"], *sandbox, env={"GRADE_SEED": str(COURSE)})
    assert score_41(result) == 10, json.dumps(result, indent=1)[:3000]
    assert str(COURSE) not in json.dumps(result)


def test_sandboxed_workers_cannot_read_it_from_another_process(answers):
    """The spawn path (--no-sandbox) has no PID namespace: only the sandbox promises this."""
    result = grade_json(answers["proc-sniffer"], "--strict-sandbox",
                        env={"GRADE_SEED": str(COURSE)})  # fmt: skip
    assert score_41(result) == 10, json.dumps(result, indent=1)[:3000]


# --- grade batch ------------------------------------------------------------------------------


def meta(out: Path) -> dict[str, str]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    finally:
        db.close()


def committed(out: Path) -> int:
    """Submissions in OUT's gradebook (0 while it does not exist yet)."""
    if not (out / "gradebook.sqlite").is_file():
        return 0
    db = sqlite3.connect(out / "gradebook.sqlite", timeout=30)
    try:
        return db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        db.close()


def seeds_in_gradebook(out: Path) -> set[int]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return {s for (s,) in db.execute("SELECT seed FROM submissions")}
    finally:
        db.close()


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
    flagged = re.findall(r'data-v="(\w+)"><a [^\n]*passes only the public examples \(4\.1\)',
                         dashboard)  # fmt: skip
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
    assert doc["score"] == alone["score"] and doc["exercises"][0] == alone["exercises"][0]


def test_a_batch_killed_with_kill_9_resumes_with_the_seed_it_drew(tmp_path):
    klass = tmp_path / "class"
    for name in ("ann", "ben", "cat", "dov", "eve"):  # 3.1 and 4.1 each: a few seconds
        make_submission(klass / name, {e: None for e in ("3.2", "3.3", "4.2", "4.3")})
    out = tmp_path / "out"
    first = subprocess.Popen(
        [sys.executable, "-m", "grader.cli", "batch", str(klass), "-o", str(out), "-j", "1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
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
        'from grader.cli import entry; entry()" "$AUTOGRADER_ROOT/source/package" "$@"\n'
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
    from grader.commands.release import PACKAGES, build_release

    root = tmp_path / "project"
    for name in (*PACKAGES, "templates"):
        shutil.copytree(ROOT / name, root / name,
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
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


# --- small pieces ------------------------------------------------------------------------------


def test_the_public_seed_is_the_judges_default():
    from grader.properties import DEFAULT_SEED

    assert PUBLIC_SEED == DEFAULT_SEED


def test_choosing_the_seed_of_grade():
    from grader.seeds import SeedError, for_grade

    assert for_grade(None, {}).value == PUBLIC_SEED and not for_grade(None, {}).hidden
    assert for_grade(None, {"GRADE_SEED": " 42 "}) == for_grade(None, {"GRADE_SEED": "42"})
    course = for_grade(None, {"GRADE_SEED": "42"})
    assert (course.value, course.source, course.hidden) == (42, "GRADE_SEED", True)
    assert not for_grade(None, {"GRADE_SEED": str(PUBLIC_SEED)}).hidden  # nothing to hide
    assert for_grade(7, {"GRADE_SEED": "42"}).value == 7 and not for_grade(7, {}).hidden
    for bad in ("x42", "-1", "1.5", str(2**63)):
        with pytest.raises(SeedError) as info:
            for_grade(None, {"GRADE_SEED": bad})
        assert bad not in str(info.value)  # a secret is never echoed


def test_the_worker_environment_leaves_grade_seed_out():
    from grader.sandbox.bounds import worker_environment

    env = worker_environment("/tmp/home", {"GRADE_SEED": "42", "PATH": "/bin", "LANG": "C"})
    assert "GRADE_SEED" not in env and env["PATH"] == "/bin"


def test_seeds_are_whole_numbers_from_zero(tmp_path):
    from grader.batch.config import ConfigError, read_config

    for text, needle in (("seed = -1", "at least 0"), (f"seed = {2**63 - 1}", None)):
        (tmp_path / "grading.toml").write_text(text + "\n")
        if needle is None:
            assert read_config(tmp_path / "grading.toml")["seed"] == 2**63 - 1
        else:
            with pytest.raises(ConfigError, match=needle):
                read_config(tmp_path / "grading.toml")
    proc = run(str(SOLUTION), "--seed", "-1")
    assert proc.returncode == 2 and "must be a whole number from 0" in proc.stderr


def test_every_renderer_says_course_seed_for_a_hidden_seed():
    from report_cases import edge_result

    from grader import report_text
    from grader.formats import github, gradescope, junit
    from grader.report_html import render_html

    hidden = edge_result().with_seed_hidden()
    assert hidden.seed_hidden and hidden.seed_text == "course seed"
    jsonschema.validate(hidden.to_dict(), SCHEMA)
    assert "course seed" in report_text.render(hidden)
    assert "course seed" in github.summary_markdown(hidden)
    assert gradescope.results(hidden)["extra_data"]["seed"] == "course seed"
    assert "course seed" in gradescope.results(hidden)["output"]
    assert "course seed" in render_html(hidden)
    assert str(HIDDEN_SEED) not in junit.render(hidden)
