"""Copies each nn.Linear weight as it is stored, (d_out, d_in), into a new parameter: sa_v1
computes x @ W, which needs (d_in, d_out)."""
# seen-in: seed 004 In[18] (the student prints sa_v2.W_query.weight.shape (2, 3) next to
# seen-in: sa_v1.W_query.shape (3, 2) to find the transpose)
# seen-in: the book's own hint for 3.1
# cause: transpose
# cause-words: transpos
# cause-words: .T
# expect-failing: sa_v1 computes what sa_v2 computes, for any d_in, d_out and input

import torch.nn as nn


def transfer_weights(sa_v2, sa_v1):
    for name in ("W_query", "W_key", "W_value"):
        linear = getattr(sa_v2, name)
        setattr(sa_v1, name, nn.Parameter(linear.weight.detach().clone()))
