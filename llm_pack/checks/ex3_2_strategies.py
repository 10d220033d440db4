"""The examples of exercise 3.2's checks: what ``make_2d_wrapper`` is called with (``dropout``
None: called without it), the call as Python (and what it asks for), and the batches its
module is run on."""

from __future__ import annotations

from hypothesis import strategies as st

from llm_pack.checks.attention_sizes import asked_wrapper
from llm_pack.strategies import batched_inputs, dims, dropout_rates, torch_seeds


def call_text(ex: dict) -> str:
    """The call, as Python; ``dropout`` None is a call without it."""
    rate = "" if ex["dropout"] is None else f", {ex['dropout']}"
    return f"make_2d_wrapper({ex['d_in']}, {ex['context_length']}{rate})"


def asked_text(ex: dict) -> str:
    """What the call asks for, with its parameter count (``attention_sizes.asked_wrapper``):
    two heads of one dimension each."""
    return asked_wrapper(ex["d_in"], 1, ex["context_length"], 2)


@st.composite
def wrapper_arguments(draw, rates: st.SearchStrategy[float] | None = None) -> dict:
    """What ``make_2d_wrapper`` is called with, and the torch seed set before the call. Sizes
    of at least 2: the examples of these checks show the module's structure and the sizes it
    was built for, and a size of 1 would hide a width or a length hard-coded to 1."""
    return {
        "d_in": draw(st.integers(min_value=2, max_value=8)),
        "context_length": draw(st.integers(min_value=2, max_value=12)),
        "dropout": draw(dropout_rates() if rates is None else rates),
        "seed": draw(torch_seeds()),
    }


@st.composite
def wrapper_inputs(draw, rates: st.SearchStrategy[float] | None = None) -> dict:
    """Wrapper arguments and an input batch of ``num_tokens <= context_length`` tokens."""
    ex = draw(batched_inputs())
    ex["dropout"] = draw(st.just(0.0) if rates is None else rates)
    return ex


@st.composite
def causal_cases(draw) -> dict:
    """An input of at least two tokens of which the first ``keep`` stay and the rest change."""
    context_length = draw(st.integers(min_value=2, max_value=12))
    num_tokens = draw(st.integers(min_value=2, max_value=context_length))
    return {
        "d_in": draw(dims(8)),
        "context_length": context_length,
        "dropout": 0.0,
        "batch": draw(st.integers(min_value=1, max_value=3)),
        "num_tokens": num_tokens,
        "keep": draw(st.integers(min_value=1, max_value=num_tokens - 1)),
        "seed": draw(torch_seeds()),
    }


@st.composite
def default_cases(draw) -> dict:
    """A call without ``dropout`` (its default is the function's) and a full-context batch of
    at least 2 x 4 tokens, so that dropping any attention weight shows in the output."""
    context_length = draw(st.integers(min_value=4, max_value=12))
    return {
        "d_in": draw(dims(8)),
        "context_length": context_length,
        "dropout": None,
        "batch": draw(st.integers(min_value=2, max_value=3)),
        "num_tokens": context_length,
        "seed": draw(torch_seeds()),
    }
