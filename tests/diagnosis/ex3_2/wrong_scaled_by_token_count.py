"""An own, type-annotated CausalAttention that scales the scores by key.shape[1] ** 0.5: in a
batch (b, tokens, d_out) that is the number of tokens, not the key width d_out."""
# seen-in: seed 001 In[7] (CausalSelfAttention: F.softmax(attn_scores / key.shape[1] ** 0.5, dim=-1)
# seen-in: on batched keys)
# cause: scale-dim
# cause-words: scal
# cause-words: sqrt
# expect-failing: each of its two heads has weights of its own

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class CausalAttention(nn.Module):
    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, qkv_bias: bool = False
    ) -> None:
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x: Tensor) -> Tensor:
        seq_len = x.shape[1]
        query, key, value = self.W_query(x), self.W_key(x), self.W_value(x)
        scores: Tensor = torch.matmul(query, key.transpose(-1, -2))
        scores.masked_fill_(self.mask.bool()[:seq_len, :seq_len], -torch.inf)
        weights: Tensor = F.softmax(scores / key.shape[1] ** 0.5, dim=-1)
        return torch.matmul(self.dropout(weights), value)


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x: Tensor) -> Tensor:
        return torch.cat([head(x) for head in self.heads], dim=-1)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return MultiHeadAttentionWrapper(d_in, 1, context_length, dropout, num_heads=2)
