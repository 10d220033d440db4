"""Gets 2-dimensional context vectors by dropping to a single head of width 2, the route the
exercise rules out ("without reducing num_heads")."""
# seen-in: stanathong/note-build-llm-from-scratch ch3/code/excercise-3.2.py (the comment
# seen-in: "To obtain the size of (batch,6,2) without reducing num_heads" weighs one head of
# seen-in: width 2 against two heads of width 1)
# cause: head-count
# cause-words: num_heads
# cause-words: two heads
# expect-failing: it is a MultiHeadAttentionWrapper with exactly two heads

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 2, context_length, dropout, num_heads=1)
