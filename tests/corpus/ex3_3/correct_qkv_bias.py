"""GPT-2 itself uses biases in its query/key/value projections: qkv_bias=True is fine (it is
not part of the task)."""

from reference import MultiHeadAttention


def gpt2_small_attention():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12, qkv_bias=True)
