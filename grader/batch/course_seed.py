"""The seed a batch grades with: the course's grading seed (see ``grader.judge.seeds``).

``--seed`` wins, then ``seed`` in grading.toml; otherwise a seed is drawn at random on the first
run and kept in OUT's database (meta ``drawn_seed``), so that a resumed or repeated batch grades
with the same examples, and the gradebook records which. Shards are graded into separate OUT
folders that must agree on the seed, so a sharded batch needs one given.

The seed is the instructor's: the gradebook, the database and the dashboard show it; the
per-submission JSON results and HTML reports, which go back to students, say "course seed"
(unless it is the public seed, which hides nothing).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from grader.judge.seeds import Seed, SeedError, course_seed, draw_seed, parse_seed
from grader.shared.errors import UsageError

if TYPE_CHECKING:
    from grader.batch.config import Settings
    from grader.batch.ledger import Ledger

DRAWN_KEY = "drawn_seed"


def given_source(cli_seed: int | None, config: dict) -> str | None:
    """Where the seed was given (``--seed``, ``grading.toml``), or None: draw or reuse one."""
    if cli_seed is not None:
        return "--seed"
    return "grading.toml" if "seed" in config else None


def shard_needs_seed() -> str:
    """The message for a sharded batch without a seed (with a fresh one to paste)."""
    return (
        "a sharded batch grades every shard with the same seed: add "
        f"'seed = {draw_seed()}' (a number drawn for you now) to grading.toml, or pass --seed"
    )


def settle(settings: Settings, source: str | None, ledger: Ledger) -> tuple[Settings, Seed]:
    """``settings`` with the batch's seed: the given one, else OUT's kept seed, else a new
    one, kept in OUT before anything is graded with it."""
    if source is None:
        kept = ledger.meta_value(DRAWN_KEY)
        try:
            value = parse_seed(kept, f"{DRAWN_KEY} in {ledger.out}") if kept else draw_seed()
        except SeedError as exc:
            raise UsageError(str(exc)) from None
        if kept is None:
            ledger.set_meta({DRAWN_KEY: str(value)})
        settings = dataclasses.replace(settings, seed=value)
        source = "drawn"
    return settings, course_seed(settings.seed, source)
