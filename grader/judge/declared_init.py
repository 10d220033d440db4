"""The declarative check of a module's starting weights: built fresh, the student's module holds
weights drawn as the reference's are.

``same_init_as_reference`` declares it (the student's class or builder, its arguments, the
reference module, points and a hint). The worker builds the student's module after
``torch.manual_seed(seed)`` and sends its state back; the judge builds the reference under
many seeds and compares each weight with those draws:

- a weight the reference always starts with the same values (zeros, ones, a mask buffer) must
  hold exactly those values;
- any other weight must look drawn from the same distribution: no value far outside the range
  the reference draws from, not nearly constant, and a two-sample Kolmogorov-Smirnov test
  against the reference's pooled draws that fails only when the two differ beyond what chance
  gives once in a million (``ALPHA``). An honest answer that draws in another order, or from
  another seed, passes. A weight of a few values tells the tests little: draw sizes that give
  each weight some dozens of values.

The student's weight must have the reference's name and shape (``STRUCTURE`` otherwise).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import torch
from hypothesis import strategies as st
from torch import nn

from grader.judge import hints
from grader.judge.declared import Arguments, arguments_of, awaiting_answer, call_text, snippet_head
from grader.judge.declared_module import STRUCTURE_HINT, build_answer
from grader.judge.launch.handle import WorkerHandle
from grader.judge.properties import Check, CheckFailed
from grader.shared.torchseed import seeded

Example = Any
ALPHA = 1e-6  # the chance that an honest draw fails the distribution test
POOLED = 4096  # at least this many reference values per weight (more draws for small ones)
MAX_DRAWS = 256


def ks_critical(n: int, m: int, alpha: float = ALPHA) -> float:
    """The two-sample Kolmogorov-Smirnov distance above which two samples of ``n`` and ``m``
    values come from different distributions, at significance ``alpha`` (large-sample form)."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def ks_distance(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest gap between the empirical distribution functions of ``a`` and ``b``."""
    a, b = a.flatten().double().sort().values, b.flatten().double().sort().values
    points = torch.cat([a, b])
    fa = torch.searchsorted(a, points, right=True).double() / a.numel()
    fb = torch.searchsorted(b, points, right=True).double() / b.numel()
    return float((fa - fb).abs().max())


def summary(t: torch.Tensor) -> str:
    """A weight's values in a few words: its range and spread."""
    t = t.double()
    spread = f", std {t.std().item():.3g}" if t.numel() > 1 else ""
    return f"from {t.min().item():.3g} to {t.max().item():.3g}{spread}"


def reference_draws(reference: Callable[[], nn.Module]) -> dict[str, torch.Tensor]:
    """Each weight of the reference, over enough builds (seeds 0, 1, ...) to pool ``POOLED``
    values of the smallest one (the first build says its size), stacked on a new first
    dimension."""

    def built(seed: int) -> dict[str, torch.Tensor]:
        with seeded(seed), torch.no_grad():
            return {k: v.detach().clone() for k, v in reference().state_dict().items()}

    first = built(0)
    smallest = min((v.numel() for v in first.values()), default=1)
    draws = min(MAX_DRAWS, max(2, math.ceil(POOLED / max(1, smallest))))
    builds = [first] + [built(seed) for seed in range(1, draws)]
    return {key: torch.stack([b[key] for b in builds]) for key in first}


def compare_weight(key: str, got: Any, draws: torch.Tensor, built: str) -> None:
    """Fail unless ``got`` (the student's fresh weight ``key``) starts as the reference's
    ``draws`` do: the same constant values, or the same distribution."""
    shape = tuple(draws.shape[1:])
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != shape:
        found = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
        raise CheckFailed(
            f"{built}'s weight {key!r} is {found}, expected shape {shape}", hints.STRUCTURE
        )
    if draws.numel() == 0:
        return
    got, draws = got.detach().double(), draws.double()
    if bool((draws == draws[0]).all()):  # the same values on every build: those, exactly
        if not torch.equal(got, draws[0]):
            raise CheckFailed(
                f"{built}'s {key} starts with values {summary(got)}; it should start as "
                f"{_constant_text(draws[0])} (the same on every build)",
                hints.VALUES,
            )
        return
    if not bool(torch.isfinite(got).all()):
        raise CheckFailed(f"{built}'s {key} starts with values that are not finite", hints.VALUES)
    problem = _beyond_range(got, draws) or _too_narrow(got, draws)
    if problem is None and ks_distance(got, draws) > ks_critical(got.numel(), draws.numel()):
        problem = "does not start drawn as the reference's"
    if problem is not None:
        raise CheckFailed(
            f"{built}'s {key} {problem}: yours {summary(got)}, the reference's {summary(draws)}",
            hints.VALUES,
        )


def _beyond_range(got: torch.Tensor, draws: torch.Tensor) -> str | None:
    """Values far outside the reference's pooled range: beyond its extremes by half its width
    (a normal draw's pooled extremes are about 3.5 sigma, so an honest value is past that band,
    7 sigma, about once in 4e11; a bounded draw never is). Tells a small weight's wrong scale
    where the distribution test has too few values."""
    lo, hi = float(draws.min()), float(draws.max())
    margin = (hi - lo) / 2
    if float(got.min()) < lo - margin or float(got.max()) > hi + margin:
        return "starts far outside the range the reference draws from"
    return None


def _too_narrow(got: torch.Tensor, draws: torch.Tensor) -> str | None:
    """Eight values or more that all sit within a tenth of the reference's spread: not drawn
    (a constant, a scale forgotten); an honest draw of eight does so about once in 1e9."""
    if got.numel() < 8 or float(got.std()) >= float(draws.std()) / 10:
        return None
    return "starts nearly constant where the reference draws its values"


def _constant_text(t: torch.Tensor) -> str:
    values = t.unique()
    if values.numel() == 1:
        return f"all {values.item():g}"
    return f"the reference's fixed values ({summary(t)})"


def same_init_as_reference(
    *,
    name: str,
    answer: str | None = None,
    strategy: st.SearchStrategy,
    arguments: Arguments,
    reference: Callable[[Example], nn.Module],
    points: float = 1.0,
    hint: str,
    seed: Callable[[Example], int] | None = None,
    keywords: tuple[str, ...] = (),
    setup: str | Callable[[Example], str] | None = None,
    structure_hint: str = STRUCTURE_HINT,
    max_examples: int = 5,
    examples: tuple[Any, ...] = (),
    hint_kinds: tuple[str, ...] = hints.OWN_KINDS,
    known: tuple[hints.Known, ...] = (),
) -> Check:
    """A ``Check`` that the module ``answer`` (``"<student module>:<class or function>"``)
    builds from ``arguments(example)`` (as for ``same_module_as_reference``), after
    ``torch.manual_seed(seed(example))`` (0 without ``seed``), starts with the weights the
    reference module ``reference(example)`` starts with: each weight the reference always
    starts the same (zeros, ones) exactly, every other one drawn from the same distribution
    (the module's docstring says how that is decided). Extra weights are the student's own.
    Its probes: ``module_probes`` (its ``"values"`` probe)."""
    if answer is None:  # the exercise's one answer, once its exercise is known
        given = {k: v for k, v in locals().items() if k != "answer"}  # every argument, as given
        return awaiting_answer(functools.partial(same_init_as_reference, **given))
    module, _, builder = answer.partition(":")
    if not module or not builder:
        raise ValueError(f"answer={answer!r}: give it as '<student module>:<class or function>'")
    values_of = arguments_of(arguments)

    def seed_of(example: Example) -> int:
        return 0 if seed is None else int(seed(example))

    def run(worker: WorkerHandle, example: Example) -> None:
        reply, built = build_answer(
            worker, builder, values_of(example), keywords, seed=seed_of(example)
        )
        got = worker.call("values", handle=reply["handle"])
        draws = reference_draws(lambda: reference(example))
        missing = [k for k in draws if k not in got]
        if missing:
            has = ", ".join(map(repr, got)) or "none"
            raise CheckFailed(
                f"{built} has no weight named {', '.join(map(repr, missing))} (its weights: {has})",
                hints.STRUCTURE,
            )
        for key, values in draws.items():
            compare_weight(key, got[key], values, built)

    def reproduce(example: Example) -> str:
        args = dict(values_of(example))
        lines = snippet_head(module, builder, args, setup, example)
        lines += [
            f"torch.manual_seed({seed_of(example)})",
            f"module = {call_text(builder, args, keywords)}",
            "for name, value in module.state_dict().items():",
            "    print(name, tuple(value.shape), value.min().item(), value.max().item())",
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
