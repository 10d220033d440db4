"""Written against the student's own SelfAttention_v1, whose parameters are w_query, w_key and
w_value: on the book's class the assignments create three new parameters that forward never
reads, and W_query, W_key, W_value keep their random values."""
# seen-in: kai-lucky72/studying_ai LLM/self_attention/trainable_weights/pythos_class.py (own v1 with
# seen-in: w_query/w_key/w_value, copied into in place)
# cause: transfer-wrong-name
# cause-words: w_query, new
# cause-words: w_query, unused
# cause-words: w_query, never
# expect-failing: sa_v1 computes what sa_v2 computes, for any d_in, d_out and input

import torch
from torch import nn


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.w_query = nn.Parameter(sa_v2.W_query.weight.T.clone())
        sa_v1.w_key = nn.Parameter(sa_v2.W_key.weight.T.clone())
        sa_v1.w_value = nn.Parameter(sa_v2.W_value.weight.T.clone())
