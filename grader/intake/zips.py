"""Unzipping a submission safely: size-capped, and never writing outside its destination.

A zip is refused whole, with one clear reason, when it is not a zip, is encrypted, has more
entries than the cap, has an entry that is absolute, climbs out with ``..``, is a symbolic link
(to a file or a folder) or another special file, is named in bytes that are not the UTF-8 its
flag claims, or would unpack to more bytes than the cap (a zip bomb: sizes are counted while
decompressing, not taken from the headers, which can lie). Files are created
exclusively (``O_EXCL|O_NOFOLLOW``) so that nothing already on disk is followed or overwritten.
``__MACOSX/`` resource forks are skipped.
"""

from __future__ import annotations

import os
import re
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from grader.intake.submission import SubmissionError

CHUNK = 1 << 16
IGNORED_TOP = "__MACOSX"


class UnsafeZip(SubmissionError):
    """The zip cannot be unpacked safely; the message says why, in one line."""


def _parts(name: str) -> tuple[str, ...]:
    return tuple(p for p in re.split(r"[\\/]+", name) if p not in ("", "."))


def _check_member(info: zipfile.ZipInfo) -> tuple[str, ...] | None:
    """The member's path parts, ``None`` to skip it, or ``UnsafeZip``."""
    name = info.filename
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        raise UnsafeZip(f"its entry {name!r} is an absolute path")
    parts = _parts(name)
    if ".." in parts:
        raise UnsafeZip(f"its entry {name!r} points outside the submission (..)")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise UnsafeZip(f"its entry {name!r} is a symbolic link")
    if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UnsafeZip(f"its entry {name!r} is not a regular file")
    if info.flag_bits & 0x1:
        raise UnsafeZip(f"its entry {name!r} is encrypted")
    if not parts or parts[0] == IGNORED_TOP:
        return None
    return parts


def extract_zip(path: Path, dest: Path, max_bytes: int, max_files: int) -> None:
    """Unpack ``path`` into the empty or new folder ``dest``; raise ``UnsafeZip`` if unsafe."""
    dest.mkdir(parents=True, exist_ok=True)
    root = dest.resolve()
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if not infos:
                raise UnsafeZip("the zip is empty")
            if len(infos) > max_files:
                raise UnsafeZip(f"it has {len(infos)} entries, more than the cap of {max_files}")
            members = [(info, _check_member(info)) for info in infos]
            declared = sum(info.file_size for info, _ in members)
            if declared > max_bytes:
                raise UnsafeZip(_too_big(declared, max_bytes))
            written = 0
            for info, parts in members:
                if parts is None:
                    continue
                target = root.joinpath(*parts)
                if not target.resolve().is_relative_to(root):  # belt and braces
                    raise UnsafeZip(f"its entry {info.filename!r} points outside the submission")
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                written = _copy_member(zf, info, target, written, max_bytes)
    except UnsafeZip:
        raise
    except zipfile.BadZipFile as exc:
        raise UnsafeZip(f"not a valid zip file ({exc})") from None
    except UnicodeDecodeError:  # raised by zipfile while it reads the names
        raise UnsafeZip("an entry's name is marked as UTF-8 but is not UTF-8 text") from None
    except (zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise UnsafeZip(f"the zip is damaged ({type(exc).__name__}: {exc})") from None
    except FileExistsError as exc:
        name = PurePosixPath(exc.filename or "?").name
        raise UnsafeZip(f"it holds {name!r} twice") from None
    except OSError as exc:
        raise UnsafeZip(f"it cannot be unpacked ({exc.strerror or exc})") from None


def _too_big(size: int, cap: int) -> str:
    return (
        f"it unpacks to more than {cap / 2**20:g} MiB (at least {size / 2**20:.1f} MiB): "
        "a zip bomb, or more than a submission needs"
    )


def _copy_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, written: int, cap: int
) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as out, zf.open(info) as src:
        while chunk := src.read(CHUNK):
            written += len(chunk)
            if written > cap:
                raise UnsafeZip(_too_big(written, cap))
            out.write(chunk)
    return written


def submission_root(folder: Path, depth: int = 4) -> Path:
    """Where the submission lies in an unpacked zip: the folder that holds ``exercises/`` or
    the exercise files (``alice/exercises/...`` -> ``alice``), found when it is the only one
    within ``depth`` levels; else the only notebook there; else ``folder`` itself (and
    ``load_submission`` says what is missing)."""
    from grader.shared.registry import EXERCISES

    names = {e.filename for e in EXERCISES}
    roots: set[Path] = set()
    notebooks: list[Path] = []
    for path in _walk(folder, depth):
        if path.is_dir() and path.name == "exercises":
            roots.add(path.parent)
        elif path.is_file() and path.name in names:
            roots.add(path.parent if path.parent.name != "exercises" else path.parent.parent)
        elif path.is_file() and path.suffix.lower() == ".ipynb":
            notebooks.append(path)
    if len(roots) == 1:
        return roots.pop()
    if not roots and len(notebooks) == 1:
        return notebooks[0]
    return folder


def _walk(folder: Path, depth: int):
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or path.name == IGNORED_TOP or path.is_symlink():
            continue
        yield path
        if path.is_dir() and depth > 1:
            yield from _walk(path, depth - 1)
