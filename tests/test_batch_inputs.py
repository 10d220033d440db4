"""The pieces of ``grade batch`` that need no grading: safe unzipping, reading entries,
content hashes, shards, grading.toml validation and the progress display."""

from __future__ import annotations

import io
import shutil
import stat
import struct
import threading
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbsupport import solution_notebook
from support import SOLUTION, grade_cli

from grader.batch.config import ConfigError, build_settings, read_config
from grader.batch.entries import (
    Entry,
    ShardError,
    content_hash,
    discover,
    parse_shard,
    shard,
    shard_from_env,
)
from grader.batch.pool import open_entry
from grader.batch.progress import Progress
from grader.intake.load import load_submission
from grader.intake.submission import SubmissionError
from grader.intake.zips import UnsafeZip, extract_zip, submission_root
from grader.pipeline import open_path

MiB = 2**20
SOLUTION_FILE = SOLUTION / "exercises" / "ex3_1_weight_transfer.py"


# --- zips --------------------------------------------------------------------------------------


def zip_with(path: Path, members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in members:
            zf.writestr(info, data)
    return path


def symlink_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def lying_sizes(path: Path, claimed: int) -> Path:
    """Patch every header of the one-member zip ``path`` to claim ``claimed`` bytes unpacked."""
    data = bytearray(path.read_bytes())
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 22, claimed)
    central = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, claimed)
    path.write_bytes(bytes(data))
    return path


def files_under(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    ("members", "needle"),
    [
        ([("../evil.py", b"x = 1\n")], "points outside"),
        ([("exercises/../../evil.py", b"x = 1\n")], "points outside"),
        ([("..\\evil.py", b"x = 1\n")], "points outside"),
        ([("/tmp/evil.py", b"x = 1\n")], "absolute path"),
        ([("C:/evil.py", b"x = 1\n")], "absolute path"),
        ([(symlink_info("exercises/ex3_1_weight_transfer.py"), b"/etc/passwd")], "symbolic link"),
        ([], "empty"),
    ],
    ids=["dotdot", "nested-dotdot", "backslash-dotdot", "absolute", "drive", "symlink", "empty"],
)
def test_unsafe_zip_is_refused_before_anything_is_written(tmp_path, members, needle):
    archive = zip_with(
        tmp_path / "sub.zip", [("exercises/ok.py", b"x = 1\n"), *members] if members else []
    )
    dest = tmp_path / "out" / "dest"
    with pytest.raises(UnsafeZip, match=needle):
        extract_zip(archive, dest, 1 * MiB, 100)
    assert files_under(tmp_path / "out") == []
    assert not (tmp_path / "evil.py").exists()


def test_corrupt_zip(tmp_path):
    archive = tmp_path / "broken.zip"
    archive.write_bytes(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(UnsafeZip, match="not a valid zip"):
        extract_zip(archive, tmp_path / "dest", MiB, 100)


def test_truncated_zip(tmp_path):
    whole = zip_with(tmp_path / "whole.zip", [("exercises/a.py", bytes(range(256)) * 400)])
    cut = tmp_path / "cut.zip"
    cut.write_bytes(whole.read_bytes()[:-40])
    with pytest.raises(UnsafeZip):
        extract_zip(cut, tmp_path / "dest", MiB, 100)


def test_zip_bomb_is_stopped_at_the_cap(tmp_path):
    bomb = zip_with(tmp_path / "bomb.zip", [(f"junk{i}.bin", bytes(MiB)) for i in range(3)])
    assert bomb.stat().st_size < 50_000  # it really is a bomb: 3 MiB from a few KiB
    with pytest.raises(UnsafeZip, match="zip bomb"):
        extract_zip(bomb, tmp_path / "dest", 2 * MiB, 100)
    assert sum(p.stat().st_size for p in files_under(tmp_path / "dest")) <= 2 * MiB


def test_zip_bomb_with_lying_headers_never_unpacks_past_its_claim(tmp_path):
    bomb = lying_sizes(zip_with(tmp_path / "liar.zip", [("junk.bin", bytes(8 * MiB))]), 1000)
    with pytest.raises(UnsafeZip):
        extract_zip(bomb, tmp_path / "dest", 2 * MiB, 100)
    assert sum(p.stat().st_size for p in files_under(tmp_path / "dest")) <= 2 * MiB


def test_too_many_entries(tmp_path):
    archive = zip_with(tmp_path / "many.zip", [(f"f{i}.txt", b"") for i in range(20)])
    with pytest.raises(UnsafeZip, match="more than the cap of 10"):
        extract_zip(archive, tmp_path / "dest", MiB, 10)


def test_safe_zip_unpacks_and_its_submission_is_found(tmp_path):
    members = [
        (f"alice/exercises/{p.name}", p.read_bytes()) for p in (SOLUTION / "exercises").glob("*.py")
    ]
    archive = zip_with(tmp_path / "alice.zip", [*members, ("__MACOSX/alice/._x", b"junk")])
    dest = tmp_path / "dest"
    extract_zip(archive, dest, MiB, 100)
    assert not (dest / "__MACOSX").exists()
    root = submission_root(dest)
    assert root == dest / "alice"
    sub = load_submission(root, "alice")
    assert set(sub.files) == {"3.1", "3.2", "3.3", "4.1", "4.2", "4.3"}


@pytest.mark.parametrize(
    ("layout", "root"),
    [
        ({"exercises/ex3_1_weight_transfer.py": b""}, "."),
        ({"ex3_1_weight_transfer.py": b"", "ex4_1_parameter_counts.py": b""}, "."),
        ({"README.md": b"hi", "hw/alice/exercises/ex3_1_weight_transfer.py": b""}, "hw/alice"),
        ({"alice/exercises/ex3_1_weight_transfer.py": b"", "alice/data.txt": b""}, "alice"),
        ({"notes.txt": b"", "work/answers.ipynb": b"{}"}, "work/answers.ipynb"),
        (
            {
                "a/exercises/ex3_1_weight_transfer.py": b"",
                "b/exercises/ex3_1_weight_transfer.py": b"",
            },
            ".",
        ),  # two submissions in one zip: not guessed
    ],
)
def test_where_the_submission_lies_in_a_zip(tmp_path, layout, root):
    for name, data in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    assert submission_root(tmp_path) == (tmp_path / root if root != "." else tmp_path)


def test_zip_without_a_submission_gets_one_reason(tmp_path):
    archive = zip_with(tmp_path / "bob.zip", [("notes/readme.txt", b"hello")])
    entry = Entry("bob", archive, "zip")
    with pytest.raises(SubmissionError) as info:
        open_entry(entry, tmp_path / "scratch", MiB, 100)
    message = str(info.value)
    assert message.startswith("bob.zip") and "no exercises/ folder" in message
    assert str(tmp_path) not in message  # no scratch paths in what the instructor reads


@pytest.mark.parametrize("kind", ["notebook", "zip"])
def test_a_notebooks_exercise_files_are_written_in_the_scratch(tmp_path, kind):
    """In OUT, where the next run removes what a killed judge left, not in /tmp."""
    notebook = solution_notebook(tmp_path / "alice.ipynb", tagged=True)
    path = (
        notebook
        if kind == "notebook"
        else zip_with(tmp_path / "alice.zip", [("alice.ipynb", notebook.read_bytes())])
    )
    scratch = tmp_path / "out" / ".work" / "alice"
    submission = open_entry(Entry("alice", path, kind), scratch, MiB, 100)
    try:
        assert set(submission.files) == {"3.1", "3.2", "3.3", "4.1", "4.2", "4.3"}
        assert all(f.resolve().is_relative_to(scratch.resolve()) for f in submission.files.values())
    finally:
        submission.cleanup()
    assert not [p for p in scratch.rglob("*") if p.suffix == ".py"]


# --- encodings ---------------------------------------------------------------------------------


def test_non_utf8_source_is_named(tmp_path):
    folder = tmp_path / "sub" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex3_1_weight_transfer.py").write_bytes(
        b"# caf\xe9 au lait\n" + SOLUTION_FILE.read_bytes()
    )
    problems = open_path(tmp_path / "sub").problems
    assert problems == {
        "3.1": "exercises/ex3_1_weight_transfer.py is not UTF-8 text (byte 0xe9 on line 1); "
        "save it as UTF-8"
    }


def test_declared_latin1_source_is_fine(tmp_path):
    folder = tmp_path / "sub" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex3_1_weight_transfer.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + SOLUTION_FILE.read_bytes()
    )
    assert load_submission(tmp_path / "sub").problems == {}


def test_unknown_declared_encoding_is_named(tmp_path):
    folder = tmp_path / "sub" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex4_1_parameter_counts.py").write_bytes(b"# coding: klingon\nx = 1\n")
    problems = open_path(tmp_path / "sub").problems
    assert problems == {"4.1": "exercises/ex4_1_parameter_counts.py: unknown encoding: klingon"}


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"x = 1\n\x00\n", "is not text (it holds a NUL byte, on line 2)"),
        ("x = 1\n".encode("utf-16"), "is saved as UTF-16 text; save it as UTF-8"),
        (b"x = 1\n" + b"#" * (8 * 2**20), "is 8.0 MB; exercise files may be at most 4 MiB"),
        (b"x = " + b"1+" * 200_000 + b"1\n", "nests its code more than 200 levels deep"),
    ],
    ids=["nul", "utf16", "8mb", "deep"],
)
def test_a_file_that_must_not_run_is_said_in_the_students_words(tmp_path, data, said):
    """In every front end (the pipeline refuses it): these read 'does not parse: ... null
    bytes (in , line 0: )' and 'your code raised FileNotFoundError' before."""
    folder = tmp_path / "sub" / "exercises"
    folder.mkdir(parents=True)
    (folder / "ex4_1_parameter_counts.py").write_bytes(data)
    sub = open_path(tmp_path / "sub")
    assert sub.problems == {"4.1": f"exercises/ex4_1_parameter_counts.py {said}"}
    assert "4.1" not in sub.files
    proc = grade_cli(
        str(tmp_path / "sub"),
        "-e",
        "4.1",
        cwd=Path.cwd(),
        timeout=300,
        module="grader.commands.cli",
    )
    assert proc.returncode == 1 and said in proc.stdout, proc.stdout + proc.stderr


# --- entries, hashes and shards ----------------------------------------------------------------


def test_discover_names_and_skips(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "bob.zip").write_bytes(b"")
    (tmp_path / "carol.ipynb").write_text("{}")
    (tmp_path / "dave").mkdir()
    (tmp_path / "dave.zip").write_bytes(b"")  # same stem as the folder: full names
    (tmp_path / ".DS_Store").write_bytes(b"")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "..." / "exercises").mkdir(parents=True)  # a student's oddly named folder
    (tmp_path / ".eve.ipynb").write_text("{}")
    (tmp_path / "grading.toml").write_text("")
    (tmp_path / "out").mkdir()
    (tmp_path / "notes.txt").write_text("")
    entries = discover(tmp_path, skip=(tmp_path / "out",))
    assert [(e.name, e.kind) for e in entries] == [
        ("...", "folder"),
        (".eve", "notebook"),
        ("alice", "folder"),
        ("bob", "zip"),
        ("carol", "notebook"),
        ("dave", "folder"),
        ("dave.zip", "zip"),
        ("notes.txt", "other"),
    ]


def test_content_hash_follows_content_not_caches(tmp_path):
    sub = tmp_path / "alice"
    shutil.copytree(SOLUTION, sub)
    entry = Entry("alice", sub, "folder")
    before = content_hash(entry)
    (sub / "exercises" / "__pycache__").mkdir(exist_ok=True)
    (sub / "exercises" / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert content_hash(entry) == before
    with open(sub / "exercises" / "ex4_1_parameter_counts.py", "a") as f:
        f.write("# edited\n")
    assert content_hash(entry) != before
    (sub / "exercises" / "renamed.py").write_bytes(b"")
    assert content_hash(Entry("alice", sub, "folder")) != before


def entry_names() -> st.SearchStrategy[list[str]]:
    """Distinct submission names, as a DIR would hold them."""
    return st.lists(
        st.text("abcdefgh_-0123456789", min_size=1, max_size=8), unique=True, max_size=30
    )


@settings(max_examples=30, derandomize=True, database=None)
@given(names=entry_names(), n=st.integers(1, 7))
def test_shards_partition_the_class(names, n):
    entries = [Entry(name, Path(name), "folder") for name in names]
    slices = [shard(entries, k, n) for k in range(1, n + 1)]
    flat = [e.name for s in slices for e in s]
    assert sorted(flat) == sorted(names)  # every entry in exactly one shard
    assert max(map(len, slices)) - min(map(len, slices)) <= 1  # balanced
    assert slices == [shard(list(reversed(entries)), k, n) for k in range(1, n + 1)]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, (1, 4)),
        (
            {
                "SLURM_ARRAY_TASK_ID": "4",
                "SLURM_ARRAY_TASK_COUNT": "4",
                "SLURM_ARRAY_TASK_MIN": "1",
            },
            (4, 4),
        ),
        ({"GRADE_SHARD_INDEX": "0", "GRADE_SHARD_COUNT": "3"}, (1, 3)),
        ({"GRADE_SHARD_INDEX": "2", "GRADE_SHARD_COUNT": "3"}, (3, 3)),
    ],
)
def test_shard_from_the_environment(env, expected):
    assert shard_from_env(env) == expected
    assert parse_shard("auto", env) == expected


@pytest.mark.parametrize(
    ("text", "env", "needle"),
    [
        ("auto", {}, "no shard in the environment"),
        ("auto", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "4"}, "--array=0-3"),
        ("auto", {"GRADE_SHARD_INDEX": "3", "GRADE_SHARD_COUNT": "3"}, "not within 0..2"),
        ("0/3", {}, "between 1 and N"),
        ("4/3", {}, "between 1 and N"),
        ("two/3", {}, "expected K/N"),
    ],
)
def test_bad_shards(text, env, needle):
    with pytest.raises(ShardError, match=needle):
        parse_shard(text, env)


# --- grading.toml ------------------------------------------------------------------------------


def config_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grading.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_config(tmp_path):
    path = config_file(
        tmp_path,
        """
exercises = ["4.1", "3.1"]
seed = 7
max_examples = 5

[limits]
call_timeout_s = 5
memory_mb = 2048
unzip_mb = 8

[points."3.1"]
max_score = 20
[points."3.1".checks]
"sa_v2 is left unchanged" = 3
""",
    )
    s = build_settings(read_config(path), seed=9)
    assert s.exercises == ("3.1", "4.1")  # course order
    assert s.seed == 9  # the command line wins
    assert s.max_examples == 5
    assert s.limits.call_timeout_s == 5.0 and s.limits.memory_mb == 2048
    assert s.limits.exercise_budget_s == 90.0  # untouched defaults stay
    assert s.unzip_mb == 8
    assert s.max_scores == {"3.1": 20.0}
    assert s.check_points == {"3.1": {"sa_v2 is left unchanged": 3.0}}
    assert s.fingerprint() != build_settings(read_config(path)).fingerprint()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("seeed = 3", "unknown key 'seeed' at top level; did you mean 'seed'?"),
        ("[limits]\ncall_timeout = 3", "did you mean 'call_timeout_s'?"),
        ("[limits]\nmemory_mb = 1.5", "limits.memory_mb must be an integer"),
        ("[limits]\ncall_timeout_s = -1", "limits.call_timeout_s must be at least 0"),
        ("[limits]\ncall_timeout_s = 0", "must be more than 0"),
        ("exercises = ['3.9']", "unknown exercise '3.9'"),
        ("exercises = []", "non-empty list"),
        ("seed = 'x'", "seed must be an integer"),
        ("max_examples = 0", "max_examples must be at least 1"),
        ('[points."5.1"]\nmax_score = 3', "unknown exercise '5.1'"),
        ('[points."3.1"]\nmax_scores = 3', "did you mean 'max_score'?"),
        ('[points."3.1".checks]\n"sa_v2 is unchanged" = 1', "mean 'sa_v2 is left unchanged'"),
        ('[points."3.1".checks]\n"sa_v2 is left unchanged" = -1', "must be at least 0"),
        ("seed = ", "not valid TOML"),
    ],
)
def test_config_errors_are_one_clear_line(tmp_path, text, needle):
    with pytest.raises(ConfigError) as info:
        read_config(config_file(tmp_path, text))
    message = str(info.value)
    assert needle in message
    assert "\n" not in message.strip() or "TOML" in message
    assert message.startswith(str(tmp_path / "grading.toml"))


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_config(tmp_path / "nope.toml")


# --- progress ----------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal():
    stream = Terminal()
    progress = Progress(4, already=1, stream=stream)
    progress.update("alice", "failed", 5, 10, "")
    progress.update("bob", "error", 0, 10, "bob.zip: not a valid zip file")
    progress.update("carol", "passed", 10, 10, "")
    progress.close()
    text = stream.getvalue()
    assert "4/4" in text and "failed 1, errors 1" in text
    assert "<00:00" in text or "<?" in text  # the ETA field
    assert "bob.zip" not in text  # a bar, not lines


def test_a_progress_bar_starts_no_thread():
    """The judges are forked from the main process only while it runs no other thread: tqdm's
    monitor thread would make every batch run on a terminal start them as fresh interpreters."""
    before = threading.active_count()
    progress = Progress(4, stream=Terminal())
    progress.update("alice", "passed", 10, 10, "")
    assert threading.active_count() == before
    progress.close()


def test_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress(12, already=9, stream=stream)
    progress.update("alice", "failed", 7.5, 10, "")
    progress.update("bob", "error", 0, 10, "bob.zip: not a valid zip file")
    progress.close()
    assert stream.getvalue().splitlines() == [
        "[10/12] alice: 7.5/10 failed",
        "[11/12] bob: 0/10 error (bob.zip: not a valid zip file)",
    ]
