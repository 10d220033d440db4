"""The declarative check of a module exercise: the module the student's code builds, loaded with
the judge's weights, must compute what the reference module computes, up to a tolerance.

``same_module_as_reference`` declares it (the student's class or builder, its arguments, the
reference module, the input, points and hints) and returns an ordinary ``Check``. The worker
builds the student's module and keeps it (the probe table of ``grader.pack.worker.
module_probes``); the judge compares its parameter names and shapes with the reference's, loads
the reference's weights into it, runs both on the same input (the reference here, meanwhile)
and compares the outputs with ``close``. A failed comparison says where the module first departs
from the reference (``grader.judge.located.localized``), and the reproduce snippet builds the
module, loads the weights and prints both outputs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch
from hypothesis import strategies as st
from torch import nn

from grader.judge import hints
from grader.judge.constructors import constructors_explained
from grader.judge.declared import (
    Arguments,
    Compare,
    arguments_of,
    awaiting_answer,
    call_text,
    close,
    has_parameter,
    literal,
    snippet_head,
)
from grader.judge.launch.handle import WorkerHandle
from grader.judge.located import localized
from grader.judge.properties import ATOL, RTOL, Check, CheckFailed, tensor_text
from grader.protocol import layers
from grader.shared.torchseed import seeded

Example = Any

STRUCTURE_HINT = (
    "the grader loads the reference's weights into your module by name: give its parameters "
    "the names and shapes the statement gives (print(your_module.state_dict().keys()))"
)


def same_module_as_reference(
    *,
    name: str,
    answer: str | None = None,
    strategy: st.SearchStrategy,
    arguments: Arguments,
    reference: Callable[[Example], nn.Module],
    inputs: Callable[[Example], torch.Tensor],
    points: float = 1.0,
    hint: str,
    weights: Callable[[Example], Mapping[str, torch.Tensor]] | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
    compare: Compare | None = None,
    setup: str | Callable[[Example], str] | None = None,
    keywords: tuple[str, ...] = (),
    train: bool = False,
    seed: Callable[[Example], int] | None = None,
    structure_hint: str = STRUCTURE_HINT,
    part_hints: Mapping[str, str] | None = None,
    localize: bool = True,
    max_examples: int = 20,
    examples: tuple[Any, ...] = (),
    hint_kinds: tuple[str, ...] = hints.OWN_KINDS,
    known: tuple[hints.Known, ...] = (),
) -> Check:
    """A ``Check`` that the module ``answer`` (``"<student module>:<class or function>"``)
    builds from ``arguments(example)`` (a dict name -> plain data, passed in order, the names in
    ``keywords`` by keyword; a value the worker rebuilds with ``module_probes(..., build=)``;
    or the names of a dict example's items, ``("d_in", "d_out")``, passed in that order)
    computes on ``inputs(example)`` what ``reference(example)`` computes, once loaded with
    ``weights(example)`` (default: the reference's ``state_dict()``), within ``rtol``/``atol``
    (``close``) or as ``compare(got, expected, what)`` decides.

    Both run in eval mode (``train``: train mode) after ``torch.manual_seed(seed(example))``
    (0 without ``seed``); the reference is built and run here, each in a ``seeded`` block with
    that seed (a reference drawn anew, ``redrawn(module, seed)``, needs no seeding of its own;
    its weights are the same on every run and in the snippet). A module whose
    parameters lack one of the weights' names, or hold it in another shape, fails with
    ``STRUCTURE`` and ``structure_hint``; extra parameters and buffers are the student's own.
    A failed comparison names the first part of the module that departs from the reference's
    (``localized``, with ``part_hints``; ``localize=False`` skips it, as it should with ``train``
    unless every dropout rate is 0 or 1: a trace in train mode must be deterministic).
    ``setup(example)`` is the snippet's code for the arguments a literal cannot write
    (``"linear = torch.nn.Linear({d_in}, {d_out})"``, a string formatted with a dict example's
    items).
    """
    if answer is None:  # the exercise's one answer, once its exercise is known
        given = {k: v for k, v in locals().items() if k != "answer"}  # every argument, as given
        return awaiting_answer(functools.partial(same_module_as_reference, **given))
    module, _, builder = answer.partition(":")
    if not module or not builder:
        raise ValueError(f"answer={answer!r}: give it as '<student module>:<class or function>'")
    with_example = compare is not None and has_parameter(compare, "example")
    values_of = arguments_of(arguments)

    def weights_of(example: Example, oracle: nn.Module) -> dict[str, torch.Tensor]:
        given = weights(example) if weights is not None else oracle.state_dict()
        return {k: v.detach() for k, v in given.items()}

    def oracle_of(example: Example) -> nn.Module:
        # Built seeded, like the reference's forward: its drawn weights are the same on every
        # run and in the snippet, and no other thread's draws move.
        with seeded(0 if seed is None else int(seed(example))):
            return reference(example)

    def expected_of(oracle: nn.Module, x: torch.Tensor, example: Example) -> Any:
        with seeded(0 if seed is None else int(seed(example))):
            oracle.train(train)
            return oracle(x)

    def run(worker: WorkerHandle, example: Example) -> None:
        reply, built = build_answer(worker, builder, values_of(example), keywords)
        oracle = oracle_of(example)
        state = weights_of(example, oracle)
        _same_structure(reply["module"], state, built)
        worker.call("load", handle=reply["handle"], weights=state)
        x = inputs(example)
        got, expected = worker.call_while(
            "forward",
            lambda: expected_of(oracle, x, example),
            handle=reply["handle"],
            x=x,
            train=train,
            seed=0 if seed is None else int(seed(example)),
        )
        where: AbstractContextManager[None] = nullcontext()
        if localize:
            where = localized(worker, reply, lambda: oracle, x, part_hints=part_hints, train=train)
        with where:
            if compare is None:
                close(got, expected, f"{built}(x)", rtol, atol)
            elif with_example:
                compare(got, expected, f"{built}(x)", example=example)
            else:
                compare(got, expected, f"{built}(x)")

    def reproduce(example: Example) -> str:
        args = dict(values_of(example))
        lines = snippet_head(module, builder, args, setup, example)
        with torch.no_grad():
            oracle = oracle_of(example)
            state = weights_of(example, oracle)
            x = inputs(example)
            expected = expected_of(oracle, x, example)
        shapes = {k: list(v.shape) for k, v in state.items()}
        shown = tensor_text(expected) if isinstance(expected, torch.Tensor) else repr(expected)
        drawn = getattr(oracle, _REDRAWN, None) if weights is None else None
        lines += [
            f"module = {call_text(builder, args, keywords)}",
            *(_weights_lines(state) if drawn is None else _redrawn_lines(oracle, drawn)),
            f"shapes = {shapes!r}",
            "yours = {k: list(v.shape) for k, v in module.state_dict().items()}",
            "assert {k: yours.get(k) for k in shapes} == shapes, f'your weights: {yours}'",
            "module.load_state_dict(weights, strict=False)",
            f"x = {literal(x) or '...  # ' + type(x).__name__}",
            f"module.train({train})",
            f"torch.manual_seed({0 if seed is None else int(seed(example))})",
            "with torch.no_grad():",
            "    print('yours:   ', module(x))",
            f"print('expected:', {shown!r})",
        ]
        return "\n".join(lines) + "\n"

    return Check(
        name=name,
        points=points,
        strategy=strategy,
        run=run,
        hint=hint,
        reproduce=reproduce,
        max_examples=max_examples,
        examples=examples,
        hint_kinds=hint_kinds,
        known=(*known, hints.Known(hints.STRUCTURE, structure_hint)),
    )


# The seed a reference's weights were drawn anew with (``redrawn``), kept on the module: its
# snippet then draws them the same way instead of spelling every value out.
_REDRAWN = "_grader_redrawn_seed"


def redrawn(module: nn.Module, seed: int) -> nn.Module:
    """``module`` with every floating-point parameter drawn anew from a standard normal
    (after ``torch.manual_seed(seed)``, in the order of ``parameters()``), in place: a
    reference whose weights start at zero or one (LoRA's B, a norm's scale) would hide a
    mistake in how the student's module uses them."""
    with seeded(seed), torch.no_grad():
        for parameter in module.parameters():
            if parameter.is_floating_point():
                parameter.normal_()
    object.__setattr__(module, _REDRAWN, int(seed))  # a plain attribute, not a submodule's
    return module


def _weights_lines(state: Mapping[str, torch.Tensor]) -> list[str]:
    """The snippet's ``weights``, every value spelled out."""
    return [
        f"weights = {literal(dict(state)) or '...  # the grader weights are too large to print'}"
    ]


def _redrawn_lines(oracle: nn.Module, seed: int) -> list[str]:
    """The snippet's ``weights`` of a reference drawn anew (``redrawn``): the parameters drawn
    as it drew them (one ``torch.randn`` each, in order: what ``normal_`` draws), the rest
    spelled out; every value spelled out when a parameter is not float32 (``randn``'s dtype)."""
    drawn = [(n, p) for n, p in oracle.named_parameters() if p.is_floating_point()]
    if any(p.dtype != torch.float32 for _, p in drawn):
        return _weights_lines(oracle.state_dict())
    names = [(n, tuple(p.shape)) for n, p in drawn]
    rest = {k: v for k, v in oracle.state_dict().items() if k not in dict(names)}
    lines = [
        f"torch.manual_seed({seed})  # the grader's weights: standard normal draws, in this order",
        f"weights = {{name: torch.randn(shape) for name, shape in {names!r}}}",
    ]
    if rest:
        lines.append(f"weights.update({literal(rest) or '...  # too large to print'})")
    return lines


def build_answer(
    worker: WorkerHandle,
    builder: str,
    arguments: Mapping[str, Any],
    keywords: tuple[str, ...],
    seed: int | None = None,
) -> tuple[dict[str, Any], str]:
    """Have the worker build the student's module (``module_probes``' ``"build:<builder>"``,
    after ``torch.manual_seed(seed)`` when given): its reply (``handle``, ``module``) and the
    call as the student reads it. Fails (``returned``) unless it built an ``nn.Module``."""
    args = dict(arguments)
    built = call_text(builder, args, keywords)
    extra = {} if seed is None else {"seed": seed}
    # A build that raises because the arguments do not fit the class (a misspelled __init__,
    # other parameters) is told so, from the class's own constructor.
    with constructors_explained(worker, {builder: ", ".join(args)}):
        reply = worker.call(
            f"build:{builder}",
            args=[[n, layers.described(v, n)] for n, v in args.items()],
            keywords=list(keywords),
            **extra,
        )
    if not reply["module"].get("is_module"):
        kind = str(reply["module"].get("class"))
        raise CheckFailed(
            f"{built} should build a torch.nn.Module, but it is {kind}", hints.returned(kind)
        )
    return reply, built


def _same_structure(described: dict, state: Mapping[str, torch.Tensor], built: str) -> None:
    """Fail (``STRUCTURE``) unless the student's module has every weight of ``state`` under its
    name and in its shape."""
    shapes = described.get("shapes") or {}
    missing = [k for k in state if k not in shapes]
    if missing:
        has = ", ".join(map(repr, shapes)) or "none"
        raise CheckFailed(
            f"{built} has no weight named {', '.join(map(repr, missing))} (its weights: {has})",
            hints.STRUCTURE,
        )
    for key, value in state.items():
        if shapes[key] != list(value.shape):
            raise CheckFailed(
                f"{built}'s weight {key!r} has shape {tuple(shapes[key] or ())}, expected "
                f"{tuple(value.shape)}",
                hints.STRUCTURE,
            )
