"""How big the attention modules of exercises 3.2 and 3.3 are, and the bound over which a
returned module is far too big to be the answer.

The judge rebuilds the book's class from the state a worker sends back for a returned module
(``llm_pack.checks.attention_rebuild``). An honest wrong answer can be much bigger than any right
one: a whole ``GPTModel`` in place of GPT-2 small's attention is 163 M parameters, a state of
650 MB, more than a reply may carry. So every build asks the worker for the state only up to
``STATE_BOUND`` bytes: ``MARGIN`` times the state of the largest right answer of the pack's
module exercises (3.3's ``MultiHeadAttention`` the size of GPT-2 small's, with ``qkv_bias``),
and never more than half a message of the wire. A module over it is not kept in the worker,
which sends its structure instead (``grader.pack.worker.kept_within``). The grader's
``too_big.refusal`` turns that into the message of a failing check, with what the exercise asks
for (``asked_mha``, ``asked_wrapper``), and ``too_big.remember`` keeps it for the worker.

The counts here are closed forms of the reference classes' layer shapes (building them, even on
the ``meta`` device, costs a cold judge seconds); tests/test_checks_ch3.py holds them against
the classes.
"""

from __future__ import annotations

from grader.pack.judge import MAX_MESSAGE_BYTES

# Exercise 3.3's module, GPT-2 small's attention: the largest any exercise of this pack asks for.
GPT2_SMALL_ATTENTION = {"d_in": 768, "d_out": 768, "context_length": 1024, "num_heads": 12}
MARGIN = 8
FLOAT32 = 4  # bytes; the reference's weights and masks are float32


def projections(d_in: int, d_out: int, qkv_bias: bool) -> int:
    """Parameters of ``W_query``, ``W_key`` and ``W_value``: ``nn.Linear(d_in, d_out)`` each,
    biased only with ``qkv_bias``."""
    return 3 * (d_in * d_out + (d_out if qkv_bias else 0))


def mha_parameters(d_in: int, d_out: int, qkv_bias: bool) -> int:
    """Parameters of ``reference.MultiHeadAttention``: the projections and ``out_proj`` (always
    biased); the causal mask is a buffer."""
    return projections(d_in, d_out, qkv_bias) + d_out * d_out + d_out


def wrapper_parameters(d_in: int, d_out: int, num_heads: int, qkv_bias: bool) -> int:
    """Parameters of ``reference.MultiHeadAttentionWrapper``: one ``CausalAttention`` (three
    projections, no output projection) per head."""
    return num_heads * projections(d_in, d_out, qkv_bias)


def _largest_right_answer_bytes() -> int:
    a = GPT2_SMALL_ATTENTION
    mask = a["context_length"] ** 2
    return FLOAT32 * (mha_parameters(a["d_in"], a["d_out"], qkv_bias=True) + mask)


STATE_BOUND = min(MARGIN * _largest_right_answer_bytes(), MAX_MESSAGE_BYTES // 2)


def _count_text(without: int, with_bias: int) -> str:
    return f"{without:,} ({with_bias:,} with qkv_bias)"


def asked_mha(d_in: int, d_out: int, context_length: int, num_heads: int) -> str:
    """What the exercise asks for, and its parameter count: ``a MultiHeadAttention(...) has
    ...``."""
    counts = _count_text(mha_parameters(d_in, d_out, False), mha_parameters(d_in, d_out, True))
    return f"a MultiHeadAttention({d_in}, {d_out}, {context_length}, 0.0, {num_heads}) has {counts}"


def asked_wrapper(d_in: int, d_out: int, context_length: int, num_heads: int) -> str:
    """The same for a ``MultiHeadAttentionWrapper``."""
    counts = _count_text(
        wrapper_parameters(d_in, d_out, num_heads, False),
        wrapper_parameters(d_in, d_out, num_heads, True),
    )
    return (
        f"a MultiHeadAttentionWrapper({d_in}, {d_out}, {context_length}, 0.0, "
        f"num_heads={num_heads}) has {counts}"
    )
