"""Example student answer to 3.3 (wrong): the context length is set to the embedding size."""

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=768, dropout=0.1, num_heads=12)
