"""A notebook-style transfer whose second line was copied from the first and only half edited:
W_key receives the query weight, so W_query's weight lands twice and W_key's never."""
# seen-in: issue 41's survey of public answers ("a weight transfer that assigns one projection twice
# seen-in: and another never")
# seen-in: public code, find_string id 57987008231 (the three assignment lines reordered by hand)
# cause: transfer-missing-weight
# cause-words: W_key
# expect-failing: sa_v1 computes what sa_v2 computes, for any d_in, d_out and input

import torch.nn as nn


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_key = nn.Parameter(sa_v2.W_query.weight.T)
    sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.T)
