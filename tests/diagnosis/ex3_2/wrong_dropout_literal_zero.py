"""Copies the book's call MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0,
num_heads=2) literally: the dropout rate it is given never reaches the heads."""
# seen-in: seed 003 In[52], seed 004 In[34], seed 000 In[103] (the call passes the literal 0.0)
# cause: ignored-argument
# cause-words: dropout
# expect-failing: the d_in, context_length and dropout it is given are the ones it uses

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, 0.0, num_heads=2)
