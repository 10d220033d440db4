"""Confuses the embedding width with the number of tokens: d_in is set to 6, the token count of
the book's batch, instead of the d_in it is given."""
# seen-in: TheEvergreenStateCollege/upper-division-cs-23-24
# seen-in: ai-24sp/assignments/NathanMc/Prototype_text/week-09/process.py (d_in, d_out = 6, 2
# seen-in: before MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2))
# cause: ignored-argument
# cause-words: d_in
# expect-failing: the d_in, context_length and dropout it is given are the ones it uses

from reference import MultiHeadAttentionWrapper

N_TOKENS = 6  # rows of the book's input batch


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    d_in = N_TOKENS
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
