"""What a batch grades: the entries of DIR, their names, content hashes and shards.

Every entry of DIR is one submission: a folder (holding ``exercises/``, or the files loose), a
``.zip`` of one, or a notebook (``.ipynb``). Any other file becomes a row with status error, so
that nothing handed in is silently skipped. A hidden entry (a name starting with a dot) is a
submission when it looks like one (a ``.zip``, a ``.ipynb``, or a folder holding ``exercises/``
or ``.py`` files: a student's folder named ``...`` gets its row); other hidden entries
(``.git``, ``.DS_Store``), the batch's own ``grading.toml`` and the output folder are not.

A submission's name is its entry's name without ``.zip``/``.ipynb`` (``alice.zip`` -> ``alice``),
or the whole file name when two entries would otherwise share a name.

Sharding (``--shard K/N``) takes every N-th entry in name order starting at the K-th: the same
slice on every machine, whatever order the file system lists DIR in.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from grader.pipeline import Submission, SubmissionError
from grader.shared.safetext import safe_name

Kind = Literal["folder", "zip", "notebook", "other"]
SKIPPED_DIRS = {"__pycache__", ".ipynb_checkpoints"}
HASH_CHUNK = 1 << 20
MAX_NAME_BYTES = 200  # OUT holds NAME.json and NAME.html: file names have at most 255 bytes


@dataclass(frozen=True)
class Entry:
    name: str  # the submission's name in the gradebook and in OUT's file names
    path: Path
    kind: Kind


def kind_of(path: Path) -> Kind:
    if path.is_dir():
        return "folder"
    if not path.is_file():  # a pipe, a socket, a device: never opened
        return "other"
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return "zip"
    if suffix == ".ipynb":
        return "notebook"
    return "other"


def _looks_handed_in(path: Path) -> bool:
    """Whether a hidden entry is a submission all the same (not ``.git`` or ``.DS_Store``)."""
    kind = kind_of(path)
    if kind in ("zip", "notebook"):
        return True
    if kind != "folder" or path.name in SKIPPED_DIRS:
        return False
    try:
        return (path / "exercises").is_dir() or any(p.suffix == ".py" for p in path.iterdir())
    except OSError:
        return False


def discover(folder: Path, skip: tuple[Path, ...] = ()) -> list[Entry]:
    """The entries of ``folder`` that are submissions, sorted by name."""
    skipped = {p.resolve() for p in skip}
    paths = []
    for path in folder.iterdir():
        if path.resolve() in skipped or (path.name.startswith(".") and not _looks_handed_in(path)):
            continue
        if path.name == "grading.toml" and path.is_file():
            continue
        paths.append(path)
    kinds = {p: kind_of(p) for p in paths}
    # Names are the student's text: made safe (bytes that are not UTF-8 spelled \xff).
    stems = {p: safe_name(p.stem if kinds[p] in ("zip", "notebook") else p.name) for p in paths}
    taken = Counter(stems.values())
    names = {p: stems[p] if taken[stems[p]] == 1 else safe_name(p.name) for p in paths}
    taken = Counter(names.values())
    for p, name in names.items():  # still shared, or too long for OUT's file names
        if taken[name] > 1 or len(name.encode()) > MAX_NAME_BYTES:
            digest = hashlib.sha256(os.fsencode(p.name)).hexdigest()[:10]
            names[p] = f"{name.encode()[:100].decode('utf-8', 'ignore')}-{digest}"
    return sorted((Entry(names[p], p, kinds[p]) for p in paths), key=lambda e: e.name)


def _hash_file(h: Any, path: Path) -> None:
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            h.update(chunk)


def content_hash(entry: Entry) -> str:
    """A SHA-256 of everything the grade can depend on: the file's bytes, or every file under
    the folder (relative path and bytes; a symbolic link by its target, never followed)."""
    h = hashlib.sha256(entry.kind.encode() + b"\0")
    if entry.kind == "other" and not entry.path.is_file():
        return h.hexdigest()  # never read a pipe or a device
    if entry.kind != "folder":
        _hash_file(h, entry.path)
        return h.hexdigest()
    for dirpath, dirnames, filenames in os.walk(entry.path):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = path.relative_to(entry.path).as_posix()
            h.update(b"\0file\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
            if path.is_symlink():
                h.update(b"link\0" + os.fsencode(os.readlink(path)))
            else:
                try:
                    _hash_file(h, path)
                except OSError as exc:  # unreadable: the grade will say so; hash the reason
                    h.update(f"unreadable {exc.errno}".encode())
        for d in dirnames:
            if Path(dirpath, d).is_symlink():
                rel = Path(dirpath, d).relative_to(entry.path).as_posix()
                h.update(b"\0dirlink\0" + rel.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


class ShardError(ValueError):
    """A ``--shard`` value that cannot be used; the message is one line for the user."""


SHARD_ENV_HELP = (
    "Slurm job arrays (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN, "
    "SLURM_ARRAY_TASK_STEP) or GRADE_SHARD_INDEX (0-based) and GRADE_SHARD_COUNT"
)


def parse_shard(text: str, env: dict[str, str] | None = None) -> tuple[int, int]:
    """``"K/N"`` (1 <= K <= N) or ``"auto"`` (read from the environment) -> ``(K, N)``."""
    env = dict(os.environ) if env is None else env
    if text == "auto":
        return shard_from_env(env)
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not m:
        raise ShardError(f"--shard {text!r}: expected K/N (e.g. 2/8) or auto")
    k, n = int(m.group(1)), int(m.group(2))
    if not 1 <= k <= n:
        raise ShardError(f"--shard {text}: K must be between 1 and N")
    return k, n


def _env_int(env: dict[str, str], name: str, default: int | None = None) -> int:
    value = env.get(name)
    if value is None or value == "":
        if default is None:
            raise ShardError(f"--shard auto: {name} is not set")
        return default
    try:
        return int(value)
    except ValueError:
        raise ShardError(f"--shard auto: {name}={value!r} is not an integer") from None


def shard_from_env(env: dict[str, str]) -> tuple[int, int]:
    """The shard of a Slurm array task or of a CI matrix job, 1-based."""
    if env.get("SLURM_ARRAY_TASK_ID"):
        task = _env_int(env, "SLURM_ARRAY_TASK_ID")
        count = _env_int(env, "SLURM_ARRAY_TASK_COUNT")
        first = _env_int(env, "SLURM_ARRAY_TASK_MIN", 0)
        step = _env_int(env, "SLURM_ARRAY_TASK_STEP", 1) or 1
        index, rest = divmod(task - first, step)
        if rest or not 0 <= index < count:
            raise ShardError(
                f"--shard auto: Slurm task {task} is not one of {count} evenly spaced tasks "
                f"from {first}; submit the array as --array=0-{count - 1}"
            )
    elif env.get("GRADE_SHARD_INDEX") is not None and env.get("GRADE_SHARD_COUNT"):
        index = _env_int(env, "GRADE_SHARD_INDEX")
        count = _env_int(env, "GRADE_SHARD_COUNT")
    else:
        raise ShardError(f"--shard auto: no shard in the environment; set {SHARD_ENV_HELP}")
    if count < 1 or not 0 <= index < count:
        raise ShardError(f"--shard auto: shard index {index} is not within 0..{count - 1}")
    return index + 1, count


def shard(entries: list[Entry], k: int, n: int) -> list[Entry]:
    """The K-th of N interleaved slices of ``entries`` in name order."""
    ordered = sorted(entries, key=lambda e: e.name)
    return ordered[k - 1 :: n]


def open_entry(entry: Entry, scratch: Path, max_bytes: int, max_files: int) -> Submission:
    """The submission in ``entry``, taken in by the pipeline (a zip unpacked, a notebook's
    exercise files written, in ``scratch``); ``SubmissionError`` (one line, naming the entry
    as the instructor sees it in DIR, never ``scratch``) if there is none."""
    from grader import pipeline

    if entry.path.is_symlink():  # a classmate's folder, zip or notebook: never followed
        try:
            target = f" (to {safe_name(os.readlink(entry.path))})"
        except OSError:
            target = ""
        raise SubmissionError(
            f"{entry.path.name}: is a symbolic link{target}: hand in the folder, zip or "
            "notebook itself"
        )
    if entry.kind == "other":
        raise SubmissionError(
            f"{entry.path.name}: not a submission (expected a folder, a .zip or a .ipynb)"
        )
    if entry.kind == "zip":
        return pipeline.open_zip(entry.path, scratch, max_bytes, max_files, entry.name)
    if entry.kind == "notebook":  # its exercise files are written in the scratch
        scratch.mkdir(parents=True, exist_ok=True)
    return pipeline.open_path(entry.path, entry.name, True, scratch, entry.path.name)
