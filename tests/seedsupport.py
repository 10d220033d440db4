"""Helpers of the course-seed tests (issue 18): the logging, lookup-table and sniffing answers
to 4.1, running ``grade`` from this checkout, and reading a batch's gradebook."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from support import grade_cli

from grader.result.schema import SCHEMA_PATH

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
    return grade_cli(*args, env=full, timeout=timeout, module="grader.commands.cli")


def answer(folder: Path, source: str) -> Path:
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / EX41).write_text(source, encoding="utf-8")
    return folder


def score_41(result: dict) -> float:
    return next(e["score"] for e in result["exercises"] if e["id"] == "4.1")


def make_answers(root: Path) -> dict[str, Path]:
    """A 4.1 answer that logs its configs, graded once with the public seed; the lookup table
    built from that log; and two answers that look for the course seed around them."""
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
