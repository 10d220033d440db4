"""Instructor solution 3.3: GPT-2 small's attention sizes."""

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=12)
