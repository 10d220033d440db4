"""Copies the book's call, which passes 0.0 for dropout, so the dropout argument is ignored."""
# expect-failing: the d_in, context_length and dropout it is given

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)
