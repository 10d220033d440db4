"""Keeps the book's d_in=3 from the chapter's examples and sets only the output to 768: the
module cannot take 768-wide GPT-2 embeddings."""
# expect-failing: d_in = d_out = 768
# expect-failing: it works on any input

from reference import MultiHeadAttention


def gpt2_small_attention():
    d_in = 3
    return MultiHeadAttention(d_in, 768, 1024, 0.0, num_heads=12)
