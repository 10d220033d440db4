"""Hard-codes the book's example (d_in=3, context_length=6, seeds 000/003/004) instead of using
the arguments: fine for the book's batch, wrong for any other width or length."""
# expect-failing: its context vectors are 2-dimensional
# expect-failing: the d_in, context_length and dropout it is given

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    d_in, d_out = 3, 1
    context_length = 6
    return MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2)
