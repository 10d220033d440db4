"""Names every argument of the wrapper, in another order than the signature's."""

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(
        num_heads=2, d_out=1, dropout=dropout, context_length=context_length, d_in=d_in
    )
