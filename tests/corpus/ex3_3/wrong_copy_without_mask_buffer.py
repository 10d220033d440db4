"""A copy of the book's class with no mask at all (no buffer, no masking): not causal, and not
built like the book's class."""
# expect-failing: it is causal
# expect-failing: with 12 heads

import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, n, _ = x.shape
        split = lambda t: t.view(b, n, self.num_heads, self.head_dim).transpose(1, 2)  # noqa: E731
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        w = self.dropout(torch.softmax(q @ k.transpose(2, 3) / self.head_dim**0.5, dim=-1))
        return self.out_proj((w @ v).transpose(1, 2).reshape(b, n, self.d_out))


def gpt2_small_attention():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
