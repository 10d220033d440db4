"""Passes the width of a head (64) as num_heads: d_out = 768 = 64 x 12 still divides, so the
module builds, but with 64 heads of 12 dimensions."""
# expect-failing: with 12 heads

from reference import MultiHeadAttention


def gpt2_small_attention():
    head_dim = 64
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=head_dim)
