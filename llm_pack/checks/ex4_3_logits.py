"""Exercise 4.3's oracle and the student's logits: the reference model with each place's own
rate, the judge's input, the student's model built in the worker and loaded with the oracle's
weights, and which places the student's rates act on."""

from __future__ import annotations

import itertools
from typing import Any

import torch

from grader.pack.judge import ATOL, RTOL, Worker, constructors_explained, remembered, seeded
from llm_pack.checks.gpt_reference import (
    SPLIT_KEYS,
    built_module,
    load_weights,
    reference_with_rates,
    set_rates,
)


def reference_and_input(ex: dict) -> tuple[torch.nn.Module, torch.Tensor]:
    """The oracle and the token ids, made exactly as the reproduce snippet makes them (a new
    oracle: the caller may change its rates)."""
    with seeded(ex["seed"]):
        oracle = reference_with_rates(ex["cfg"])
        x = torch.randint(0, ex["cfg"]["vocab_size"], (ex["batch"], ex["n_tokens"]))
    return oracle, x


def oracle_logits(oracle: torch.nn.Module, x: torch.Tensor, train: bool, seed: int):
    with seeded(seed):  # the mode too: a remembered oracle is shared
        return oracle.train(train)(x)


@remembered
def expected_case(ex: dict, train: bool) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The oracle, the input and the oracle's logits for one example (shared: read only)."""
    oracle, x = reference_and_input(ex)
    return oracle, x, oracle_logits(oracle, x, train, ex["seed"])


@remembered
def reference_shapes(cfg: dict) -> dict[str, tuple[int, ...]]:
    """The reference model's state-dict keys and shapes for a 4.3 config."""
    with seeded(None):  # only the shapes are read; the lock keeps its draws apart
        model = reference_with_rates(cfg)
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


# What the exercise builds its classes with: a constructor that needs more is explained.
CLASSES = {"GPTModel": "cfg", "TransformerBlock": "cfg"}


def build_student(worker: Worker, cfg: dict) -> dict:
    with constructors_explained(worker, CLASSES):
        return built_module(worker.call("build", cfg=cfg), "GPTModel(cfg)")


def student_logits(worker: Worker, ex: dict, train: bool):
    """The student's logits on the judge's input with the oracle's weights, the input, the
    oracle's own logits (computed here while the worker builds its model) and the build's reply."""
    with constructors_explained(worker, CLASSES):
        reply, (oracle, x, expected) = worker.call_while(
            "build", lambda: expected_case(ex, train), cfg=ex["cfg"]
        )
    reply = built_module(reply, "GPTModel(cfg)")
    load_weights(worker, reply, oracle, "your model")
    got = worker.call("forward", handle=reply["handle"], x=x, train=train, seed=ex["seed"])
    return got, x, expected, reply


def same(a: Any, b: torch.Tensor) -> bool:
    return (
        isinstance(a, torch.Tensor)
        and a.shape == b.shape
        and torch.allclose(a.to(b.dtype), b, rtol=RTOL, atol=ATOL)
    )


def acting_places(got: torch.Tensor, ex: dict, x: torch.Tensor) -> list[str] | None:
    """The smallest set of places which, zeroed in the reference, gives the student's logits
    (None when no set does, or when no matching set is contained in all the others)."""
    oracle, _ = reference_and_input(ex)
    matches = []
    for r in range(len(SPLIT_KEYS) + 1):
        for subset in itertools.combinations(SPLIT_KEYS, r):
            set_rates(oracle, {k: 1.0 if k in subset else 0.0 for k in SPLIT_KEYS})
            if same(got, oracle_logits(oracle, x, True, ex["seed"])):
                matches.append(list(subset))
    smallest = [m for m in matches if all(set(m) <= set(other) for other in matches)]
    return smallest[0] if smallest else None
