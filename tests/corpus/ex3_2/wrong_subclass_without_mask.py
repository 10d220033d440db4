"""A subclass of the wrapper whose forward recomputes each head without the causal mask:
same weights, same shapes, but every token sees the whole sequence."""
# expect-failing: it is causal
# expect-failing: computes what the book's MultiHeadAttentionWrapper computes

import torch

from reference import MultiHeadAttentionWrapper


class FastWrapper(MultiHeadAttentionWrapper):
    def forward(self, x):
        outputs = []
        for head in self.heads:
            queries, keys, values = head.W_query(x), head.W_key(x), head.W_value(x)
            scores = queries @ keys.transpose(1, 2)
            weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
            outputs.append(head.dropout(weights) @ values)
        return torch.cat(outputs, dim=-1)


def make_2d_wrapper(d_in, context_length, dropout=0.0):
    return FastWrapper(d_in, 1, context_length, dropout, num_heads=2)
