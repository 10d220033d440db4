"""Special-cases the book's shape: d_out = d_in // 2 is 1 for the book's d_in=3, so the book's
example prints 2-dimensional vectors, but other widths do not."""
# expect-failing: its context vectors are 2-dimensional

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, d_in // 2, context_length, dropout, num_heads=2)
