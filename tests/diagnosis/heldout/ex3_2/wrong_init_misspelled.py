"""The student's own wrapper whose constructor is spelled __init_ (one underscore short):
Python never calls it, so MultiHeadAttentionWrapper(...) reaches nn.Module.__init__, which
takes no such arguments, and no head is ever built."""
# seen-in: chwla/Machine-Learning llm/ch3/3_4.py (class MultiHeadAttentionWrapper with
# seen-in: def __init_(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias = False))
# cause: misspelled-init
# cause-words: spell
# cause-words: underscore
# cause-words: typo
# expect-failing: it is a MultiHeadAttentionWrapper with exactly two heads

import torch
from torch import nn

from reference import CausalAttention


class MultiHeadAttentionWrapper(nn.Module):
    def __init_(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
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
