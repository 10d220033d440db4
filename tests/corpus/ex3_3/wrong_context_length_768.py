"""Mixes up the embedding size and the context length: context_length=768, so inputs longer
than 768 tokens do not fit the causal mask."""
# expect-failing: context_length = 1024
# expect-failing: it works on any input

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=768, dropout=0.0, num_heads=12)
