"""An own copy of the two classes, typed from the book's 2-D walk-through where
softmax(..., dim=1) normalises each row: on batched scores (b, tokens, tokens) dim=1 normalises
over the queries instead, so early tokens see later ones. Its heads are distinct and its
signature is right."""
# seen-in: public code, find_string id 26189383696 (batched CausalAttention with softmax(...,
# seen-in: dim=1))
# seen-in: issue 41's survey ("a wrapper whose attention is not causal (softmax over the wrong
# seen-in: dimension)")
# cause: softmax-dim
# cause-words: softmax
# cause-words: dim=1
# expect-failing: each of its two heads has weights of its own

import torch
from torch import nn


class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=1)
        weights = self.dropout(weights)
        return weights @ values


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
