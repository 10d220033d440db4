"""Six heads of 128 dimensions instead of GPT-2 small's twelve heads of 64."""
# expect-failing: with 12 heads

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(d_in=768, d_out=768, context_length=1024, dropout=0.0, num_heads=6)
