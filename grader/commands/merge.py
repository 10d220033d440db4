"""``grade merge OUT1 OUT2 ... -o OUT``: combine the OUT folders of ``grade batch --shard``
runs into one gradebook (CSV and SQLite), one dashboard, and every result and report.

The shards must have been graded with the same settings (grading.toml, options, grader
version and the packs' code); a submission found in two shards must be the same one (same
content hash). Results and reports are named over the merged class as ``grade batch`` names
them (``grader.batch.ledger.file_stems``: no two share a file where case is ignored). Merging
is repeatable: OUT is rebuilt from the shards each time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
from pathlib import Path

from grader.commands.options import EXIT_FAILED, EXIT_PASSED, add_out_option
from grader.shared.errors import UsageError


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="grade merge",
        description="Merge the OUT folders of sharded 'grade batch' runs into one.",
    )
    p.add_argument(
        "shards",
        nargs="+",
        type=Path,
        metavar="SHARD_OUT",
        help="OUT folders written by 'grade batch --shard K/N'",
    )
    add_out_option(p, "the merged gradebook, dashboard, results and reports")
    p.add_argument("--title", default="Class dashboard", help="the dashboard's title")
    return p


def _open_shard(folder: Path) -> tuple[sqlite3.Connection, dict[str, str]]:
    from grader.batch.ledger import DB_NAME, connect, ensure_verdicts

    path = folder / DB_NAME
    if not path.is_file():
        raise UsageError(f"{folder}: no {DB_NAME} (is it the OUT folder of 'grade batch'?)")
    try:
        db = connect(path)
        meta = dict(db.execute("SELECT key, value FROM meta"))
        ensure_verdicts(db)  # a shard written before exercises had a verdict
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{path}: not a gradebook database ({exc})") from None
    if "settings_hash" not in meta:
        raise UsageError(f"{path}: not written by 'grade batch' (no settings in its meta table)")
    return db, meta


def _check_same_settings(metas: list[tuple[Path, dict[str, str]]]) -> None:
    from grader.batch.config import changes

    first_path, first = metas[0]
    for path, meta in metas[1:]:
        if meta["settings_hash"] != first["settings_hash"]:
            a, b = json.loads(first["settings"]), json.loads(meta["settings"])
            raise UsageError(
                f"{path} and {first_path} were graded with different settings "
                f"({'; '.join(changes(a, b)) or 'not recorded'}); grade every shard with the "
                "same grading.toml, options, grader version and packs"
            )


def _copy_files(db: sqlite3.Connection, out: Path, folder_of: dict[str, Path]) -> None:
    """Copy each submission's result and report from its shard, named over the merged class
    (``file_stems``), and point its row at them."""
    from grader.batch.ledger import REPORTS, RESULTS, atomic_write, file_stems

    rows = db.execute("SELECT name, result_path, report_path FROM submissions").fetchall()
    stems = file_stems(name for name, _, _ in rows)
    db.execute("BEGIN")
    for name, result_path, report_path in rows:
        wanted = {result_path: f"{RESULTS}/{stems[name]}.json"}
        if report_path:
            wanted[report_path] = f"{REPORTS}/{stems[name]}.html"
        for rel, target in wanted.items():
            src = folder_of[name] / rel
            if not src.is_file():
                raise UsageError(f"{src}: missing (the shard's OUT folder is incomplete)")
            atomic_write(out / target, src.read_bytes())
        db.execute(
            "UPDATE submissions SET result_path = ?, report_path = ? WHERE name = ?",
            (wanted[result_path], wanted.get(report_path) if report_path else None, name),
        )
    db.execute("COMMIT")


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    out = args.out.resolve()
    for folder in args.shards:
        if folder.resolve() == out:
            raise UsageError(f"{folder}: the merged OUT must be a new folder, not a shard")
    opened = [(folder, *_open_shard(folder)) for folder in args.shards]
    _check_same_settings([(folder, meta) for folder, _, meta in opened])

    from grader.analysis import answers
    from grader.batch.ledger import DB_NAME, SCHEMA, Ledger, connect
    from grader.commands.batch import finish, summary_line

    owner: dict[str, tuple[Path, str | None]] = {}
    for folder, db, _ in opened:
        for name, content_hash in db.execute("SELECT name, content_hash FROM submissions"):
            if name in owner and owner[name][1] != content_hash:
                raise UsageError(
                    f"submission {name!r} is in {owner[name][0]} and in {folder} with different "
                    "contents; grade it in one shard only"
                )
            owner.setdefault(name, (folder, content_hash))
        db.close()

    out.mkdir(parents=True, exist_ok=True)
    building = out / f".{DB_NAME}.merging"
    for stale in (building, *(building.with_name(building.name + s) for s in ("-wal", "-shm"))):
        stale.unlink(missing_ok=True)
    db = connect(building)
    db.executescript(SCHEMA)
    answers.ensure_schema(db)
    meta = {**opened[0][2], "shard": ""}
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    db.execute("CREATE TEMP TABLE wanted (name TEXT PRIMARY KEY)")
    for folder, _, _ in opened:
        db.execute("ATTACH DATABASE ? AS shard", (str(folder / DB_NAME),))
        db.execute("BEGIN")
        db.execute("DELETE FROM wanted")
        db.executemany(
            "INSERT INTO wanted VALUES (?)", [(n,) for n, (f, _) in owner.items() if f == folder]
        )
        for table, key in (
            ("submissions", "name"),
            ("exercises", "submission"),
            ("checks", "submission"),
        ):
            db.execute(
                f"INSERT INTO {table} SELECT * FROM shard.{table} "
                f"WHERE {key} IN (SELECT name FROM wanted)"
            )
        answers.copy_from(db, "shard", "wanted")  # compared again over the merged class
        db.execute("COMMIT")
        db.execute("DETACH DATABASE shard")
    _copy_files(db, out, {name: folder for name, (folder, _) in owner.items()})
    db.close()
    for old in ("-wal", "-shm"):
        (out / (DB_NAME + old)).unlink(missing_ok=True)
    os.replace(building, out / DB_NAME)
    ledger = Ledger(out)
    ledger.prune(set(owner))
    shutil.rmtree(ledger.scratch, ignore_errors=True)
    finish(ledger, args.title)
    line, errors = summary_line(ledger.db)
    ledger.close()
    print(f"merged {len(opened)} shards: {line}")
    print(f"gradebook: {args.out / 'gradebook.csv'}  dashboard: {args.out / 'index.html'}")
    return EXIT_FAILED if errors else EXIT_PASSED
