"""Hands sa_v2's nn.Linear layers themselves to sa_v1, as a combined class that takes its
layers from a SelfAttention_v2 does: W_query is a parameter of sa_v1, and a module cannot be
assigned where a parameter is."""
# seen-in: public code, search result "SelfAttention_v1_v2" (self.W_query = sa_v2.get_W_query(),
# seen-in: the v2 layers reused as v1's weights)
# cause: plain-tensor
# cause-words: Linear, W_query
# expect-failing: sa_v1 computes what sa_v2 computes

import copy


def transfer_weights(sa_v2, sa_v1):
    sa_v1.W_query = copy.deepcopy(sa_v2.W_query)
    sa_v1.W_key = copy.deepcopy(sa_v2.W_key)
    sa_v1.W_value = copy.deepcopy(sa_v2.W_value)
