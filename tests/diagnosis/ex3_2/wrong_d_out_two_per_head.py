"""Keeps the book's d_out = 2 from the cell before the exercise: two heads of width 2 give
4-dimensional context vectors."""
# seen-in: seed 003 In[51] (MultiHeadAttentionWrapper(d_in, d_out=2, ..., num_heads=2) prints
# seen-in: context_vecs.shape [2, 6, 4] before the exercise)
# seen-in: seed 004 In[32]
# cause: head-width
# cause-words: d_out
# cause-words: width of one head
# expect-failing: its context vectors are 2-dimensional for any d_in, context_length, batch and

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    d_out = 2
    return MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads=2)
