"""Names in what the grader writes (issue 40, item 8).

- OUT's per-submission files: two submissions whose names a case- or normalization-insensitive
  file system (macOS, Windows, SMB) takes for one (``alice``/``Alice``, NFC/NFD ``josé``) never
  share a file, in one batch, in shards, or merged; the gradebook keeps the real names.
- ``grade export``: an identifier a spreadsheet would run as a formula is left out of a Moodle
  or Canvas file and listed (quoted with ``'`` it would no longer match the LMS's user), quoted
  in a ``csv``; a roster's control characters never reach the terminal raw.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import unicodedata
from pathlib import Path

import pytest
import tinypack
from hypothesis import given, settings
from hypothesis import strategies as st
from support import grade_cli

from grader.batch.ledger import Ledger, file_stems, name_key
from grader.commands.cli import main
from grader.result.schema import CheckResult, ExerciseResult, GradeResult

NFC, NFD = unicodedata.normalize("NFC", "josé"), unicodedata.normalize("NFD", "josé")
CLASS = ("alice", "Alice", NFC, NFD, "bob")


def result(name: str, score: float = 10.0) -> dict:
    checks = [CheckResult("check", score, 10.0, score == 10.0, "m")]
    ex = ExerciseResult("3.1", "Weight transfer", score, 10.0, "passed", checks)
    return GradeResult(name, score, 10.0, "0.1.0", "2.x", 1, 0.1, [ex]).to_dict()


def record(ledger: Ledger, name: str, score: float = 10.0) -> None:
    row = {
        "name": name,
        "source": name,
        "kind": "folder",
        "content_hash": "c",
        "settings_hash": "s",
        "status": "passed",
        "reason": "",
        "graded": 1,
    }
    ledger.record(row, result(name, score), render_report=False)


def paths(out: Path) -> dict[str, str]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return dict(db.execute("SELECT name, result_path FROM submissions"))
    finally:
        db.close()


def assert_apart(out: Path, names=CLASS) -> dict[str, str]:
    """Every name has its own result file, no two alike to a file system ignoring case."""
    found = paths(out)
    assert sorted(found) == sorted(names)
    keys = [name_key(p) for p in found.values()]
    assert len(set(keys)) == len(keys), found
    for name, rel in found.items():
        assert (out / rel).is_file()
        assert json.loads((out / rel).read_text())["submission"] == name, rel
    return found


def test_alike_names_get_files_of_their_own_in_the_ledger(tmp_path):
    ledger = Ledger(tmp_path / "out")
    ledger.expect(CLASS)
    for i, name in enumerate(CLASS):
        record(ledger, name, float(i))
    ledger.close()
    found = assert_apart(tmp_path / "out")
    assert found["bob"] == "results/bob.json"  # a name alike to none keeps its own
    assert found["alice"] != "results/alice.json" and found["alice"].startswith("results/alice-")
    again = Ledger(tmp_path / "out")  # another run of the same class: the same names
    again.expect(CLASS)
    assert {n: f"results/{again.stem(n)}.json" for n in CLASS} == found
    again.close()


def test_a_name_not_announced_still_gets_a_file_of_its_own(tmp_path):
    """A caller that names no class (the public-seed grading) gets no clash either."""
    ledger = Ledger(tmp_path / "out")
    for name in ("alice", "Alice", "ALICE"):
        record(ledger, name)
    ledger.close()
    found = paths(tmp_path / "out")
    assert len({name_key(p) for p in found.values()}) == 3


def test_prune_never_deletes_a_file_a_row_points_to_under_another_case(tmp_path):
    """On a case-insensitive disk a file listed as ``Alice.json`` may be the row's
    ``alice.json``: prune keeps it."""
    ledger = Ledger(tmp_path / "out")
    record(ledger, "alice")
    stray = tmp_path / "out" / "results" / "ALICE.json"  # what such a disk may list
    stray.write_text("{}")
    ledger.prune({"alice"})
    ledger.close()
    assert stray.exists() and (tmp_path / "out" / "results" / "alice.json").exists()


@settings(max_examples=200, deadline=None)
@given(st.sets(st.text(st.sampled_from("aAbB-éÉe\u0301ſsßK\u212a0"), min_size=1, max_size=6)))
def test_file_stems_never_clash(names):
    stems = file_stems(names)
    assert set(stems) == names
    assert len({name_key(s) for s in stems.values()}) == len(names)
    assert stems == file_stems(sorted(names, reverse=True))  # the set decides, not the order


def grade(*args: str) -> subprocess.CompletedProcess:
    return grade_cli(*args, module="grader.commands.cli")


@pytest.mark.slow
def test_a_batch_its_shards_and_their_merge_keep_alike_names_apart(tmp_path):
    pack = tinypack.make_tiny_pack(tmp_path / "course")
    klass = tmp_path / "class"
    for name in CLASS:
        (klass / name / "exercises").mkdir(parents=True)
        (klass / name / "exercises" / tinypack.FILENAME).write_text(tinypack.SOLUTION)
    assert len(os.listdir(klass)) == len(CLASS)
    run = ("--pack", str(pack), "batch", str(klass), "--seed", "5")
    whole = grade(*run, "-o", str(tmp_path / "whole"))
    assert whole.returncode == 0, whole.stderr
    named = assert_apart(tmp_path / "whole")
    with open(tmp_path / "whole" / "gradebook.csv", encoding="utf-8") as f:
        assert sorted(r["name"] for r in csv.DictReader(f)) == sorted(CLASS)
    for k in (1, 2):
        shard = grade(*run, "-o", str(tmp_path / f"shard-{k}"), "--shard", f"{k}/2")
        assert shard.returncode == 0, shard.stderr
        for name, rel in paths(tmp_path / f"shard-{k}").items():
            assert rel == named[name]  # each shard names over the whole class
    merged = grade(
        "merge", str(tmp_path / "shard-1"), str(tmp_path / "shard-2"), "-o", str(tmp_path / "all")
    )
    assert merged.returncode == 0, merged.stderr
    assert assert_apart(tmp_path / "all") == named


# --- grade export ----------------------------------------------------------------------------

FORMULAS = ("=HYPERLINK(1)", "+4477", "-jo@uni.edu", "@handle")
FOLDERS = ("bob", "carol", "dan", "erin")


@pytest.fixture
def out(tmp_path) -> Path:
    ledger = Ledger(tmp_path / "out")
    ledger.set_meta({"exercises": '["3.1"]', "settings_hash": "s", "settings": "{}"})
    for name in ("alice", "bob", "carol", "dan", "erin", "frank"):
        record(ledger, name, 5.0)
    ledger.close()
    return tmp_path / "out"


@pytest.fixture
def roster(tmp_path) -> Path:
    path = tmp_path / "roster.csv"
    lines = ["folder,identifier,name", "alice,alice@uni.edu,Al\x1b[31mice\u202e"]
    lines += [
        f"{folder},{ident},Student {folder}"
        for folder, ident in zip(FOLDERS, FORMULAS, strict=True)
    ]
    lines.append('frank,"fr\x07ank@uni.edu",Frank')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", ["moodle", "canvas"])
def test_an_identifier_a_spreadsheet_would_run_is_listed_not_exported(out, roster, fmt, capsys):
    assert main(["export", str(out), "--roster", str(roster), "--format", fmt]) == 0
    captured = capsys.readouterr()
    rows = list(csv.reader(io.StringIO(captured.out)))
    cells = {c for r in rows for c in r}
    assert "alice@uni.edu" in cells
    for identifier in (*FORMULAS, "fr\x07ank@uni.edu"):
        assert not any(identifier in c for c in cells), (identifier, rows)  # quoted or not
    listed = captured.err.split("roster entries not exported", 1)[1]
    for line, (folder, identifier) in enumerate(zip(FOLDERS, FORMULAS, strict=True), start=3):
        said = f"{identifier} (Student {folder}, folder: {folder}; line {line}): its identifier"
        assert f"{said} starts with '{identifier[0]}'" in listed
    assert (
        "fr\\x07ank@uni.edu (Frank, folder: frank; line 7): its identifier holds control" in listed
    )


def test_a_csv_quotes_formulas_and_spells_control_characters(out, roster, capsys):
    assert main(["export", str(out), "--roster", str(roster)]) == 0
    captured = capsys.readouterr()
    rows = {r["submission"]: r for r in csv.DictReader(io.StringIO(captured.out))}
    for folder, identifier in zip(FOLDERS, FORMULAS, strict=True):
        assert rows[folder]["identifier"] == "'" + identifier
    assert rows["alice"]["name"] == "Al\\x1b[31mice\\u202e"
    assert rows["frank"]["identifier"] == "fr\\x07ank@uni.edu"
    assert "roster entries not exported" not in captured.err


def test_roster_names_never_reach_the_terminal_raw(out, roster, tmp_path, capsys):
    """The file goes to stdout without -o: a name's escape sequence is spelled out there, and
    in every line listed."""
    for fmt in ("canvas", "csv"):
        assert main(["export", str(out), "--roster", str(roster), "--format", fmt]) == 0
        captured = capsys.readouterr()
        for text in (captured.out, captured.err):
            assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        assert "Al\\x1b[31mice\\u202e" in captured.out
    missing = tmp_path / "missing.csv"
    missing.write_text("folder,identifier,name\nzed,zed@uni.edu,Z\x1b[2J\n", encoding="utf-8")
    assert main(["export", str(out), "--roster", str(missing), "-o", str(tmp_path / "x.csv")]) == 0
    listed = capsys.readouterr().out
    assert "\x1b" not in listed and "zed@uni.edu (Z\\x1b[2J, folder: zed; line 2)" in listed
