"""Exercise 3.2 — Returning two-dimensional embedding vectors.

With ``num_heads=2`` and ``d_out=2``, ``MultiHeadAttentionWrapper`` returns four-dimensional
context vectors, because it concatenates the outputs of its heads.

Your task: write ``make_2d_wrapper(d_in, context_length, dropout=0.0)`` that returns a
``MultiHeadAttentionWrapper`` (from ``reference``) with ``num_heads=2`` whose context vectors
are two-dimensional. Do not change the class: choose its arguments.

What is graded:
- it is the reference wrapper (or a copy that computes exactly the same) with exactly 2 heads;
- its output has shape ``(batch, num_tokens, 2)`` for any ``d_in``, ``context_length``, batch
  size and any ``num_tokens <= context_length``;
- the ``d_in``, ``context_length`` and ``dropout`` you are given are the ones it uses, and
  called without ``dropout`` it uses the default 0.0 (nothing dropped, even in train mode);
- it is still causal: a token never sees the tokens after it.

Hint: the output width is (number of heads) x (width of one head). Which argument sets the
width of one head?
"""

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(
    d_in: int, context_length: int, dropout: float = 0.0
) -> MultiHeadAttentionWrapper:
    """Return a two-head ``MultiHeadAttentionWrapper`` with 2-dimensional context vectors."""
    raise NotImplementedError(
        "Exercise 3.2 is not done yet: write make_2d_wrapper() in "
        "exercises/ex3_2_wrapper_2d.py (build a MultiHeadAttentionWrapper with num_heads=2)."
    )
