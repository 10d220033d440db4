"""The probe tables of the declared checks, on the worker's side: ``module_probes`` (a module
exercise, ``same_module_as_reference``), and the table an exercise gets when its pack names
none (``declared_probes``). The face (``grader.pack.worker``) exports the first two.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

from grader.protocol import layers
from grader.shared.torchseed import seeded
from grader.worker import truth
from grader.worker.constructor import constructor
from grader.worker.probes import (
    Probe,
    _forward,
    _keep,
    _load,
    answer_probes,
    describe_module,
    plain,
)
from grader.worker.trace import trace_kept


def kept_values(module: Any, state: dict[Any, Any], handle: int) -> dict[str, Any]:
    """A probe: what the kept module ``handle``'s ``state_dict()`` holds, read as it really is
    (``truth.state``), as plain data."""
    values: dict[str, Any] = plain(truth.state(state[handle]), "your module's state_dict()")
    return values


def module_probes(
    builder: str, build: dict[str, Callable[[Any], Any]] | None = None
) -> dict[str, Probe]:
    """The probe table of a module exercise declared with ``same_module_as_reference``:
    ``"build:<builder>"`` calls the student's ``builder`` (a class or a function returning a
    module) with the judge's ``args`` (``[name, value]`` pairs in order, the names in
    ``keywords`` by keyword; a value with a function in ``build`` rebuilt by it first, e.g. an
    ``nn.Linear`` from its sizes), after ``torch.manual_seed(seed)`` when the judge gives a
    ``seed``, keeps what it made and answers ``{"handle", "module"}`` (``module``: its
    ``describe_module`` without values); ``"values"``, ``"load"``, ``"forward"`` and
    ``"trace"`` run on the kept module (``kept_values``, ``load_weights``, ``forward``,
    ``trace_kept``), and ``"constructor"`` says how a class of the student's is built
    (``constructor``, for a build that raised): the tables of two builders of one exercise
    merge (``module_probes("A") | module_probes("B")``)."""
    builders = dict(build or {})

    def build_answer(
        module: Any,
        state: dict[Any, Any],
        args: list[Any],
        keywords: list[str],
        seed: int | None = None,
    ) -> dict[str, Any]:
        named = set(keywords)
        values = [(n, builders[n](v) if n in builders else layers.built(v)) for n, v in args]
        positional = [v for n, v in values if n not in named]
        with seeded(seed) if seed is not None else nullcontext():
            made = getattr(module, builder)(*positional, **{n: v for n, v in values if n in named})
        described = describe_module(made, values=False)
        if not described.get("is_module"):
            return {"handle": None, "module": described}
        return {"handle": _keep(state, made), "module": described}

    return {
        f"build:{builder}": build_answer,
        "values": kept_values,
        "load": _load,
        "forward": _forward,
        "trace": trace_kept,
        "constructor": constructor,
    }


def declared_probes(names: Sequence[str]) -> dict[str, Probe]:
    """The probe table of an exercise whose pack names no ``probes``: ``module_probes(name)``
    for each name the student's file defines (a class, or a function returning a module), and,
    when it names one, ``answer_probes(name)`` (its ``"call"``): what the declared checks
    (``same_as_reference``, ``same_module_as_reference``, ``same_init_as_reference``) call."""
    table: dict[str, Probe] = {}
    for name in names:
        table |= module_probes(name)
    if len(names) == 1:
        table |= answer_probes(names[0])
    return table
