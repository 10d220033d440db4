"""The student's own documented MultiHeadAttention (d_model, context_size, query_W, key_W,
value_W, _split_heads/_concat_heads), configured as GPT-2 small: it computes what the book's
class computes, under other parameter names."""
# seen-in: seed 001 In[11]-In[12] (MultiHeadAttention with query_W/key_W/value_W and
# seen-in: d_model/context_size)
# cause: renamed-attribute
# cause-words: query_W
# expect-failing: it is the book's MultiHeadAttention with 12 heads

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class MultiHeadAttention(nn.Module):
    """Causal multi-head attention; input and output (batch, seq_len, d_model)."""

    def __init__(
        self,
        d_model: int,
        context_size: int,
        num_heads: int,
        dropout_pct: float = 0.1,
        qkv_bias: bool = False,
    ):
        super().__init__()
        assert d_model % num_heads == 0, "d_model must be divisible by num_heads"
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.query_W = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.key_W = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.value_W = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout_pct)
        self.register_buffer("mask", torch.triu(torch.ones(context_size, context_size), diagonal=1))

    def _split_heads(self, x: Tensor) -> Tensor:
        b, t, _ = x.size()
        return x.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def _concat_heads(self, x: Tensor) -> Tensor:
        b, h, t, d = x.size()
        return x.transpose(1, 2).contiguous().view(b, t, h * d)

    def forward(self, x: Tensor) -> Tensor:
        t = x.size(1)
        q = self._split_heads(self.query_W(x))
        k = self._split_heads(self.key_W(x))
        v = self._split_heads(self.value_W(x))
        scores = q @ k.transpose(-1, -2)
        scores = scores.masked_fill(self.mask.bool()[:t, :t], float("-inf"))
        weights = self.dropout(F.softmax(scores / k.shape[-1] ** 0.5, dim=-1))
        return self.out_proj(self._concat_heads(weights @ v))


def gpt2_small_attention():
    return MultiHeadAttention(d_model=768, context_size=1024, num_heads=12, dropout_pct=0.0)
