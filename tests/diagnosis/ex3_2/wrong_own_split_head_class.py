"""Writes a two-head class of its own that splits one projection into heads (the later
MultiHeadAttention's way, without out_proj) instead of returning the book's
MultiHeadAttentionWrapper; it has no dropout layer. 2-dimensional and causal, but not the
structure the exercise asks for: that is the cause, the missing dropout follows from it."""
# seen-in: issue 56 (an answer to 3.2 in a public repository: a split-head class of its own
# seen-in: instead of the book's wrapper); public code search "MultiHeadAttention d_out=2
# seen-in: num_heads=2" (chapter 3 notebooks that answer 3.2 with a split-head module); it
# seen-in: also ignores dropout, which follows from its own class having no dropout layer
# cause: wrong-class
# cause: ignored-argument
# cause-words: not the book's MultiHeadAttentionWrapper
# expect-failing: it is a MultiHeadAttentionWrapper with exactly two heads
# expect-failing: computes what the book's MultiHeadAttentionWrapper computes

import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self, d_in, context_length, heads=2):
        super().__init__()
        self.heads = heads
        self.W_query = nn.Linear(d_in, heads, bias=False)
        self.W_key = nn.Linear(d_in, heads, bias=False)
        self.W_value = nn.Linear(d_in, heads, bias=False)
        mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)
        self.register_buffer("mask", mask.bool())

    def forward(self, x):
        b, n, _ = x.shape

        def split(t):  # (b, n, heads) -> (b, heads, n, 1)
            return t.view(b, n, self.heads, 1).transpose(1, 2)

        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask[:n, :n], float("-inf"))
        weights = torch.softmax(scores, dim=-1)  # one dimension per head: sqrt(1) == 1
        return (weights @ v).transpose(1, 2).reshape(b, n, self.heads)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return TwoHeads(d_in, context_length)
