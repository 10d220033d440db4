"""The notebook cell turned into a function: `d_in, d_out = 3, 1` stays, so the d_in the
function is given is ignored."""
# seen-in: seed 003 In[52] (d_in, d_out = 3, 1 hard-coded for the book's inputs); seed 004 In[34]
# cause: ignored-argument
# cause-words: d_in
# expect-failing: each of its two heads has weights of its own

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    d_in, d_out = 3, 1  # the book's inputs have 3 columns
    return MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads=2)
