"""Runs the book's example inside the function and returns the context vectors it printed
(a tensor), not the module."""
# expect-failing: exactly two heads
# expect-failing: its context vectors are 2-dimensional

import torch

from reference import MultiHeadAttentionWrapper


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    torch.manual_seed(123)
    mha = MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
    batch = torch.rand(2, context_length, d_in)
    context_vecs = mha(batch)
    print("context_vecs.shape:", context_vecs.shape)
    return context_vecs
