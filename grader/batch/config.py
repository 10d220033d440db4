"""``grading.toml``: what a batch grades and how, validated with one clear error per mistake.

Every key is optional; an unknown key is an error (a typo must not be silently ignored)::

    exercises = ["ID", ...]        # grade only these exercises (default: every one)
    seed = 123456789               # the course's grading seed (default: drawn on the first run
                                   # of grade batch, kept in OUT; never shown to students)
    max_examples = 20              # examples per check (default: each check's own)

    [limits]                       # bounds on student code and on what a zip may unpack to
    call_timeout_s = 20
    exercise_budget_s = 90
    import_timeout_s = 20
    memory_mb = 3072
    max_processes = 64
    max_file_mb = 16
    max_output_kb = 64
    unzip_mb = 64                  # a zip may unpack to at most this many MiB ...
    unzip_files = 2000             # ... in at most this many entries

    [points."ID"]                  # an exercise's id, quoted
    max_score = 20                 # the exercise's points (default: the pack's)
    [points."ID".checks]           # a check's weight; the weights are scaled to max_score
    "the check's name" = 1

Command-line options (``-e``, ``--seed``, ``--max-examples``, ``--call-timeout``, ...) override
the file. ``Settings.fingerprint`` identifies everything that can change a grade: the settings,
the grader's version and the code and data of the packs that declare the exercises graded
(``pack_hash``), so that a check fixed in a pack grades the class again; ``changes`` says in a
few words what differs between two runs.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from grader.judge.seeds import MAX_SEED, PUBLIC_SEED
from grader.protocol.limits import Limits
from grader.shared import tomlread
from grader.shared.registry import BY_ID, EXERCISES
from grader.shared.version import __version__

CONFIG_NAME = "grading.toml"
TOP_KEYS = ("exercises", "seed", "max_examples", "limits", "points")
UNZIP_KEYS = {"unzip_mb": 64, "unzip_files": 2000}
LIMIT_TYPES: dict[str, type] = {
    f.name: (int if f.type in ("int", int) else float) for f in dataclasses.fields(Limits)
}
SKIPPED = ("__pycache__",)  # in a pack's folder: what Python writes there, not the pack's own


class ConfigError(Exception):
    """A mistake in grading.toml or in the options; the message is one line for the user."""


@dataclass(frozen=True)
class Settings:
    """Everything a judge process needs to grade a submission of the batch (picklable)."""

    exercises: tuple[str, ...] = tuple(e.id for e in EXERCISES)
    seed: int = PUBLIC_SEED
    max_examples: int | None = None
    limits: Limits = field(default_factory=Limits)
    max_scores: dict[str, float] = field(default_factory=dict)
    check_points: dict[str, dict[str, float]] = field(default_factory=dict)
    unzip_mb: int = UNZIP_KEYS["unzip_mb"]
    unzip_files: int = UNZIP_KEYS["unzip_files"]
    sandbox: str = "default"  # "default" | "none" | "strict": how workers are isolated

    def fingerprint(self) -> str:
        """A hash of every setting that can change a grade (the sandbox mode cannot)."""
        return hashlib.sha256(json.dumps(self.describe(), sort_keys=True).encode()).hexdigest()

    def ledger_meta(self, shard: str = "") -> dict[str, str]:
        """What a batch's ledger records about the run that filled it."""
        described = self.describe()
        return {
            "settings_hash": self.fingerprint(),
            "settings": json.dumps(described, sort_keys=True),
            "exercises": json.dumps(list(self.exercises)),
            "grader_version": described["grader_version"],
            "seed": str(self.seed),
            "shard": shard,
        }

    def describe(self) -> dict[str, Any]:
        """Every setting that can change a grade, as plain data (kept in OUT's meta)."""
        return {
            "grader_version": __version__,
            "packs": packs_used(self.exercises),
            "exercises": list(self.exercises),
            "seed": self.seed,
            "max_examples": self.max_examples,
            "limits": dataclasses.asdict(self.limits),
            "max_scores": self.max_scores,
            "check_points": self.check_points,
            "unzip_mb": self.unzip_mb,
            "unzip_files": self.unzip_files,
        }


@cache
def pack_hash(folder: Path) -> str:
    """A SHA-256 of a pack's package folder: every file's path in it and bytes (its code, its
    ``pack.toml``, its data), not Python's caches nor hidden files. Once per process."""
    h = hashlib.sha256()
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name.endswith((".pyc", ".pyo")):
                continue
            path = Path(top, name)
            h.update(b"\0file\0" + path.relative_to(folder).as_posix().encode("utf-8", "replace"))
            try:
                h.update(b"\0" + path.read_bytes())
            except OSError as exc:
                h.update(f"\0unreadable {exc.errno}".encode())
    return h.hexdigest()


def packs_used(exercises: tuple[str, ...]) -> dict[str, str]:
    """The packs that declare ``exercises``: name -> ``pack_hash`` of its folder."""
    from grader.shared.course import packs

    wanted = set(exercises)
    return {
        p.name: pack_hash(p.folder) for p in packs() if any(e.id in wanted for e in p.exercises)
    }


def changes(before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between two ``Settings.describe()``, in words for the instructor (never a
    value: the seed is the course's secret)."""
    said = []
    for key in sorted(set(before) | set(now)):
        old, new = before.get(key), now.get(key)
        if old == new:
            continue
        if key == "packs" and isinstance(old, dict) and isinstance(new, dict):
            for name in sorted(set(old) | set(new)):
                if name not in old:
                    said.append(f"pack {name} is new")
                elif name not in new:
                    said.append(f"pack {name} is no longer graded")
                elif old[name] != new[name]:
                    said.append(f"pack {name}'s code changed")
        elif key == "packs":
            said.append("the packs' code was not recorded")
        elif key == "grader_version":
            said.append(f"the grader's version ({old} -> {new})")
        else:
            said.append(key.replace("_", " "))
    return said


def _where(source: str, key: str) -> str:
    return f"{source}: {key}" if key else source


def _unknown(source: str, table: str, key: str, allowed: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f" (expected one of: {', '.join(allowed)})"
    where = f"[{table}]" if table else "top level"
    return ConfigError(f"{source}: unknown key {key!r} at {where}{hint}")


def _number(
    source: str, key: str, value: Any, kind: type = float, minimum: float | None = 0
) -> Any:
    ok = isinstance(value, int) if kind is int else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        raise ConfigError(
            f"{_where(source, key)} must be {'an integer' if kind is int else 'a number'}, "
            f"not {value!r}"
        )
    if minimum is not None and value < minimum:
        raise ConfigError(f"{_where(source, key)} must be at least {minimum:g}, not {value!r}")
    return kind(value)


def _exercise_ids(source: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or not value:
        raise ConfigError(f"{_where(source, key)} must be a non-empty list of exercise ids")
    for v in value:
        if v not in BY_ID:
            raise ConfigError(
                f"{_where(source, key)}: unknown exercise {v!r}; choose from " + ", ".join(BY_ID)
            )
    return tuple(e.id for e in EXERCISES if e.id in value)


def _limits(source: str, table: Any) -> tuple[dict[str, Any], dict[str, int]]:
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: limits must be a table ([limits])")
    limits, unzip = {}, {}
    allowed = [*LIMIT_TYPES, *UNZIP_KEYS]
    for key, value in table.items():
        if key in UNZIP_KEYS:
            unzip[key] = _number(source, f"limits.{key}", value, int, 1)
        elif key in LIMIT_TYPES:
            kind = LIMIT_TYPES[key]
            limits[key] = _number(source, f"limits.{key}", value, kind, 1 if kind is int else 0)
            if limits[key] == 0:
                raise ConfigError(f"{source}: limits.{key} must be more than 0")
        else:
            raise _unknown(source, "limits", key, allowed)
    return limits, unzip


def _quoted_id() -> str:
    """An exercise id in use, quoted as a TOML key (the first one), for an example."""
    return json.dumps(next(iter(BY_ID), "ID"))


def _points(source: str, table: Any) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    if not isinstance(table, dict):
        raise ConfigError(
            f"{source}: points must be a table of exercises ([points.{_quoted_id()}])"
        )
    max_scores: dict[str, float] = {}
    check_points: dict[str, dict[str, float]] = {}
    for ex_id, spec in table.items():
        if ex_id not in BY_ID:
            raise ConfigError(
                f"{source}: [points.{ex_id}]: unknown exercise {ex_id!r}; choose from "
                + ", ".join(BY_ID)
                + f" (quote the id: [points.{_quoted_id()}])"
            )
        if not isinstance(spec, dict):
            raise ConfigError(f'{source}: points."{ex_id}" must be a table')
        for key, value in spec.items():
            if key == "max_score":
                max_scores[ex_id] = _number(source, f'points."{ex_id}".max_score', value)
            elif key == "checks":
                check_points[ex_id] = _check_points(source, ex_id, value)
            else:
                raise _unknown(source, f'points."{ex_id}"', key, ["max_score", "checks"])
    return max_scores, check_points


def _check_points(source: str, ex_id: str, table: Any) -> dict[str, float]:
    from grader.judge.scoring import checks_for  # imports the check modules (and torch): only here

    where = f'points."{ex_id}".checks'
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: {where} must be a table of check names and points")
    names = [c.name for c in checks_for(BY_ID[ex_id])]
    out = {}
    for name, value in table.items():
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1, cutoff=0.4)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{source}: {where}: exercise {ex_id} has no check {name!r}{hint} "
                f"(its checks: {'; '.join(names)})"
            )
        out[name] = _number(source, f"{where}.{name!r}", value)
    return out


def read_config(path: Path) -> dict[str, Any]:
    """The validated contents of a grading.toml, as ``Settings`` keyword arguments."""
    source = str(path)
    try:
        raw = tomlread.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{source}: no such file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not UTF-8 text") from None
    except tomlread.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot be read ({exc.strerror})") from None
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "exercises":
            out["exercises"] = _exercise_ids(source, key, value)
        elif key == "seed":
            out["seed"] = _number(source, key, value, int, 0)
            if out["seed"] > MAX_SEED:
                raise ConfigError(f"{source}: seed must be at most {MAX_SEED}, not {value!r}")
        elif key == "max_examples":
            out["max_examples"] = _number(source, key, value, int, 1)
        elif key == "limits":
            out["limits"], unzip = _limits(source, value)
            out.update(unzip)
        elif key == "points":
            out["max_scores"], out["check_points"] = _points(source, value)
        else:
            raise _unknown(source, "", key, list(TOP_KEYS))
    return out


def build_settings(
    config: dict[str, Any],
    exercises: list[str] | None = None,
    seed: int | None = None,
    max_examples: int | None = None,
    limits: dict[str, Any] | None = None,
    sandbox: str = "default",
) -> Settings:
    """``Settings`` from a read config, with the command line's values taking precedence."""
    values = dict(config)
    if exercises:
        values["exercises"] = _exercise_ids("-e", "", exercises)
    if seed is not None:
        values["seed"] = seed
    if max_examples is not None:
        if max_examples < 1:
            raise ConfigError("--max-examples must be at least 1")
        values["max_examples"] = max_examples
    merged_limits = {**values.pop("limits", {}), **(limits or {})}
    return Settings(**values, limits=Limits(**merged_limits), sandbox=sandbox)
