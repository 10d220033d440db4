"""Keeps the book's d_in=3 and honours everything else: inputs of any other width fail."""
# expect-failing: its context vectors are 2-dimensional
# expect-failing: the d_in, context_length and dropout it is given

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(3, 1, context_length, dropout, num_heads=2)
