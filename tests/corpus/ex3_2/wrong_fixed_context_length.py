"""Ignores context_length and builds a large fixed one (GPT-2's 1024): every input still fits,
but the module is not the one that was asked for."""
# expect-failing: the d_in, context_length and dropout it is given

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, 1024, dropout, num_heads=2)
