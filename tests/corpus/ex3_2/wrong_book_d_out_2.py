"""The book's call before the exercise: d_out=2 with num_heads=2 concatenates two
2-dimensional heads into 4-dimensional context vectors."""
# expect-failing: its context vectors are 2-dimensional

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=2)
