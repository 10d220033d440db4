"""Checks for exercise 4.1: parameters in the feed-forward and the attention module of a block.

The expected counts are those of the reference ``TransformerBlock(cfg)`` (see
``llm_pack.checks.gpt_reference``) for random valid configs, with and without qkv bias; the
student's functions run on the ``meta`` device in the worker, so counting a real GPT-2-sized
module costs them no memory.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import strategies as st

from grader.pack import judge as hints
from grader.pack.judge import Check, Worker, count_parts
from llm_pack.checks.gpt_reference import (
    Mistake,
    Recount,
    ask_number,
    attention_count,
    config_source,
    feedforward_count,
    gpt2_config,
    wrong_count,
)
from llm_pack.strategies import gpt_configs, large_gpt_configs
from reference import GPT_CONFIG_124M, TransformerBlock


def block_configs(qkv_bias: bool | None = None) -> st.SearchStrategy[dict]:
    """Small valid GPT configs; ``qkv_bias`` fixed when given, else drawn both ways."""
    configs = gpt_configs()
    if qkv_bias is None:
        return configs
    return configs.map(lambda cfg: {**cfg, "qkv_bias": qkv_bias})


# A wrong count that differs from the right one by one of these offsets is a known mistake.
Mistakes = Callable[[dict], list[Mistake]]


def feedforward_mistakes(cfg: dict) -> list[Mistake]:
    emb = cfg["emb_dim"]
    return [
        (
            -5 * emb,
            "the biases of both linear layers (4 * emb_dim + emb_dim values) are missing",
            "bias",
        ),
        (-4 * emb, "the bias of the first linear layer (4 * emb_dim values) is missing", "bias"),
        (-emb, "the bias of the second linear layer (emb_dim values) is missing", "bias"),
    ]


def attention_mistakes(cfg: dict) -> list[Mistake]:
    emb, ctx = cfg["emb_dim"], cfg["context_length"]
    mistakes = [(ctx * ctx, "the causal mask (context_length² values) is a buffer", "mask")]
    if cfg["qkv_bias"]:
        why = "qkv_bias is True: W_query, W_key and W_value have biases"
        mistakes.append((-3 * emb, why, "qkv-bias"))
    else:
        why = "qkv_bias is False: W_query, W_key and W_value have no bias"
        mistakes.append((3 * emb, why, "qkv-bias"))
    mistakes.append((-emb, "out_proj always has a bias (emb_dim values)", "bias"))
    return mistakes


def part_parts(part: str) -> Callable[[dict], dict[str, tuple[int, bool]]]:
    """The parts of ``TransformerBlock(cfg).<part>`` for any config, named from the block."""
    return lambda cfg: count_parts.parts(lambda: getattr(TransformerBlock(cfg), part), f"{part}.")


def compare_count(
    worker: Worker,
    function: str,
    part: str,
    cfg: dict,
    got: Any,
    expected: int,
    mistakes: Mistakes,
) -> None:
    if got == expected:
        return
    message = (
        f"{function}(cfg) returned {got!r}, but TransformerBlock(cfg).{part} has {expected} "
        "trainable parameters"
    )
    parts_of = part_parts(part)
    counter = feedforward_count if part == "ff" else attention_count
    book = counter(dict(GPT_CONFIG_124M))
    recount = Recount(cfg, partial(ask_number, worker, function), counter, parts_of)
    found = partial(parts_of, cfg)
    raise wrong_count(message, got, expected, mistakes(cfg), found, book, recount)


def check_feedforward(worker: Worker, cfg: dict) -> None:
    got = ask_number(worker, "feedforward_params", cfg)
    expected = feedforward_count(cfg)
    compare_count(worker, "feedforward_params", "ff", cfg, got, expected, feedforward_mistakes)


def check_attention(worker: Worker, cfg: dict) -> None:
    got = ask_number(worker, "attention_params", cfg)
    expected = attention_count(cfg)
    compare_count(worker, "attention_params", "att", cfg, got, expected, attention_mistakes)


def check_both(worker: Worker, cfg: dict) -> None:
    check_feedforward(worker, cfg)
    check_attention(worker, cfg)


PARTS = {"feedforward_params": "ff", "attention_params": "att"}


def reproduce_source(cfg: dict, functions: tuple[str, ...]) -> str:
    """A snippet comparing each of ``functions`` with the reference block's count."""
    lines = [
        "import torch",
        "from reference import TransformerBlock",
        f"from exercises.ex4_1_parameter_counts import {', '.join(functions)}",
        "",
        f"cfg = {config_source(cfg)}",
        "# The grader calls your functions on the meta device too: shapes only, no memory.",
        'with torch.device("meta"):',
        "    block = TransformerBlock(cfg)",
        *(f"    got_{PARTS[f]} = {f}(dict(cfg))" for f in functions),
    ]
    for function in functions:
        part = PARTS[function]
        lines += [
            f"expected_{part} = sum(p.numel() for p in block.{part}.parameters() "
            "if p.requires_grad)",
            f'print("{function}(cfg) =", got_{part})',
            f'print("expected:", expected_{part}, " same:", got_{part} == expected_{part})',
        ]
    return "\n".join(lines) + "\n"


def reproduce_for(*functions: str) -> Callable[[dict], str]:
    return lambda cfg: reproduce_source(cfg, functions)


CHECKS = [
    Check(
        name="feedforward_params counts the parameters of TransformerBlock(cfg).ff, for any config",
        points=4,
        strategy=block_configs(),
        run=check_feedforward,
        # A count off by nothing known: the hint names no cause, it shows where to look.
        hint="print the parameters of the module, for the config shown: for name, p in "
        "TransformerBlock(cfg).ff.named_parameters(): print(name, tuple(p.shape)); then "
        "compare each with the term of your count that stands for it.",
        reproduce=reproduce_for("feedforward_params"),
        hint_kinds=(hints.COUNT,),  # a count off by nothing known; known ones have their own
        max_examples=15,
    ),
    Check(
        name="attention_params counts the parameters of TransformerBlock(cfg).att "
        "when qkv_bias is False",
        points=2.5,
        strategy=block_configs(qkv_bias=False),
        run=check_attention,
        hint="print the parameters of the module, for the config shown: for name, p in "
        "TransformerBlock(cfg).att.named_parameters(): print(name, tuple(p.shape)); then "
        "compare each with the term of your count that stands for it.",
        reproduce=reproduce_for("attention_params"),
        hint_kinds=(hints.COUNT,),
        max_examples=12,
    ),
    Check(
        name="attention_params counts the parameters of TransformerBlock(cfg).att "
        "when qkv_bias is True",
        points=2.5,
        strategy=block_configs(qkv_bias=True),
        run=check_attention,
        hint="print the parameters of the module, for the config shown: for name, p in "
        "TransformerBlock(cfg).att.named_parameters(): print(name, tuple(p.shape)); then "
        "compare each with the term of your count that stands for it.",
        reproduce=reproduce_for("attention_params"),
        hint_kinds=(hints.COUNT,),
        max_examples=12,
    ),
    Check(
        name="both counts are exact for GPT-2-sized and larger configs",
        points=1,
        strategy=large_gpt_configs(),
        run=check_both,
        hint="the counts follow cfg at any size; return an exact Python int (float32 "
        "tensors and 32-bit integers cannot hold large counts exactly).",
        reproduce=reproduce_for("feedforward_params", "attention_params"),
        hint_kinds=(hints.count("inexact"),),
        max_examples=2,
        examples=(dict(GPT_CONFIG_124M), gpt2_config("xl")),
    ),
]
