"""OUT's files and its SQLite database: what has been graded, written so that a crash at any
moment leaves either the old state or the new one, never half of a row.

Per submission the batch writes, in this order: ``results/NAME.json`` and
``reports/NAME.html`` (each to a temporary file, then renamed over the old one), then one
transaction that replaces the submission's rows in ``gradebook.sqlite``. A submission counts as
done only when its row is there with the content hash of what is in DIR now and the
fingerprint of the current settings, so a batch killed with ``kill -9`` and started again
grades exactly what is missing or changed. The database runs in WAL mode while the batch runs
and is turned back into a single file when it ends.

File names: ``NAME`` is the submission's name, unless another submission's name is the same to
a file system that ignores case or Unicode normalization (macOS, Windows, SMB shares:
``alice`` and ``Alice``, NFC and NFD ``josé``); then each of those gets its name followed by a
short hash of it (``Alice-3f2a9c01be``), so that two submissions never share a file. The names
are decided over the whole class (``Ledger.expect``) and stay the same from run to run while
the class does; the gradebook keeps the real names.

The schema (see docs/batch.md for example queries)::

    meta(key, value)
    submissions(name, source, kind, content_hash, settings_hash, status, reason, graded,
                score, max_score, grader_version, torch_version, seed, duration_s, result_path,
                report_path)
    exercises(submission, exercise_id, title, score, max_score, status, verdict)
    checks(submission, exercise_id, position, name, points, max_points, passed, message,
           counterexample, reproduce)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from grader.result.schema import HIDDEN_SEED, legacy_verdict, verdict_of

DB_NAME = "gradebook.sqlite"
RESULTS, REPORTS, SCRATCH = "results", "reports", ".work"
DB_SCHEMA_VERSION = "1"
FILE_MODE = 0o644  # what open() would give under the usual umask (mkstemp gives 0o600)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS submissions (
    name           TEXT PRIMARY KEY,
    source         TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('folder', 'zip', 'notebook', 'other')),
    content_hash   TEXT,
    settings_hash  TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'error')),
    reason         TEXT NOT NULL,
    graded         INTEGER NOT NULL CHECK (graded IN (0, 1)),
    score          REAL NOT NULL,
    max_score      REAL NOT NULL,
    grader_version TEXT NOT NULL,
    torch_version  TEXT NOT NULL,
    seed           INTEGER NOT NULL,
    duration_s     REAL NOT NULL,
    result_path    TEXT NOT NULL,
    result_sha256  TEXT NOT NULL,
    report_path    TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS exercises (
    submission  TEXT NOT NULL REFERENCES submissions (name) ON DELETE CASCADE,
    exercise_id TEXT NOT NULL,
    title       TEXT NOT NULL,
    score       REAL NOT NULL,
    max_score   REAL NOT NULL,
    status      TEXT NOT NULL,
    verdict     TEXT NOT NULL DEFAULT 'graded',
    PRIMARY KEY (submission, exercise_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checks (
    submission     TEXT NOT NULL,
    exercise_id    TEXT NOT NULL,
    position       INTEGER NOT NULL,
    name           TEXT NOT NULL,
    points         REAL NOT NULL,
    max_points     REAL NOT NULL,
    passed         INTEGER NOT NULL CHECK (passed IN (0, 1)),
    message        TEXT NOT NULL,
    counterexample TEXT,
    reproduce      TEXT,
    PRIMARY KEY (submission, exercise_id, position),
    FOREIGN KEY (submission, exercise_id)
        REFERENCES exercises (submission, exercise_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS checks_by_name ON checks (exercise_id, name, passed);
"""


def _set_mode(fd: int) -> None:
    """Give a file just made by ``mkstemp`` (owner-only) the mode of the batch's files; on
    Windows before Python 3.13 there is no ``os.fchmod``, and no such mode to give."""
    if hasattr(os, "fchmod"):
        os.fchmod(fd, FILE_MODE)


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``path`` so that readers (and a crash) see the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        _set_mode(fd)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def name_key(name: str) -> str:
    """``name`` as a file system that ignores case and Unicode normalization sees it (more
    names share a key than such a system confuses: compatibility forms too, never fewer)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def _suffixed(name: str, salt: int = 0) -> str:
    data = name.encode("utf-8", "surrogatepass") + (b"\0%d" % salt if salt else b"")
    return f"{name}-{hashlib.sha256(data).hexdigest()[:10]}"


def file_stems(names: Iterable[str]) -> dict[str, str]:
    """Each submission name -> the stem of its files in OUT: the name itself, or where names
    share a ``name_key``, each of them followed by a short hash of it; no two stems share a
    key. A function of the set of names alone, so the same on every run and every shard."""
    names = sorted(set(names))
    shared = Counter(name_key(n) for n in names)
    stems = {n: n if shared[name_key(n)] == 1 else _suffixed(n) for n in names}
    for salt in range(1, 10):  # a name that is another's stem (alice-<hash>): hash it again
        shared = Counter(name_key(s) for s in stems.values())
        clashing = [n for n in names if shared[name_key(stems[n])] > 1]
        if not clashing:
            break
        for n in clashing:
            stems[n] = _suffixed(n, salt)
    return stems


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, timeout=30.0)  # wait for other readers
    db.execute("PRAGMA foreign_keys = ON")
    return db


def exercise_ids(db: sqlite3.Connection) -> list[str]:
    """The exercises the batch graded, in order (meta ``exercises``)."""
    row = db.execute("SELECT value FROM meta WHERE key = 'exercises'").fetchone()
    return json.loads(row[0]) if row else []


def write_report(result_dict: dict, path: Path) -> bool:
    """Render the HTML report of one result to ``path`` atomically; False without the renderer."""
    try:
        from grader.result.report_html import write_html
    except ImportError:
        return False
    from grader.result.schema import from_dict

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    _set_mode(fd)
    os.close(fd)
    try:
        write_html(from_dict(result_dict), Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def insert_rows(db: sqlite3.Connection, row: dict[str, Any], result: dict) -> None:
    """The submission's rows (inside the caller's transaction), replacing any old ones."""
    db.execute("DELETE FROM submissions WHERE name = ?", (row["name"],))
    columns = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    db.execute(f"INSERT INTO submissions ({columns}) VALUES ({marks})", tuple(row.values()))
    for ex in result["exercises"]:
        db.execute(
            "INSERT INTO exercises VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                row["name"],
                ex["id"],
                ex["title"],
                ex["score"],
                ex["max_score"],
                ex["status"],
                verdict_of(ex),
            ),
        )
        for position, c in enumerate(ex["checks"]):
            db.execute(
                "INSERT INTO checks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row["name"],
                    ex["id"],
                    position,
                    c["name"],
                    c["points"],
                    c["max_points"],
                    int(c["passed"]),
                    c["message"],
                    None if c["counterexample"] is None else json.dumps(c["counterexample"]),
                    c["reproduce"],
                ),
            )


def ensure_verdicts(db: sqlite3.Connection) -> None:
    """Give a gradebook written before exercises had a ``verdict`` its column, each old row
    the verdict its checks' messages said (``legacy_verdict``, the one place the words still
    count: rows saved before the field existed)."""
    if _has_verdicts(db):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if not _has_verdicts(db):  # another process may have added it meanwhile
            db.execute("ALTER TABLE exercises ADD COLUMN verdict TEXT NOT NULL DEFAULT 'graded'")
            said: dict[tuple[str, str], list[str]] = {}
            for submission, exercise_id, message in db.execute(
                "SELECT submission, exercise_id, message FROM checks ORDER BY position"
            ).fetchall():
                said.setdefault((submission, exercise_id), []).append(message)
            db.executemany(
                "UPDATE exercises SET verdict = ? WHERE submission = ? AND exercise_id = ?",
                [(legacy_verdict(m), *k) for k, m in said.items() if legacy_verdict(m) != "graded"],
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _has_verdicts(db: sqlite3.Connection) -> bool:
    return any(row[1] == "verdict" for row in db.execute("PRAGMA table_info(exercises)"))


class Ledger:
    """OUT: where results, reports and the gradebook database live."""

    def __init__(self, out: Path):
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.db = connect(out / DB_NAME)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.executescript(SCHEMA)
        ensure_verdicts(self.db)
        self.report_errors: dict[str, str] = {}  # name -> why the renderer failed
        self._stems: dict[str, str] = {}  # name -> the stem of its files (``expect``)

    @property
    def scratch(self) -> Path:
        return self.out / SCRATCH

    def set_meta(self, values: dict[str, str]) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())
        self.db.execute("INSERT OR REPLACE INTO meta VALUES ('db_schema', ?)", (DB_SCHEMA_VERSION,))
        self.db.execute("COMMIT")

    def meta_value(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def expect(self, names: Iterable[str]) -> None:
        """Name the files of ``names`` (the whole class: every shard's names alike) and of the
        submissions OUT has rows for, so that no two share a file (``file_stems``)."""
        rows = [n for (n,) in self.db.execute("SELECT name FROM submissions")]
        self._stems = file_stems([*names, *rows])

    def stem(self, name: str) -> str:
        """The stem of ``name``'s files in OUT (``results/STEM.json``, ``reports/STEM.html``)."""
        if name not in self._stems:  # not expected: named with the others OUT knows
            self.expect([*self._stems, name])
        return self._stems[name]

    def done(self, name: str, content_hash: str, settings_hash: str, *others: str) -> bool:
        """Whether ``name`` is graded, from these contents and under these settings (or one
        of the ``others`` settings hashes)."""
        row = self.db.execute(
            "SELECT content_hash, settings_hash, result_path, result_sha256 FROM submissions "
            "WHERE name = ?",
            (name,),
        ).fetchone()
        if row is None or row[0] != content_hash or row[1] not in (settings_hash, *others):
            return False
        try:  # the file is the one the row was written with (not one a crash left newer)
            return hashlib.sha256((self.out / row[2]).read_bytes()).hexdigest() == row[3]
        except OSError:
            return False

    def record(
        self,
        row: dict[str, Any],
        result: dict,
        render_report: bool = True,
        hide_seed: bool = False,
    ) -> None:
        """Write the result's JSON and HTML, then its rows in one transaction.

        ``row`` holds the ``submissions`` columns that do not come from the result (``name``,
        ``source``, ``kind``, ``content_hash``, ``settings_hash``, ``status``, ``reason``,
        ``graded``). With ``hide_seed`` (a course's grading seed) the JSON and HTML, which go
        back to the student, say "course seed" (``HIDDEN_SEED``); the database keeps the seed.
        """
        name = row["name"]
        result_path = f"{RESULTS}/{self.stem(name)}.json"
        shown = {**result, "seed": HIDDEN_SEED} if hide_seed else result
        text = json.dumps(shown, indent=2) + "\n"
        atomic_write(self.out / result_path, text)
        report_path = self._report(name, shown) if render_report else None
        full = {
            **row,
            **{
                k: result[k]
                for k in (
                    "score",
                    "max_score",
                    "grader_version",
                    "torch_version",
                    "seed",
                    "duration_s",
                )
            },
            "result_path": result_path,
            "result_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "report_path": report_path,
        }
        self.db.execute("BEGIN IMMEDIATE")
        try:
            insert_rows(self.db, full, result)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def _report(self, name: str, result: dict) -> str | None:
        """Render the report; a renderer that fails costs the report, never the batch."""
        report_path = f"{REPORTS}/{self.stem(name)}.html"
        try:
            return report_path if write_report(result, self.out / report_path) else None
        except Exception as exc:
            self.report_errors[name] = f"{type(exc).__name__}: {exc}"
            return None

    def fill_reports(self) -> int:
        """Render the reports that are missing (the renderer failed or was not there then)."""
        missing = [
            (name, result_path)
            for name, result_path, report_path in self.db.execute(
                "SELECT name, result_path, report_path FROM submissions ORDER BY name"
            ).fetchall()
            if not report_path or not (self.out / report_path).is_file()
        ]
        filled = 0
        for name, result_path in missing:
            try:
                result = json.loads((self.out / result_path).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            report_path = self._report(name, result)
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "UPDATE submissions SET report_path = ? WHERE name = ?", (report_path, name)
            )
            self.db.execute("COMMIT")
            filled += report_path is not None
        return filled

    def prune(self, keep: set[str]) -> list[str]:
        """Forget submissions that are no longer in DIR (or in this shard), and delete every
        file in results/ and reports/ that no row points to (e.g. left by a crash). A file is
        kept whose name a file system that ignores case could take for one a row points to:
        it may be that one."""
        gone = [n for (n,) in self.db.execute("SELECT name FROM submissions") if n not in keep]
        for name in gone:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM submissions WHERE name = ?", (name,))
            self.db.execute("COMMIT")
        wanted = {
            name_key(str(self.out / rel))
            for row in self.db.execute("SELECT result_path, report_path FROM submissions")
            for rel in row
            if rel
        }
        for folder in (self.out / RESULTS, self.out / REPORTS, self.out):
            if not folder.is_dir():
                continue
            for path in folder.iterdir():
                leftover = path.name.startswith(".") and path.name.endswith(".tmp")
                unwanted = folder != self.out and name_key(str(path)) not in wanted
                if path.is_file() and (leftover or unwanted):
                    path.unlink(missing_ok=True)
        return gone

    def close(self) -> None:
        """Fold the write-ahead log back in: gradebook.sqlite is then one self-contained file."""
        try:
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.db.execute("PRAGMA journal_mode = DELETE")
        except sqlite3.OperationalError:  # someone has it open: it stays in WAL mode, intact
            pass
        self.db.close()
