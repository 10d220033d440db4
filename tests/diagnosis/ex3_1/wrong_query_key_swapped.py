"""Transposes correctly but crosses two lines: the key weight goes into W_query and the query
weight into W_key, so every attention score matrix comes out transposed."""
# seen-in: public code, find_string id 57987008231 (assignment lines of 3.1 written out of order)
# seen-in: issue 41's survey (one projection given another's weight)
# cause: transfer-swapped
# cause-words: W_query, W_key
# expect-failing: sa_v1 computes what sa_v2 computes, for any d_in, d_out and input

import torch


def transfer_weights(sa_v2, sa_v1):
    with torch.no_grad():
        sa_v1.W_query.copy_(sa_v2.W_key.weight.T)
        sa_v1.W_key.copy_(sa_v2.W_query.weight.T)
        sa_v1.W_value.copy_(sa_v2.W_value.weight.T)
