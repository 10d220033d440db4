"""Exercise 3.3 — Initializing a GPT-2-sized attention module.

The smallest GPT-2 model has 12 attention heads, 768-dimensional input and output embeddings
and supports a context of 1,024 tokens.

Your task: write ``gpt2_small_attention()`` that returns a ``MultiHeadAttention`` (from
``reference``) with those sizes.

What is graded:
- it is the reference ``MultiHeadAttention`` (or an exact copy) with 12 heads,
  ``d_in = d_out = 768`` and ``context_length = 1024``;
- it works on any input of shape ``(batch, n_tokens, 768)`` with ``n_tokens <= 1024``,
  including a single token and the full 1,024;
- it is causal.
``qkv_bias`` and ``dropout`` are not part of the task: any value passes.

Hint: read the constructor signature of ``MultiHeadAttention`` in ``reference/attention.py``;
which argument limits how long an input may be?
"""

from reference import MultiHeadAttention


def gpt2_small_attention() -> MultiHeadAttention:
    """Return a multi-head attention module the size of GPT-2 small's."""
    raise NotImplementedError(
        "Exercise 3.3 is not done yet: write gpt2_small_attention() in "
        "exercises/ex3_3_gpt2_attention.py (return a MultiHeadAttention the size of GPT-2 small)."
    )
