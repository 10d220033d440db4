"""Each exercise's table of probes in the worker: the one its pack names (``probes`` in
pack.toml), or the declared checks' table for its names (``declared.declared_probes``), read
once per process; ``load_all`` reads every pack's before the fork server forks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from grader.worker.declared import declared_probes
from grader.worker.probes import Probe


def for_exercise(exercise_id: str) -> dict[str, Probe]:
    """The probes of ``exercise_id``, from the module its pack names (imported once: the fork
    server imports every exercise's before it forks, ``load_all``), or, when it names none,
    the declared checks' table for the exercise's names (``declared.declared_probes``)."""
    if exercise_id not in _TABLES:
        from grader.shared.packs import resolve
        from grader.shared.registry import BY_ID

        exercise = BY_ID[exercise_id]
        if exercise.probes:
            table = cast("Mapping[str, Probe]", resolve(exercise.probes, "PROBES"))
        else:  # the pack names none: the declared checks' table for its names
            table = declared_probes(exercise.names)
        _TABLES[exercise_id] = dict(table)
    return _TABLES[exercise_id]


def load_all() -> None:
    """Import the worker side of every pack in use: the modules each pack names in ``worker``
    and every exercise's probes."""
    import importlib

    from grader.shared.course import packs

    for pack in packs():
        for module in pack.worker:
            importlib.import_module(module)
        for exercise in pack.exercises:
            for_exercise(exercise.id)


_TABLES: dict[str, dict[str, Probe]] = {}
