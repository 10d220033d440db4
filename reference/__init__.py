"""Reference models for chapters 3 and 4 of *Build a Large Language Model (From Scratch)*.

These classes are the grader's oracle. Their names, constructor signatures, attribute names and
the order in which they create parameters follow the book, so that the book's seeded outputs
reproduce exactly (see ``tests/test_reference_golden.py``).
"""

from reference.attention import (
    CausalAttention,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SelfAttention_v1,
    SelfAttention_v2,
)
from reference.gpt import (
    GELU,
    GPT_CONFIG_124M,
    FeedForward,
    GPTModel,
    LayerNorm,
    TransformerBlock,
)

__all__ = [
    "GELU",
    "GPT_CONFIG_124M",
    "CausalAttention",
    "FeedForward",
    "GPTModel",
    "LayerNorm",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SelfAttention_v1",
    "SelfAttention_v2",
    "TransformerBlock",
]
