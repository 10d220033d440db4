"""Keeps the context length of the book's example batch (6 tokens, context_length =
batch.shape[1]) instead of the context_length it is given: its masks are 6 x 6 whatever the
call asks for, and longer inputs raise."""
# seen-in: chwla/Machine-Learning llm/ch3/3_4.py (context_length = batch.shape[1] with the
# seen-in: book's 6-token batch, then MultiHeadAttentionWrapper(d_in, d_out, context_length, ...))
# cause: hard-coded
# cause-words: context_length
# expect-failing: the d_in, context_length and dropout it is given are the ones it uses

from reference import MultiHeadAttentionWrapper

BOOK_BATCH_TOKENS = 6


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, BOOK_BATCH_TOKENS, dropout, num_heads=2)
