"""Builds the mask for 512 tokens, half of GPT-2 small's context: short inputs work, the full
1,024 tokens do not."""
# expect-failing: context_length = 1024
# expect-failing: it works on any input

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(768, 768, 512, 0.0, num_heads=12)
