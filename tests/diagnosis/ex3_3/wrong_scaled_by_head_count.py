"""An own copy of the book's MultiHeadAttention that scales by keys.shape[1] ** 0.5 as the
student's single-head class did: after the transpose, keys are (b, num_heads, tokens, head_dim)
and shape[1] is the number of heads (12), not head_dim (64)."""
# seen-in: seed 001 In[5] and In[7] (F.softmax(attn_scores / key.shape[1] ** 0.5, dim=-1))
# seen-in: seed 004 In[3] (keys.shape[1] in the 2-D class, where it is right)
# cause: scale-dim
# cause-words: scal
# cause-words: sqrt
# expect-failing: it computes what the book's MultiHeadAttention computes with its weights

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        keys = self.W_key(x).view(shape).transpose(1, 2)
        queries = self.W_query(x).view(shape).transpose(1, 2)
        values = self.W_value(x).view(shape).transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context = (
            (attn_weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        )
        return self.out_proj(context)


def gpt2_small_attention():
    return MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
