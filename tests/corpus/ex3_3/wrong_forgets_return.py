"""Builds and prints the module, as the notebook cell in seed 003 does, but never returns it."""
# expect-failing: with 12 heads
# expect-failing: it works on any input

from reference import MultiHeadAttention


def gpt2_small_attention():
    d_in = 768
    d_out = 768
    context_length = 1024
    mha = MultiHeadAttention(d_in, d_out, context_length, 0.0, num_heads=12)
    print(mha)
