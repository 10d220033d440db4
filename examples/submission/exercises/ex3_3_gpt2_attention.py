"""Example student answer to 3.3 (correct): GPT-2 small's sizes, read from the book."""

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.1, num_heads=12)
