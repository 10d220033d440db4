"""Right whenever dropout is given, but its default is GPT-2's 0.1 instead of the stated 0.0:
called as make_2d_wrapper(d_in, context_length), it drops attention weights in train mode."""
# expect-failing: called without dropout, it drops nothing

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.1):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
