"""Example student answer to 3.2 (correct)."""

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(
        d_in, d_out=1, context_length=context_length, dropout=dropout, num_heads=2
    )
