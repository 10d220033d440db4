"""Returns the later MultiHeadAttention class (2 heads of width 1, then out_proj) instead of
the wrapper: 2-dimensional and causal, but a different module that computes something else."""
# expect-failing: exactly two heads
# expect-failing: computes what the book's MultiHeadAttentionWrapper computes

from reference import MultiHeadAttention


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttention(d_in, 2, context_length, dropout, num_heads=2)
