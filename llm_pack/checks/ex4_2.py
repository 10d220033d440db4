"""Checks for exercise 4.2: the four GPT-2 configs, their parameter counts and sizes.

The expected counts are those of the reference ``GPTModel(cfg)`` (see
``llm_pack.checks.gpt_reference``): built on the CPU for the small random configs most examples
use, on the ``meta`` device for GPT-2-sized ones. The student's functions run on the ``meta``
device in the worker, so an answer that really instantiates GPT-2 XL allocates nothing.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from hypothesis import strategies as st

from grader.pack import judge as hints
from grader.pack.judge import Check, CheckFailed, Worker, count_parts, filled_dict
from llm_pack.checks.gpt_reference import (
    BLOCKS,
    GPT2_SIZES,
    Mistake,
    Recount,
    ask_number,
    config_source,
    gpt2_config,
    model_count,
    wrong_count,
)
from llm_pack.strategies import gpt_configs, large_gpt_configs
from reference import GPT_CONFIG_124M, GPTModel

MIB = 1024 * 1024
CHANGED = ("emb_dim", "n_layers", "n_heads")


def gpt2_sizes() -> st.SearchStrategy[str]:
    return st.sampled_from(list(GPT2_SIZES))


# --- the configs ------------------------------------------------------------------------------


def differences(got: dict, expected: dict) -> list[str]:
    """What differs between two configs, key by key (``768.0`` is not ``768``)."""
    out = [f"{k!r} is missing" for k in expected if k not in got]
    out += [f"{k!r} should not be there" for k in got if k not in expected]
    out += [
        f"{k!r} is {got[k]!r}, expected {expected[k]!r}"
        for k in expected
        if k in got and (got[k] != expected[k] or type(got[k]) is not type(expected[k]))
    ]
    return out


def check_config(worker: Worker, size: str) -> None:
    configs = filled_dict(worker.call("configs"), "GPT2_CONFIGS")
    if set(configs) != set(GPT2_SIZES):
        raise CheckFailed(
            f"GPT2_CONFIGS has the keys {sorted(configs)}; expected exactly {sorted(GPT2_SIZES)}"
        )
    got = configs[size]
    if not isinstance(got, dict):
        raise CheckFailed(
            f"GPT2_CONFIGS[{size!r}] should be a dict, but it is {got!r}",
            hints.returned(type(got).__name__),
        )
    wrong = differences(got, gpt2_config(size))
    if wrong:
        message = f"GPT2_CONFIGS[{size!r}] is not GPT_CONFIG_124M with {GPT2_SIZES[size]}: " + (
            "; ".join(wrong)
        )
        if all(configs[s] == got for s in GPT2_SIZES):
            message += (
                ". All four configs are equal: one dict was changed in place and reused "
                "instead of copied for each size"
            )
            raise CheckFailed(message, NOT_COPIED)
        raise CheckFailed(message, OTHER_KEYS if other_keys(got, size) else SIZES)
    not_a_copy(worker, size)


# The kinds of a config that differs: in keys besides the three sizes (the hint to change only
# those three is for it), or in the sizes alone (the hint gives the four sizes, and claims no
# other change).
OTHER_KEYS = "wrong:other-keys"
SIZES = "wrong:sizes"
SIZES_HINT = (
    "the four GPT-2 sizes, small / medium / large / xl: emb_dim 768 / 1024 / 1280 / 1600, "
    "n_layers 12 / 24 / 36 / 48, n_heads 12 / 16 / 20 / 25."
)


def other_keys(got: dict, size: str) -> list[str]:
    """The keys besides emb_dim, n_layers and n_heads in which config ``got`` differs from
    GPT_CONFIG_124M with ``size``'s sizes: missing, added, or of another value or type."""
    expected = gpt2_config(size)
    return sorted(
        k
        for k in set(got) | set(expected)
        if k not in CHANGED
        and (k not in got or k not in expected or differences({k: got[k]}, {k: expected[k]}))
    )


# The kind of a config failure whose evidence shows a dict shared instead of copied.
NOT_COPIED = "wrong:not-copied"


def not_a_copy(worker: Worker, size: str) -> None:
    """Fail when ``GPT2_CONFIGS[size]`` holds the right values but is ``GPT_CONFIG_124M`` itself
    (or shares a mutable value with it): the statement asks for a copy. Only the worker sees
    which object is which (``llm_pack.probes._config_alias``)."""
    alias = worker.call("config_alias", size=size)
    name = f"GPT2_CONFIGS[{size!r}]"
    if not isinstance(alias, dict):
        raise CheckFailed(f"the grader could not tell whether {name} is a copy")
    if alias.get("is_base") is True:
        raise CheckFailed(
            f"{name} is GPT_CONFIG_124M itself, not a copy: changing one changes the other; "
            "use {**GPT_CONFIG_124M, ...} or dict(GPT_CONFIG_124M)",
            NOT_COPIED,
        )
    shared = [k for k in alias.get("shared") or [] if isinstance(k, str)][:5]
    if shared:
        raise CheckFailed(
            f"{name}[{shared[0]!r}] is the same object as GPT_CONFIG_124M[{shared[0]!r}], not a "
            "copy: changing one changes the other; copy the values too "
            "(copy.deepcopy(GPT_CONFIG_124M))",
            NOT_COPIED,
        )


def check_base_unchanged(worker: Worker, _: Any) -> None:
    configs = filled_dict(worker.call("configs"), "GPT2_CONFIGS")
    if not set(GPT2_SIZES) <= set(configs):
        # Nothing earns this point before the configs exist (an untouched stub would).
        raise CheckFailed(
            "GPT2_CONFIGS does not hold the four sizes yet, so there is nothing to check here"
        )
    after = worker.call("base_config")
    wrong = differences(after, GPT_CONFIG_124M)
    if wrong:
        raise CheckFailed(
            "after your file ran, reference.GPT_CONFIG_124M itself had changed: " + "; ".join(wrong)
        )


def reproduce_config(size: str) -> str:
    return f"""\
from reference import GPT_CONFIG_124M
original = dict(GPT_CONFIG_124M)  # taken before your file runs
from exercises.ex4_2_scaled_configs import GPT2_CONFIGS

expected = {{**original, {", ".join(f"{k!r}: {v!r}" for k, v in GPT2_SIZES[size].items())}}}
print("GPT2_CONFIGS keys:", list(GPT2_CONFIGS))
print("GPT2_CONFIGS[{size!r}] =", GPT2_CONFIGS.get({size!r}))
print("expected:", expected)
print("same:", GPT2_CONFIGS.get({size!r}) == expected)
print("a copy, not GPT_CONFIG_124M itself:", GPT2_CONFIGS.get({size!r}) is not GPT_CONFIG_124M)
print("GPT_CONFIG_124M unchanged:", GPT_CONFIG_124M == original)
"""


# --- the counts -------------------------------------------------------------------------------


def total_mistakes(cfg: dict) -> list[Mistake]:
    return [
        (
            -cfg["vocab_size"] * cfg["emb_dim"],
            "that is the count with the output head tied to the token embedding; the book's "
            "GPTModel does not tie them: out_head has vocab_size * emb_dim weights of its own",
            "tied-head",
        ),
        (
            cfg["n_layers"] * cfg["context_length"] ** 2,
            "the extra values are the causal masks: buffers, not parameters",
            "mask",
        ),
    ]


def check_total(worker: Worker, cfg: dict) -> None:
    got = ask_number(worker, "total_params", cfg)
    expected = model_count(cfg)
    if got == expected:
        return
    message = f"total_params(cfg) returned {got!r}; GPTModel(cfg) has {expected:,} parameters"
    found = partial(model_parts, cfg)
    book = model_count(dict(GPT_CONFIG_124M))
    recount = Recount(cfg, partial(ask_number, worker, "total_params"), model_count, model_parts)
    raise wrong_count(message, got, expected, total_mistakes(cfg), found, book, recount)


def model_parts(cfg: dict) -> dict[str, tuple[int, bool]]:
    """The parts of ``GPTModel(cfg)`` (``count_parts.parts``), its blocks summed."""
    return count_parts.parts(lambda: GPTModel(cfg), repeated=BLOCKS)


# A size off by a factor the message names (decimal megabytes, bytes, 8-byte floats): the kind
# the units hint is for.
UNITS = "wrong:units"


def size_mistakes(count: int) -> list[tuple[float, str]]:
    return [
        (count * 4 / 1e6, "that is decimal megabytes (10**6 bytes); use 1024 * 1024 bytes"),
        (count * 4 / 1024, "that is kilobytes; divide by 1024 * 1024"),
        (count / MIB, "each float32 parameter takes 4 bytes"),
        (count * 4, "that is bytes; divide by 1024 * 1024"),
        (count * 8 / MIB, "float32 parameters take 4 bytes, not 8"),
    ]


def check_size(worker: Worker, cfg: dict) -> None:
    got = ask_number(worker, "model_size_mb", cfg)
    count = model_count(cfg)
    expected = count * 4 / MIB
    if math.isclose(got, expected, rel_tol=1e-9, abs_tol=0.0):
        return
    message = (
        f"model_size_mb(cfg) returned {got!r}; GPTModel(cfg) has {count:,} parameters, "
        f"{count * 4:,} bytes as float32, which is {expected!r} MB of 1024 * 1024 bytes"
    )
    for value, why in size_mistakes(count):
        if math.isclose(got, value, rel_tol=1e-9):
            raise CheckFailed(f"{message} ({why})", UNITS)
    if any(math.isclose(got, round(expected, d), rel_tol=1e-12) for d in range(0, 5)):
        message += " (return the exact value, not a rounded one: round only when printing)"
    raise CheckFailed(message)


def reproduce_for(function: str):
    def reproduce(cfg: dict) -> str:
        count = "sum(p.numel() for p in model.parameters())"
        if function == "total_params":
            expected, same = count, "got == expected"
        else:
            expected, same = f"{count} * 4 / (1024 * 1024)", "math.isclose(got, expected)"
        return f"""\
import math
import torch
from reference import GPTModel
from exercises.ex4_2_scaled_configs import {function}

cfg = {config_source(cfg)}
# The grader calls your function on the meta device too: shapes only, no memory.
with torch.device("meta"):
    model = GPTModel(cfg)
    got = {function}(dict(cfg))
expected = {expected}
print("{function}(cfg) =", got)
print("expected:", expected, " same:", {same})
"""

    return reproduce


CHECKS = [
    Check(
        name="GPT2_CONFIGS holds the four sizes, each GPT_CONFIG_124M with only emb_dim, "
        "n_layers and n_heads changed",
        points=2,
        strategy=gpt2_sizes(),
        run=check_config,
        hint="change only the three keys; small: 768/12/12, medium: 1024/24/16, large: "
        "1280/36/20, xl: 1600/48/25 (emb_dim/n_layers/n_heads).",
        hint_kinds=(OTHER_KEYS,),  # the hint says keys besides the three changed: only then
        known=(
            hints.Known(SIZES, SIZES_HINT),
            hints.Known(
                NOT_COPIED,
                "start each config from a copy, e.g. {**GPT_CONFIG_124M, 'emb_dim': 1024, ...} "
                "or GPT_CONFIG_124M.copy(), and change only the three keys.",
            ),
        ),
        reproduce=reproduce_config,
        max_examples=4,
    ),
    Check(
        name="GPT_CONFIG_124M itself is left unchanged",
        points=1,
        strategy=st.just(None),
        run=check_base_unchanged,
        hint="cfg = GPT_CONFIG_124M does not copy the dict: changing cfg changes "
        "GPT_CONFIG_124M. Copy it first.",
        reproduce=lambda _: reproduce_config("small"),
        max_examples=1,
    ),
    Check(
        name="total_params is the parameter count of GPTModel(cfg), for any config",
        points=3,
        strategy=gpt_configs(),
        run=check_total,
        # A count off by nothing known: the hint names no cause, it shows where to look.
        hint="print the parameters of the book's model, for the config shown: for name, p in "
        "GPTModel(cfg).named_parameters(): print(name, tuple(p.shape)); then compare each "
        "with the term of your count that stands for it.",
        reproduce=reproduce_for("total_params"),
        max_examples=15,
    ),
    Check(
        name="total_params is exact for the four GPT-2 sizes and larger configs",
        points=1.5,
        strategy=large_gpt_configs(),
        run=check_total,
        hint="GPT-2 small to XL have 163,009,536 / 406,212,608 / 838,220,800 / "
        "1,637,792,000 parameters in the book's model; return an exact Python int "
        "(float32 tensors and 32-bit integers cannot hold such counts exactly).",
        reproduce=reproduce_for("total_params"),
        hint_kinds=(hints.count("inexact"),),  # the hint names that cause: only with evidence
        max_examples=2,
        examples=tuple(gpt2_config(size) for size in GPT2_SIZES),
    ),
    Check(
        name="model_size_mb is the parameter count times 4 bytes, in MB of 1024 * 1024 bytes",
        points=2.5,
        strategy=gpt_configs(),
        run=check_size,
        hint="model_size_mb(cfg) is the parameter count of GPTModel(cfg) times 4 (bytes per "
        "float32 parameter), divided by 1024 * 1024.",
        known=(
            hints.Known(
                UNITS,
                "float32 takes 4 bytes per parameter; the exercise's MB is 1024 * 1024 bytes "
                "(a MiB), not 10**6.",
            ),
        ),
        reproduce=reproduce_for("model_size_mb"),
        max_examples=10,
    ),
]
