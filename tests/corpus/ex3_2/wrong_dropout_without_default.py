"""Drops the stated default: make_2d_wrapper(d_in, context_length) cannot be called at all."""
# expect-failing: called without dropout, it drops nothing

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
