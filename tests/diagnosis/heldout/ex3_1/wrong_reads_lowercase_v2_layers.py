"""Written against the student's own SelfAttentionV2 whose layers are w_query, w_key and
w_value: on the book's sa_v2 the first read fails, since its layers are W_query, W_key and
W_value."""
# seen-in: public code, find_string id 9767730793 (own SelfAttentionV2 with self.w_query, and
# seen-in: sa_v1.w_query = torch.nn.Parameter(sa_v2.w_query.weight.T))
# cause: renamed-attribute
# cause-words: w_query
# expect-failing: sa_v1 computes what sa_v2 computes

import torch


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = torch.nn.Parameter(sa_v2.w_query.weight.T)
    sa_v1.W_key = torch.nn.Parameter(sa_v2.w_key.weight.T)
    sa_v1.W_value = torch.nn.Parameter(sa_v2.w_value.weight.T)
