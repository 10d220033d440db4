"""The student's own classes with their own names (query_weights, key_weights, value_weights):
the computation is the book's, but the weights do not have the book's names."""
# seen-in: seed 001 In[7] and In[9] (CausalSelfAttention with
# seen-in: query_weights/key_weights/value_weights, SequentialMultiHeadAttention)
# cause: renamed-attribute
# cause-words: query_weights
# expect-failing: it is a MultiHeadAttentionWrapper with exactly two heads

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_in, d_out, context_size, dropout_pct=0.0, qkv_bias=False):
        super().__init__()
        self.query_weights = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.key_weights = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.value_weights = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(p=dropout_pct)
        self.register_buffer("mask", torch.triu(torch.ones(context_size, context_size), diagonal=1))

    def forward(self, x):
        seq_len = x.shape[1]
        query = self.query_weights(x)
        key = self.key_weights(x)
        value = self.value_weights(x)
        scores = query @ key.transpose(-1, -2)
        scores = scores.masked_fill(self.mask.bool()[:seq_len, :seq_len], -torch.inf)
        weights = torch.softmax(scores / key.shape[-1] ** 0.5, dim=-1)
        return self.dropout(weights) @ value


class SequentialMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_size, num_heads, dropout=0.0, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalSelfAttention(d_in, d_out, context_size, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return SequentialMultiHeadAttention(d_in, 1, context_length, num_heads=2, dropout=dropout)
